"""How validation time grows with the number of values of one dimension.

Builds the toy adapter's matrix with N values of its ``driver`` dimension (N = 4,000
and 40,000; version values, then enumeration values) and loads each with the cache off,
alternately and several times in this process, so machine noise hits both sizes alike.
Prints the median of each and the ratio 40k/4k: about 10 is linear, about 100 quadratic
(before the duplicate check became a dictionary look-up, 40,000 values took 138 s).

    python benchmarks/validate_scaling.py [--runs 3]
"""

from __future__ import annotations

import argparse
import re
import statistics
import time
from pathlib import Path

from adapter_matrix.matrix.loader import load_text

TOY = Path(__file__).resolve().parents[1] / "examples" / "toy-adapter" / "toy_adapter" / "compat.yaml"


def matrix_with(count: int, kind: str) -> str:
    """The toy matrix with ``count`` values of its driver dimension."""
    text = TOY.read_text(encoding="utf-8")
    if kind == "version":
        values = ", ".join(f'"{i // 1000}.{i % 1000}"' for i in range(count))
    else:
        values = ", ".join(f"chip{i}" for i in range(count))
        text = text.replace("schema-version: 1", "schema-version: 2").replace(
            "    description: the toy driver\n", "    description: the toy driver\n    kind: enum\n"
        )
        text = text.replace('driver: ">=2.0"', "driver: [chip1, chip2]")
    return re.sub(r'values: \["1.0", "2.0", "2.1"\]', f"values: [{values}]", text)


def seconds(text: str) -> float:
    start = time.perf_counter()
    load_text(text, "compat.yaml", check_modules=False)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    for kind in ("version", "enum"):
        small, large = matrix_with(4000, kind), matrix_with(40000, kind)
        times = {4000: [], 40000: []}
        for _ in range(args.runs):
            times[4000].append(seconds(small))
            times[40000].append(seconds(large))
        a, b = statistics.median(times[4000]), statistics.median(times[40000])
        print(f"{kind:8} 4,000 values {a:6.3f} s   40,000 values {b:6.3f} s   ratio 40k/4k {b / a:5.1f} (10 is linear)")


if __name__ == "__main__":
    main()
