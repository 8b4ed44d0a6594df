"""What `adapter-matrix ops tests` costs over plain pytest with the same hooks.

    python benchmarks/op_tests_overhead.py [--runs 3] [--jobs 2]

A: `adapter-matrix ops tests` on the fixture pack's three files (tests/fixtures/testpack), on
the reference device, `-j 2`: one process per file, the plugin writing each outcome, the progress
lines with their ETA. B: plain `python -m pytest` of the same three files in one process, with
the same hooks (the same generated TORCH_TEST_DEVICES base file, PYTORCH_TESTING_DEVICE_ONLY_FOR
and PYTORCH_TESTING_DEVICE_FOR_CUSTOM). Both through `farm-bench --vs`, A and B in turn, the
ratio taken pair by pair; quote the median. The machine is shared: read the ratio as one run's.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from adapter_matrix.device.optests.packrun import base_file_text, hook_env

ROOT = Path(__file__).resolve().parent.parent
PACK = ROOT / "tests" / "fixtures" / "testpack" / "pytorch-v2.13.0"
FILES = ("test_pack_ops.py", "test_pack_modules.py", "test_pack_optim.py")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    tool = shutil.which("adapter-matrix", path=os.path.dirname(sys.executable)) or "adapter-matrix"
    with tempfile.TemporaryDirectory(prefix="optests-bench-") as folder:
        base = os.path.join(folder, "device_test_base.py")
        Path(base).write_text(base_file_text("shims", "npu"))
        out = os.path.join(folder, "a.log")
        a = f"exec {tool} ops tests --matrix {ROOT / 'compat.yaml'} --pack {PACK} -j {args.jobs} >>{out} 2>&1"
        env = " ".join(f"{k}={v}" for k, v in hook_env(base, device="npu").items())
        b = (
            f"cd {PACK / 'test'} && exec env {env} {sys.executable} -m pytest -q -p no:cacheprovider -c /dev/null "
            f"{' '.join(FILES)}"
        )
        command = ["farm-bench", "-n", str(args.runs), "--timeout", "1800", "--vs", f"sh -c '{b}'", "--", "sh", "-c", a]
        print("A:", a, "\nB:", b, flush=True)
        code = subprocess.run(command, check=False).returncode
        lines = Path(out).read_text().splitlines()
        progress = [line for line in lines if "ETA" in line]
        print(f"A's progress lines with an ETA: {len(progress)}; the last run's:")
        print("\n".join(progress[-3:]))
    return code


if __name__ == "__main__":
    raise SystemExit(main())
