"""Write the course's solution of every exercise into the library, from the teachers' notebooks: what
`make solutions` runs.

    .venv/bin/python -m tools.solutions            # writes encoder_lib/grading/solutions.json
    .venv/bin/python -m tools.solutions --check    # exits 1, naming the exercises, when it differs from the notebooks

The hint ladder's fourth step shows the course's solution beside the
learner's own code (``encoder_lib.grading.solution_step``), where the
teacher's setting allows. A learner's kernel has only the installed library,
not the teachers' notebooks, so the solutions travel in it as package data:
each exercise's answer cell (``<name>_answer``) as the learner writes it, the
whole function with its docstring, the ``### BEGIN SOLUTION`` and
``### END SOLUTION`` lines taken out. The notebooks are the only place a
solution is written; ``tests/test_solutions.py`` fails when the file differs
from them. The student versions (``release/``, ``student/``) never hold it.
"""

import argparse
import json
import sys
from pathlib import Path

from .course import ROOT, lesson_notebooks

OUT = Path("encoder_lib") / "grading" / "solutions.json"
MARKERS = ("### BEGIN SOLUTION", "### END SOLUTION")


def without_markers(source):
    """An answer cell's code as the learner writes it: the solution's marker lines taken out. ValueError when
    ``source`` does not hold exactly one BEGIN and one END line."""
    lines = source.splitlines()
    found = [line.strip() for line in lines if line.strip() in MARKERS]
    if found != list(MARKERS):
        raise ValueError(f"an answer cell must hold one '{MARKERS[0]}' line, then one '{MARKERS[1]}' line; got "
                         f"{found}")
    return "\n".join(line for line in lines if line.strip() not in MARKERS).strip("\n") + "\n"


def solutions(root=ROOT):
    """``{exercise: {"lesson": ..., "source": ...}}`` from every lesson's teachers' notebook under ``root``."""
    import nbformat

    found = {}
    for path in lesson_notebooks(root):
        for cell in nbformat.read(path, as_version=4).cells:
            grade_id = cell.metadata.get("nbgrader", {}).get("grade_id", "")
            if cell.cell_type == "code" and grade_id.endswith("_answer"):
                try:
                    source = without_markers(cell.source)
                except ValueError as exc:
                    raise ValueError(f"{path.name}, cell {grade_id}: {exc}") from None
                found[grade_id.removesuffix("_answer")] = {"lesson": path.parent.name, "source": source}
    return dict(sorted(found.items()))


def text(found):
    """The file's text: one exercise a key, sorted, so that a change reads as a small diff."""
    return json.dumps(found, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def differing(root=ROOT):
    """The exercises whose solution in the library's file differs from the notebooks' (all, if it is missing)."""
    want = solutions(root)
    path = Path(root) / OUT
    try:
        have = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return sorted(want)
    return sorted(name for name in set(want) | set(have) if want.get(name) != have.get(name))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=ROOT, help="the course folder (default: this repository)")
    parser.add_argument("--check", action="store_true", help="write nothing: exit 1 if the file is out of date")
    args = parser.parse_args(argv)
    if args.check:
        stale = differing(args.root)
        if stale:
            print(f"{OUT} differs from the notebooks for {', '.join(stale)}: run `make solutions`", file=sys.stderr)
            return 1
        print(f"{OUT} holds the notebooks' solutions")
        return 0
    found = solutions(args.root)
    (args.root / OUT).write_text(text(found), encoding="utf-8")
    print(f"wrote {OUT}: the course's solutions of {len(found)} exercises")
    return 0


if __name__ == "__main__":
    sys.exit(main())
