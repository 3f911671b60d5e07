"""Canvas and Moodle both ways (issue 52, item 5): a Canvas-style download collected, graded and handed back.

- Collected: each file read by the user id the record gives with that file (Canvas's API lists each submission's
  attachments), never by a suffix of a name a learner sets: Mallory, whose sortable name ends in ``_101``, is not
  read as Ada (Canvas's user 101); a record of exactly 100 submissions (one page of Canvas's API) is said to be
  maybe one page of several.
- Graded: ``grades_lms.csv`` fills the assignment the learners handed in to (``<name> (<assignment id>)``, as
  Canvas's export names it and its import fills it), with Canvas's user id, SIS id and login from the record.
- Handed back: ``make release-feedback`` writes ``feedback_canvas_<lesson>.zip``, each learner's page named after
  the hand-in, as Canvas's Re-Upload Submissions reads a name (its first two numbers: the user and the file
  handed in: ``Assignment#infer_comment_context_from_filename``), and each page says how the learner sees it there;
  Moodle's zip as its *Upload multiple feedback files in a zip* reads a path (its second ``_`` part the participant,
  then ``assignsubmission``, ``file``: ``assignfeedback_file_zip_importer::is_valid_filename_for_import``).
"""

import csv
import json
import zipfile

import pytest

from course_grader import collect_download
from course_grader.feedback_page import lesson_page_path
from course_grader.plan import Choices, plan_run
from course_grader.release import release, write_platform_zips
from course_grader.run import grade_class
from grading_helpers import course_after_make_student
from report_class import open_gradebook
from test_platform_download import RubyzipInfo, moodle_download, write_zip

LESSON = "01_attention"
#: (roster id, Canvas user id, the file's id, its sortable name as Canvas's zipper writes it, SIS id, login).
CLASS = (("ada", 101, 9101, "lovelaceada", "S-ada", "ada.lovelace"), ("bo", 102, 9102, "libo", "S-bo", "bo.li"),
         ("mallory", 303, 9303, "mallory_101", "S-mal", "mallory"))


def canvas_reads(name):
    """What Canvas's Re-Upload Submissions reads of a file's name: its first two numbers (user, file)."""
    return tuple(int(part) for part in name.split("_") if part.isdigit())[:2]


def moodle_reads(path):
    """What Moodle's feedback-files import reads of a path: the participant, or None where it would refuse it."""
    info = path.split("/")[0].split("_", 4)
    return int(info[1]) if len(info) >= 4 and info[1].isdigit() and info[2:4] == ["assignsubmission", "file"] else None


def canvas_record(folder, attachments=True):
    api = [{"id": 7000 + user, "user_id": user, "assignment_id": 4242, "submitted_at": "2026-12-10T15:00:00Z",
            "assignment": {"id": 4242, "name": "Lesson 1: attention"},
            "attachments": [{"id": file, "display_name": f"{LESSON}.ipynb"}] if attachments else [],
            "user": {"id": user, "sortable_name": name, "sis_user_id": sis, "login_id": login}}
           for _, user, file, name, sis, login in CLASS]
    (folder / "submissions.json").write_text("while(1);" + json.dumps(api))
    return folder / "submissions.json"


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """The course after make student, with ``CLASS`` on its roster; Ada hands in the solutions, Mallory (whose
    sortable name ends in Ada's user id) a blank lesson, Bo nothing but his notebook's copy of the blank."""
    root = course_after_make_student(tmp_path_factory, "platform")
    with open_gradebook(root) as gradebook:
        for student, *_ , sis, login in CLASS:
            gradebook.update_or_create_student(sis, first_name=student.title(), last_name="Learner",
                                               email=f"{student}@canvas.example")
    solved = (root / "notebooks" / LESSON / f"{LESSON}.ipynb").read_bytes()
    blank = (root / "release" / LESSON / f"{LESSON}.ipynb").read_bytes()
    folder = tmp_path_factory.mktemp("canvas")
    entries = {f"{name}_{user}_{file}_{LESSON}.ipynb": solved if student == "ada" else blank
               for student, user, file, name, _, _ in CLASS}
    write_zip(folder / "submissions.zip", entries, RubyzipInfo)
    lines = collect_download.take(root, LESSON, folder / "submissions.zip", [canvas_record(folder)])
    grade_class(plan_run(root, choices=Choices(set_lessons=[LESSON])), jobs=2, out=lambda line: None)
    return root, lines, release(root)


def test_a_file_is_read_by_the_user_id_the_record_gives_with_it_never_by_a_suffix_of_a_name(course):
    root, lines, _ = course
    assert lines[0].startswith("collected 3 hand-ins"), lines
    assert (root / "submitted" / "S-ada" / LESSON / f"{LESSON}.ipynb").read_bytes() == \
        (root / "notebooks" / LESSON / f"{LESSON}.ipynb").read_bytes(), "Ada's own notebook"
    assert (root / "submitted" / "S-mal" / LESSON / f"{LESSON}.ipynb").read_bytes() == \
        (root / "release" / LESSON / f"{LESSON}.ipynb").read_bytes(), "Mallory's is Mallory's"


def test_without_the_files_in_the_record_the_name_canvas_wrote_decides_or_nothing_is_guessed(tmp_path):
    from course_grader.downloads import PlatformLearner, parse_file

    ada, mallory = PlatformLearner("101", shown="Lovelace, Ada"), PlatformLearner("303", shown="Mallory_101")
    file, why = parse_file("Canvas", "mallory_101_303_9303_x.ipynb", {"101": ada, "303": mallory})
    assert (file.key, file.file_id, why) == ("303", "9303", None)
    file, why = parse_file("Canvas", "mallory_101_303_9303_x.ipynb", {"101": ada, "303": PlatformLearner("303")})
    assert file is None and "reads as 2 of the record's learners" in why


def test_the_grade_file_fills_the_canvas_assignment_handed_in_to_with_canvas_s_ids(course):
    root, _, _ = course
    with open(root / "grades_lms.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert "Lesson 1: attention (4242)" in rows[0] and LESSON not in rows[0]
    by_sis = {row["SIS User ID"]: row for row in rows if row["SIS User ID"].startswith("S-")}
    assert {(r["ID"], r["SIS Login ID"]) for r in by_sis.values()} == {(str(u), l) for _, u, _, _, _, l in CLASS}
    assert float(by_sis["S-ada"]["Lesson 1: attention (4242)"]) > float(by_sis["S-mal"]["Lesson 1: attention (4242)"])


def test_the_re_upload_zip_names_each_page_for_the_same_submission_canvas_gave(course):
    root, _, said = course
    with zipfile.ZipFile(root / f"feedback_canvas_{LESSON}.zip") as archive:
        names = archive.namelist()
        pages = {canvas_reads(name): archive.read(name).decode() for name in names}
    assert set(pages) == {(user, file) for _, user, file, _, _, _ in CLASS}, names
    assert all(name.endswith(".html") for name in names) and "Re-Upload Submissions" in said
    assert all("hands it back on Canvas" in page and "nbgrader fetch_feedback" not in page for page in pages.values())


def test_moodle_s_zip_names_each_page_for_its_participant(course, tmp_path):
    root, _, _ = course
    download, worksheet = moodle_download(tmp_path)
    moodle = tmp_path / "moodle-course"
    (moodle / "feedback").mkdir(parents=True)
    for name in ("nbgrader_config.py", "gradebook.db"):
        (moodle / name).write_bytes((root / name).read_bytes())
    with open_gradebook(moodle) as gradebook:
        for student in ("ada", "josé"):
            gradebook.update_or_create_student(student, email=f"{student.replace('é', 'e')}@school.example")
    collect_download.take(moodle, LESSON, download, [worksheet], "UTC")
    for student in ("ada", "josé"):
        lesson_page_path(moodle, student, LESSON).parent.mkdir()
        lesson_page_path(moodle, student, LESSON).write_text(f"<p>{student}'s page</p>")
    write_platform_zips(moodle, {"ada": None, "josé": None}, [LESSON])
    with zipfile.ZipFile(moodle / f"feedback_moodle_{LESSON}.zip") as archive:
        assert {moodle_reads(name): archive.read(name).decode() for name in archive.namelist()} == \
            {5001: "<p>ada's page</p>", 5002: "<p>josé's page</p>"}


def test_a_record_of_exactly_one_page_of_canvas_s_api_is_said_to_be_maybe_one_of_several(tmp_path):
    from course_grader.downloads import read_records

    items = [{"user_id": n, "submitted_at": None, "user": {}} for n in range(100)]
    (tmp_path / "page1.json").write_text(json.dumps(items))
    assert read_records([tmp_path / "page1.json"])[1].full_pages == (str(tmp_path / "page1.json"),)
    (tmp_path / "page2.json").write_text(json.dumps(items[:40]))
    assert read_records([tmp_path / "page2.json"])[1].full_pages == ()
