"""No learner's notebook stops another's grading (issue 51, item 3): whatever one notebook holds (a lone surrogate in
a comment, bytes that are not UTF-8, JSON's edge cases), it is that learner's error, said in words on their page,
and `make grade` writes every other learner's grades, pages, CSV files and the class report."""

import csv
import json

import pytest

from grading_helpers import course_after_make_student, run_grader
from report_class import answer_in, hand_in_folder, write_roster

LESSON = "01_attention"
SOFTMAX = ("def softmax(x, axis=-1):\n    # a comment with a lone surrogate: \ud800\n"
           "    e = np.exp(x - x.max(axis=axis, keepdims=True))\n    return e / e.sum(axis=axis, keepdims=True)\n")


def _solved(root):
    return json.loads((root / "notebooks" / LESSON / f"{LESSON}.ipynb").read_text())


def _odd_notebooks(root):
    """{learner: the notebook's bytes}: each holds one thing no notebook should."""
    surrogate = json.dumps(answer_in(_solved(root), "softmax", SOFTMAX)).encode()  # json.dumps escapes it: \ud800
    latin1 = json.dumps(answer_in(_solved(root), "softmax", SOFTMAX.replace("\ud800", "caf\u00e9")),
                        ensure_ascii=False).encode("latin-1", "replace")
    utf16 = json.dumps(_solved(root)).encode("utf-16")
    big_number = json.dumps(_solved(root)).replace('"nbformat": 4', '"nbformat": ' + "9" * 5000).encode()
    nan = json.dumps(_solved(root)).replace('"nbformat_minor": 5', '"nbformat_minor": NaN').encode()
    nul = json.dumps(answer_in(_solved(root), "softmax", SOFTMAX.replace("\ud800", "\x00"))).encode()
    return {"odd-surrogate": surrogate, "odd-latin1": latin1, "odd-utf16": utf16, "odd-big-number": big_number,
            "odd-nan": nan, "odd-nul": nul}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    root = course_after_make_student(tmp_path_factory, "odd-notebooks")
    odd = _odd_notebooks(root)
    honest = ["honest-a", "honest-z"]
    write_roster(root, honest + list(odd))
    for student in honest:
        hand_in_folder(root, student, LESSON, _solved(root))
    for student, data in odd.items():
        folder = root / "submitted" / student / LESSON
        folder.mkdir(parents=True)
        (folder / f"{LESSON}.ipynb").write_bytes(data)
    return root, odd, honest, run_grader(root, "--lessons", LESSON)


def test_make_grade_writes_everyone_s_files_whatever_one_notebook_holds(graded):
    root, odd, honest, result = graded
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    rows = list(csv.DictReader(open(root / "grades_by_exercise.csv", encoding="utf-8")))
    for student in honest:
        assert {r["status"] for r in rows if r["student_id"] == student} == {"passed"}, student
    assert {r["student_id"] for r in rows} >= set(odd) | set(honest)
    for student in [*honest, *odd]:
        assert (root / "feedback" / student / "index.html").is_file(), student
    assert (root / "report" / "index.html").is_file()


def test_a_lone_surrogate_is_that_learner_s_error_said_in_words_on_their_page(graded):
    root, _, _, _ = graded
    rows = list(csv.DictReader(open(root / "grades_by_exercise.csv", encoding="utf-8")))
    [row] = [r for r in rows if r["student_id"] == "odd-surrogate" and r["exercise"] == "softmax"]
    assert row["status"] == "error" and "surrogate" in row["note"] and "line 2" in row["note"], row
    assert "grader's machine failed" not in row["note"]
    page = (root / "feedback" / "odd-surrogate" / "index.html").read_text(encoding="utf-8")
    assert "surrogate" in page
    other = [r for r in rows if r["student_id"] == "odd-surrogate" and r["exercise"] != "softmax"]
    assert other and {r["status"] for r in other} == {"passed"}, other


@pytest.mark.parametrize("student", ["odd-latin1", "odd-utf16", "odd-big-number", "odd-nan", "odd-nul"])
def test_an_odd_encoding_or_json_edge_case_is_graded_or_said_never_the_machine_s_failure(graded, student):
    root, _, _, result = graded
    rows = [r for r in csv.DictReader(open(root / "grades_by_exercise.csv", encoding="utf-8"))
            if r["student_id"] == student]
    assert rows and not [r for r in rows if "machine failed" in r["note"]], rows
    assert all(r["status"] in ("passed", "failed", "error", "tampered") for r in rows), rows
