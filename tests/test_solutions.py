"""The hint ladder's fourth step (issue 40, item 4): the course's solution beside the learner's code, after the
third hint, where the teacher's setting opens it.

- The library's ``solutions.json`` is the notebooks' solutions, written by
  ``tools/solutions.py``: it fails here when they differ; the wheel ships it
  (tests/test_install.py) and the student versions never hold it.
- The setting (``ENCODER_COURSE_SOLUTIONS``): unset is on, ``off`` is off, a
  time opens it then (the clock passed in), per lesson too; a wrong one is an
  error naming the setting, and the ladder keeps the solution closed.
- The step never shows before rung 3, shows the learner's code beside the
  course's with markers, and the course's alone when the learner's code cannot
  be read.
"""

import datetime
import json
import linecache
from pathlib import Path

import nbformat
import pytest

from encoder_lib.grading import EXERCISES, hint_area, ladder, opening, solution_step
from encoder_lib.grading.self_check import LAST, check as grading_check, steps
from grading_helpers import made_student
from test_exercises import ANSWERS, define
from test_hints import fresh_hints, run_hint  # noqa: F401 - a fixture: no setting, no hint opened, then as it was

ROOT = Path(__file__).resolve().parent.parent
UTC = datetime.timezone.utc
DUE = datetime.datetime(2026, 12, 10, 16, 0, tzinfo=UTC)
WRONG = '''def softmax(x, axis=-1):
    """Softmax of `x` along `axis`: positive weights that sum to 1 along that axis.

    Like el.softmax: a new array in x's dtype, the same on every call, any memory layout.
    """
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum()
'''


def defined_in_a_cell(source, cell="<ipython-input-1>"):
    """The functions of ``source`` as a notebook cell defines them: its lines where ``inspect.getsource`` finds
    them (IPython registers each cell's code in ``linecache`` the same way)."""
    namespace = define("")  # the names a notebook imports
    exec(compile(source, cell, "exec"), namespace)  # noqa: S102
    linecache.cache[cell] = (len(source), None, source.splitlines(keepends=True), cell)
    return namespace


# ------------------------------------------------------------------ the library's copy of the solutions

def test_the_library_s_solutions_are_the_notebooks_and_every_exercise_has_one():
    from tools import solutions

    assert solutions.differing() == [], "run `make solutions` (python -m tools.solutions)"
    shipped = solution_step.course_solutions()
    assert sorted(shipped) == sorted(EXERCISES)
    for name, (lesson, source) in ANSWERS.items():
        assert shipped[name]["lesson"] == lesson == EXERCISES[name].lesson
        assert "SOLUTION" not in shipped[name]["source"] and shipped[name]["source"].startswith(f"def {name}(")
        assert solutions.without_markers(source) == shipped[name]["source"]


def test_the_tool_notices_a_changed_notebook_and_refuses_a_cell_without_its_markers(tmp_path):
    from tools import solutions

    (tmp_path / "notebooks").mkdir()
    for lesson in ("01_attention", "03_feed_forward"):
        (tmp_path / "notebooks" / lesson).mkdir()
        (tmp_path / "notebooks" / lesson / f"{lesson}.ipynb").write_bytes(
            (ROOT / "notebooks" / lesson / f"{lesson}.ipynb").read_bytes())
    (tmp_path / solutions.OUT).parent.mkdir(parents=True)
    assert solutions.main(["--root", str(tmp_path)]) == 0 and solutions.differing(tmp_path) == []
    path = tmp_path / "notebooks" / "03_feed_forward" / "03_feed_forward.ipynb"
    nb = nbformat.read(path, as_version=4)
    cell = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "gelu_answer")
    cell.source = cell.source.replace("0.5 * x", "x * 0.5")
    nbformat.write(nb, path)
    assert solutions.differing(tmp_path) == ["gelu"] and solutions.main(["--root", str(tmp_path), "--check"]) == 1
    with pytest.raises(ValueError, match="BEGIN SOLUTION"):
        solutions.without_markers("def gelu(x):\n    return x\n")


def test_the_wheel_s_package_data_names_the_solutions():
    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    assert solution_step.FILE in data["encoder_lib.grading"]


def test_the_student_versions_never_hold_the_solutions(tmp_path):
    """release/ and student/, as `make student` writes them, hold no solutions.json and no line of a solution's
    body (its own lines, the function's signature and docstring left out: the learner gets those)."""
    course = made_student(tmp_path / "course")
    files = [p for folder in ("release", "student") for p in (course / folder).rglob("*") if p.is_file()]
    assert files and not [p for p in files if p.name == solution_step.FILE]
    text = "\n".join(p.read_text(errors="replace") for p in files)
    for name, found in solution_step.course_solutions().items():
        body = found["source"].split('"""')[-1] if '"""' in found["source"] else found["source"]
        lines = [line.strip() for line in body.splitlines() if len(line.strip()) > 25]
        assert lines and not [line for line in lines if line in text], name


# ------------------------------------------------------------------ the teacher's setting

@pytest.mark.parametrize("setting, now, is_open", [
    (None, DUE, True), ("", DUE, True), ("on", DUE, True), (" OFF ", DUE, False),
    ("2026-12-10T17:00:00+01:00", DUE - datetime.timedelta(seconds=1), False),
    ("2026-12-10T17:00:00+01:00", DUE, True),
    ("2026-12-10T16:00:00Z", DUE + datetime.timedelta(days=3), True),
    ("2026-12-10 16:00", DUE - datetime.timedelta(minutes=1), False),  # no zone: UTC
    ("2026-12-11", DUE, False),
    ("01_attention=on,off", DUE, True), ("02_multi_head_attention=on,off", DUE, False),
    ("01_attention=2026-12-10T16:00:00+00:00", DUE, True),
    ("02_multi_head_attention=on", DUE, False),  # a lesson not named, and no value for every lesson: off
])
def test_the_setting_opens_the_solution_at_its_time(setting, now, is_open):
    gate = opening.opening("01_attention", setting, now)
    assert gate.open is is_open and not gate.problem
    if not is_open and setting and "off" not in setting.lower() and "=on" not in setting:
        assert gate.at is not None and gate.at > now
        assert f"{gate.at:%d %B %Y at %H:%M} UTC" in opening.closed_note(gate)


@pytest.mark.parametrize("setting, said", [
    ("yes", "'yes' is none of these"), ("2026-13-40", "is none of these"), ("off,", "'' is none of these"),
    ("01_atention=on", "'01_atention' is not a lesson"), ("00_start_here=on", "not a lesson with exercises"),
    ("on,off", "every lesson is given twice"), ("01_attention=on, 01_attention=off", "01_attention is given twice"),
])
def test_a_wrong_setting_is_an_error_naming_it_and_the_solution_stays_closed(setting, said):
    with pytest.raises(ValueError, match=opening.VARIABLE) as error:
        opening.parse(setting)
    assert said in str(error.value) and "'on', 'off' or the time" in str(error.value)
    gate = opening.opening("01_attention", setting, DUE)
    assert not gate.open and said in gate.problem
    assert "wrong" in opening.closed_note(gate) and opening.VARIABLE in opening.closed_note(gate)


def test_the_clock_must_say_its_zone_and_the_setting_must_be_text():
    with pytest.raises(ValueError, match="now must be an aware datetime"):
        opening.opening("01_attention", "on", datetime.datetime(2026, 12, 10))
    with pytest.raises(ValueError, match=opening.VARIABLE):
        opening.parse(3)


def test_the_environment_s_setting_is_the_one_read(monkeypatch):
    monkeypatch.setenv(opening.VARIABLE, "off")
    assert not opening.opening("01_attention").open
    assert "kept closed" in opening.closed_note(opening.opening("01_attention"))
    monkeypatch.delenv(opening.VARIABLE)
    assert opening.opening("01_attention").open


# ------------------------------------------------------------------ the fourth step

def failing_softmax(source=WRONG, readable=True):
    fn = (defined_in_a_cell if readable else define)(source)["softmax"]
    assert not grading_check(fn)[0]
    return LAST["softmax"]


def first_line(solution):
    """The first line of a solution's code, after its docstring."""
    return next(line.strip() for line in solution.split('"""')[-1].splitlines() if line.strip())


def test_the_solution_never_shows_before_rung_three(fresh_hints):
    verdict = failing_softmax()
    course = solution_step.course_solution("softmax")
    for setting in (None, "on", "off", "2020-01-01"):
        for count in range(ladder.RUNGS):
            parts, solution = steps(verdict, count, now=DUE) if setting is None else \
                _with_setting(setting, lambda: steps(verdict, count, now=DUE))
            assert not solution and len(parts) == count
            assert "course's solution" not in "".join(parts) and "shifted" not in "".join(parts)
    parts, solution = steps(verdict, ladder.RUNGS, now=DUE)
    assert solution and len(parts) == ladder.RUNGS and first_line(course) not in "".join(parts)


def _with_setting(setting, call):
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(opening.VARIABLE, setting)
        return call()


def test_before_the_due_date_the_fourth_step_says_when_and_after_it_shows_the_solution(fresh_hints, monkeypatch):
    verdict = failing_softmax()
    monkeypatch.setenv(opening.VARIABLE, "01_attention=2026-12-10T17:00:00+01:00,off")
    parts, solution = steps(verdict, ladder.STEPS, now=DUE - datetime.timedelta(hours=1))
    assert not solution and "opens on 10 December 2026 at 16:00 UTC" in parts[-1] and "shifted" not in parts[-1]
    parts, _ = steps(verdict, ladder.STEPS, now=DUE)
    assert "**The course's solution**, beside your `softmax`" in parts[-1] and "shifted" in parts[-1]


def test_the_fourth_step_sets_the_learner_s_code_beside_the_course_s_with_markers(fresh_hints):
    verdict = failing_softmax()
    shown = hint_area.plain(steps(verdict, ladder.STEPS)[0][-1])
    table = [line for line in shown.splitlines() if "│" in line]
    assert "│ the course's" in table[0]
    assert [line[0] for line in table[1:]] == [" "] * 5 + ["~", "+", "~"], shown
    assert "e = np.exp(x - x.max(axis=axis, keepdims=True))" in table[6] and "shifted = x - x.max" in table[6]
    assert table[8].split("│")[0].strip() == "~     return e / e.sum()"
    html = steps(verdict, ladder.STEPS)[0][-1]
    assert html.count("<mark>") == 5 and "<pre>" in html and "&#91;" not in shown


def test_a_learner_s_code_that_cannot_be_read_shows_the_course_s_alone_and_says_why(fresh_hints):
    verdict = failing_softmax(readable=False)
    shown = steps(verdict, ladder.STEPS)[0][-1]
    assert "Your code cannot be shown beside it: Python cannot read its code here" in shown
    assert first_line(solution_step.course_solution("softmax")) in hint_area.plain(shown)
    assert solution_step.learner_source(None) == (None, "this session has not self-checked it")
    assert solution_step.learner_source(len)[0] is None


def test_grading_hint_climbs_to_the_solution_and_the_setting_can_keep_it_closed(fresh_hints, monkeypatch):
    failing_softmax()
    climbed = [run_hint("softmax") for _ in range(ladder.STEPS + 1)]
    assert "course's solution" not in "".join(climbed[:2])
    assert 'Once more, grading.hint("softmax") shows the course\'s solution' in climbed[2]
    assert "~     return e / e.sum()" in climbed[3] and "<mark>" not in climbed[3] and climbed[4] == climbed[3]
    assert hint_area.opened("softmax", LAST["softmax"].failure_key()) == ladder.STEPS

    hint_area._opened.clear()
    monkeypatch.setenv(opening.VARIABLE, "off")
    failing_softmax()
    closed = [run_hint("softmax") for _ in range(ladder.STEPS)]
    assert "kept closed in this class by your teacher" in closed[2] and closed[3] == closed[2]
    assert "shifted" not in "".join(closed) and "Once more" not in "".join(closed)
    assert hint_area.opened("softmax", LAST["softmax"].failure_key()) == ladder.RUNGS


def test_the_button_offers_the_solution_after_the_third_hint_and_then_is_done():
    assert hint_area.button_label(2) == "Next hint (3 of 3)"
    assert hint_area.button_label(3) == "All 3 hints shown" and hint_area.finished(3)
    assert hint_area.button_label(3, solution=True) == "Show the course's solution"
    assert not hint_area.finished(3, solution=True)
    assert hint_area.button_label(4) == "All 3 hints and the course's solution shown" and hint_area.finished(4, True)


def test_the_fourth_step_is_counted_in_the_saved_notebook(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("grading.self_check(softmax)", outputs=[nbformat.v4.new_output(
        "display_data", data={"text/markdown": "steps"},
        metadata=hint_area._metadata("softmax", "a failure", ladder.STEPS))])]
    path = tmp_path / "lesson.ipynb"
    nbformat.write(nb, path)
    assert hint_area.saved_count("softmax", "a failure", path=str(path)) == ladder.STEPS
    nb.cells[0].outputs[0].metadata = json.loads(json.dumps(hint_area._metadata("softmax", "a failure", 99)))
    nbformat.write(nb, path)
    assert hint_area.saved_count("softmax", "a failure", path=str(path)) == ladder.STEPS


# ------------------------------------------------------------------ the hub's line (tools/classroom.py)

def test_the_hub_s_line_sets_the_setting_for_every_learner_s_server_and_refuses_a_wrong_one():
    from tools import classroom

    assert classroom.SOLUTIONS_VARIABLE == opening.VARIABLE
    line = classroom.solutions_config("01_attention=2026-12-10T17:00:00+01:00")
    assert "c.Spawner.environment.update({'ENCODER_COURSE_SOLUTIONS': '01_attention=2026-12-10T17:00:00+01:00'})" \
        in line
    config = {}
    exec(line, {"c": type("C", (), {"Spawner": type("S", (), {"environment": config})})})  # noqa: S102
    assert opening.opening("01_attention", config[opening.VARIABLE], DUE).open
    assert not opening.opening("02_multi_head_attention", config[opening.VARIABLE], DUE).open
    with pytest.raises(ValueError, match=opening.VARIABLE):
        classroom.solutions_config("tomorrow")


def test_at_the_due_dates_each_lesson_opens_at_its_latest_due_date_or_extension(tmp_path, monkeypatch):
    from course_grader.deadlines import Deadlines
    from tools import classroom

    due = {"01_attention": datetime.datetime(2026, 12, 10, 16), "03_feed_forward": datetime.datetime(2026, 12, 17)}
    extended = {("ada", "01_attention"): datetime.datetime(2026, 12, 12, 16),
                ("bob", "03_feed_forward"): datetime.datetime(2026, 12, 16)}  # earlier than the lesson's: no matter
    monkeypatch.setattr(Deadlines, "read", classmethod(lambda cls, root: cls(due, extended)))
    setting = classroom.solutions_at_due_dates(tmp_path)
    assert setting == "01_attention=2026-12-12T16:00:00+00:00,03_feed_forward=2026-12-17T00:00:00+00:00,off"
    assert not opening.opening("01_attention", setting, DUE + datetime.timedelta(days=1)).open
    assert opening.opening("01_attention", setting, DUE + datetime.timedelta(days=2)).open
    assert not opening.opening("02_multi_head_attention", setting, DUE + datetime.timedelta(days=99)).open
    assert "'ENCODER_COURSE_SOLUTIONS': '01_attention=2026-12-12" in classroom.solutions_config("due", tmp_path)


def test_without_a_gradebook_every_lesson_s_solution_stays_closed(tmp_path):
    from tools import classroom

    assert classroom.solutions_at_due_dates(tmp_path) == "off"
