"""Who may have copied (issue 32, item 1): the class report's similarity section.

- A seeded class of 200 (``tests/grader/copying_class.py``): most answers come from a
  handful of common variants (the solution, catalogued mistakes, wrong answers
  no mistake explains), each learner's renamed and commented; three pairs
  copied an unusual right answer, renamed, reordered and re-commented, and a
  triple an unusual wrong one. The four copied groups are the section's first
  four entries, and no group of common answers is above them: those are in
  the folded list, with why.
- What is normalised (names, comments, docstrings) and what copydetect's
  fingerprints keep through a reordering; bounds; a learner's text escaped.
"""

import time

import pytest
from bs4 import BeautifulSoup

from course_grader.class_report import build as build_report
from course_grader.class_report.answers import OVER_BOUND, TooLarge
from course_grader.class_report.copying_page import with_differences_marked
from course_grader.class_report.similarity import NEAR, canonical, fingerprints, similarity
from copying_class import COPIED, copying_class
from report_class import copy_notebooks, write_graded, write_rows


def flags(page):
    """``[(learners, score)]`` of the copying section's entries, in order."""
    found = []
    for flag in page.select("section:has(> h2#copying) section.flag"):
        who = flag.select_one("h3 .ids").get_text().split(", ")
        found.append(({learner.split(" (")[0] for learner in who},
                      float(flag.select_one("h3").get_text().rsplit("score ", 1)[1])))
    return found


@pytest.fixture(scope="module")
def seeded(tmp_path_factory):
    root = tmp_path_factory.mktemp("class200")
    started = time.perf_counter()
    _, groups = copying_class(root)
    written = time.perf_counter() - started
    started = time.perf_counter()
    build_report(root)
    print(f"\nthe class of 200 written in {written:.1f} s; its report in {time.perf_counter() - started:.1f} s")
    return root, groups, BeautifulSoup((root / "report" / "index.html").read_text(), "html.parser")


@pytest.mark.slow
def test_the_four_copied_groups_are_the_first_four_entries(seeded):
    _, groups, page = seeded
    found = flags(page)
    assert [learners for learners, _ in found[:4]] and \
        sorted(map(sorted, (learners for learners, _ in found[:4]))) == sorted(map(sorted, groups)), found[:6]
    assert all(score < found[3][1] for _, score in found[4:]), "no other group as high"
    print("\nthe copying section's first entries:")
    for learners, score in found[:6]:
        print(f"  {', '.join(sorted(learners))}: score {score:.2f}")


@pytest.mark.slow
def test_common_answers_are_folded_below_with_why(seeded):
    _, groups, page = seeded
    section = page.select_one("section:has(> h2#copying)")
    common = section.select_one(":scope > details")
    assert common is not None and "common in this class" in common.summary.get_text()
    whys = [row.select("td")[2].get_text() for row in common.select("tbody tr")]
    assert any("the course's own solution" in why for why in whys)
    assert any("the catalogued mistake" in why for why in whys)
    assert max(int(row.select("td")[1].get_text()) for row in common.select("tbody tr")) > 100, \
        "the solution, shared by most of the class"


@pytest.mark.slow
def test_each_entry_shows_the_answers_side_by_side_the_verdict_and_the_score(seeded):
    _, _, page = seeded
    first = page.select("section:has(> h2#copying) section.flag")
    triple = next(flag for flag in first[:4] if "scaled_dot_product_attention" in flag.get_text())
    columns = triple.select(".side figure")
    assert len(columns) == 3, "the three learners' answers side by side"
    assert all("failed" in column.figcaption.get_text() for column in columns), "the grader's verdict on each"
    assert all(column.select("pre code") for column in columns)
    assert any(column.select("mark") for column in columns), "what differs is with_differences_marked"
    assert "score" in triple.h3.get_text() and "alike" in triple.get_text()
    assert "\n" in columns[0].select_one("pre").get_text(), "the answer's lines are kept"


def test_names_comments_and_docstrings_are_normalised_order_is_left_to_the_fingerprints():
    one, renamed = COPIED[("learner017", "learner142")][3]
    assert canonical("def f(x):\n    # mine\n    '''Doc.'''\n    y = x * 2\n    return np.exp(y)") == \
        canonical("def g(a):\n    b = a * 2  # twice\n    return np.exp(b)\n")
    assert canonical(one) != canonical(renamed), "reordered: not the same text"
    assert similarity(fingerprints(canonical(one)), fingerprints(canonical(renamed))) >= NEAR, \
        "but copydetect's fingerprints find it"
    solution = "def softmax(x, axis=-1):\n    e = np.exp(x - x.max(axis=axis, keepdims=True))\n" \
               "    return e / e.sum(axis=axis, keepdims=True)\n"
    assert similarity(fingerprints(canonical(one)), fingerprints(canonical(solution))) < NEAR
    assert canonical("def softmax(x:\n") is None


def test_an_answer_over_the_bounds_is_compared_with_nothing():
    with pytest.raises(TooLarge):
        canonical(OVER_BOUND)
    with pytest.raises(TooLarge):
        canonical("def f(x):\n" + "    x = [x, x, x, x, x, x]\n" * 600 + "    return x\n")


def test_what_a_learner_wrote_is_shown_as_text_its_lines_kept():
    shown = with_differences_marked("x = 1  # <script>alert(1)</script>\ny = '\x1b[2J'\n", [(0, 5)])
    assert "<script>" not in shown and "&lt;script&gt;" in shown and "\x1b" not in shown
    assert shown.count("\n") == 2 and "<mark>" in shown


def test_two_learners_with_one_unusual_answer_are_flagged_the_solution_and_blanks_are_not(tmp_path):
    copy_notebooks(tmp_path)
    solution = __import__("json").loads((tmp_path / "notebooks/01_attention/01_attention.ipynb").read_text())
    unusual, copied = COPIED[("learner017", "learner142")][3]
    answers = {"ann": unusual, "ben": copied, "cy": "# YOUR CODE HERE\nraise NotImplementedError()",
               "dan": "# YOUR CODE HERE\nraise NotImplementedError()"}
    rows = []
    for student, answer in answers.items():
        write_graded(tmp_path, student, "01_attention", solution, {"softmax": answer})
        status = "not answered" if "YOUR CODE" in answer else "passed"
        rows.append((student, "01_attention", "softmax", 2.0 * (status == "passed"), 2.0, status, "", "", ""))
    for n in range(6):  # the course's own solution, as most of the class hands it in
        write_graded(tmp_path, f"sol{n}", "01_attention", solution, {})
        rows.append((f"sol{n}", "01_attention", "softmax", 2.0, 2.0, "passed", "", "", ""))
    write_rows(tmp_path, rows)
    build_report(tmp_path)
    page = BeautifulSoup((tmp_path / "report" / "index.html").read_text(), "html.parser")
    assert [learners for learners, _ in flags(page)] == [{"ann", "ben"}]
    common = page.select_one("section:has(> h2#copying) > details").get_text()
    assert "the course's own solution" in common
