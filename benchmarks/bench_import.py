"""How long `import encoder_lib` takes in a fresh interpreter (target: under 150 ms), and nbformat and nbgrader.api,
which every process that reads a notebook imports (make grade, nbgrader's commands, the tests' servers).

    .venv/bin/python -m benchmarks.bench_import [--runs 10]

Reports the median and worst of fresh-process imports, each measured inside
the child with perf_counter around the import (numpy included, since
encoder_lib needs it), next to a bare `import numpy` for scale. nbformat's jsonschema builds rfc3987-syntax's grammar at import (about
a second) unless rfc3987 is installed, as `make setup` does (requirements-teacher.txt); the table says which.
"""

import argparse
import statistics
import subprocess
import sys

from ._report import table

CHILD = "import time; t = time.perf_counter(); import {mod}; print(time.perf_counter() - t)"


def measure(module, runs):
    return [float(subprocess.run([sys.executable, "-c", CHILD.format(mod=module)], capture_output=True,
                                 text=True, check=True).stdout) for _ in range(runs)]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    rows = []
    for module in ("numpy", "encoder_lib", "nbformat", "nbgrader.api"):
        times = measure(module, args.runs)
        rows.append((f"import {module}", f"{statistics.median(times) * 1e3:.1f}", f"{max(times) * 1e3:.1f}"))
    import importlib.util

    rfc3987 = "installed" if importlib.util.find_spec("rfc3987") else "not installed (jsonschema builds a grammar)"
    print(f"fresh-process import time, {args.runs} runs; rfc3987 {rfc3987}")
    table(rows, ("what", "median ms", "worst ms"))


if __name__ == "__main__":
    main()
