"""Lesson run times, quiet and on a busy machine, and widget redraw times.

    .venv/bin/python -m benchmarks.bench_notebooks [--changes 20] [--load 3] [--skip-notebooks] [--skip-widgets]

Targets: every lesson's Run All under 20 s on a quiet machine, and under
45 s with no cell over 30 s while ``--load`` other CPU-bound processes run
(a classroom server, where many learners' kernels share the cores);
a widget redraw under 50 ms (median).

Notebooks run top to bottom in a fresh kernel, as nbval and Run All run them
(the kernel start is included). The busy processes are plain Python loops,
started before the lesson and stopped after it. Widget redraws are timed
kernel-side, from a control's value change to the finished PNG
(``Explorer.last_redraw_seconds``), over ``--changes`` changes spread across
the widget's controls.
"""

import argparse
import contextlib
import datetime
import os
import statistics
import subprocess
import sys
import time

import nbformat
from nbclient import NotebookClient

from tools.course import lesson_notebooks, use_this_environment

from ._report import table
QUIET_TARGET, LOADED_TARGET, CELL_TARGET = 20.0, 45.0, 30.0


@contextlib.contextmanager
def busy(processes):
    """``processes`` CPU-bound Python loops running for the duration of the block."""
    loops = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(processes)]
    try:
        time.sleep(0.5 if loops else 0)  # let them get going
        yield
    finally:
        for loop in loops:
            loop.kill()
            loop.wait()


def run_lesson(path):
    """``(seconds for Run All, seconds of the slowest cell, that cell's index)`` in a fresh kernel."""
    nb = nbformat.read(path, as_version=4)
    start = time.perf_counter()
    NotebookClient(nb, timeout=600, kernel_name="python3", record_timing=True,
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    total = time.perf_counter() - start
    worst, where = 0.0, None
    for i, cell in enumerate(nb.cells):
        timing = cell.metadata.get("execution", {})
        if "iopub.execute_input" in timing and "shell.execute_reply" in timing:
            begin, end = (datetime.datetime.fromisoformat(timing[k].replace("Z", "+00:00"))
                          for k in ("iopub.execute_input", "shell.execute_reply"))
            if (end - begin).total_seconds() > worst:
                worst, where = (end - begin).total_seconds(), i
    return total, worst, where


def notebook_times(load):
    rows = []
    use_this_environment()  # the kernel of this environment
    for path in lesson_notebooks():
        quiet, _, _ = run_lesson(path)
        with busy(load):
            loaded, worst, where = run_lesson(path)
        ok = quiet < QUIET_TARGET and loaded < LOADED_TARGET and worst < CELL_TARGET
        rows.append((path.stem, f"{quiet:.1f}", f"{loaded:.1f}", f"{worst:.1f} (cell {where})",
                     "ok" if ok else "OVER"))
    return rows


def redraw_times(changes):
    from encoder_lib.widgets import all_explorers
    from encoder_lib.widgets._controls import control_values

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
    parser.add_argument("--load", type=int, default=3, help="busy processes while the lessons run the second time")
    parser.add_argument("--skip-notebooks", action="store_true")
    parser.add_argument("--skip-widgets", action="store_true")
    args = parser.parse_args()
    if not args.skip_widgets:
        print(f"widget redraw, kernel-side, {args.changes} control changes each")
        table(redraw_times(args.changes), ("widget", "median ms", "worst ms", "target < 50 ms median"))
    if not args.skip_notebooks:
        print(f"lessons, Run All in a fresh kernel (python {sys.version.split()[0]}, {os.cpu_count()} cores): "
              f"quiet, and with {args.load} other CPU-bound processes running")
        table(notebook_times(args.load),
              ("lesson", "quiet s", f"busy ({args.load}) s", "busy: slowest cell s",
               f"target < {QUIET_TARGET:.0f} s / < {LOADED_TARGET:.0f} s, cells < {CELL_TARGET:.0f} s"))


if __name__ == "__main__":
    main()
