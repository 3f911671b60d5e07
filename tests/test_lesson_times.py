"""Each lesson's time and each exercise's difficulty: stated up front, and what tools/lesson_times.py computes."""

import re

import nbformat
import pytest

from tools import execute_notebooks, lesson_times
from tools.course import lesson_notebooks

NOTEBOOKS = lesson_notebooks()
STORED = {path: nbformat.read(path, as_version=4) for path in NOTEBOOKS}
COMPUTED = lesson_times.annotated(NOTEBOOKS)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.parent.name for p in NOTEBOOKS])
def test_each_lesson_states_its_time_under_its_title_as_computed(path):
    first = STORED[path].cells[0].source
    assert first.startswith("# "), "the lesson's first cell is its title"
    stated = lesson_times.TIME_LINE.findall(first)
    assert stated == lesson_times.TIME_LINE.findall(COMPUTED[path].cells[0].source), \
        f"{path.name}: run python -m tools.lesson_times (stored: {stated})"
    assert first.index(stated[0]) < first.index("**You will learn**"), "the time comes before what it teaches"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.parent.name for p in NOTEBOOKS])
def test_each_exercise_states_its_difficulty_and_minutes_under_its_heading_as_computed(path):
    for name, statement, _ in lesson_times.exercises(STORED[path]):
        source = STORED[path].cells[statement].source
        heading, _, rest = source.partition("\n")
        assert heading.startswith("### "), f"{name}: the cell above the answer starts with its heading"
        line = rest.strip().splitlines()[0]
        assert line == lesson_times.difficulty_line(lesson_times.lesson_estimate(STORED[path])["exercises"][name]), \
            f"{name}: run python -m tools.lesson_times"


def test_nothing_is_out_of_date(capsys):
    assert lesson_times.main(["--check"]) == 0, capsys.readouterr().out


def test_lesson_00s_table_has_every_lessons_minutes():
    start = STORED[NOTEBOOKS[0]]
    table = next(c.source for c in start.cells if "| notebook |" in c.source)
    rows = dict(re.findall(r"^\| `(\d\d_\w+)` \|[^|]*\| (\d+) \|$", table, re.M))
    assert rows == {p.parent.name: str(lesson_times.lesson_estimate(STORED[p])["total"]) for p in NOTEBOOKS[1:]}


EXAMPLE = "### BEGIN SOLUTION\nx.max(axis=-1, keepdims=True)\n### END SOLUTION"


def test_lesson_00_explains_the_model_with_its_own_constants():
    text = " ".join(c.source for c in STORED[NOTEBOOKS[0]].cells if c.cell_type == "markdown")
    for phrase in (f"{lesson_times.PROSE_WPM} words a minute", f"its code at {lesson_times.CODE_WPM}",
                   f"{lesson_times.WIDGET_MINUTES} minutes for each widget",
                   f"{lesson_times.TOKENS_PER_MINUTE} tokens a minute", f"{lesson_times.CHECK_MINUTES} minutes to run",
                   f"1 below {lesson_times.DIFFICULTY_TOKENS[0]} tokens", f"3 from {lesson_times.DIFFICULTY_TOKENS[1]}",
                   f"is {len(lesson_times.solution_tokens(EXAMPLE))})"):
        assert phrase in text, f"lesson 00 should say {phrase!r}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.parent.name for p in NOTEBOOKS])
def test_each_lesson_stores_the_seconds_its_cells_took(path):
    """Stored by tools.execute_notebooks as run_seconds computes it; no lesson's cells take over two minutes."""
    seconds = STORED[path].metadata["course"]["run_seconds"]
    assert isinstance(seconds, int) and 1 <= seconds <= execute_notebooks.CELL_TIMEOUT


@pytest.mark.parametrize("timings, stored", [((1.5, 2.25), 4), ((0.2,), 1), ((), 1), ((59.0, 1.0), 60)])
def test_the_stored_seconds_are_the_cells_time_rounded_up(timings, stored):
    cells, start = [], 0.0
    for seconds in timings:
        cell = nbformat.v4.new_code_cell("1")
        cell.metadata["execution"] = {"iopub.execute_input": f"2026-12-01T10:00:{start:09.6f}Z",
                                      "shell.execute_reply": f"2026-12-01T10:{int((start + seconds) // 60):02d}:"
                                                             f"{(start + seconds) % 60:09.6f}Z"}
        cells.append(cell)
        start += seconds
    assert execute_notebooks.run_seconds(nbformat.v4.new_notebook(cells=cells)) == stored


def test_difficulty_grows_with_the_solutions_size():
    low, high = lesson_times.DIFFICULTY_TOKENS
    assert [lesson_times.difficulty(n) for n in (1, low - 1, low, high - 1, high, 10 * high)] == [1, 1, 2, 2, 3, 3]
    estimates = {name: e for p in NOTEBOOKS for name, e in lesson_times.lesson_estimate(STORED[p])["exercises"].items()}
    assert estimates["bert_block"]["difficulty"] == 3 and estimates["gelu"]["difficulty"] == 1
    assert estimates["bert_block"]["minutes"] > estimates["multi_head_attention"]["minutes"] > estimates["gelu"]["minutes"]


def test_a_lesson_never_run_gets_a_clear_error():
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# A lesson")])
    with pytest.raises(ValueError, match="course.run_seconds: run it with python -m tools.execute_notebooks"):
        lesson_times.lesson_estimate(nb)


def test_an_answer_cell_without_solution_markers_gets_a_clear_error():
    with pytest.raises(ValueError, match="BEGIN SOLUTION"):
        lesson_times.solution_tokens("def softmax(x):\n    return x\n")


def test_the_run_time_is_the_kernels_time_on_the_cells():
    cells = [nbformat.v4.new_code_cell("1"), nbformat.v4.new_code_cell("2"), nbformat.v4.new_markdown_cell("x")]
    cells[0].metadata["execution"] = {"iopub.execute_input": "2026-12-01T10:00:00.000000Z",
                                      "shell.execute_reply": "2026-12-01T10:00:01.500000Z"}
    cells[1].metadata["execution"] = {"iopub.execute_input": "2026-12-01T10:00:02.000000Z",
                                      "shell.execute_reply": "2026-12-01T10:00:04.250000Z"}
    assert execute_notebooks.cells_seconds(nbformat.v4.new_notebook(cells=cells)) == pytest.approx(3.75)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.parent.name for p in NOTEBOOKS])
def test_each_lesson_s_parts_add_up_to_its_total_and_its_run_time_says_what_it_depends_on(path):
    [line] = lesson_times.TIME_LINE.findall(STORED[path].cells[0].source)
    total, parts = lesson_times.stated_parts(line)
    assert len(parts) >= 2 and sum(parts) == total, f"{path.parent.name}: {parts} add up to {sum(parts)}, not {total}"
    assert "when the course last ran them; a slower or busier machine takes longer" in line, line


def test_a_time_line_whose_parts_do_not_add_up_is_caught():
    total, parts = lesson_times.stated_parts("**Time:** about 75 minutes: 25 to read, 6 for its 3 widgets and 39 for "
                                             "its 3 exercises. Its cells ran in 3 seconds when the course last ran "
                                             "them; a slower or busier machine takes longer.")
    assert (total, parts) == (75, [25, 6, 39]) and sum(parts) != total
    with pytest.raises(ValueError, match="not a lesson's time line"):
        lesson_times.stated_parts("**Time:** about an hour.")
