"""A lesson as a learner gets it from tools/student.py. That Run All shows the whole lesson and reaches its Hand in
button whatever the answers (each cell that may fail on an answer carries the raises-exception tag), with one short
sentence that names the function to write at each unanswered exercise, and that its self-check says the exercise is
not done yet, is shown in JupyterLab itself (tests/test_browser_lab.py)."""

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


def test_each_cell_that_may_fail_on_an_answer_lets_run_all_go_on_and_no_other_does(tmp_path):
    """The visible-tests cells, and the lesson's own cells that hand the learner's function on or call it (lesson
    08's run of your block through the model), carry raises-exception; answers, self-checks and the rest do not."""
    from tools import student

    tagged_elsewhere = 0
    for path in LESSONS:
        copy = tmp_path / path.name
        copy.write_bytes(path.read_bytes())
        names = student.learner_functions(nbformat.read(copy, as_version=4))
        assert names, f"{path.name}: no function to write"
        assert student.let_run_all_go_on(copy) > 0
        assert student.let_run_all_go_on(copy) == 0  # tagging twice adds nothing
        for cell in nbformat.read(copy, as_version=4).cells:
            nbgrader = cell.metadata.get("nbgrader", {})
            tagged = student.RAISES in cell.metadata.get("tags", [])
            if nbgrader:
                assert tagged == bool(nbgrader.get("grade")), (path.name, nbgrader.get("grade_id"))
            elif cell.cell_type == "code" and tagged:
                assert any(f"{name}" in cell.source for name in names), cell.source
                tagged_elsewhere += 1
    assert tagged_elsewhere >= 1  # lesson 08: compare_your_block(bert_block, sentences)


def test_a_name_in_a_string_a_comment_or_after_a_dot_is_not_the_learner_s_function():
    from tools import student

    cell = nbformat.v4.new_code_cell
    names = {"softmax"}
    assert not student.runs_learner_code(cell('print("softmax(x)")  # softmax\nel.softmax(x)'), names)
    assert not student.runs_learner_code(cell('config = el.BlockConfig(4, softmax="exact")'), names)  # a keyword
    assert student.runs_learner_code(cell("check(softmax, x)"), names)
    assert student.runs_learner_code(cell("%time softmax(x)"), names)  # a magic: read as words
    assert not student.runs_learner_code(nbformat.v4.new_markdown_cell("softmax(x)"), names)
