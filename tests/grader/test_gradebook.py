"""What the course reads from nbgrader's gradebook (``gradebook.py``), and due dates, extensions and late penalties
(``deadlines.py``): nbgrader's, read and applied.

The graded class of tests/grader/test_grading_workflow.py checks the whole way from
``timestamp.txt`` and formgrader to the CSVs, the pages and the report; these
tests pin the parts: the roster, a hand-set score and comment read back as
formgrader leaves them, what a time is, what is late, what an extension
changes, and that nbgrader's penalty setting (and a plugin of the course's
own) decides the penalty.
"""

import datetime
import zoneinfo
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from course_grader import deadlines, gradebook
from course_grader.exchange import HandInTime
from course_grader.gradebook_writer import GradebookWriter
from report_class import open_gradebook

# nbgrader 0.9's own models warn under SQLAlchemy 2 (RuntimeWarnings, which the suite makes errors): not ours
pytestmark = pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning")
ROOT = Path(__file__).resolve().parents[2]
LESSONS = ["01_attention", "02_multi_head_attention"]
UTC = datetime.datetime


def new_gradebook(root):
    """nbgrader's Gradebook of a new course at ``root``, with the course's nbgrader_config.py."""
    (root / "nbgrader_config.py").write_text((ROOT / "nbgrader_config.py").read_text())
    return open_gradebook(root)


def gradebook_with_due_dates(root, due):
    """A gradebook whose lessons have the due dates ``due`` ({lesson: text}), as `nbgrader db assignment add
    --duedate` leaves them."""
    with new_gradebook(root) as book:
        for lesson, when in due.items():
            book.update_or_create_assignment(lesson, duedate=when)


# ------------------------------------------------------------------ the gradebook, read back


def test_the_roster_is_read_with_names_and_e_mails(tmp_path):
    with new_gradebook(tmp_path) as book:
        book.update_or_create_student("ada", first_name="Ada", last_name="Lovelace", email="ada@school.example")
        book.update_or_create_student("bob")
    assert gradebook.students(tmp_path) == {"ada": gradebook.Student("Ada", "Lovelace", "ada@school.example"),
                                            "bob": gradebook.Student()}
    assert gradebook.students(tmp_path)["ada"].name == "Ada Lovelace"
    assert gradebook.students(tmp_path / "no-course") == {}


def test_a_file_that_is_not_a_gradebook_is_named(tmp_path):
    (tmp_path / "gradebook.db").write_text("not sqlite at all " * 100)
    with pytest.raises(ValueError, match="gradebook.db could not be read as nbgrader's gradebook"):
        gradebook.students(tmp_path)


def test_a_score_extra_credit_and_comment_given_in_formgrader_are_read_back(tmp_path):
    with new_gradebook(tmp_path) as book:
        book.update_or_create_assignment("01_attention")
        book.add_notebook("01_attention", "01_attention")
        for exercise in ("softmax", "scaled_dot_product_attention"):
            book.add_grade_cell(f"{exercise}_tests", "01_attention", "01_attention", max_score=2, cell_type="code")
            book.add_solution_cell(f"{exercise}_answer", "01_attention", "01_attention")
        book.add_student("ada")
        book.add_submission("01_attention", "ada")
        # what formgrader's handlers do when the teacher types a score, extra credit and a comment
        grade = book.find_grade("softmax_tests", "01_attention", "01_attention", "ada")
        grade.auto_score, grade.manual_score, grade.extra_credit = 0.0, 1.5, 0.5
        book.find_comment("softmax_answer", "01_attention", "01_attention", "ada").manual_comment = "=right idea"
        book.find_grade("scaled_dot_product_attention_tests", "01_attention", "01_attention", "ada").auto_score = 2
        book.db.commit()
    assert gradebook.manual_marks(tmp_path) == {
        ("ada", "01_attention", "softmax"): gradebook.Manual(1.5, 0.5, "=right idea")}
    assert gradebook.late(tmp_path) == {("ada", "01_attention"): gradebook.Late(None, 0.0)}


@pytest.mark.parametrize("text, expected", [
    ("2026-12-10 17:00:00 Europe/Paris", UTC(2026, 12, 10, 16, 0)),
    ("2026-12-10T17:00:00+01:00", UTC(2026, 12, 10, 16, 0)),
    ("2026-12-10 17:00:00 UTC", UTC(2026, 12, 10, 17, 0)),  # make extension's, read without nbgrader
    ("2026-12-10 17:00:00.250000 UTC", UTC(2026, 12, 10, 17, 0, 0, 250000)),
    ("2026-12-10 17:00", UTC(2026, 12, 10, 17, 0)),
])
def test_a_time_is_read_as_nbgrader_reads_it_in_utc(text, expected):
    assert deadlines.parse_time(text) == expected


@pytest.mark.parametrize("text, words", [
    ("2026-12-10 17:00:00 Nowhere/Atlantis", "due's time zone 'Nowhere/Atlantis' is not one nbgrader knows"),
    ("next friday-ish", "due must be a time such as '2026-12-10 17:00:00 Europe/Paris'"),
    ("", "due must be a time"),
])
def test_a_time_that_is_not_one_is_refused_and_named(text, words):
    with pytest.raises(ValueError, match=words):
        deadlines.parse_time(text)


def test_the_due_dates_are_the_gradebook_s(tmp_path):
    gradebook_with_due_dates(tmp_path, {"01_attention": "2026-12-10 17:00:00 Europe/Paris"})
    with open_gradebook(tmp_path) as book:
        book.update_or_create_assignment("02_multi_head_attention")  # no due date
    assert deadlines.due_dates(tmp_path) == {"01_attention": UTC(2026, 12, 10, 16, 0)}
    assert deadlines.due_dates(tmp_path / "no-course") == {}


def test_an_extension_is_written_changed_and_taken_back_keeping_the_other_lines(tmp_path):
    deadlines.set_extension(tmp_path, "ada", "01_attention", "2026-12-12 17:00:00 UTC", LESSONS)
    deadlines.set_extension(tmp_path, "bob", "02_multi_head_attention", "2026-12-13 09:00:00 UTC", LESSONS)
    deadlines.set_extension(tmp_path, "ada", "01_attention", "2026-12-14 17:00:00 UTC", LESSONS)
    assert deadlines.read_extensions(tmp_path) == {("ada", "01_attention"): UTC(2026, 12, 14, 17),
                                                   ("bob", "02_multi_head_attention"): UTC(2026, 12, 13, 9)}
    deadlines.set_extension(tmp_path, "ada", "01_attention", "", LESSONS)
    assert deadlines.read_extensions(tmp_path) == {("bob", "02_multi_head_attention"): UTC(2026, 12, 13, 9)}


def test_an_extension_keeps_the_learner_s_id_as_it_is(tmp_path):
    """A roster's id is kept as it is everywhere (issue 30): ``josé``, ``ada+1@school.edu``, and one that a
    spreadsheet would read as a formula, neutralised in the file and read back as it was."""
    for student in ("josé", "ada+1@school.edu", "=cmd"):
        deadlines.set_extension(tmp_path, student, "01_attention", "2026-12-12 17:00:00 UTC", LESSONS)
    assert set(deadlines.read_extensions(tmp_path)) == {(s, "01_attention") for s in ("josé", "ada+1@school.edu",
                                                                                        "=cmd")}
    assert "'=cmd" in (tmp_path / deadlines.EXTENSIONS).read_text()


@pytest.mark.parametrize("student, lesson, due, words", [
    ("../alice", "01_attention", "2026-12-12 17:00:00 UTC", "student must be a learner's id"),
    ("ada\x1b[2J", "01_attention", "2026-12-12 17:00:00 UTC", "student must be a learner's id"),
    ("ada", "09_nope", "2026-12-12 17:00:00 UTC", "lesson must be one of the course's lessons"),
    ("ada", "01_attention", "soon", "due must be a time"),
])
def test_a_bad_extension_is_refused_and_named_and_nothing_is_written(tmp_path, student, lesson, due, words):
    with pytest.raises(ValueError, match=words):
        deadlines.set_extension(tmp_path, student, lesson, due, LESSONS)
    assert not (tmp_path / deadlines.EXTENSIONS).exists()


def test_a_hand_in_is_late_after_its_due_date_or_the_learner_s_extension():
    due = {"01_attention": UTC(2026, 12, 10, 17)}
    rules = deadlines.Deadlines(due, {("ada", "01_attention"): UTC(2026, 12, 12, 17)})
    two_days_later = UTC(2026, 12, 12, 16)
    assert rules.seconds_late("bob", "01_attention", two_days_later) == 47 * 3600
    assert rules.seconds_late("ada", "01_attention", two_days_later) == 0, "within her extension"
    assert rules.extension("ada", "01_attention") == datetime.timedelta(days=2)
    assert rules.seconds_late("bob", "01_attention", None) == 0, "a notebook copied in by hand is never late"
    assert rules.seconds_late("bob", "02_multi_head_attention", two_days_later) == 0, "no due date"


def test_how_late_is_said_in_words():
    assert deadlines.late_words(1) == "1 s late" and deadlines.late_words(59.5) == "59 s late"
    assert deadlines.late_words(60) == "1 min late"
    assert deadlines.late_words(2 * 3600 + 5 * 60) == "2 h 5 min late"
    assert deadlines.late_words(3 * 86400 + 4 * 3600 + 59) == "3 days 4 h late"


def test_the_course_s_time_zone_is_nbgrader_s_exchange_timezone(tmp_path):
    from course_grader.course_config import time_zone

    assert str(time_zone(course_with(tmp_path, "\nc.Exchange.timezone = 'Europe/Paris'\n"))) == "Europe/Paris"
    with pytest.raises(ValueError, match="c.Exchange.timezone in nbgrader_config.py must be a time zone"):
        time_zone(course_with(tmp_path, "\nc.Exchange.timezone = 'Mars/Olympus'\n"))


def course_with(tmp_path, settings):
    (tmp_path / "nbgrader_config.py").write_text((ROOT / "nbgrader_config.py").read_text() + settings)
    return tmp_path


def test_no_penalty_unless_nbgrader_s_setting_says_so(tmp_path):
    assert deadlines.Penalties(course_with(tmp_path, "")).penalty("ada", 4.0, 3600) == 0.0


def test_penalty_method_zero_takes_the_whole_score_of_a_late_lesson_only(tmp_path):
    penalties = deadlines.Penalties(course_with(tmp_path, "\nc.LateSubmissionPlugin.penalty_method = 'zero'\n"))
    assert penalties.penalty("ada", 4.0, 3600) == 4.0
    assert penalties.penalty("ada", 4.0, 0) == 0.0


def test_a_late_plugin_of_the_course_s_own_is_honoured_and_bounded(tmp_path, monkeypatch):
    (tmp_path / "tenth_a_day.py").write_text(textwrap.dedent("""
        from nbgrader.plugins import BasePlugin

        class TenthADay(BasePlugin):
            def late_submission_penalty(self, student_id, score, total_seconds_late):
                return score * 0.1 * (total_seconds_late // 86400 + 1)
    """))
    monkeypatch.syspath_prepend(str(tmp_path))
    course = course_with(tmp_path, "\nc.AssignLatePenalties.plugin_class = 'tenth_a_day.TenthADay'\n")
    penalties = deadlines.Penalties(course)
    assert penalties.penalty("ada", 4.0, 3600) == pytest.approx(0.4)
    assert penalties.penalty("ada", 4.0, 2.5 * 86400) == pytest.approx(1.2)
    assert penalties.penalty("ada", 4.0, 30 * 86400) == 4.0, "never more than the score"


def test_make_extension_says_what_it_set_and_refuses_a_bad_one(tmp_path):
    gradebook_with_due_dates(tmp_path, {"01_attention": "2026-12-10 17:00:00 UTC"})

    def run(*args):
        return subprocess.run([sys.executable, "-m", "course_grader.deadlines", "--root", str(tmp_path),
                               *args], capture_output=True, text=True, cwd=ROOT)

    done = run("--student", "ada", "--lesson", "01_attention", "--due", "2026-12-12 17:00:00 UTC")
    assert done.returncode == 0, done.stderr
    assert "ada has until 2026-12-12 17:00 UTC for 01_attention (the lesson is due 2026-12-10 17:00 UTC)" \
        in done.stdout
    refused = run("--student", "ada", "--lesson", "01_attention", "--due", "tomorrow-ish")
    assert refused.returncode == 2 and "make extension: due must be a time" in refused.stderr
    assert deadlines.read_extensions(tmp_path) == {("ada", "01_attention"): UTC(2026, 12, 12, 17)}


def test_an_extension_without_a_due_date_is_never_late():
    rules = deadlines.Deadlines({}, {("ada", "01_attention"): UTC(2026, 12, 12, 17)})
    assert rules.seconds_late("ada", "01_attention", UTC(2026, 12, 20)) == 0
    assert rules.extension("ada", "01_attention") is None


def test_lateness_takes_nbgrader_s_penalty_only_for_a_late_hand_in(tmp_path):
    made = []

    def penalties():
        made.append(1)
        return deadlines.Penalties(course_with(tmp_path, "\nc.LateSubmissionPlugin.penalty_method = 'zero'\n"))

    rules = deadlines.Deadlines({"01_attention": UTC(2026, 12, 10, 17)},
                                {("ada", "01_attention"): UTC(2026, 12, 12, 17)})
    on_time = rules.lateness("ada", "01_attention", UTC(2026, 12, 11, 17), 6.0, penalties)
    assert (bool(on_time), on_time.penalty, on_time.extension) == (False, 0.0, datetime.timedelta(days=2))
    assert not made, "nbgrader's plugin is made for a late hand-in only"
    late = rules.lateness("bob", "01_attention", UTC(2026, 12, 10, 19, 5), 6.0, penalties)
    assert (late.seconds, late.penalty, late.extension) == (2 * 3600 + 300, 6.0, None)
    assert late.words() == "handed in 2 h 5 min late (due 2026-12-10 17:00 UTC), penalty 6"
    in_paris = deadlines.Deadlines(rules.due, {}, zoneinfo.ZoneInfo("Europe/Paris"))
    assert in_paris.lateness("bob", "01_attention", UTC(2026, 12, 10, 17, 0, 1), 6.0, penalties).words() == \
        "handed in 1 s late (due 2026-12-10 18:00 Europe/Paris), penalty 6", "in the course's time zone"
    copied = rules.lateness("bob", "01_attention", None, 6.0, penalties)
    assert not copied and copied.penalty == 0.0


def test_a_notebook_copied_in_by_hand_is_timed_by_the_teacher_s_timestamp_txt_never_the_file_s(tmp_path):
    """Without make collect's record, a hand-in is one the teacher copied in: a timestamp.txt beside it is the
    teacher's time; without one (or with one that is not a time) it is never late (exchange.hand_in_time; the
    collected ones are tests/grader/test_collect.py's)."""
    from course_grader import exchange

    notebook = tmp_path / "01_attention.ipynb"
    notebook.write_text("{}")
    assert exchange.hand_in_time(notebook, None).when is None, "copied in by hand"
    (tmp_path / "timestamp.txt").write_text("2026-12-10 18:00:00.000000 Europe/Paris")
    assert exchange.hand_in_time(notebook, None).when == UTC(2026, 12, 10, 17)
    (tmp_path / "timestamp.txt").write_text("on time, promise")
    ignored = exchange.hand_in_time(notebook, None)
    assert ignored.when is None and "not a time" in ignored.flag


def test_make_grade_records_the_penalty_and_the_extension_as_nbgrader_does(tmp_path):
    import warnings

    from course_grader.outputs import Result
    from report_class import add_lesson

    with new_gradebook(tmp_path) as book:
        add_lesson(book, "01_attention", due="2026-12-10 17:00:00 UTC")
    notebook = tmp_path / "submitted" / "ada" / "01_attention" / "01_attention.ipynb"
    notebook.parent.mkdir(parents=True)
    notebook.write_text("{}")
    (notebook.parent / "timestamp.txt").write_text("2026-12-11 17:00:00.000000 UTC")
    results = [Result("ada", "01_attention", "softmax", 2.0, 2.0, "passed")]
    for late in (deadlines.Lateness(86400, 2.0, None), deadlines.Lateness(0, 0.0, datetime.timedelta(days=2)),
                 None):
        writer = GradebookWriter(tmp_path, ["ada"])
        try:
            writer.record("ada", "01_attention", notebook, results, late)
            writer.commit()
        finally:
            writer.close()
        with warnings.catch_warnings(), open_gradebook(tmp_path) as book:
            warnings.simplefilter("ignore")
            submission = book.find_submission("01_attention", "ada")
            assert submission.extension == (late.extension if late is not None else None)
            penalised = late is not None and late.penalty
            assert [n.late_submission_penalty for n in submission.notebooks] == [late.penalty if penalised else None]
        grades = (tmp_path / "grades.csv").read_text().splitlines()  # ...,penalty,score,max_score as nbgrader's
        assert grades[1].split(",")[-3:] == (["2.0", "0.0", "4.0"] if penalised else ["0.0", "2.0", "4.0"])


# ------------------------------------------------------------------ a regrade that records nothing opens no nbgrader


def _held_by_nbgrader(root):
    """What nbgrader's models give of the gradebook: the oracle ``gradebook.recorded`` is held to."""
    import warnings

    from nbgrader.api import Assignment, BaseCell, Grade, SubmittedAssignment, SubmittedNotebook

    held = {}
    with warnings.catch_warnings(), open_gradebook(root) as book:
        warnings.simplefilter("ignore")
        query = (book.db.query(SubmittedAssignment.student_id, Assignment.name, SubmittedAssignment.timestamp,
                               BaseCell.name, Grade.auto_score, Grade.needs_manual_grade,
                               SubmittedAssignment.extension, SubmittedNotebook.late_submission_penalty)
                 .select_from(Grade).join(SubmittedNotebook, Grade.notebook_id == SubmittedNotebook.id)
                 .join(SubmittedAssignment, SubmittedNotebook.assignment_id == SubmittedAssignment.id)
                 .join(Assignment, SubmittedAssignment.assignment_id == Assignment.id)
                 .join(BaseCell, Grade.cell_id == BaseCell.id))
        for student, lesson, when, cell, score, manual, extension, penalty in query:
            held.setdefault((student, lesson), (when, {}, extension, penalty))[1][cell] = (score, manual)
        submitted = {(s.student_id, s.assignment.name) for s in book.db.query(SubmittedAssignment)}
    return held, submitted


def _recorded_once(root, late, students=("ada",)):
    """A GradebookWriter that records ada's lesson with ``late``; returns it, closed."""
    from course_grader.outputs import Result

    notebook = root / "submitted" / "ada" / "01_attention" / "01_attention.ipynb"
    if not notebook.is_file():  # recorded at its file's time: written once
        notebook.parent.mkdir(parents=True)
        notebook.write_text("{}")
    writer = GradebookWriter(root, list(students))
    try:
        writer.record("ada", "01_attention", notebook, [Result("ada", "01_attention", "softmax", 2.0, 2.0, "passed")],
                      late)
        writer.commit()
    finally:
        writer.close()
    return writer


def test_the_gradebook_is_read_back_as_nbgrader_s_models_give_it_and_the_same_record_opens_no_nbgrader(tmp_path):
    from report_class import add_lesson

    with new_gradebook(tmp_path) as book:
        add_lesson(book, "01_attention", due="2026-12-10 17:00:00 UTC")
    for late in (deadlines.Lateness(86400, 2.0, None), deadlines.Lateness(0, 0.0, datetime.timedelta(days=2, hours=3)),
                 None):
        assert _recorded_once(tmp_path, late).gradebook is not None, "a change is written through nbgrader"
        assert gradebook.recorded(tmp_path) == _held_by_nbgrader(tmp_path)
        before = {name: (tmp_path / name).stat().st_mtime_ns for name in ("gradebook.db", "grades.csv")}
        assert _recorded_once(tmp_path, late).gradebook is None, "the same record again: nbgrader is not opened"
        assert {name: (tmp_path / name).stat().st_mtime_ns for name in before} == before
    assert gradebook.roster(tmp_path) == ["ada"]


def test_grades_csv_is_written_again_whenever_what_it_is_made_of_changed(tmp_path):
    from report_class import add_lesson

    with new_gradebook(tmp_path) as book:
        add_lesson(book, "01_attention")
    _recorded_once(tmp_path, None)
    with new_gradebook(tmp_path) as book:  # the teacher imports a roster: the gradebook changed, not the results
        book.update_or_create_student("bob", first_name="Bob")
    assert _recorded_once(tmp_path, None).gradebook is not None
    assert ",bob,,Bob," in (tmp_path / "grades.csv").read_text()
    written = (tmp_path / "grades.csv").read_text()
    (tmp_path / "grades.csv").write_text("edited by hand\n")
    _recorded_once(tmp_path, None)
    assert (tmp_path / "grades.csv").read_text() == written, "an edited grades.csv is written again"
    (tmp_path / "grades.csv").unlink()
    _recorded_once(tmp_path, None)
    assert (tmp_path / "grades.csv").read_text() == written, "and a removed one"
    (tmp_path / "gradebook.db-journal").write_bytes(b"")  # a write not settled: never taken as unchanged
    assert _recorded_once(tmp_path, None).gradebook is not None


# ------------------------------------------------------------------ new submissions, inserted as nbgrader makes them


def _rows_by_name(root):
    """Every submission's rows in gradebook.db, each id replaced by what it names (the learner, the lesson, the
    cell): the tables nbgrader's ``add_submission`` writes, comparable across two gradebooks."""
    import sqlite3

    with sqlite3.connect(root / "gradebook.db") as db:
        cells = dict(db.execute("SELECT id, name FROM base_cell"))
        lessons = dict(db.execute("SELECT id, name FROM assignment"))
        notebooks = dict(db.execute("SELECT id, name FROM notebook"))
        submissions = {i: (student, lessons[a]) for i, a, student in
                       db.execute("SELECT id, assignment_id, student_id FROM submitted_assignment")}
        graded = {i: (submissions[s], notebooks[n]) for i, s, n in
                  db.execute("SELECT id, assignment_id, notebook_id FROM submitted_notebook")}
        return {
            "submitted_assignment": sorted((submissions[i], *rest) for i, *rest in
                                           db.execute("SELECT id, timestamp, extension FROM submitted_assignment")),
            "submitted_notebook": sorted((graded[i], *rest) for i, *rest in db.execute(
                "SELECT id, flagged, late_submission_penalty FROM submitted_notebook")),
            "grade": sorted((graded[n], cells[c], *rest) for n, c, *rest in db.execute(
                "SELECT notebook_id, cell_id, auto_score, manual_score, extra_credit, needs_manual_grade FROM grade")),
            "comment": sorted((graded[n], cells[c], *rest) for n, c, *rest in db.execute(
                "SELECT notebook_id, cell_id, auto_comment, manual_comment FROM comment")),
        }


def test_a_new_submission_s_rows_are_those_nbgrader_s_add_submission_makes(tmp_path):
    """The writer inserts a new submission's rows itself (nbgrader's objects were most of the teacher's time):
    they are the rows nbgrader's own ``add_submission`` makes, with the scores, penalty and extension set as the
    grader sets them, for a lesson with grade, answer and task cells and learners late, extended and on time."""
    import warnings

    from course_grader.outputs import Result
    from report_class import add_lesson

    when = UTC(2026, 12, 11, 17, 0)
    handed_in = {"ada": deadlines.Lateness(86400, 2.0, None),
                 "bo": deadlines.Lateness(0, 0.0, datetime.timedelta(days=2, hours=3)), "cy": None}
    scores = {"softmax": 2.0, "scaled_dot_product_attention": 0.5}
    for root in (tmp_path / "writer", tmp_path / "nbgrader"):
        root.mkdir()
        with new_gradebook(root) as book:
            add_lesson(book, "01_attention")
            book.add_task_cell("a_question", "01_attention", "01_attention", max_score=1, cell_type="markdown")
            for student in handed_in:
                book.add_student(student)
    writer = GradebookWriter(tmp_path / "writer", list(handed_in))
    try:
        for student, late in handed_in.items():
            notebook = tmp_path / "writer" / "submitted" / student / "01_attention" / "01_attention.ipynb"
            notebook.parent.mkdir(parents=True)
            notebook.write_text("{}")
            writer.record(student, "01_attention", notebook,
                          [Result(student, "01_attention", name, points, 2.0, "passed")
                           for name, points in scores.items()], late, when=HandInTime(when))
    finally:
        writer.close()
    with warnings.catch_warnings(), open_gradebook(tmp_path / "nbgrader") as book:
        warnings.simplefilter("ignore")
        for student, late in handed_in.items():
            submission = book.add_submission("01_attention", student, timestamp=when)
            submission.extension = late.extension if late is not None else None  # as formgrader sets it
            for graded in submission.notebooks:
                graded.late_submission_penalty = late.penalty if late and late.penalty else None
                for grade in graded.grades:
                    if grade.name.removesuffix("_tests") in scores:
                        grade.auto_score = scores[grade.name.removesuffix("_tests")]
                        grade.needs_manual_grade = False
        book.db.commit()
    inserted, made = _rows_by_name(tmp_path / "writer"), _rows_by_name(tmp_path / "nbgrader")
    assert len(made["grade"]) == 3 * 3 and len(made["comment"]) == 3 * 3  # the test's lesson has them all
    assert inserted == made
