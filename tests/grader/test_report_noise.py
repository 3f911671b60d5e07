"""The class report says only what it knows (issue 42, item 3): one shared answer of more than 4 learners, and
nothing else shared, is common, not a copy (and the page says where the line is); one re-teach card per idea; a group the grader measured nothing on is
split by answer and titled by the answer most of it wrote; who needs help is ranked, the few furthest behind first."""

import csv
import json

from bs4 import BeautifulSoup

from course_grader.class_report import build as build_report
from course_grader.class_report.counts import UNNAMED
from course_grader.class_report.page import HELP_SHOWN
from course_grader.class_report.similarity import FEW
from report_class import copy_notebooks, write_graded, write_rows

LAYER_NORM = ("04_add_and_norm", "layer_norm", 2.0)
#: Two wrong answers of one exercise on which the grader measured nothing it can say (no diagnosis, no note).
ANSWER_A = ("def layer_norm(x, gamma, beta, eps=1e-5):\n    centred = x - x.mean(axis=-1, keepdims=True)\n"
            "    scale = np.sqrt((centred ** 2).mean(axis=-1, keepdims=True) + eps)\n"
            "    return gamma * centred / scale + beta + 0.5 * np.tanh(centred).mean()\n")
ANSWER_B = ("def layer_norm(x, gamma, beta, eps=1e-5):\n    out = np.empty_like(x)\n    for i in range(x.shape[0]):\n"
            "        row = x[i] - x[i].mean()\n        out[i] = gamma * row / np.sqrt(row.var() + eps) + beta\n"
            "    return np.flip(out, axis=-1)\n")


def _page(root):
    return BeautifulSoup((root / "report" / "index.html").read_text(), "html.parser")


def _class(root, answers, statuses, mistakes=None, points=None):
    """Write a graded class of lesson 04's ``layer_norm``: ``answers`` ``{student: source}``."""
    copy_notebooks(root)
    lesson, exercise, most = LAYER_NORM
    solution = json.loads((root / "notebooks" / lesson / f"{lesson}.ipynb").read_text())
    rows = []
    for student, answer in answers.items():
        write_graded(root, student, lesson, solution, {exercise: answer} if answer else {})
        status = statuses.get(student, "passed")
        earned = (points or {}).get(student, most if status == "passed" else 0.0)
        rows.append((student, lesson, exercise, earned, most, status, "", (mistakes or {}).get(student, ""), ""))
    write_rows(root, rows)
    build_report(root)
    return _page(root)


def test_more_than_four_learners_sharing_one_unusual_wrong_answer_alone_is_common_and_the_page_says_the_line(tmp_path):
    five = {f"ring{n}": ANSWER_A for n in range(FEW + 1)}
    pair = {"ann": ANSWER_B, "ben": ANSWER_B.replace("row", "line")}
    others = {f"sol{n}": None for n in range(200)}  # the course's solution, most of a class of 200
    page = _class(tmp_path, {**five, **pair, **others}, {s: "failed" for s in [*five, *pair]})
    section = page.select_one("section:has(> h2#copying)")
    flagged = [set(f.select_one("h3 .ids").get_text().split(", ")) for f in section.select("section.flag")]
    assert flagged == [{"ann", "ben"}], flagged
    assert f"one answer that at most {FEW} learners wrote" in section.get_text()
    whys = [row.select("td")[-1].get_text() for row in section.select(":scope > details tbody tr")]
    assert any(f"written by {FEW + 1} of the" in why for why in whys), whys


def test_two_mistakes_one_idea_explains_are_one_re_teach_card(tmp_path):
    # neither mistake has hints of its own: each card would give layer_norm's one idea, twice
    mistakes = {**{f"u{n}": "layer_norm_unbiased_variance" for n in range(6)},
                **{f"e{n}": "layer_norm_eps_outside_the_root" for n in range(5)}}
    page = _class(tmp_path, {s: ANSWER_A for s in mistakes}, {s: "failed" for s in mistakes}, mistakes)
    cards = page.select("section:has(> h2#reteach) .card")
    assert len(cards) == 1, [c.find("h3").get_text() for c in cards]
    text = cards[0].get_text()
    assert "2 mistakes, one idea" in text and "11 learners lost its points" in text
    assert "layer_norm_unbiased_variance" in text and "layer_norm_eps_outside_the_root" in text
    assert text.count("The idea to re-teach") == 1


def test_a_group_the_grader_measured_nothing_on_is_split_by_answer_and_titled_by_it(tmp_path):
    answers = {**{f"a{n}": ANSWER_A for n in range(4)}, **{f"b{n}": ANSWER_B for n in range(3)}}
    page = _class(tmp_path, answers, {s: "failed" for s in answers})
    titles = [c.find("h3").get_text() for c in page.select("section:has(> h2#unnamed) .card")]
    assert len(titles) == 2, titles
    assert "4 of them wrote" in titles[0] and "np.tanh" in titles[0], titles
    assert "3 of them wrote" in titles[1] and "np.flip" in titles[1], titles
    assert "(nothing measured)" not in page.get_text()
    with open(tmp_path / "report" / "mistakes.csv", newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["exercise"] == "layer_norm"]
    assert sorted(r["learners"] for r in rows) == ["3", "4"]
    assert all(r["mistake"].startswith(UNNAMED) and "wrote" in r["mistake"] for r in rows)


def test_who_needs_help_is_ranked_by_the_points_earned_and_shows_the_few_furthest_behind_first(tmp_path):
    behind = {f"p{n:02d}": n * 0.1 for n in range(8)}  # each earned n tenths of a point, all failing
    answers = {s: ANSWER_A for s in behind} | {f"sol{n}": None for n in range(20)}
    page = _class(tmp_path, answers, {s: "failed" for s in behind}, points=behind)
    section = page.select_one("section:has(> h2#help)")
    first = [row.select_one("td").get_text() for row in section.select(":scope > table tbody tr")]
    assert first == sorted(behind, key=behind.get)[:HELP_SHOWN], first
    folded = [row.select_one("td").get_text() for row in section.select(":scope > details tbody tr")]
    assert folded == sorted(behind, key=behind.get)[HELP_SHOWN:]
