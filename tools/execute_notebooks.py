"""Re-execute course notebooks in place, so their stored outputs come from the current code.

    .venv/bin/python -m tools.execute_notebooks                      # every notebook
    .venv/bin/python -m tools.execute_notebooks notebooks/01_*/*.ipynb

Each notebook runs top to bottom in a fresh kernel from its own folder, as
nbval will run it. Afterwards the widget state (``metadata.widgets``) and
per-cell timing metadata are dropped, so the committed file holds the
outputs a reader needs and nothing that changes from run to run, except one
number: the seconds the cells took, in whole seconds, as
``metadata.course.run_seconds``. tools.lesson_times then writes each
lesson's expected time from it (and from what the lesson holds).
"""

import argparse
import math
import sys
import time
from datetime import datetime
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from . import lesson_times
from .course import ROOT, lesson_notebooks, use_this_environment

CELL_TIMEOUT = 120


def cells_seconds(nb):
    """The seconds the kernel spent on the cells of the run just made (nbclient's timing metadata)."""
    total = 0.0
    for cell in nb.cells:
        timing = cell.metadata.get("execution", {})
        if "iopub.execute_input" in timing and "shell.execute_reply" in timing:
            start, end = (datetime.fromisoformat(timing[k].replace("Z", "+00:00"))
                          for k in ("iopub.execute_input", "shell.execute_reply"))
            total += (end - start).total_seconds()
    return total


def run_seconds(nb):
    """What a lesson stores as its cells' time (``course.run_seconds``): the kernel's seconds on them, rounded up,
    at least 1."""
    return max(1, math.ceil(cells_seconds(nb)))


def clean(nb):
    """Drop what differs between runs without meaning anything to a reader."""
    nb.metadata.pop("widgets", None)
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
        cell.metadata.pop("collapsed", None)
        if cell.cell_type == "code":
            for output in cell.outputs:
                output.get("metadata", {}).pop("execution", None)
    return nb


def execute(path):
    nb = nbformat.read(path, as_version=4)
    start = time.perf_counter()
    NotebookClient(nb, timeout=CELL_TIMEOUT, kernel_name="python3",
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    nb.metadata.setdefault("course", {})["run_seconds"] = run_seconds(nb)
    nbformat.write(clean(nb), path)
    return time.perf_counter() - start


def main(argv):
    parser = argparse.ArgumentParser(prog="python -m tools.execute_notebooks", description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path, help="the notebooks to run (default: every lesson)")
    args = parser.parse_args(argv)
    missing = [str(p) for p in args.notebooks if p.suffix != ".ipynb" or not p.is_file()]
    if missing:
        parser.error(f"not a notebook file: {', '.join(missing)}")
    use_this_environment()  # the kernel of this environment, even if the user has another "python3" kernel
    paths = [p.resolve() for p in args.notebooks] or lesson_notebooks()
    for path in paths:
        print(f"{execute(path):6.1f} s  {path.relative_to(ROOT)}", flush=True)
    lesson_times.main([])  # the lessons' times, from the runs just made


if __name__ == "__main__":
    main(sys.argv[1:])
