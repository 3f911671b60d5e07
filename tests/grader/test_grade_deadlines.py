"""Due dates, an extension and nbgrader's late penalty (issue 21, item 4), on a small course graded for real:

- the due date is nbgrader's own, set with ``nbgrader db assignment add
  <lesson> --duedate=...``; the penalty is nbgrader's setting
  (``c.LateSubmissionPlugin.penalty_method = "zero"`` in the course's
  ``nbgrader_config.py``); one learner's extension is ``make extension``'s;
- a hand-in is late by the exchange's time (``timestamp.txt``), never the
  file's or the grading's: a notebook copied in by hand is never late;
- a late hand-in is flagged in grades_by_exercise.csv (``late``, the
  seconds), penalised in grades.csv (as ``nbgrader export`` writes it, from
  the gradebook) and grades_lms.csv, and said on the learner's feedback page
  and in the class report; the extension is in the gradebook, where
  formgrader shows it; taking it back makes the same hand-in late on the
  next ``make grade``, without grading it again.
"""

import csv
import datetime
import json
import subprocess
import sys
from pathlib import Path

import pytest

from encoder_lib.grading import EXERCISES
from encoder_lib.grading.exercises import BY_LESSON
from report_class import hand_in_folder, open_gradebook
from grading_helpers import course_after_make_student, graded_once, run_grader as grade

# nbgrader 0.9's own models warn under SQLAlchemy 2 (RuntimeWarnings, which the suite makes errors): not ours
pytestmark = pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning")
ROOT = Path(__file__).resolve().parents[2]
LESSON = "01_attention"
FULL = sum(EXERCISES[name].points for name in BY_LESSON[LESSON])
DUE = "2026-11-20 17:00:00 Europe/Paris"  # 16:00 UTC
HANDED_IN = {"ontime": "2026-11-20 15:30:00.000000 UTC",
             "late": "2026-11-21 18:05:00.000000 UTC",  # 26 h 5 min after 16:00 UTC
             "extended": "2026-11-21 18:05:00.000000 UTC",  # as late, but within the extension
             "copied": None}  # no timestamp.txt: copied in by hand, its file's time after the due date
LATE_SECONDS = (26 * 60 + 5) * 60
EXTENSION = "2026-11-22 17:00:00 UTC"


def run(root, *args):
    return subprocess.run([sys.executable, "-m", *args], capture_output=True, text=True, timeout=600, cwd=ROOT)


def run_grader(root):
    return grade(root, "--lessons", LESSON)


def rows_of(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def exported(root):
    """grades.csv's rows of the lesson, by learner."""
    return {r["student_id"]: r for r in rows_of(root / "grades.csv") if r["assignment"] == LESSON}


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """A course after `make student` whose lesson 01 is due (nbgrader's gradebook) with penalty_method "zero",
    an extension for ``extended``, the four learners of ``HANDED_IN`` handing it in solved; graded once."""
    root = course_after_make_student(tmp_path_factory, "deadlines")
    with open(root / "nbgrader_config.py", "a") as f:
        f.write('\nc.LateSubmissionPlugin.penalty_method = "zero"\n')
    due = subprocess.run([str(Path(sys.executable).parent / "nbgrader"), "db", "assignment", "add", LESSON,
                          f"--duedate={DUE}"], capture_output=True, text=True, timeout=300, cwd=root)
    assert due.returncode == 0, due.stdout + due.stderr
    extension = run(root, "course_grader.deadlines", "--root", str(root), "--student", "extended",
                    "--lesson", LESSON, "--due", EXTENSION)
    assert extension.returncode == 0, extension.stderr
    solved = json.loads((root / "notebooks" / LESSON / f"{LESSON}.ipynb").read_text())
    for student, when in HANDED_IN.items():
        hand_in_folder(root, student, LESSON, solved, when)
    return graded_once(root, "--lessons", LESSON)


@pytest.mark.grading
def test_a_late_hand_in_is_penalised_in_grades_csv_as_nbgrader_s_setting_says(course):
    root, first = course
    rows = exported(root)
    assert {r["duedate"] for r in rows.values()} == {"2026-11-20 16:00:00"}
    assert rows["late"]["timestamp"] == "2026-11-21 18:05:00"
    assert (float(rows["late"]["raw_score"]), float(rows["late"]["late_submission_penalty"]),
            float(rows["late"]["score"])) == (FULL, FULL, 0.0), "zero: the whole score taken"
    for student in ("ontime", "extended", "copied"):
        assert (float(rows[student]["late_submission_penalty"]), float(rows[student]["score"])) == (0.0, FULL), student
    assert "1 hand-in came after the due date" in first.stdout
    assert "1 hand-in of a lesson with a due date had no timestamp.txt" in first.stdout


@pytest.mark.grading
def test_the_extension_is_recorded_in_the_gradebook_where_formgrader_shows_it(course):
    import warnings

    root, _ = course
    with warnings.catch_warnings(), open_gradebook(root) as book:
        warnings.simplefilter("ignore")
        extended = book.find_submission(LESSON, "extended")
        assert extended.extension == datetime.timedelta(days=2, hours=1)
        assert extended.total_seconds_late == 0, "nbgrader's own reckoning agrees: not late"
        assert book.find_submission(LESSON, "late").extension is None
        assert book.find_submission(LESSON, "late").total_seconds_late == LATE_SECONDS


@pytest.mark.grading
def test_a_late_hand_in_is_flagged_in_grades_by_exercise_csv_and_penalised_in_grades_lms_csv(course):
    root, _ = course
    late = {(r["student_id"], r["exercise"]): r["late"] for r in rows_of(root / "grades_by_exercise.csv")}
    assert {e for s, e in late if s == "late"} == set(BY_LESSON[LESSON])
    assert {s for (s, _), seconds in late.items() if seconds} == {"late"}
    assert {seconds for (s, _), seconds in late.items() if s == "late"} == {str(LATE_SECONDS)}
    lms = {r["SIS User ID"]: r for r in rows_of(root / "grades_lms.csv")}
    assert float(lms["late"][LESSON]) == 0.0 and float(lms["late"]["Final Points"]) == 0.0
    assert all(float(lms[s][LESSON]) == FULL for s in ("ontime", "extended", "copied"))


@pytest.mark.grading
def test_the_feedback_page_and_the_report_say_how_late_and_the_penalty(course):
    from bs4 import BeautifulSoup

    root, _ = course
    page = (root / "feedback" / "late" / "index.html").read_text()
    assert f"<h2>{LESSON}: 0 of {FULL:g}</h2>" in page and f"0 of {FULL:g} points</h1>" in page
    assert f"Handed in 1 day 2 h late (due 2026-11-20 16:00 UTC), penalty {FULL:g}" in page
    assert f"{FULL:g} points before it" in page
    for student in ("ontime", "extended", "copied"):
        other = (root / "feedback" / student / "index.html").read_text()
        assert "Handed in" not in other and f"<h2>{LESSON}: {FULL:g} of {FULL:g}</h2>" in other
    report = BeautifulSoup((root / "report" / "index.html").read_text(), "html.parser")
    listed = [[td.get_text() for td in row.select("td")] for row in report.select("section:has(> h2#late) tbody tr")]
    assert listed == [[LESSON, "late", "1 day 2 h late", f"{FULL:g}"]]
    late_section = report.select_one("section:has(> h2#late)").get_text(" ", strip=True)
    assert "before these penalties; grades.csv has the scores after them" in late_section
    histogram = next(img["alt"] for img in report.select("img") if f"scores in {LESSON}" in img["alt"])
    assert f"{FULL:g} points: 4" in histogram, f"the late learner counts at what the answers earned: {histogram}"


@pytest.mark.grading
def test_taking_the_extension_back_makes_the_same_hand_in_late_without_grading_it_again(course):
    import warnings

    root, _ = course
    back = run(root, "course_grader.deadlines", "--root", str(root), "--student", "extended",
               "--lesson", LESSON, "--due", "")
    assert back.returncode == 0 and "extended has no extension" in back.stdout, back.stdout + back.stderr
    again = run_grader(root)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "0 graded now, 4 unchanged since the last run" in again.stdout
    assert "2 hand-ins came after the due date" in again.stdout
    rows = exported(root)
    assert (float(rows["extended"]["late_submission_penalty"]), float(rows["extended"]["score"])) == (FULL, 0.0)
    assert float(rows["ontime"]["score"]) == FULL
    with warnings.catch_warnings(), open_gradebook(root) as book:
        warnings.simplefilter("ignore")
        assert book.find_submission(LESSON, "extended").extension is None
    late = {r["student_id"] for r in rows_of(root / "grades_by_exercise.csv") if r["late"]}
    assert late == {"late", "extended"}
    assert "Handed in 1 day 2 h late" in (root / "feedback" / "extended" / "index.html").read_text()


@pytest.mark.grading
@pytest.mark.parametrize("setting, extensions, words", [
    ('c.LateSubmissionPlugin.penalty_method = "half"', None, "nbgrader's late-penalty setting in nbgrader_config.py"),
    ("", "student_id,lesson,due\nada,01_attention,next week-ish\n", "extensions.csv line 2: due must be a time"),
])
def test_a_bad_penalty_setting_or_extension_is_refused_and_nothing_graded(course, setting, extensions, words):
    root, _ = course
    config, before = root / "nbgrader_config.py", (root / "grades_by_exercise.csv").read_bytes()
    original, kept = config.read_text(), (root / "extensions.csv").read_text()
    try:
        config.write_text(original + "\n" + setting + "\n")
        if extensions is not None:
            (root / "extensions.csv").write_text(extensions)
        refused = run_grader(root)
        assert refused.returncode == 2 and words in refused.stderr and "nothing graded" in refused.stderr, \
            refused.stdout + refused.stderr
        assert (root / "grades_by_exercise.csv").read_bytes() == before
    finally:
        config.write_text(original)
        (root / "extensions.csv").write_text(kept)
