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
