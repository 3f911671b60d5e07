"""Notebook execution times and widget redraw times (targets: < 15 s per notebook, < 60 s in all,
< 50 ms median per widget redraw).

    .venv/bin/python benchmarks/bench_notebooks.py [--changes 20] [--skip-notebooks]

Notebooks run top to bottom in a fresh kernel, as nbval runs them (the
kernel start is included). Widget redraws are timed kernel-side, from a
control's value change to the finished PNG (``Explorer.last_redraw_seconds``),
over ``--changes`` changes spread across the widget's controls.
"""

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import nbformat
from _report import table
from nbclient import NotebookClient

from encoder_lib.widgets import all_explorers
from encoder_lib.widgets._base import control_values

ROOT = Path(__file__).resolve().parent.parent
os.environ.setdefault("JUPYTER_PREFER_ENV_PATH", "1")


def notebook_times():
    rows, total = [], 0.0
    for path in sorted((ROOT / "notebooks").glob("*/*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        start = time.perf_counter()
        NotebookClient(nb, timeout=300, kernel_name="python3",
                       resources={"metadata": {"path": str(path.parent)}}).execute()
        seconds = time.perf_counter() - start
        total += seconds
        rows.append((path.name, f"{seconds:.1f}", "ok" if seconds < 15 else "OVER 15 s"))
    rows.append(("all notebooks", f"{total:.1f}", "ok" if total < 60 else "OVER 60 s"))
    return rows


def redraw_times(changes):
    rows = []
    for module, builder in all_explorers():
        explorer = builder()
        moves = [(c, v) for c in explorer.controls.values() for v in control_values(c)]
        times = []
        i = 0
        while len(times) < changes:
            control, value = moves[i % len(moves)]
            i += 1
            if control.value == value:
                continue
            control.value = value
            times.append(explorer.last_redraw_seconds)
        median = statistics.median(times) * 1e3
        rows.append((f"{module}.{builder.__name__}", f"{median:.1f}", f"{max(times) * 1e3:.1f}",
                     "ok" if median < 50 else "OVER 50 ms"))
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--changes", type=int, default=20)
    parser.add_argument("--skip-notebooks", action="store_true")
    args = parser.parse_args()
    print(f"widget redraw, kernel-side, {args.changes} control changes each")
    table(redraw_times(args.changes), ("widget", "median ms", "worst ms", "target < 50 ms median"))
    if not args.skip_notebooks:
        print("notebook execution, fresh kernel each (python " + sys.version.split()[0] + ")")
        table(notebook_times(), ("notebook", "seconds", "target"))


if __name__ == "__main__":
    main()
