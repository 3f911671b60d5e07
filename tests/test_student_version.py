"""A lesson as a learner gets it from tools/student.py. That Run All shows the whole lesson, then stops at the
first unanswered exercise with one short sentence that names the function to write, and that its self-check
says the exercise is not done yet, is shown in JupyterLab itself (tests/test_browser_lab.py)."""

from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
LESSONS = sorted((ROOT / "notebooks").glob("0[1-9]_*/*.ipynb"))


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
