"""A lesson as a learner gets it: Run All shows the whole lesson, then stops at the first
unanswered exercise with one short sentence that names the function to write."""

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError
from nbgrader.preprocessors import ClearHiddenTests, ClearOutput, ClearSolutions

from tools.course import use_this_environment

ROOT = Path(__file__).resolve().parent.parent
LESSONS = sorted((ROOT / "notebooks").glob("0[1-9]_*/*.ipynb"))


def student_version(path):
    """The notebook as nbgrader's generate_assignment writes it: solutions stubbed, hidden tests gone."""
    nb = nbformat.read(path, as_version=4)
    nb, _ = ClearOutput().preprocess(nb, {})
    nb, _ = ClearSolutions().preprocess(nb, {})
    nb, _ = ClearHiddenTests().preprocess(nb, {})
    return nb


def grade_id(cell):
    return cell.metadata.get("nbgrader", {}).get("grade_id", "")


@pytest.mark.slow  # a kernel runs each lesson
@pytest.mark.parametrize("path", LESSONS, ids=[p.name for p in LESSONS])
def test_run_all_runs_the_lesson_and_stops_at_the_first_exercise_with_a_short_message(path):
    nb = student_version(path)
    assert "### BEGIN SOLUTION" not in str(nb) and "hidden_tests" not in str(nb)
    use_this_environment()
    client = NotebookClient(nb, timeout=120, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}})
    with pytest.raises(CellExecutionError):
        client.execute()
    ran = [c for c in nb.cells if c.cell_type == "code" and c.get("execution_count")]
    stopped_at = ran[-1]
    first_answer = next(c for c in nb.cells if grade_id(c).endswith("_answer"))
    name = grade_id(first_answer).removesuffix("_answer")
    assert grade_id(stopped_at) == f"{name}_tests", "Run All stopped before the first exercise's tests"
    # every cell before it ran without an error: all explanations and widgets are shown
    for cell in ran[:-1]:
        assert not [o for o in cell.outputs if o.output_type == "error"], cell.source[:80]
    self_check = next(c for c in nb.cells if grade_id(c) == f"{name}_self_check")
    assert "not done yet" in "".join(o.get("text", "") for o in self_check.outputs)
    (error,) = [o for o in stopped_at.outputs if o.output_type == "error"]
    assert error.ename == "NotImplementedError"
    assert len(error.traceback) == 1 and f"`{name}` is not written yet" in error.traceback[0]


def test_every_try_it_answer_is_folded_in_the_student_version(tmp_path):
    """A learner predicts before reading: each tagged answer is a closed <details>, its text unchanged inside."""
    from tools import student

    for path in LESSONS:
        copy = tmp_path / path.name
        copy.write_bytes(path.read_bytes())
        tagged = [c.source for c in nbformat.read(path, as_version=4).cells
                  if student.TRY_IT_ANSWER in c.metadata.get("tags", [])]
        assert student.fold_answers(copy) == len(tagged)
        folded = [c.source for c in nbformat.read(copy, as_version=4).cells
                  if student.TRY_IT_ANSWER in c.metadata.get("tags", [])]
        for before, after in zip(tagged, folded):
            assert after.startswith("<details>\n<summary>") and "open" not in after.split("\n", 1)[0]
            assert before.strip() in after and after.rstrip().endswith("</details>")
        assert student.fold_answers(copy) == len(tagged)  # folding twice changes nothing more
        assert [c.source for c in nbformat.read(copy, as_version=4).cells
                if student.TRY_IT_ANSWER in c.metadata.get("tags", [])] == folded
    assert sum(student.TRY_IT_ANSWER in c.metadata.get("tags", [])
               for p in LESSONS for c in nbformat.read(p, as_version=4).cells) >= 12
