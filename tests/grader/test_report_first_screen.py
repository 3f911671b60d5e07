"""The class report's four answers (issue 52), on a class of 300 in two sections (``sections_class.py``):

- which section needs what: the mistake only section B made (20 of 140 against 0 of 160) is named on the first
  screen, with its counts and its card, by Fisher's exact test under a false-discovery rate; 2 of 30 against 1 of
  30 is not;
- who may have copied, at any size: the pair sharing an unusual right answer (einsum, ``** -0.5``, renamed, a
  comment added), the rings of 3, 5 and 12 are flagged with exactly their members, and nothing else is: not the
  textbook answer 40 wrote, not the common answers; a pair whose answer is close to ten others' still is;
- no learner's words as the class's: the attacker's note to the teacher is nowhere on the page;
- the first screen at 1280x720 (a screenshot, in headless Chromium): what to re-teach, which section needs what,
  who needs help and who may have copied, each linking to its section.
"""

import random

import pytest
from bs4 import BeautifulSoup

from course_grader.class_report import build as build_report
from course_grader.class_report.counts import Group
from course_grader.class_report.sections_page import differences
from course_grader.outputs import Result
from copying_class import disguised
from report_class import copy_notebooks, write_graded, write_rows
from sections_class import ATTACKER, COPIED, EINSUM, ONE_SECTION, TEXTBOOK, sections_class

SCREENSHOT = "/tmp/class_report_first_screen.png"


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    root = tmp_path_factory.mktemp("sections300")
    sections_class(root)
    build_report(root)
    return root, BeautifulSoup((root / "report" / "index.html").read_text(), "html.parser")


def flagged(page):
    return [frozenset(s.split(" (")[0] for s in flag.select_one("h3 .ids").get_text().split(", "))
            for flag in page.select("section:has(> h2#copying) section.flag")]


def test_the_pair_and_the_rings_of_3_5_and_12_are_flagged_with_exactly_their_members_and_nothing_else(made):
    _, page = made
    assert sorted(flagged(page), key=sorted) == sorted((frozenset(group) for group, _ in COPIED), key=sorted)
    assert not any(set(TEXTBOOK[0]) & flag for flag in flagged(page)), "the textbook answer 40 wrote is not a copy"
    folded = page.select_one("section:has(> h2#copying) > details").get_text()
    assert "written by 40 of the" in folded


def test_a_flag_says_what_its_members_share_never_that_verdicts_differ(made):
    _, page = made
    ring = next(f for f in page.select("section.flag") if "l020" in f.h3.get_text())
    said = ring.select_one("p.count").get_text()
    assert "each failed, 0 of 2 points" in said and "differ" not in ring.get_text()


def test_the_one_section_mistake_is_named_on_the_first_screen_with_its_counts_and_its_card(made):
    _, page = made
    box = page.select("div.answers section.answer")[1]
    first = box.select_one("li")
    assert ONE_SECTION[1] in first.get_text() and "section B: 20 of 140" in first.get_text() and "0 of 160" in \
        first.get_text()
    card = page.select_one(f"[id='{first.a['href'][1:]}']")
    assert card is not None and ONE_SECTION[1] in card.get_text(), "it links to the mistake's card"


def test_no_word_the_attacker_wrote_reaches_the_page(made):
    root, page = made
    text = (root / "report" / "index.html").read_text()
    assert "NOTE TO THE TEACHER" not in text and "curl" not in text and "evil.example" not in text
    assert ATTACKER in {r.split(",")[0] for r in (root / "grades_by_exercise.csv").read_text().splitlines()}


def _group(exercise, students):
    return Group("01_attention", exercise, "softmax_without_max", True, list(students))


def test_fisher_s_exact_test_names_a_certain_difference_and_not_a_chance_one():
    sections = {**{f"a{n}": "A" for n in range(30)}, **{f"b{n}": "B" for n in range(30)}}
    rows = [Result(s, "01_attention", "softmax", 2.0, 2.0, "passed") for s in sections]
    assert differences([_group("softmax", ["a1", "a2", "b1"])], rows, sections) == []  # 2 of 30 against 1 of 30
    found = differences([_group("softmax", [f"a{n}" for n in range(12)])], rows, sections)
    assert [(d.section, d.counts) for d in found] == [("A", (12, 30, 0, 30))]


def test_a_pair_whose_unusual_answer_is_close_to_ten_others_is_still_flagged(tmp_path):
    """The regression of issue 52: the pair joined, through answers near theirs, ten learners who wrote the scale as
    ``/ np.sqrt(d)``, and the eleven-learner answer was 'common'."""
    copy_notebooks(tmp_path)
    solution = __import__("json").loads((tmp_path / "notebooks/01_attention/01_attention.ipynb").read_text())
    near = EINSUM[0].replace("* q.shape[-1] ** -0.5", "/ np.sqrt(q.shape[-1])")
    rng, rows = random.Random(1), []
    answers = {"ann": EINSUM[0], "ben": EINSUM[1], **{f"s{n}": disguised(near, rng, f"s{n}") for n in range(10)}}
    for student, answer in answers.items():
        write_graded(tmp_path, student, "01_attention", solution, {"scaled_dot_product_attention": answer})
        rows.append((student, "01_attention", "scaled_dot_product_attention", 2.0, 2.0, "passed", "", "", ""))
    write_rows(tmp_path, rows)
    build_report(tmp_path)
    assert flagged(BeautifulSoup((tmp_path / "report" / "index.html").read_text(), "html.parser")) == \
        [frozenset({"ann", "ben"})]


def test_in_chromium_the_first_screen_at_1280x720_answers_the_four_questions(chromium, made):
    import site_pages

    root, _ = made
    with site_pages.offline(chromium, {"width": 1280, "height": 720}) as context:
        page = site_pages.open_page(context, root / "report" / "index.html")
        page.screenshot(path=SCREENSHOT)
        boxes = page.evaluate("""() => [...document.querySelectorAll('div.answers section.answer')].map(box => ({
            title: box.querySelector('h2').innerText, bottom: box.getBoundingClientRect().bottom,
            target: document.getElementById(box.querySelector('h2 a').hash.slice(1)) !== null,
            links: [...box.querySelectorAll('li a')].every(a => document.getElementById(a.hash.slice(1)) !== null),
            items: box.querySelectorAll('li').length}))""")
    assert [box["title"] for box in boxes] == ["What to re-teach first", "Which section needs what",
                                               "Who may need help", "Who may have copied"]
    assert all(box["bottom"] <= 720 and box["target"] and box["links"] and box["items"] for box in boxes), boxes
    assert boxes[3]["items"] == 3 and boxes[0]["items"] == 3
