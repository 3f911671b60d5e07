"""The committed notebooks: laid out as nbgrader assignments, executed, and free of run-to-run noise."""

import re
from pathlib import Path

import nbformat
import pytest

import encoder_lib

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*/*.ipynb"))
LESSONS = ["00", "01", "02", "03", "04", "05", "06", "07", "08"]
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


def ids(paths):
    return [p.name for p in paths]


def code_cells(path):
    return [c for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code" and c.source.strip()]


def test_each_lesson_is_a_folder_with_its_numbered_notebook():
    numbers = sorted(p.name[:2] for p in NOTEBOOKS)
    assert numbers[: len(LESSONS)] == LESSONS
    for path in NOTEBOOKS:
        assert re.fullmatch(r"\d\d_[a-z0-9_]+", path.parent.name), path
        assert path.name.startswith(path.parent.name[:3]), f"{path}: name must start with its folder's number"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=ids(NOTEBOOKS))
def test_every_code_cell_has_stored_outputs_from_a_run(path):
    never_run = [c.source.splitlines()[0] for c in code_cells(path) if c.execution_count is None]
    assert not never_run, f"cells never executed (run tools/execute_notebooks.py): {never_run}"
    counts = [c.execution_count for c in code_cells(path)]
    assert counts == sorted(counts), "cells were run out of order; re-execute top to bottom"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=ids(NOTEBOOKS))
def test_widget_state_is_not_committed_and_widget_cells_are_ignored_by_nbval(path):
    nb = nbformat.read(path, as_version=4)
    assert "widgets" not in nb.metadata, "metadata.widgets is committed; run tools/execute_notebooks.py"
    for cell in code_cells(path):
        shows_widget = any(WIDGET_MIME in out.get("data", {}) for out in cell.outputs)
        if shows_widget:
            assert "nbval-ignore-output" in cell.metadata.get("tags", []), cell.source


def nbgrader(cell):
    return cell.metadata.get("nbgrader", {})


@pytest.mark.parametrize("path", NOTEBOOKS, ids=ids(NOTEBOOKS))
def test_notebooks_do_not_copy_library_functions_outside_exercise_answers(path):
    for cell in code_cells(path):
        if nbgrader(cell).get("solution"):
            continue  # the learner writes their own version here
        for name in encoder_lib.__all__:
            assert not re.search(rf"^\s*def {name}\(", cell.source, re.M), f"{path.name} redefines {name}"


@pytest.mark.parametrize("path", NOTEBOOKS[1:], ids=ids(NOTEBOOKS[1:]))
def test_each_exercise_is_an_answer_a_self_check_and_a_locked_test_cell_worth_its_definition_s_points(path):
    """The grader takes points and cases from encoder_lib.grading.EXERCISES: the notebook must agree with it."""
    from encoder_lib.grading import EXERCISES

    cells = nbformat.read(path, as_version=4).cells
    answers = [i for i, c in enumerate(cells) if nbgrader(c).get("solution")]
    assert answers, f"{path.name} has no exercise"
    names = []
    for i in answers:
        name = nbgrader(cells[i])["grade_id"].removesuffix("_answer")
        names.append(name)
        answer, check, tests = cells[i : i + 3]
        assert f"def {name}(" in answer.source
        assert "### BEGIN SOLUTION" in answer.source and "### END SOLUTION" in answer.source
        assert nbgrader(check).get("locked") and check.source.strip() == f"grading.self_check({name})"
        assert nbgrader(check)["grade_id"] == f"{name}_self_check" and nbgrader(tests)["grade_id"] == f"{name}_tests"
        assert nbgrader(tests).get("grade") and nbgrader(tests).get("locked")
        assert nbgrader(tests)["points"] == EXERCISES[name].points, f"{name}: the notebook and EXERCISES disagree"
        assert tests.source.rstrip().endswith(f"grading.visible_tests({name})")
        assert "HIDDEN TESTS" not in tests.source, "hidden cases live in EXERCISES; the grader runs them outside"
    assert names == [n for n, e in EXERCISES.items() if e.lesson == path.parent.name]


@pytest.mark.parametrize("path", NOTEBOOKS[1:], ids=ids(NOTEBOOKS[1:]))
def test_exercises_come_after_every_widget(path):
    """In a student version, Run All reaches every explanation and widget before the first exercise stops it."""
    cells = nbformat.read(path, as_version=4).cells
    first_exercise = min(i for i, c in enumerate(cells) if nbgrader(c).get("solution"))
    widgets = [i for i, c in enumerate(cells) if "nbval-ignore-output" in c.metadata.get("tags", [])]
    assert widgets and max(widgets) < first_exercise


def exercise_cells(path):
    """{exercise: [answer, self-check, tests] sources} and the notebook's first code cell (its imports)."""
    cells = code_cells(path)
    found = {}
    for cell in cells:
        grade_id = nbgrader(cell).get("grade_id", "")
        for part in ("_answer", "_self_check", "_tests"):
            if grade_id.endswith(part):
                found.setdefault(grade_id.removesuffix(part), []).append(cell.source)
    return cells[0].source, found


SELF_CONTAINED = '''
import json, sys
imports, exercises = json.loads(sys.stdin.read())
failures = {}
for name, sources in exercises.items():
    namespace = {"__name__": "__main__"}   # a kernel just restarted: nothing but what these cells define
    try:
        for source in [imports, *sources]:
            exec(compile(source, name, "exec"), namespace)
    except Exception as exc:
        failures[name] = f"{type(exc).__name__}: {exc}"
print(json.dumps(failures))
'''


@pytest.mark.parametrize("path", [p for p in NOTEBOOKS if exercise_cells(p)[1]], ids=lambda p: p.name)
def test_each_exercise_passes_after_a_restart_with_only_the_imports_and_its_own_cells(path):
    """The import cell, the answer, its self-check and its test cell: nothing from other cells is needed."""
    import json
    import subprocess
    import sys

    imports, exercises = exercise_cells(path)
    assert "import encoder_lib" in imports, "the first code cell must be the imports"
    done = subprocess.run([sys.executable, "-c", SELF_CONTAINED], input=json.dumps([imports, exercises]),
                          capture_output=True, text=True, timeout=600, cwd=path.parent)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) == {}


# ---------------------------------------------------------------- the text quotes what the cells print

QUOTED = re.compile(r"(?<![\w.^/\-])-?\d+\.\d+(?:e-?\d+)?%?(?![\w.]*\d)|(?<![\w.^/\-])\d+(?:\.\d+)?%")
PRINTED = re.compile(r"-?\d+\.\d+(?:e[-+]?\d+)?%?|\d+%")
NAMES = ("wav2vec 2.0",)  # numbers that are part of a name, not a quote


def significant_digits(number):
    return len(number.lstrip("-").rstrip("%").replace(".", "").lstrip("0"))


def decimals(number):
    body = number.lstrip("-").rstrip("%")
    return len(body.split(".")[1]) if "." in body and "e" not in body else 0


def is_quote_of(number, printed):
    """``number`` (from the text) is one of ``printed`` as shown, or (with 2 or more significant digits)
    one of them rounded to the text's decimals: 0.94 quotes 0.9437; 0.3 does not quote 0.290."""
    body, percent = number.lstrip("-").rstrip("%"), number.endswith("%")
    for shown in printed:
        value, shown_percent = shown.lstrip("-").rstrip("%"), shown.endswith("%")
        if value == body and shown_percent == percent:
            return True
        if significant_digits(number) < 2 or (shown_percent and not percent) or "e" in value:
            continue
        scaled = float(value) * (100 if percent and not shown_percent else 1)
        if decimals(shown) + (2 if percent and not shown_percent else 0) >= decimals(number) and \
                f"{scaled:.{decimals(number)}f}" == body:
            return True
    return False


def text_numbers_not_printed(path):
    nb = nbformat.read(path, as_version=4)
    printed, code = set(), []
    for cell in nb.cells:
        if cell.cell_type == "code":
            code.append(cell.source)
            for out in cell.get("outputs", []):
                text = out.get("text") or out.get("data", {}).get("text/plain", "")
                printed.update(PRINTED.findall(text if isinstance(text, str) else "".join(text)))
    code = "\n".join(code)
    found = []
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "markdown":
            continue
        prose = re.sub(r"`[^`]*`", " ", re.sub(r"\$[^$]*\$", " ", cell.source))  # formulas and code are not quotes
        for name in NAMES:
            prose = prose.replace(name, " ")
        for match in QUOTED.finditer(prose):
            number = match.group(0)
            in_code = re.search(r"(?<![\w.])" + re.escape(number.rstrip("%")) + r"(?![\w.])", code)
            if not (is_quote_of(number, printed) or in_code):
                found.append(f"cell {index}: {number} in '...{prose[max(0, match.start() - 50):match.end() + 20]}...'")
    return found


def test_a_quote_is_checked_against_the_printout():
    assert is_quote_of("0.94", {"0.9437"}) and is_quote_of("11.2%", {"11.2%"}) and is_quote_of("25.3%", {"0.2534"})
    assert not is_quote_of("0.3", {"0.290"}) and not is_quote_of("6%", {"11.2%"}) and not is_quote_of("0.95", {"0.9"})


@pytest.mark.parametrize("path", NOTEBOOKS, ids=ids(NOTEBOOKS))
def test_every_number_the_text_quotes_is_one_the_notebook_prints(path):
    """A decimal or a percentage in a lesson's text is printed by one of its cells (or is in its code)."""
    assert not text_numbers_not_printed(path), "\n".join(text_numbers_not_printed(path))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=ids(NOTEBOOKS))
def test_no_printout_shows_a_negative_zero(path):
    for cell in code_cells(path):
        for out in cell.outputs:
            text = out.get("text") or out.get("data", {}).get("text/plain", "")
            text = text if isinstance(text, str) else "".join(text)
            assert not re.search(r"(?<![\w.])-0\.0*(?![0-9]*[1-9])(?![\de])", text), f"-0 printed by: {cell.source[:80]}"


# ---------------------------------------------------------------- every Try-it question has its answer, marked

QUESTION = re.compile(r"^\*\*Question: .*?\*\*", re.M | re.S)
SECTION = re.compile(r"^##? ", re.M)  # a lesson's sections; a ### part of a Try-it section has a question of its own
ANSWER_TAG = "try-it-answer"  # the lead's student versions and the website fold these cells into a disclosure


def try_it_problems(cells):
    """What is wrong with the Try-it answers of a notebook's ``cells``: each question needs exactly one answer cell
    after it and before the next question or section, a markdown cell tagged ``try-it-answer`` that starts with
    ``**Answer.**`` and holds only the answer."""
    events, problems = [], []
    for i, cell in enumerate(cells):
        tagged = ANSWER_TAG in cell.metadata.get("tags", [])
        if tagged:
            if cell.cell_type != "markdown" or not re.match(r"\*\*Answer\.\*\*\s", cell.source):
                problems.append(f"cell {i}: a {ANSWER_TAG} cell must be markdown starting with '**Answer.** '")
            if QUESTION.search(cell.source) or SECTION.search(cell.source) or re.search(r"^#", cell.source, re.M):
                problems.append(f"cell {i}: an answer cell holds only the answer, no question or heading")
            events.append((i, 0, "answer"))
        elif cell.cell_type == "markdown" and cell.source.lstrip().startswith("**Answer"):
            problems.append(f"cell {i}: an answer not tagged {ANSWER_TAG}, or not starting with '**Answer.** '")
        if cell.cell_type == "markdown" and not tagged:
            events += [(i, m.start(), "question") for m in QUESTION.finditer(cell.source)]
            events += [(i, m.start(), "section") for m in SECTION.finditer(cell.source)]
    question, answers = None, []
    for i, _, kind in sorted(events) + [(len(cells), 0, "section")]:
        if kind == "answer":
            if question is None:
                problems.append(f"cell {i}: an answer with no Try-it question before it in its section")
            answers.append(i)
            continue
        if question is not None and len(answers) != 1:
            problems.append(f"the question in cell {question} has {len(answers)} answer cells ({answers}), not one")
        question, answers = (i if kind == "question" else None), []
    return problems


@pytest.mark.parametrize("path", NOTEBOOKS[1:], ids=ids(NOTEBOOKS[1:]))
def test_every_try_it_question_has_one_tagged_answer_cell_before_the_next_question_or_section(path):
    cells = nbformat.read(path, as_version=4).cells
    assert any(c.cell_type == "markdown" and QUESTION.search(c.source) for c in cells), "a lesson without a question"
    assert not try_it_problems(cells), "\n".join(try_it_problems(cells))


def test_the_answer_check_sees_a_missing_a_doubled_and_an_untagged_answer():
    from nbformat.v4 import new_markdown_cell as md

    def answer(text="**Answer.** Yes."):
        return md(text, metadata={"tags": [ANSWER_TAG]})

    question = md("## Try it\n\n**Question: does it?**")
    assert try_it_problems([question, answer(), md("## Exercise")]) == []
    assert try_it_problems([question, md("## Exercise"), answer()]) == [
        "the question in cell 0 has 0 answer cells ([]), not one",
        "cell 2: an answer with no Try-it question before it in its section"]
    assert try_it_problems([question, answer(), answer()]) == ["the question in cell 0 has 2 answer cells ([1, 2]), not one"]
    assert try_it_problems([question, md("**Answer.** Yes.")]) == [
        "cell 1: an answer not tagged try-it-answer, or not starting with '**Answer.** '",
        "the question in cell 0 has 0 answer cells ([]), not one"]
    assert "holds only the answer" in try_it_problems([question, answer("**Answer.** Yes.\n\n## Next")])[0]


HEAD_NAMED = re.compile(r"\b[Ll]ayer (\d+)(?:,|'s)?\s+head (\d+)")


def heads_named(path):
    """``(named in the text, printed by the cells)``: every (layer, head) lesson 08's prose and printouts name."""
    nb = nbformat.read(path, as_version=4)
    prose = " ".join(c.source for c in nb.cells if c.cell_type == "markdown")
    printed = " ".join(out.get("text", "") for c in nb.cells if c.cell_type == "code" for out in c.outputs)
    return set(HEAD_NAMED.findall(prose)), set(HEAD_NAMED.findall(printed))


def test_lesson_08_names_only_heads_its_printouts_name_layers_from_1_heads_from_0():
    """A head the text names ("layer 1, head 2") is one the table prints, numbered the same way; the text says how."""
    path = next(p for p in NOTEBOOKS if p.name.startswith("08"))
    named, printed = heads_named(path)
    assert len(named) >= 3 and named <= printed, sorted(named - printed)
    assert any(head == "0" for _, head in printed), "heads count from 0, as in lesson 02"
    text = " ".join(c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "markdown")
    assert "Heads count from 0, as in lesson 02" in text
