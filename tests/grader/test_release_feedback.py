"""`make release-feedback` (issue 32, item 2): every learner's page handed back.

Without a hub, on nbgrader's own exchange in a scratch folder: hand-ins as
``make collect`` leaves them (``timestamp.txt`` and ``submission_secret.txt``
beside the notebook), pages as ``make grade`` writes them; ``make
release-feedback`` releases them with ``nbgrader release_feedback``, and each
learner's ``nbgrader fetch_feedback`` (their own settings and cache, as
``nbgrader submit`` left it) gets their own page only. ``feedback.zip`` and
``feedback_mail_merge.csv`` hold every page, with the roster's e-mails. The
page links each exercise lost to its lesson's section and says how to open
the hint ladder. The real classroom's round trip is tests/test_classroom_hub.py.
"""

import csv
import os
import secrets
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from course_grader.class_report.rows import read_rows
from course_grader.feedback_page import write_feedback
from course_grader.lesson_links import LessonLinks, exercise_section, lesson_links
from report_class import copy_notebooks, write_roster, write_rows

ROOT = Path(__file__).resolve().parents[2]
LESSON = "01_attention"
STAMP = "2026-12-10 16:00:00.000000 UTC"


def learner_settings(home, exchange, student):
    """A learner's nbgrader settings, as `make hub-install` writes them (the id set, as the hub's user name)."""
    home.mkdir(parents=True, exist_ok=True)
    (home / "nbgrader_config.py").write_text(
        f"c = get_config()\nc.CourseDirectory.course_id = 'encoder-course'\nc.Exchange.root = {str(exchange)!r}\n"
        f"c.CourseDirectory.student_id = {student!r}\nc.Exchange.cache = {str(home / 'cache')!r}\n")


def hand_in(root, home, student, secret):
    """What `nbgrader submit` leaves in the learner's cache and `make collect` in submitted/."""
    for folder in (root / "submitted" / student / LESSON, home / "cache" / "encoder-course" /
                   f"{student}+{LESSON}+{STAMP}"):
        folder.mkdir(parents=True)
        shutil.copy(root / "notebooks" / LESSON / f"{LESSON}.ipynb", folder)
        (folder / "timestamp.txt").write_text(STAMP)
        (folder / "submission_secret.txt").write_text(secret)


def run(command, cwd, **env):
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
                                   **env))
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout + done.stderr


@pytest.fixture(scope="module")
def released(tmp_path_factory):
    root, scratch = tmp_path_factory.mktemp("course"), tmp_path_factory.mktemp("class")
    exchange = scratch / "exchange"
    exchange.mkdir(mode=0o1777)
    copy_notebooks(root)
    # its Binder badge: where the course's website is published, as a fork names it (OWNER/REPO links nothing)
    (root / "README.md").write_text((ROOT / "README.md").read_text().replace("/gh/OWNER/REPO/", "/gh/Ada-School/encoder/"))
    config = (ROOT / "nbgrader_config.py").read_text().replace('EXCHANGE = "/srv/nbgrader/exchange"',
                                                              f"EXCHANGE = {str(exchange)!r}")
    (root / "nbgrader_config.py").write_text(config)
    rows = [(s, LESSON, e, points, 2.0, "passed" if points else "failed", "" if points else "it differs", "", "")
            for s, points in (("ada", 2.0), ("bob", 0.0), ("cy", 0.0), ("dee", 2.0))
            for e in ("softmax", "scaled_dot_product_attention")]
    write_rows(root, rows)
    write_roster(root, ["ada", "bob", "cy", "dee"])
    write_feedback(root, read_rows(root / "grades_by_exercise.csv")[0])
    homes = {s: scratch / s for s in ("ada", "bob", "cy")}
    for student, home in homes.items():
        learner_settings(home, exchange, student)
        hand_in(root, home, student, "not a secret" if student == "cy" else secrets.token_hex(64))
    for name in ("Makefile", "pyproject.toml"):
        shutil.copy(ROOT / name, root / name)
    (root / ".venv").symlink_to(Path(sys.executable).parent.parent)
    said = run(["make", "-o", ".venv/.installed", "release-feedback"], root)
    return root, homes, said


def fetched(home):
    """What `nbgrader fetch_feedback` gives the learner of ``home``: their pages' texts."""
    run(["nbgrader", "fetch_feedback", LESSON], home, HOME=str(home))
    return [page.read_text() for page in sorted((home / LESSON / "feedback").glob("*/*.html"))]


def test_each_learner_fetches_their_own_page_only_through_nbgrader(released):
    root, homes, said = released
    assert "2 pages released through nbgrader's feedback exchange" in said, said
    for student, other in (("ada", "bob"), ("bob", "ada")):
        [page] = fetched(homes[student])
        assert page == (root / "feedback" / student / "index.html").read_text()
        assert f"Feedback for {student}" in page and f"Feedback for {other}" not in page


def test_a_hand_in_whose_secret_is_not_nbgrader_s_is_named_and_not_released(released):
    root, homes, said = released
    assert "not released through the exchange: cy 01_attention: its submission_secret.txt is not one" in said
    assert fetched(homes["cy"]) == [], "nbgrader finds no feedback for cy"


def test_the_exchange_s_copy_is_readable_and_feedback_stays_the_teacher_s(released):
    root, _, _ = released
    exchange = Path(next(line for line in (root / "nbgrader_config.py").read_text().splitlines()
                         if line.startswith("EXCHANGE = ")).split("=", 1)[1].strip().strip("'\""))
    copies = list((exchange / "encoder-course" / "feedback").glob("*.html"))
    assert len(copies) == 2 and all(p.stat().st_mode & 0o777 == 0o644 for p in copies)
    assert (exchange / "encoder-course" / "feedback").stat().st_mode & 0o004 == 0, "no learner lists the folder"
    assert (root / "feedback" / "ada" / LESSON).stat().st_mode & 0o077 == 0, "make release-feedback's umask: yours"


def test_a_zip_and_a_mail_merge_csv_hold_every_page_with_the_roster_s_e_mail(released):
    root, _, said = released
    with open(root / "feedback_mail_merge.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert [(r["student_id"], r["email"], r["file"]) for r in rows] == [
        (s, f"{s}@school.example", f"feedback/{s}/index.html") for s in ("ada", "bob", "cy", "dee")]
    with zipfile.ZipFile(root / "feedback.zip") as archive:
        assert archive.namelist() == [f"{s}/index.html" for s in ("ada", "bob", "cy", "dee")]
        assert archive.read("bob/index.html") == (root / "feedback" / "bob" / "index.html").read_bytes()
    assert "4 pages in feedback.zip" in said


def test_a_page_links_each_exercise_lost_to_its_section_and_says_how_to_open_the_hint_ladder(released):
    root, _, _ = released
    page = (root / "feedback" / "bob" / "index.html").read_text()
    anchor, heading = exercise_section("softmax")
    site = lesson_links(root).site
    assert site and f'<a href="{site}01_attention.html#the-softmax">01_attention: {heading}</a>' in page
    assert 'grading.hint("softmax")' in page and 'grading.hint("scaled_dot_product_attention")' in page
    assert "grading.hint" not in (root / "feedback" / "ada" / "index.html").read_text(), "nothing lost, no hint"
    on_hub = LessonLinks(hub="/").section(LESSON, anchor)
    assert on_hub[0] == "/hub/user-redirect/lab/tree/encoder-course/01_attention/01_attention.ipynb#The-softmax"


def test_a_page_greets_the_learner_by_the_roster_s_name(released):
    root, _, said = released
    assert "<h1>Your exercises, Ada Bob: " in (root / "feedback" / "bob" / "index.html").read_text()
    assert "OWNER/REPO" not in said, "a fork's badge: no warning"


def test_the_placeholder_badge_links_no_lesson_and_make_release_feedback_says_so_naming_the_settings(tmp_path):
    from course_grader.feedback_page import feedback_page
    from course_grader.lesson_links import LessonLinks, published_site, unlinked_warning
    from course_grader.outputs import Result

    shutil.copy(ROOT / "README.md", tmp_path)  # the course's own: OWNER/REPO
    assert "/gh/OWNER/REPO/" in (tmp_path / "README.md").read_text()
    assert published_site(tmp_path) is None and lesson_links(tmp_path) == LessonLinks()
    warning = unlinked_warning(tmp_path)
    assert "OWNER/REPO" in warning and "c.EncoderCourse.site_url" in warning and "c.EncoderCourse.hub_url" in warning
    _, heading = exercise_section("softmax")
    page = feedback_page("bob", [Result("bob", LESSON, "softmax", 0.0, 2.0, "failed", note="it differs")],
                         links=lesson_links(tmp_path))
    assert f"Re-read {LESSON}: {heading}; then" in page and "github.io" not in page
    (tmp_path / "nbgrader_config.py").write_text('c = get_config()\nc.EncoderCourse.site_url = "https://ada.example/"\n')
    assert unlinked_warning(tmp_path) is None and lesson_links(tmp_path).site == "https://ada.example/"


def test_release_feedback_before_make_grade_says_to_grade_first(tmp_path):
    done = subprocess.run([sys.executable, "-m", "course_grader.release", "--root", str(tmp_path)],
                          capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 2 and "run `make grade` first" in done.stderr


def test_a_hand_in_carrying_a_classmate_s_secret_releases_neither_page(tmp_path, monkeypatch):
    """Issue 39, item 6: a hand-in carrying a classmate's submission_secret.txt replaced that classmate's page in
    nbgrader's feedback exchange, as the page's name there is made from the secret. A secret two learners' hand-ins
    carry (the current ones, or one a newer hand-in replaced) is released to neither, and both are named."""
    from course_grader import release

    secret, own = secrets.token_hex(64), secrets.token_hex(64)
    for student, folder, text in (("ada", f"{LESSON}", secret), ("eve", f"{LESSON}", own),
                                  ("eve", f".replaced/{LESSON}+2026-12-01T10-00-00.000000Z", secret),
                                  ("bob", f"{LESSON}", secrets.token_hex(64))):
        handed = tmp_path / "submitted" / student / folder
        handed.mkdir(parents=True)
        (handed / "submission_secret.txt").write_text(text)
    pages = {}
    for student in ("ada", "eve", "bob"):
        page = tmp_path / "feedback" / student / "index.html"
        page.parent.mkdir(parents=True)
        page.write_text(f"Feedback for {student}")
        pages[student] = page
    monkeypatch.setattr(release, "nbgrader_release", lambda root, lesson: "")
    released, refused = release.through_exchange(tmp_path, pages, [LESSON], out=lambda line: None)
    assert released == 2  # eve's current hand-in and bob's: their secrets are their own
    assert len(refused) == 1 and refused[0].startswith(f"ada {LESSON}: its submission_secret.txt is also in the "
                                                       f"hand-in of eve")
    assert not (tmp_path / "feedback" / "ada" / LESSON).exists()
