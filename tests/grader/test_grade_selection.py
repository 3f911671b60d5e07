"""The teacher's workflow around `make grade` (issue 21, item 4), on a small course graded for real:

- ``LESSONS=`` (``--lessons``): the lessons the class is set are the only
  ones graded and counted, in every output, and a lesson not set is not
  shown as missing;
- else ``c.EncoderCourse.lessons`` in the course's ``nbgrader_config.py``
  sets them, for ``make grade`` and ``make report`` alike;
- ``STUDENT=`` and ``LESSON=`` (``--student``, ``--lesson``) grade just
  those: the others keep their stored results, every output file is still
  written for the whole class, and the summary says what was graded now;
- a regrade of a changed submission keeps the earlier ``grading.json`` and
  notebook in ``autograded/<id>/<lesson>/history/``;
- ``grades_lms.csv``: one row per learner with the roster's name and e-mail,
  a column per lesson set and the total, every field neutralised;
- what the teacher marks by hand in formgrader (a score, extra credit, a
  comment) reaches grades_by_exercise.csv, grades_lms.csv, the feedback page
  and the report, and is counted once;
- the feedback page at 375 px wide (Chromium): no sideways scrolling, lesson
  05's long formula within the screen.
"""

import copy
import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest

from encoder_lib.grading import EXERCISES
from encoder_lib.grading.exercises import BY_LESSON
from course_grader.class_report.data import FromGradebook
from course_grader.class_report.rows import read_rows
from course_grader.course_config import lessons_set
from course_grader.feedback_page import feedback_page
from course_grader.files import csv_field
from course_grader.outputs import LMS_COLUMNS, LMS_TOTAL, Result, lms_rows
from report_class import answer_in, hand_in_folder, open_gradebook, write_roster
from grading_helpers import course_after_make_student, graded_once, run_grader

ROOT = Path(__file__).resolve().parents[2]
SET = ("01_attention", "02_multi_head_attention")
LEARNERS = ("ada", "bob", "cy")
WRONG_SOFTMAX = "def softmax(x, axis=-1):\n    e = np.exp(x)\n    return e / e.sum(axis=axis, keepdims=True)\n"
FULL = {lesson: sum(EXERCISES[name].points for name in BY_LESSON[lesson]) for lesson in SET}


def rows_of(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def by_exercise(root):
    return {(r["student_id"], r["lesson"], r["exercise"]): r for r in rows_of(root / "grades_by_exercise.csv")}


def solved(root, lesson):
    return json.loads((root / "notebooks" / lesson / f"{lesson}.ipynb").read_text())


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """A course after `make student`, with a roster, and ada, bob and cy handing in lessons 01 and 02 solved
    (cy lesson 01 only), graded with LESSONS=01,02."""
    root = course_after_make_student(tmp_path_factory, "selection")
    write_roster(root, ["ada", "bob"])  # cy is not on the roster
    for student in LEARNERS:
        for lesson in SET[:1] if student == "cy" else SET:
            hand_in_folder(root, student, lesson, solved(root, lesson))
    return graded_once(root, "--lessons", ",".join(SET))


@pytest.mark.grading
def test_only_the_lessons_set_are_graded_and_counted_and_none_other_is_missing(course):
    root, first = course
    rows = by_exercise(root)
    assert {lesson for _, lesson, _ in rows} == set(SET)
    assert rows["cy", SET[1], "split_heads"]["status"] == "missing"
    assert all(r["status"] == "passed" for (s, l, _), r in rows.items() if not (s == "cy" and l == SET[1]))
    assert f"lessons counted: {', '.join(SET)}: LESSONS=" in first.stdout
    assert "graded 3 learners, 2 lessons each: 5 handed in, 1 missing" in first.stdout
    page = (root / "feedback" / "ada" / "index.html").read_text()
    assert f"{sum(FULL.values()):g} of {sum(FULL.values()):g} points" in page and "03_feed_forward" not in page
    assert "03_feed_forward" not in (root / "report" / "index.html").read_text()


@pytest.mark.grading
def test_grades_lms_csv_has_a_row_per_learner_with_the_roster_a_column_per_lesson_set_and_the_total(course):
    root, _ = course
    with open(root / "grades_lms.csv", newline="") as f:
        header, *body = list(csv.reader(f))
    assert header == list(LMS_COLUMNS) + list(SET) + [LMS_TOTAL]
    lms = {row["SIS User ID"]: row for row in rows_of(root / "grades_lms.csv")}
    assert sorted(lms) == sorted(LEARNERS)
    assert lms["ada"]["Student"] == "Ada, Ada" and lms["ada"]["Email address"] == "ada@school.example"
    assert lms["cy"]["Student"] == "cy" and lms["cy"]["Email address"] == ""  # not on the roster
    assert lms["ada"]["SIS Login ID"] == "ada" and lms["ada"]["ID"] == ""
    assert [float(lms["ada"][lesson]) for lesson in SET] == [FULL[lesson] for lesson in SET]
    assert float(lms["cy"][SET[1]]) == 0 and float(lms["cy"][LMS_TOTAL]) == FULL[SET[0]]
    assert float(lms["bob"][LMS_TOTAL]) == sum(FULL.values())


def test_lms_rows_neutralise_a_formula_in_a_name():
    class Known:
        first_name, last_name, email = "x", "=HYPERLINK(\"http://evil\")", "-1@x"

    rows = lms_rows([Result("a", SET[0], "softmax", 1.0, 1.0, "passed")], list(SET), {"a": Known()})
    assert rows == [("=HYPERLINK(\"http://evil\"), x", "", "a", "a", "", "-1@x", 1.0, 0.0, 1.0)]
    assert [csv_field(v) for v in rows[0][:6]][0].startswith("'=") and csv_field("-1@x") == "'-1@x"


@pytest.mark.grading
def test_student_grades_just_that_learner_and_keeps_the_earlier_result_in_history(course):
    root, _ = course
    before = by_exercise(root)
    earlier = (root / "autograded" / "ada" / SET[0] / "grading.json").read_text()
    handed = (root / "autograded" / "ada" / SET[0] / f"{SET[0]}.ipynb").read_bytes()
    assert handed == json.dumps(solved(root, SET[0])).encode()
    for student in ("ada", "bob"):  # both hand in a wrong softmax; only ada is graded now
        hand_in_folder(root, student, SET[0], answer_in(copy.deepcopy(solved(root, SET[0])), "softmax", WRONG_SOFTMAX))
    done = run_grader(root, "--lessons", ",".join(SET), "--student", "ada")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "graded now: only learner ada (STUDENT=, LESSON=)" in done.stdout and "1 graded now" in done.stdout
    assert "1 earlier result of changed submissions kept" in done.stdout
    after = by_exercise(root)
    assert after["ada", SET[0], "softmax"]["status"] == "failed"
    assert after["bob", SET[0], "softmax"] == before["bob", SET[0], "softmax"], "bob keeps his stored result"
    assert {k: r for k, r in after.items() if k[0] != "ada"} == {k: r for k, r in before.items() if k[0] != "ada"}
    assert {s for s, _, _ in after} == set(LEARNERS), "every file is written for the whole class"
    assert {r["SIS User ID"] for r in rows_of(root / "grades_lms.csv")} == set(LEARNERS)
    assert all((root / "feedback" / s / "index.html").is_file() for s in LEARNERS)
    kept = list((root / "autograded" / "ada" / SET[0] / "history").iterdir())
    assert len(kept) == 1 and kept[0].name.endswith("Z")
    assert (kept[0] / "grading.json").read_text() == earlier
    assert (kept[0] / f"{SET[0]}.ipynb").read_bytes() == handed
    assert (root / "autograded" / "ada" / SET[0] / f"{SET[0]}.ipynb").read_bytes() != handed
    assert not (root / "autograded" / "bob" / SET[0] / "history").exists()


@pytest.mark.grading
def test_lesson_grades_just_that_lesson_and_a_second_change_keeps_both_earlier_results(course):
    root, _ = course
    # bob's changed lesson 01 (handed in above) is graded now; ada changes hers back: not graded, lesson 02 only
    hand_in_folder(root, "ada", SET[0], solved(root, SET[0]))
    done = run_grader(root, "--lessons", ",".join(SET), "--lesson", SET[0], "--student", "bob")
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"graded now: only learner bob, lesson {SET[0]} (" in done.stdout
    rows = by_exercise(root)
    assert rows["bob", SET[0], "softmax"]["status"] == "failed"
    assert rows["ada", SET[0], "softmax"]["status"] == "failed", "ada's stored result stands until she is graded"
    again = run_grader(root, "--lessons", ",".join(SET), "--student", "ada", "--lesson", SET[0])
    assert again.returncode == 0, again.stdout + again.stderr
    assert by_exercise(root)["ada", SET[0], "softmax"]["status"] == "passed"
    assert len(list((root / "autograded" / "ada" / SET[0] / "history").iterdir())) == 2


@pytest.mark.grading
@pytest.mark.parametrize("args, words", [
    (("--student", "nobody"), "STUDENT=nobody: no such learner"),
    (("--lesson", "99_nothing"), "LESSON must name lessons of the course"),
    (("--lessons", SET[0], "--lesson", SET[1]), f"LESSON={SET[1]} is not among the lessons set"),
])
def test_a_learner_or_lesson_that_is_not_there_is_refused_and_nothing_graded(course, args, words):
    root, _ = course
    before = (root / "grades_by_exercise.csv").read_bytes()
    done = run_grader(root, *args)
    assert done.returncode == 2 and words in done.stderr, done.stdout + done.stderr
    assert (root / "grades_by_exercise.csv").read_bytes() == before


@pytest.mark.grading
def test_marks_given_by_hand_in_formgrader_reach_the_csv_the_lms_file_the_page_and_the_report_once(course):
    import warnings


    root, _ = course
    lesson, most = SET[0], EXERCISES["softmax"].points
    comment = '=HYPERLINK("http://evil.example") <b>mind</b> the axis'
    with warnings.catch_warnings(), open_gradebook(root) as book:  # as formgrader's handlers set them
        warnings.simplefilter("ignore")
        book.find_grade("softmax_tests", lesson, lesson, "cy").manual_score = 0.5
        book.find_grade("scaled_dot_product_attention_tests", lesson, lesson, "cy").extra_credit = 1.0
        book.find_comment("softmax_answer", lesson, lesson, "cy").manual_comment = comment
        book.db.commit()
    done = run_grader(root, "--lessons", ",".join(SET))
    assert done.returncode == 0, done.stdout + done.stderr
    rows = by_exercise(root)
    softmax, attention = rows["cy", lesson, "softmax"], rows["cy", lesson, "scaled_dot_product_attention"]
    assert (float(softmax["points"]), float(softmax["grader_points"])) == (0.5, most)
    assert softmax["note"].startswith(f"marked by hand: 0.5 of {most:g} points (the grader gave {most:g}); "
                                      f"your teacher's comment: =HYPERLINK")
    assert float(attention["points"]) == EXERCISES["scaled_dot_product_attention"].points + 1.0
    assert rows["ada", lesson, "scaled_dot_product_attention"]["grader_points"] == ""
    total = FULL[lesson] - most + 0.5 + 1.0
    assert float(next(r for r in rows_of(root / "grades_lms.csv") if r["SIS User ID"] == "cy")["Final Points"]) \
        == total
    page = (root / "feedback" / "cy" / "index.html").read_text()
    assert f"<h2>{lesson}: {total:g} of {FULL[lesson]:g}</h2>" in page
    assert "&lt;b&gt;mind&lt;/b&gt; the axis" in page and "<b>mind" not in page
    read = read_rows(root / "grades_by_exercise.csv")[0]
    marked = FromGradebook.read(root, read).marked(read)
    assert {(r.student_id, r.exercise): r.points for r in marked if r.lesson == lesson} == \
        {(s, e): float(r["points"]) for (s, l, e), r in rows.items() if l == lesson}, "counted once, not twice"
    by_hand = (root / "report" / "index.html").read_text()
    assert "&lt;b&gt;mind&lt;/b&gt; the axis" in by_hand


@pytest.mark.grading
def test_without_lessons_the_course_setting_sets_the_lessons_for_make_grade_and_make_report(course):
    root, _ = course
    config = root / "nbgrader_config.py"
    original = config.read_text()
    try:
        config.write_text(original + f"\nc.EncoderCourse.lessons = [{SET[0]!r}]\n")
        assert lessons_set(root) == [SET[0]]
        assert {lesson for _, lesson, _ in by_exercise(root)} == set(SET)  # as graded with LESSONS= before
        made = subprocess.run([sys.executable, "-m", "course_grader.class_report", "--root", str(root)],
                              capture_output=True, text=True, timeout=300, cwd=ROOT)
        assert made.returncode == 0, made.stderr
        assert SET[1] not in (root / "report" / "index.html").read_text(), "make report takes the setting"
        done = run_grader(root)
        assert done.returncode == 0, done.stdout + done.stderr
        assert f"lessons counted: {SET[0]}: c.EncoderCourse.lessons in nbgrader_config.py" in done.stdout
        assert {lesson for _, lesson, _ in by_exercise(root)} == {SET[0]}
        with open(root / "grades_lms.csv", newline="") as f:
            assert next(csv.reader(f))[len(LMS_COLUMNS):] == [SET[0], LMS_TOTAL]
        config.write_text(original + f"\nc.EncoderCourse.lessons = {SET[0]!r}\n")
        refused = run_grader(root)
        assert refused.returncode == 2 and "must be a list of lesson names" in refused.stderr, refused.stderr
    finally:
        config.write_text(original)
    assert lessons_set(root) is None


@pytest.mark.grading
def test_without_a_setting_the_lessons_released_through_the_exchange_are_counted(course, tmp_path):
    """Issue 32, item 4: with 4 lessons set and nothing said, make grade counted all 8 (122 missing lessons);
    unset, the lessons counted are those released (nbgrader release_assignment), and make grade says so and how to
    change it; grades.csv, grades_lms.csv and the report hold those only."""
    root, _ = course
    config = root / "nbgrader_config.py"
    original = config.read_text()
    (tmp_path / "exchange" / "encoder-course" / "outbound" / SET[0]).mkdir(parents=True)
    try:
        config.write_text(original + f"\nc.Exchange.root = {str(tmp_path / 'exchange')!r}\n")
        done = run_grader(root, "--points-possible")
        assert done.returncode == 0, done.stdout + done.stderr
        assert f"lessons counted: {SET[0]}: the lessons released through nbgrader's exchange" in done.stdout
        assert "c.EncoderCourse.lessons in nbgrader_config.py" in done.stdout, "how to change it"
        assert {r["assignment"] for r in rows_of(root / "grades.csv")} == {SET[0]}
        with open(root / "grades_lms.csv", newline="") as f:
            header, points_possible, *_ = list(csv.reader(f))
        assert header[len(LMS_COLUMNS):] == [SET[0], LMS_TOTAL]
        assert points_possible[0].strip() == "Points Possible" and float(points_possible[-1]) == FULL[SET[0]]
        assert SET[1] not in (root / "report" / "index.html").read_text()
    finally:
        config.write_text(original)
        assert run_grader(root, "--lessons", ",".join(SET)).returncode == 0


# ---------------------------------------------------------------- the feedback page on a phone


#: The parts of formulas wider than the box they are shown in (which would scroll within it).
_JS_CUT_FORMULAS = ("[...document.querySelectorAll('.formula .part')].filter(e => e.scrollWidth > e.clientWidth + 1)"
                    ".map(e => e.textContent.slice(0, 40) + ': ' + e.scrollWidth + ' > ' + e.clientWidth)")


def test_in_chromium_the_feedback_page_reads_at_375_px_without_sideways_scrolling(chromium, tmp_path):
    import site_pages

    note = "the values differ: " + "row_of_the_output_without_a_space_" * 8 + " and " + "word " * 80
    rows = [Result("a-learner-with-a-rather-long-identifier-" * 2, e.lesson, name, 0.0, float(e.points), "failed",
                   note=note) for name, e in EXERCISES.items()]
    page_path = tmp_path / "index.html"
    page_path.write_text(feedback_page(rows[0].student_id, rows))
    with site_pages.offline(chromium, {"width": 375, "height": 740}) as context:
        page = site_pages.open_page(context, page_path)
        assert page.evaluate("document.documentElement.scrollWidth") <= 375, "no sideways scrolling"
        widths = page.evaluate("[...document.querySelectorAll('.formula')].map(f => f.getBoundingClientRect().right)")
        assert len(widths) == len(EXERCISES) and max(widths) <= 375
        assert page.evaluate(_JS_CUT_FORMULAS) == [], "every formula wraps to the screen, none is cut"
        # the result column is not squeezed to a word a line: each note gets most of the screen's width
        notes = page.evaluate("[...document.querySelectorAll('.why')].map(p => p.getBoundingClientRect().width)")
        assert min(notes) >= 300, notes
    with site_pages.offline(chromium, {"width": 1280, "height": 720}) as context:
        page = site_pages.open_page(context, page_path)
        assert page.evaluate("document.documentElement.scrollWidth") <= 1280
        assert page.evaluate(_JS_CUT_FORMULAS) == [], "every formula wraps to its column, none is cut"
        notes = page.evaluate("[...document.querySelectorAll('.why')].map(p => p.getBoundingClientRect().width)")
        assert min(notes) >= 250, notes
