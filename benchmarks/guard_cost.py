"""What `adapter_matrix.require()` adds to `import torch`, measured in one run.

    python benchmarks/guard_cost.py [--runs 11]

Alternates `import torch` and `import torch` + the adapter's call (`from adapter_matrix
import require; require("shims", ...)`, as shims/src/shims does on import) in fresh
interpreters (torch's autoload off on both sides, so only the call differs) and prints
the medians and the added share. Target: <= 1 %. The call answers from its memos after
the first one (no YAML, no model, no packaging); inside one process it is timed with
its own imports included, which is the number to quote (the difference of two medians
of ~2 s is mostly noise on a shared machine).
"""

from __future__ import annotations

import argparse
import compileall
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GUARD = "from adapter_matrix import require; require('shims', version='0.1.0')"


TIMED = f"import time, torch; t = time.perf_counter(); {GUARD}; print(time.perf_counter() - t)"


def _run(code: str, env: dict) -> tuple[float, str]:
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True, text=True)
    return time.perf_counter() - start, proc.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=11)
    args = parser.parse_args()
    env = dict(os.environ, TORCH_DEVICE_BACKEND_AUTOLOAD="0")
    # Bytecode as an installed wheel has it (pip compiles at install; torch's is compiled):
    # with PYTHONDONTWRITEBYTECODE set, an editable checkout would recompile on every start.
    compileall.compile_dir(str(ROOT / "adapter_matrix"), quiet=1)
    compileall.compile_dir(str(ROOT / "shims" / "src" / "shims"), quiet=1)
    bare, guarded, inside = [], [], []
    _run(TIMED, env)  # fill the memos and the page cache
    for _ in range(args.runs):
        bare.append(_run("import torch", env)[0])
        seconds, out = _run(TIMED, env)
        guarded.append(seconds)
        inside.append(float(out.strip().splitlines()[-1]))
    b, g, i = statistics.median(bare), statistics.median(guarded), statistics.median(inside)
    print(f"import torch:           median {b * 1000:.0f} ms over {args.runs} runs")
    print(f"import torch + require: median {g * 1000:.0f} ms")
    print(
        f"require inside the process (memo hit, its imports included): median {i * 1000:.1f} ms "
        f"(min {min(inside) * 1000:.1f}) = {i / b * 100:.2f} % of import torch (target <= 1 %)"
    )
    print(
        f"difference of the medians: {(g - b) * 1000:+.0f} ms = {(g - b) / b * 100:+.2f} % (noise of one run included)"
    )


if __name__ == "__main__":
    main()
