"""Each lesson's expected time and each exercise's difficulty, computed from the lesson itself.

    .venv/bin/python -m tools.lesson_times           # write the lines into every lesson
    .venv/bin/python -m tools.lesson_times --check   # exit 1, saying where, if a stored line is out of date

Nothing here is typed in by hand: the numbers come from what the lesson holds
and from its own run. The model, whose constants are all below:

- **reading**: the lesson's prose at ``PROSE_WPM`` words a minute (a little
  below the 238 that Brysbaert (2019) measured for silent reading of
  non-fiction, as this is technical text), its code at ``CODE_WPM`` (code is
  read about three times slower);
- **widgets**: ``WIDGET_MINUTES`` each, to set a control, read the line under
  the picture and answer the question the text asks;
- **an exercise**: its statement read at ``PROSE_WPM``, its solution written
  at ``TOKENS_PER_MINUTE`` tokens a minute (a name, an operator or a number
  is a token: ``x.max(axis=-1, keepdims=True)`` is 13), and
  ``CHECK_MINUTES`` to run the self-check and read its report. Its
  difficulty is its solution's size: 1 below ``DIFFICULTY_TOKENS[0]``
  tokens, 2 below ``DIFFICULTY_TOKENS[1]``, 3 from there;
- **running**: the seconds the lesson's cells took when
  ``tools.execute_notebooks`` last ran it, stored in the notebook's metadata
  (``course.run_seconds``), counted in whole minutes (rounded) and said in
  seconds too, as what they were then: a slower or busier machine takes
  longer.

The total is the sum of the parts the line names, so that they add up
(``tests/test_lesson_times.py`` adds them). The lesson's time goes in a line
``**Time:** ...`` under its title, an
exercise's in a line ``**Difficulty n of 3** ...`` under its heading, and
lesson 00's table of lessons has a column with each lesson's minutes.
tests/test_notebooks_stored.py checks that every stored line is what this
module computes.
"""

import argparse
import copy
import io
import math
import re
import sys
import tokenize

import nbformat

from .course import ROOT, lesson_notebooks

PROSE_WPM = 180
CODE_WPM = 60
WIDGET_MINUTES = 2
TOKENS_PER_MINUTE = 10
CHECK_MINUTES = 2
DIFFICULTY_TOKENS = (40, 100)

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
SOLUTION = re.compile(r"### BEGIN SOLUTION\n(.*?)### END SOLUTION", re.S)
TIME_LINE = re.compile(r"^\*\*Time:\*\* .*$", re.M)
DIFFICULTY_LINE = re.compile(r"^\*\*Difficulty [1-3] of 3\*\*.*$", re.M)
TABLE_ROW = re.compile(r"^\| `(?P<lesson>\d\d_\w+)` \| (?P<question>[^|]*?) \|(?: [^|]* \|)?$", re.M)
TABLE_HEAD = re.compile(r"^\| notebook \| the question it answers \|(?: [^|]* \|)?\n\|(?: --- \|)+$", re.M)


def words(text):
    """The words of ``text`` (prose or code), with the lines this module writes left out."""
    text = TIME_LINE.sub("", DIFFICULTY_LINE.sub("", text))
    return len(text.split())


def solution_tokens(source):
    """The names, operators, numbers and strings of the code between an answer cell's solution markers."""
    match = SOLUTION.search(source)
    if match is None:
        raise ValueError("an answer cell without ### BEGIN SOLUTION ... ### END SOLUTION")
    kinds = (tokenize.NAME, tokenize.OP, tokenize.NUMBER, tokenize.STRING)
    return [t.string for t in tokenize.generate_tokens(io.StringIO(match.group(1)).readline) if t.type in kinds]


def solution_lines(source):
    """The solution's lines of code (not blank, not comments)."""
    return [line for line in SOLUTION.search(source).group(1).splitlines()
            if line.strip() and not line.strip().startswith("#")]


def difficulty(tokens):
    """1, 2 or 3 from the solution's size in tokens."""
    return 1 + sum(tokens >= limit for limit in DIFFICULTY_TOKENS)


def _grade_id(cell):
    return cell.metadata.get("nbgrader", {}).get("grade_id", "")


def exercises(nb):
    """``[(name, statement_index, answer_index)]``: each exercise's answer cell and the markdown cell above it."""
    found = []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "code" and _grade_id(cell).endswith("_answer"):
            statement = next((j for j in range(i - 1, -1, -1) if nb.cells[j].cell_type == "markdown"), None)
            if statement is None:
                raise ValueError(f"exercise {_grade_id(cell)!r} has no markdown cell above it")
            found.append((_grade_id(cell)[: -len("_answer")], statement, i))
    return found


def exercise_estimate(nb, statement, answer):
    """``{"difficulty", "minutes", "tokens", "lines"}`` of one exercise."""
    source = nb.cells[answer].source
    tokens = len(solution_tokens(source))
    minutes = words(nb.cells[statement].source) / PROSE_WPM + tokens / TOKENS_PER_MINUTE + CHECK_MINUTES
    return {"difficulty": difficulty(tokens), "minutes": math.ceil(minutes), "tokens": tokens,
            "lines": len(solution_lines(source))}


def run_seconds(nb):
    """The seconds the lesson's cells took in their last run by tools.execute_notebooks."""
    seconds = nb.metadata.get("course", {}).get("run_seconds")
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or seconds <= 0:
        raise ValueError("the notebook has no metadata course.run_seconds: run it with "
                         "python -m tools.execute_notebooks first")
    return seconds


def widget_cells(nb):
    """The code cells whose stored output is a widget."""
    return [i for i, c in enumerate(nb.cells) if c.cell_type == "code"
            and any(WIDGET_MIME in o.get("data", {}) for o in c.get("outputs", []))]


def lesson_estimate(nb):
    """``{"total", "reading", "widgets", "widget_minutes", "exercises", "exercise_minutes", "run_seconds"}``."""
    found = exercises(nb)
    statements = {s for _, s, _ in found}
    answers = {a for _, _, a in found}
    prose = sum(words(c.source) for i, c in enumerate(nb.cells) if c.cell_type == "markdown" and i not in statements)
    code = sum(words(c.source) for i, c in enumerate(nb.cells) if c.cell_type == "code" and i not in answers)
    reading = math.ceil(prose / PROSE_WPM + code / CODE_WPM)
    widgets = len(widget_cells(nb))
    per_exercise = {name: exercise_estimate(nb, s, a) for name, s, a in found}
    exercise_minutes = sum(e["minutes"] for e in per_exercise.values())
    seconds = run_seconds(nb)
    run_minutes = round(seconds / 60)
    return {"total": reading + widgets * WIDGET_MINUTES + exercise_minutes + run_minutes, "reading": reading,
            "widgets": widgets, "widget_minutes": widgets * WIDGET_MINUTES, "exercises": per_exercise,
            "exercise_minutes": exercise_minutes, "run_seconds": seconds, "run_minutes": run_minutes}


def _plural(n, word):
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def time_line(estimate):
    """The line under a lesson's title: the total, then the parts that make it up, then the cells' run time."""
    parts = [f"{estimate['reading']} to read"]
    if estimate["widgets"]:
        parts.append(f"{estimate['widget_minutes']} for {'its widget' if estimate['widgets'] == 1 else 'its ' + str(estimate['widgets']) + ' widgets'}")
    if estimate["exercises"]:
        n = len(estimate["exercises"])
        parts.append(f"{estimate['exercise_minutes']} for {'its exercise' if n == 1 else f'its {n} exercises'}")
    if estimate["run_minutes"]:
        parts.append(f"{estimate['run_minutes']} for its cells to run")
    listed = f"{', '.join(parts[:-1])} and {parts[-1]}" if len(parts) > 1 else parts[0]
    seconds = math.ceil(estimate["run_seconds"])
    return (f"**Time:** about {estimate['total']} minutes: {listed}. Its cells ran in {_plural(seconds, 'second')} "
            "when the course last ran them; a slower or busier machine takes longer.")


def stated_parts(line):
    """``(total, [its parts' minutes])`` of a time line as written (``time_line``'s), to check that they add up."""
    head = re.match(r"\*\*Time:\*\* about (\d+) minutes: (.*?)\. Its cells", line)
    if head is None:
        raise ValueError(f"not a lesson's time line: {line!r}")
    return int(head.group(1)), [int(n) for n in re.findall(r"(?:^|, | and )(\d+) (?:to read|for)", head.group(2))]


def difficulty_line(estimate):
    """The line under an exercise's heading."""
    return (f"**Difficulty {estimate['difficulty']} of 3**, about {estimate['minutes']} minutes "
            f"(the solution is {_plural(estimate['lines'], 'line')} of code).")


def _set_line(source, pattern, line, after_first_line):
    """``source`` with the line that ``pattern`` matches replaced by ``line``, or ``line`` put after its first
    line (the heading) as a paragraph of its own."""
    if pattern.search(source):
        return pattern.sub(lambda _: line, source, count=1)
    if not after_first_line:
        raise ValueError(f"no line matching {pattern.pattern!r} to replace")
    heading, _, rest = source.partition("\n")
    return f"{heading}\n\n{line}\n\n{rest.lstrip(chr(10))}".rstrip("\n")


def annotate(nb):
    """A copy of the lesson ``nb`` with its time line and its exercises' difficulty lines as computed."""
    nb = copy.deepcopy(nb)
    estimate = lesson_estimate(nb)
    nb.cells[0].source = _set_line(nb.cells[0].source, TIME_LINE, time_line(estimate), after_first_line=True)
    for name, statement, _ in exercises(nb):
        cell = nb.cells[statement]
        cell.source = _set_line(cell.source, DIFFICULTY_LINE, difficulty_line(estimate["exercises"][name]),
                                after_first_line=True)
    return nb


def annotate_table(nb, totals):
    """A copy of lesson 00 ``nb`` whose table of lessons has a column with each lesson's minutes (``totals``)."""
    nb = copy.deepcopy(nb)
    cells = [c for c in nb.cells if c.cell_type == "markdown" and TABLE_HEAD.search(c.source)]
    if len(cells) != 1:
        raise ValueError(f"lesson 00 must have one table of lessons, found {len(cells)}")
    cell = cells[0]
    cell.source = TABLE_HEAD.sub("| notebook | the question it answers | minutes |\n| --- | --- | --- |", cell.source)

    def row(match):
        lesson = match["lesson"]
        if lesson not in totals:
            raise ValueError(f"lesson 00's table names {lesson}, which is not a lesson")
        return f"| `{lesson}` | {match['question']} | {totals[lesson]} |"

    cell.source = TABLE_ROW.sub(row, cell.source)
    listed = {m["lesson"] for m in TABLE_ROW.finditer(cell.source)}
    missing = sorted(name for name in totals if name not in listed and not name.startswith("00_"))
    if missing:
        raise ValueError(f"lesson 00's table lacks {', '.join(missing)}")
    return nb


def annotated(paths):
    """``{path: notebook}``: every lesson with its lines as computed, lesson 00 with the table's column too."""
    notebooks = {path: annotate(nbformat.read(path, as_version=4)) for path in paths}
    totals = {path.parent.name: lesson_estimate(nb)["total"] for path, nb in notebooks.items()}
    for path, nb in notebooks.items():
        if path.parent.name.startswith("00_"):
            notebooks[path] = annotate_table(nb, totals)
    return notebooks


def main(argv):
    parser = argparse.ArgumentParser(prog="python -m tools.lesson_times", description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if a lesson is out of date")
    args = parser.parse_args(argv)
    stale = []
    for path, nb in annotated(lesson_notebooks()).items():
        stored = nbformat.read(path, as_version=4)
        changed = [i for i, (a, b) in enumerate(zip(stored.cells, nb.cells)) if a.source != b.source]
        if not changed:
            continue
        stale.append(f"{path.relative_to(ROOT)}: cells {', '.join(map(str, changed))}")
        if not args.check:
            nbformat.write(nb, path)
    for line in stale:
        print(("out of date: " if args.check else "updated: ") + line)
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
