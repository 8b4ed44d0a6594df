"""What judging MindSpeed-RL's installed stack costs `adapter-matrix check`: five layers, four of
them pinned by git commit, against the adapter alone (issue 65: within 1.5x).

Builds the stack as MindSpeed-RL's install guide does (docs/stacks.md, "How layers are
installed"), from small git repositories made here: vllm and MindSpeed by pip's VCS install
(PEP 610 direct_url.json), vllm-ascend editable from its clone, MindSpeed-LLM a clone on
``--pythonpath`` carrying its compat.yaml; torch, torch_npu, apex and megatron-core by version.
The layers: MindSpeed-RL (tests/fixtures/stacks/mindspeed-rl-installs.yaml, its commits replaced
by those of the repositories made here), MindSpeed-LLM (its clone's compat.yaml), vllm-ascend,
MindSpeed and apex. The adapter alone is torch_npu 2.5.1 on torch 2.5.1 in a prefix of its own.

Each round times ``check --env STACK`` and ``check --env ALONE`` back to back, alternating which
goes first; the ratio of a round is paired and the report gives the median over the rounds. Both
are answered the long way (``--no-binary``, the memo off) with the compiled-matrix cache warm.
Measured for the supported stack and for MindSpeed-LLM 3 commits past its pin (the checkout fix).

    python benchmarks/stack_installs.py [--runs 15]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Tuple

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures"
ADAPTER = FIXTURES / "matrices" / "torch_npu.yaml"
RL = FIXTURES / "stacks" / "mindspeed-rl-installs.yaml"
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE" and not k.startswith("ASCEND_")}
ENV["ADAPTER_MATRIX_NO_MEMO"] = "1"
GIT = {
    "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    **{
        f"GIT_{who}_{what}": value
        for who in ("AUTHOR", "COMMITTER")
        for what, value in (("NAME", "b"), ("EMAIL", "b@x"))
    },
}


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, env=GIT, capture_output=True, text=True, check=True).stdout.strip()


def _clone(path: Path, package: str, commits: int) -> List[str]:
    (path / package).mkdir(parents=True)
    (path / package / "__init__.py").write_text("")
    _git(path, "init", "-q", "-b", "main")
    out = []
    for i in range(commits):
        (path / "CHANGES").write_text(f"{i}\n")
        _git(path, "add", "-A")
        _git(path, "commit", "-q", "-m", str(i))
        out.append(_git(path, "rev-parse", "HEAD"))
    return out


def _prefix(root: Path, dists: Dict[str, Tuple[str, object]]) -> Path:
    root.mkdir(parents=True)
    (root / "pyvenv.cfg").write_text("home = /usr/bin\nversion = 3.10.12\n")
    site = root / "lib" / "python3.10" / "site-packages"
    for name, (version, direct) in dists.items():
        module = name.replace("-", "_")
        info = site / f"{module}-{version}.dist-info"
        info.mkdir(parents=True)
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
        if direct is not None:
            (info / "direct_url.json").write_text(json.dumps(direct))
        if name == "torch-npu":
            (site / module).mkdir()
            shutil.copy(ADAPTER, site / module / "compat.yaml")
            (info / "entry_points.txt").write_text(f"[adapter_matrix.matrices]\n{name} = {module}:compat.yaml\n")
    return root


def _layer(path: Path, name: str, version: str, body: str) -> Path:
    path.write_text(
        f"schema-version: 2\nlayer: {{distribution: {name}, adapter: torch-npu}}\n"
        f"releases:\n  - version: {version}\n    status: supported\n{body}"
    )
    return path


def _stack(tmp: Path) -> Tuple[Path, List[str], Path, str]:
    """The stack's prefix, its check arguments, MindSpeed-LLM's clone and its pinned commit."""
    src = tmp / "src"
    vllm = _clone(src / "vllm", "vllm", 1)[-1]
    ascend = _clone(src / "vllm-ascend", "vllm_ascend", 2)[-1]
    mindspeed = _clone(src / "MindSpeed", "mindspeed", 1)[-1]
    llm = _clone(src / "MindSpeed-LLM", "mindspeed_llm", 5)
    _layer(src / "MindSpeed-LLM" / "compat.yaml", "mindspeed-llm", "2.1.0", "    torch: 2.5.1\n")
    text = RL.read_text()
    for old, new in (
        ("b6553be1bc75f046b00046a4ad7576364d03c835", vllm),
        ("8c7bc45", ascend[:7]),
        ("89f4632d2cbb1e583a69b2bf3a08d75222f1173d", mindspeed),
        ("887c2d8682021befd675bb03965dbdee4de24516", llm[1]),
    ):
        text = text.replace(old, new)
    layers = tmp / "layers"
    layers.mkdir()
    (layers / "mindspeed-rl.yaml").write_text(text)
    _layer(layers / "vllm-ascend.yaml", "vllm-ascend", "0.9.1", "    torch: 2.5.1\n    requires: {vllm: 0.9.1}\n")
    _layer(layers / "mindspeed.yaml", "mindspeed", "0.12.1", "    torch: 2.5.1\n")
    _layer(layers / "apex.yaml", "apex", "0.1", "    torch: 2.5.1\n    adapter: 2.5.1\n")

    def vcs(url: str, commit: str) -> object:
        return {"url": url, "vcs_info": {"vcs": "git", "commit_id": commit}}

    env = _prefix(
        tmp / "stack",
        {
            "torch": ("2.5.1", None),
            "torch-npu": ("2.5.1", None),
            "apex": ("0.1", None),
            "megatron-core": ("0.12.1", None),
            "mindspeed-rl": ("2.0.0", None),
            "vllm": ("0.9.1", vcs("https://github.com/vllm-project/vllm.git", vllm)),
            "mindspeed": ("0.12.1", vcs("https://gitcode.com/Ascend/MindSpeed.git", mindspeed)),
            "vllm-ascend": (
                f"0.9.2.dev2+g{ascend[:9]}",
                {"url": (src / "vllm-ascend").as_uri(), "dir_info": {"editable": True}},
            ),
        },
    )
    args = [
        arg
        for name in ("mindspeed-rl", "vllm-ascend", "mindspeed", "apex")
        for arg in ("--matrix", str(layers / f"{name}.yaml"))
    ]
    return (
        env,
        ["--matrix", str(ADAPTER), *args, "--pythonpath", str(src / "MindSpeed-LLM")],
        src / "MindSpeed-LLM",
        llm[1],
    )


def _time(env: Path, args: List[str]) -> Tuple[float, int]:
    cmd = [sys.executable, "-m", "adapter_matrix", "check", "--no-binary", "--env", str(env)]
    cmd += ["--set", "cann=8.1.RC1", "--set", "arch=aarch64", *args]
    start = time.perf_counter()
    done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=env.parent, env=ENV)
    return time.perf_counter() - start, done.returncode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    runs = parser.parse_args().runs
    with tempfile.TemporaryDirectory() as tmp:
        stack, args, clone, pinned = _stack(Path(tmp))
        alone = _prefix(Path(tmp) / "alone", {"torch": ("2.5.1", None), "torch-npu": ("2.5.1", None)})
        alone_args = ["--matrix", str(ADAPTER)]
        codes = {}
        for label, checkout in (
            ("supported, every commit as pinned", pinned),
            ("a clone 3 commits past its pin", "HEAD"),
        ):
            _git(clone, "checkout", "-q", checkout if checkout != "HEAD" else "main")
            _time(stack, args), _time(alone, alone_args)  # warm the compiled-matrix cache
            ratios, times, base = [], [], []
            for i in range(runs):
                if i % 2:
                    a, _ = _time(alone, alone_args)
                    b, codes[label] = _time(stack, args)
                else:
                    b, codes[label] = _time(stack, args)
                    a, _ = _time(alone, alone_args)
                ratios.append(b / a)
                times.append(b)
                base.append(a)
            print(
                f"{label:<36} exit {codes[label]}  {statistics.median(ratios):.2f}x  (min {min(ratios):.2f}, "
                f"max {max(ratios):.2f}; stack median {statistics.median(times) * 1000:.0f} ms, "
                f"adapter alone {statistics.median(base) * 1000:.0f} ms; {runs} paired rounds)"
            )


if __name__ == "__main__":
    main()
