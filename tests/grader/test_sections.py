"""A teacher of several sections (issue 42, item 1): the sections read from the roster's section column or the
course's setting, one learning-platform file per section, one report that puts them side by side and names the
gaps, and copying flags that say when they cross sections. Two sections of 100 each in the class of 200 here; a
whole ``make grade`` with sections is in ``test_grading_pipeline.py``."""

import csv
import json

import pytest
from bs4 import BeautifulSoup

from course_grader import outputs
from course_grader.class_report import build as build_report
from course_grader.class_report.sections_page import lost_a_learner
from course_grader.outputs import Result
from course_grader.sections import file_name, read_sections
from copying_class import COPIED, copying_class
from report_class import copy_notebooks, write_graded, write_rows


def _config(root, setting):
    (root / "nbgrader_config.py").write_text(f"c = get_config()\nc.EncoderCourse.sections = {setting!r}\n")


CANVAS = ("\ufeffStudent,ID,SIS User ID,SIS Login ID,Section\n    Points Possible,,,,\n"
          "\"Lovelace, Ada\",101,ada,ada,Section A\n\"Núñez, José\",102,josé,josé,Section B\n"
          "\"Nobody, No\",103,nobody,nobody,\n")


def test_the_roster_s_section_column_is_read_as_canvas_exports_it(tmp_path):
    (tmp_path / "roster.csv").write_text(CANVAS, encoding="utf-8")
    _config(tmp_path, "roster.csv")
    assert read_sections(tmp_path) == {"ada": "Section A", "josé": "Section B"}
    _config(tmp_path, {"A": ["ada", "ben"], "B": ["cy"]})
    assert read_sections(tmp_path) == {"ada": "A", "ben": "A", "cy": "B"}
    (tmp_path / "nbgrader_config.py").write_text("c = get_config()\n")
    assert read_sections(tmp_path) == {}


@pytest.mark.parametrize("setting, text, words", [
    ({"A": ["ada"], "B": ["ada"]}, None, "'ada' is in two sections"),
    ({"A": "ada"}, None, "must list its student ids"),
    ({"A/B": ["ada"]}, None, "a section's name must be"),
    (3, None, "must be a roster file's name"),
    ("missing.csv", None, "is not a file in the course folder"),
    ("roster.csv", "name,group\nada,A\n", "needs an id column"),
    ("roster.csv", "id,section\nada,A\nada,B\n", "puts 'ada' in two sections"),
])
def test_a_wrong_sections_setting_is_refused_naming_it(tmp_path, setting, text, words):
    if text is not None:
        (tmp_path / "roster.csv").write_text(text)
    _config(tmp_path, setting)
    with pytest.raises(ValueError, match="c.EncoderCourse.sections in nbgrader_config.py") as raised:
        read_sections(tmp_path)
    assert words in str(raised.value)


def test_each_section_has_its_own_lms_file_and_the_whole_class_s_says_each_learner_s(tmp_path):
    _config(tmp_path, {"Morning": ["ada", "ben"], "Evening class": ["cy"]})
    results = [Result(s, "01_attention", "softmax", p, 2.0, "passed" if p else "failed")
               for s, p in (("ada", 2.0), ("ben", 0.0), ("cy", 2.0), ("dee", 2.0))]
    (tmp_path / "grades_lms_Old.csv").write_text("an earlier run's section\n")
    outputs.write_lms_csv(tmp_path, results, ["01_attention"], penalties={}, points_possible=True)
    whole = list(csv.DictReader((tmp_path / "grades_lms.csv").open()))
    assert [(r["SIS User ID"], r["Section"]) for r in whole[1:]] == [("ada", "Morning"), ("ben", "Morning"),
                                                                    ("cy", "Evening class"), ("dee", "")]
    assert sorted(p.name for p in tmp_path.glob("grades_lms_*.csv")) == [file_name("Evening class"),
                                                                       file_name("Morning")]
    morning = list(csv.DictReader((tmp_path / file_name("Morning")).open()))
    assert morning[0]["Student"].strip() == "Points Possible" and [r["SIS User ID"] for r in morning[1:]] == \
        ["ada", "ben"]


def test_the_points_each_section_lost_a_learner():
    rows = [Result(f"a{n}", "04_add_and_norm", "pre_norm", 2.0, 2.0, "passed") for n in range(10)]
    rows += [Result(f"b{n}", "04_add_and_norm", "pre_norm", 0.0 if n < 8 else 2.0, 2.0, "failed") for n in range(10)]
    sections = {**{f"a{n}": "A" for n in range(10)}, **{f"b{n}": "B" for n in range(10)}}
    lost, counts = lost_a_learner(rows, sections)
    assert counts == {"A": 10, "B": 10} and lost["04_add_and_norm", "pre_norm"] == {"A": 0.0, "B": 1.6}


@pytest.fixture(scope="module")
def two_sections(tmp_path_factory):
    """The copying class of 200, learners 0 to 99 in section A and 100 to 199 in B, with the roster's section
    column; in B, 30 more learners fail ``pre_norm`` (written as post-norm)."""
    root = tmp_path_factory.mktemp("sections")
    seeded, _ = copying_class(root)
    rows = [list(r) for r in seeded.rows]
    for row in rows:
        if row[2] == "pre_norm" and 100 <= int(row[0][-3:]) < 130:
            row[3], row[5], row[7], row[8] = 0.0, "failed", "pre_norm_written_as_post_norm", ""
    write_rows(root, [tuple(r) for r in rows])
    lines = ["id,first_name,last_name,email,section"] + [f"learner{i:03d},,,,{'A' if i < 100 else 'B'}"
                                                         for i in range(200)]
    (root / "students.csv").write_text("\n".join(lines) + "\n")
    _config(root, "students.csv")
    build_report(root)
    return root, BeautifulSoup((root / "report" / "index.html").read_text(), "html.parser")


@pytest.mark.slow
def test_one_report_puts_two_sections_side_by_side_and_names_the_gap(two_sections):
    _, page = two_sections
    section = page.select_one("section:has(> h2#sections)")
    assert section is not None and page.select_one("nav a[href='#sections']") is not None
    assert [th.get_text() for th in section.select("thead th")] == ["exercise", "A (100)", "B (100)"]
    named = [li.get_text() for li in section.select("ul li")]
    assert named and "pre_norm_written_as_post_norm" in named[0] and "section B: " in named[0], named


@pytest.mark.slow
def test_copying_flags_say_when_they_cross_sections(two_sections):
    _, page = two_sections
    across = {}
    for flag in page.select("section:has(> h2#copying) section.flag"):
        who = frozenset(s.split(" (")[0] for s in flag.select_one("h3 .ids").get_text().split(", "))
        across[who] = "across sections a and b" in flag.get_text().lower()
    for group in COPIED:
        crosses = len({int(s[-3:]) < 100 for s in group}) > 1
        assert across[frozenset(group)] == crosses, (group, across)


def test_a_sections_setting_that_cannot_be_read_stops_make_grade_before_it_grades(tmp_path):
    """The grade files and the report read the sections after grading: a setting that names no file stopped a class
    of 500 after 324 s (bench_grading, whose copy of the course lacked the roster file)."""
    from course_grader.plan import plan_run
    from course_grader.refused import Refused

    _config(tmp_path, "students.csv")
    with pytest.raises(Refused, match="names 'students.csv', which is not a file"):
        plan_run(tmp_path)


def test_bench_grading_s_copy_of_a_course_with_sections_has_its_roster_file(tmp_path, monkeypatch):
    from benchmarks import bench_grading

    teacher = tmp_path / "teacher"
    (teacher / "notebooks").mkdir(parents=True)
    _config(teacher, "students.csv")
    (teacher / "students.csv").write_text("id,section\nada,A\nbo,B\n")
    monkeypatch.setattr(bench_grading, "ROOT", teacher)
    monkeypatch.setattr(bench_grading.student_tool, "main", lambda argv: None)
    bench_grading.make_course(tmp_path / "copy")
    assert read_sections(tmp_path / "copy") == {"ada": "A", "bo": "B"}
