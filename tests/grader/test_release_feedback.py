"""`make release-feedback` (issue 32, item 2): every learner's page handed back.

Without a hub, on nbgrader's own exchange in a scratch folder: hand-ins as
``make collect`` leaves them (``timestamp.txt`` and ``submission_secret.txt``
beside the notebook), pages as ``make grade`` writes them; ``make
release-feedback`` releases them with ``nbgrader release_feedback``, and each
learner's ``nbgrader fetch_feedback`` (their own settings and cache, as
``nbgrader submit`` left it) gets their own page of that lesson only.
``feedback.zip`` and ``feedback_mail_merge.csv`` hold every whole page, with
the roster's e-mails. The page links each exercise lost to its lesson's
section and says how to open the hint ladder. The real classroom's round
trip is tests/test_classroom_hub.py.

Issue 42, item 4: a re-release sends only what changed (``release_class``:
every learner hands every lesson in; the files each release writes are
counted in the course folder and the exchange), and one lesson's feedback is
that lesson's.
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
from release_class import build, counts, fetch, grade, hand_in as hand_in_again, lessons_of, release
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
        assert page == (root / "feedback" / student / f"{LESSON}.html").read_text(), "the lesson's own page"
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
        page = tmp_path / "feedback" / student / f"{LESSON}.html"
        page.parent.mkdir(parents=True)
        page.write_text(f"Feedback for {student}")
        pages[student] = page
    monkeypatch.setattr(release, "nbgrader_release", nbgrader_saying_it_released)
    released, unchanged, refused = release.through_exchange(tmp_path, pages, [LESSON], out=lambda line: None)
    assert (released, unchanged) == (2, 0)  # eve's current hand-in and bob's: their secrets are their own
    assert len(refused) == 1 and refused[0].startswith(f"ada {LESSON}: its submission_secret.txt is also in the "
                                                       f"hand-in of eve")
    assert not (tmp_path / "feedback" / "ada" / LESSON).exists()


def nbgrader_saying_it_released(root, lesson, exclude=()):
    """What ``nbgrader release_feedback --log-level=INFO`` says, releasing every staged folder not excluded."""
    staged = {p.parent.name for p in (Path(root) / "feedback").glob(f"*/{lesson}")} - set(exclude)
    return "".join(f"[ReleaseFeedbackApp | INFO] Releasing feedback for student '{s}' on assignment "
                   f"'encoder-course/{lesson}/{lesson}' (...)\n" for s in sorted(staged))


# ---------------------------------------------------------------- issue 42, item 4: only what changed, per lesson

LEARNERS = ("ada", "bob", "cy")


def class_released(scratch):
    """Three learners who handed two lessons in, graded and released once: ``(course, exchange, lessons)``."""
    lessons = lessons_of(2)
    root, exchange = build(scratch, LEARNERS, lessons)
    grade(root, LEARNERS, lessons)
    said, _ = release(root, exchange)
    assert counts(said) == (6, 0), said
    return root, exchange, list(lessons)


@pytest.fixture(scope="module")
def unchanged_class(tmp_path_factory):
    scratch = tmp_path_factory.mktemp("released")
    return scratch, *class_released(scratch)


def written_where(root, exchange, written):
    """``(written in the course folder, relative to it; how many written in the exchange)``."""
    return ({str(Path(p).relative_to(root)) for p in written if p.startswith(f"{root}/")},
            sum(p.startswith(f"{exchange}/") for p in written))


def test_an_unchanged_class_is_released_again_with_nothing_written(unchanged_class):
    _, root, exchange, _ = unchanged_class
    said, written = release(root, exchange)
    assert written == [], "nothing staged, nothing copied into the exchange, no record or zip rewritten"
    assert counts(said) == (0, 6)
    last = said.strip().splitlines()[-2:]
    assert last[0].startswith("0 pages released") and last[1].startswith("6 pages unchanged since they were last")


def test_one_lesson_s_fetch_gets_that_lesson_and_all_lessons_get_each_lesson_once(unchanged_class):
    scratch, root, _, lessons = unchanged_class
    [(path, page)] = fetch(scratch, "ada", lessons[:1]).items()
    assert path.endswith(f"{lessons[0]}.html") and page == (root / "feedback" / "ada" / f"{lessons[0]}.html").read_text()
    assert f"<h2>{lessons[0]}: " in page and f"<h2>{lessons[1]}" not in page and "Feedback for ada" in page
    assert f"<h1>Your exercises in {lessons[0]}, " in page
    pages = fetch(scratch, "ada", lessons).values()
    assert len(pages) == 2 and all("".join(pages).count(f"<h2>{lesson}: ") == 1 for lesson in lessons)
    whole = (root / "feedback" / "ada" / "index.html").read_text()
    assert all(f"<h2>{lesson}: " in whole for lesson in lessons), "the whole page: feedback.zip's"


def test_a_regrade_of_one_learner_re_releases_that_learner_s_page_only(tmp_path):
    root, exchange, lessons = class_released(tmp_path)
    grade(root, LEARNERS, lessons_of(2), failing={("bob", lessons[0])})
    said, written = release(root, exchange)
    assert counts(said) == (1, 5), said
    course, copies = written_where(root, exchange, written)
    assert copies == 1, "one page copied into the exchange"
    assert course == {f"feedback/bob/{lessons[0]}/{lessons[0]}.html", f"feedback/.released/{lessons[0]}.json",
                      "feedback.zip"}, course
    [page] = fetch(tmp_path, "bob", lessons[:1]).values()
    assert "it differs" in page and page == (root / "feedback" / "bob" / f"{lessons[0]}.html").read_text()


def test_a_regraded_lesson_re_releases_that_lesson_for_those_whose_page_changed(tmp_path):
    root, exchange, lessons = class_released(tmp_path)
    grade(root, LEARNERS, lessons_of(2), failing={("ada", lessons[1]), ("cy", lessons[1])})
    said, written = release(root, exchange)
    assert counts(said) == (2, 4), said
    course, copies = written_where(root, exchange, written)
    assert copies == 2 and {p for p in course if p.endswith(".html")} == {
        f"feedback/{s}/{lessons[1]}/{lessons[1]}.html" for s in ("ada", "cy")}
    assert f"{lessons[0]}: 0 pages released through nbgrader's feedback exchange, 3 unchanged" in said
    grade(root, LEARNERS, lessons_of(2), failing={("ada", lessons[1]), ("cy", lessons[1])}, note="a new note")
    assert counts(release(root, exchange)[0]) == (2, 4), "the catalogue's words changed: the same two again"


def test_the_record_is_not_fooled_by_a_learner_editing_what_they_fetched(tmp_path):
    root, exchange, lessons = class_released(tmp_path)
    [path] = fetch(tmp_path, "cy", lessons[:1])
    (tmp_path / "homes" / "cy" / path).write_text("<h1>Your exercises: 100 of 4 points</h1>")
    said, written = release(root, exchange)
    assert counts(said) == (0, 6) and written == []
    assert fetch(tmp_path, "cy", lessons[:1])[path] == (root / "feedback" / "cy" / f"{lessons[0]}.html").read_text()
    record = root / "feedback" / ".released" / f"{lessons[0]}.json"
    assert record.stat().st_mode & 0o077 == 0 and (root / "feedback").stat().st_mode & 0o077 == 0, "yours alone"
    hand_in_again(tmp_path, "cy", lessons[0])  # a new hand-in, a new secret: the same page under a new name
    assert counts(release(root, exchange)[0]) == (1, 5)
    assert len(fetch(tmp_path, "cy", lessons[:1])) == 1
    assert counts(release(root, exchange, "--force")[0]) == (6, 0), "FORCE=1: every page again"


def test_an_interrupted_release_records_nothing_it_did_not_send(tmp_path, monkeypatch):
    from course_grader import release as releasing

    root, exchange, lessons = class_released(tmp_path)
    grade(root, LEARNERS, lessons_of(2), failing={("bob", lessons[0])})
    record = root / "feedback" / ".released" / f"{lessons[0]}.json"
    before = record.read_bytes()

    def fails(root, lesson, exclude=()):
        raise RuntimeError(f"nbgrader release_feedback {lesson} failed: interrupted")

    monkeypatch.setattr(releasing, "nbgrader_release", fails)
    with pytest.raises(RuntimeError, match="interrupted"):
        releasing.release(root, out=lambda line: None)
    assert record.read_bytes() == before, "the record still says what was last sent"
    monkeypatch.setattr(releasing, "nbgrader_release", lambda root, lesson, exclude=(): "")  # said nothing of bob
    said = releasing.release(root, out=lambda line: None)
    assert f"not released through the exchange: bob {lessons[0]}: nbgrader release_feedback did not" in said
    assert record.read_bytes() == before
    monkeypatch.undo()
    assert counts(release(root, exchange)[0]) == (1, 5), "sent on the next release"
    [page] = fetch(tmp_path, "bob", lessons[:1]).values()
    assert "it differs" in page
