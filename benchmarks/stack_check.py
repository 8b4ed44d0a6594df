"""What judging a stack costs `adapter-matrix check`: three layers above the adapter against
the adapter alone (issue 56: within 1.5x).

Builds two environments from the fixtures, as `check --env` reads them (dist-info folders,
the matrices registered by entry points): the adapter alone (torch_npu 2.10.0.post4 on torch
2.10.0), and the same with three layers installed (vllm-ascend, MindSpeed-LLM and
torchvision_npu, with what they pin). Each round times `check --env A` and `check --env B`
back to back, alternating which goes first; the ratio of a round is paired (stack / adapter
alone) and the report gives the median over the rounds. Both are answered the long way
(`--no-binary`, the memo off) with the compiled-matrix cache warm, as a repeated check runs.

The stack of the supported case is measured, and an unsupported one (a torch-npu build the
layer does not pin), whose fixes a resolver searches.

    python benchmarks/stack_check.py [--runs 15]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures"
MATRICES = {
    "torch-npu": FIXTURES / "matrices" / "torch_npu.yaml",
    "vllm-ascend": FIXTURES / "stacks" / "vllm-ascend.yaml",
    "mindspeed-llm": FIXTURES / "stacks" / "mindspeed-llm.yaml",
    "torchvision-npu": FIXTURES / "stacks" / "torchvision-npu.yaml",
}


# as users run it: bytecode written and used (a process that compiles every module measures the
# compiler), the answer memo off (every run decides), the compiled-matrix cache warm
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
ENV["ADAPTER_MATRIX_NO_MEMO"] = "1"


def _environment(root: Path, installed: dict) -> Path:
    root.mkdir(parents=True)
    (root / "pyvenv.cfg").write_text("home = /usr/bin\nversion = 3.11.7\n")
    site = root / "lib" / "python3.11" / "site-packages"
    for name, version in installed.items():
        module = name.replace("-", "_")
        info = site / f"{module}-{version}.dist-info"
        info.mkdir(parents=True)
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
        if name in MATRICES:
            (site / module).mkdir()
            shutil.copy(MATRICES[name], site / module / "compat.yaml")
            (info / "entry_points.txt").write_text(f"[adapter_matrix.matrices]\n{name} = {module}:compat.yaml\n")
    return root


def _time(env: Path, extra: list) -> float:
    cmd = [
        sys.executable,
        "-m",
        "adapter_matrix",
        "check",
        "--no-binary",
        "--env",
        str(env),
        "--set",
        "cann=9.1.0",
        *extra,
    ]
    start = time.perf_counter()
    subprocess.run(
        cmd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=False,
        cwd=env.parent,  # not this repository: its ./compat.yaml would be judged instead of the stack
        env=ENV,
    )
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    base = {"torch": "2.10.0", "torch-npu": "2.10.0.post4"}
    layers = {
        "vllm-ascend": "0.23.0",
        "vllm": "0.23.0",
        "triton-ascend": "3.2.2",
        "mindspeed-llm": "26.1.0",
        "megatron-core": "0.12.1",
        "torchvision-npu": "0.21.0",
        "torchvision": "0.21.0",
    }
    with tempfile.TemporaryDirectory() as tmp:
        alone = _environment(Path(tmp) / "alone", base)
        supported = _environment(
            Path(tmp) / "stack",
            dict(base, **{k: v for k, v in layers.items() if k in ("vllm-ascend", "vllm", "triton-ascend")}),
        )
        three = _environment(Path(tmp) / "three", dict(base, **layers))
        broken = _environment(
            Path(tmp) / "broken",
            dict(
                base,
                **{"torch-npu": "2.10.0.post2", "vllm-ascend": "0.23.0", "vllm": "0.23.0", "triton-ascend": "3.2.2"},
            ),
        )
        for env in (alone, supported, three, broken):
            _time(env, [])  # warm the compiled-matrix cache
        pairs = {
            "one layer, supported": supported,
            "three layers (a conflict: fixes searched)": three,
            "one layer, unsupported (fixes searched)": broken,
        }
        ratios = {label: [] for label in pairs}
        times = {label: [] for label in pairs}
        alone_times = []
        for i in range(args.runs):
            for label, env in pairs.items():
                if i % 2:
                    a = _time(alone, [])
                    b = _time(env, [])
                else:
                    b = _time(env, [])
                    a = _time(alone, [])
                ratios[label].append(b / a)
                times[label].append(b)
                alone_times.append(a)
        print(f"check --env (stack) / check --env (adapter alone), median of {args.runs} paired rounds:")
        for label, values in ratios.items():
            print(
                f"  {label:<45} {statistics.median(values):.2f}x  (min {min(values):.2f}, max {max(values):.2f}; "
                f"median {statistics.median(times[label]) * 1000:.0f} ms)"
            )
        print(f"  {'the adapter alone':<45} median {statistics.median(alone_times) * 1000:.0f} ms")


if __name__ == "__main__":
    main()
