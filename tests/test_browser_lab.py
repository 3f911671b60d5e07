"""The course as learners open it: every lesson's student version in real JupyterLab, in headless Chromium.

For each lesson: open it, Run All from the Run menu, and check what the
page shows: every widget rendered as a widget with its picture loaded (no
"Loading widget", no text fallback), Run All gone on to the lesson's last
cell and its Hand in button, no error anywhere except the designed
NotImplementedError at each unwritten exercise's visible tests (and where
the lesson runs the learner's function), no pop-up over the notebook, no
browser console error; a wrong answer's Run All reaches Hand in too; axe-core finds no serious or critical
violation in the cells' outputs. Then move a control of every widget with
the keyboard or a click and check that the picture and the readout change,
and once more with the keyboard alone (Tab to the control, then a key),
checking the picture's alt text changes with the readout; lessons 02 and 04
also read the numbers the widget shows and compare them with encoder_lib.

Skipped with a reason when Playwright or Chromium is missing; in CI (``CI``
set) that is a failure. ``ENCODER_COURSE_CHROMIUM=/nonexistent`` simulates a
missing browser. Screenshots of each lesson go to ``screenshots/lab/``.
One JupyterLab and one browser serve the whole file; see ``tests/browser.py``.
"""

import json
import re
import sys
from pathlib import Path

import numpy as np
import pytest

import browser as lab  # tests/browser.py
import encoder_lib as el
from conftest import require
from encoder_lib import fixtures
from tools.course import lesson_names

SCREENSHOTS = lab.ROOT / "screenshots" / "lab"
LESSONS = lesson_names()

# Browser console errors that are JupyterLab's own and not the course's, as
# (pattern, why it is ignored). Every other console error fails the test.
# JupyterLab 4.6 with this course's extensions logs none, so none is ignored.
IGNORED_CONSOLE = []


def console_errors(notebook):
    return [m for m in notebook.console_errors if not any(re.search(p, m) for p, _why in IGNORED_CONSOLE)]


# ------------------------------------------------------------------ fixtures

@pytest.fixture(scope="module")
def browser(chromium):
    return chromium  # conftest's, the session's one


@pytest.fixture(scope="module")
def student_dir(tmp_path_factory):
    """The student versions, written by tools/student.py into a copy of the course (never into student/)."""
    return lab.student_course(tmp_path_factory.mktemp("course"))


#: As on a course hub whose teacher runs the hand-in service, so that each lesson's last cell shows its Hand in
#: button (no test presses it: nothing listens at that address; tests/test_hand_in.py hands in to a real service).
HUB = {"ENCODER_COURSE_HAND_IN_URL": "http://127.0.0.1:9/", "JUPYTERHUB_API_TOKEN": "a-token-for-the-button-only"}
HAND_IN_SHOT = Path("/tmp/w53/hand_in_after_a_failing_run_all.png")


@pytest.fixture(scope="module")
def lab_server(browser, student_dir, tmp_path_factory):
    with lab.LabServer(student_dir, tmp_path_factory.mktemp("jupyterlab"), cwd=student_dir.parent,
                       env=HUB) as server:
        yield server


@pytest.fixture(scope="module")
def run_lessons(browser, lab_server, student_dir):
    """``run_lessons(name)``: the lesson opened in a fresh page and run (Run All) once; the page stays open
    for the later tests of the same lesson."""
    opened = {}

    def get(name):
        if name not in opened:
            lesson = lab.Lesson(name, student_dir)
            notebook = lab.LabNotebook(browser, lab_server, lesson.path)
            opened[name] = (lesson, notebook)
            get.last = name, notebook
            notebook.open()
            notebook.screenshot(SCREENSHOTS / f"{name}-1-opened.png")
            notebook.popups_on_open = notebook.dialogs()
            notebook.run_all()
            if lesson.widget_cells:
                try:
                    notebook.wait_for_widgets(lesson.widget_cells)
                except Exception:  # the checks below say what is missing
                    pass
            notebook.screenshot(SCREENSHOTS / f"{name}-2-run-all.png",
                                lesson.widget_cells[0] if lesson.widget_cells else None)
        lesson, notebook = opened[name]
        notebook.page.bring_to_front()
        get.last = name, notebook
        return lesson, notebook

    get.last = None
    yield get
    for _lesson, notebook in opened.values():
        notebook.close()


@pytest.fixture(autouse=True)
def screenshot_on_failure(request):
    """When a test of a lesson fails, keep what its page showed: screenshots/lab/FAILED-<test>.png."""
    failed = request.session.testsfailed
    yield
    if request.session.testsfailed > failed and "run_lessons" in request.fixturenames:
        last = request.getfixturevalue("run_lessons").last
        if last:
            safe = re.sub(r"[^\w.-]+", "_", request.node.name)
            try:
                last[1].screenshot(SCREENSHOTS / f"FAILED-{safe}.png")
            except Exception:  # the page may be gone; the failure itself is reported anyway
                pass


# ------------------------------------------------------------------ the settings

def test_the_lab_settings_make_setup_installs_are_the_repositorys():
    """`make setup` copies jupyter/overrides.json into the environment's JupyterLab (no news pop-up)."""
    installed = Path(sys.prefix) / "share" / "jupyter" / "lab" / "settings" / "overrides.json"
    assert installed.is_file(), f"{installed} is missing: run `make setup`"
    assert json.loads(installed.read_text()) == json.loads(lab.OVERRIDES.read_text()), \
        f"{installed} differs from jupyter/overrides.json: run `make setup`"
    notification = json.loads(lab.OVERRIDES.read_text())["@jupyterlab/apputils-extension:notification"]
    assert notification == {"checkForUpdates": False, "fetchNews": "false"}


def test_nbgrader_s_teacher_panels_are_off_for_learners():
    """`make setup` installs jupyter/page_config.json, which turns off nbgrader's menu and teacher panels."""
    installed = Path(sys.prefix) / "etc" / "jupyter" / "labconfig" / "page_config.json"
    assert installed.is_file(), f"{installed} is missing: run `make setup`"
    assert json.loads(installed.read_text()) == json.loads(lab.PAGE_CONFIG.read_text()), \
        f"{installed} differs from jupyter/page_config.json: run `make setup`"
    off = json.loads(lab.PAGE_CONFIG.read_text())["disabledExtensions"]
    assert {"@jupyter/nbgrader:formgrader", "@jupyter/nbgrader:create-assignment", "@jupyter/nbgrader:menu"} <= {
        name for name, disabled in off.items() if disabled}


# ------------------------------------------------------------------ every lesson

@pytest.mark.parametrize("name", LESSONS)
def test_run_all_shows_every_widget_and_goes_on_past_each_unwritten_exercise_to_hand_in(name, run_lessons):
    lesson, notebook = run_lessons(name)

    assert notebook.popups_on_open == [], f"a pop-up covers the lesson when it opens: {notebook.popups_on_open}"
    menus = notebook.page.locator(".lm-MenuBar-itemLabel").all_inner_texts()
    assert "Run" in menus and not any("grader" in m.lower() for m in menus), f"the menu bar shows {menus}"
    sidebar = notebook.page.locator(".jp-SideBar .lm-TabBar-tab").evaluate_all(
        "tabs => tabs.map(t => (t.getAttribute('title') || '') + ' ' + t.textContent)")
    assert not any("assignment" in t.lower() or "grader" in t.lower() for t in sidebar), f"the side bar shows {sidebar}"
    assert notebook.dialogs() == [], f"a pop-up after Run All: {notebook.dialogs()}"

    # every widget cell shows a widget, with its picture loaded
    assert lesson.widget_cells, f"{name} shows no widget"
    for cell in notebook.widgets(lesson.widget_cells):
        assert cell["outputs"], f"cell {cell['index']} shows nothing after Run All"
        asked = [k for k, output in enumerate(cell["outputs"]) if output["questions"]]
        assert asked == list(range(len(asked))), f"cell {cell['index']}: its questions are not above its widget"
        for output in cell["outputs"][len(asked):]:
            assert output["widget"], f"cell {cell['index']} shows no widget but: {output['text'][:200]!r}"
            assert output["images"] and all(i["loaded"] for i in output["images"]), \
                f"cell {cell['index']}: the widget's picture did not load: {output['images']}"
            assert output["readout"], f"cell {cell['index']}: the widget's readout is empty"
    text = notebook.notebook_text()
    for fallback in lab.NOT_RENDERED:
        assert fallback not in text, f"the page shows {fallback!r}: a widget did not render"

    # Run All ran every cell, past each unwritten exercise, to the lesson's last cell and its Hand in button
    state = notebook.run_state()
    code_cells = [i for i, c in enumerate(lesson.cells) if c.cell_type == "code"]
    assert state["ran"] == len(code_cells), f"Run All ran {state['ran']} cells, expected all {len(code_cells)}"
    if lesson.hand_in_cell is not None:
        assert_hand_in_shown(notebook, lesson)

    # no error output, except the designed one-line NotImplementedError naming the function to write
    errors = notebook.error_outputs()
    assert [e["index"] for e in errors] == sorted(lesson.failing), \
        f"error outputs in cells {[e['index'] for e in errors]}, expected only in {sorted(lesson.failing)} " \
        f"(the unwritten exercises' visible tests): {[e['text'][:300] for e in errors]}"
    for error in errors:
        message, function = error["text"].strip(), lesson.failing[error["index"]]
        assert message.startswith(f"NotImplementedError: `{function}` is not written yet."), message
        assert "\n" not in message and "Traceback" not in message and len(message) < 160, message
    for function in set(lesson.failing.values()) & {lab.grade_id(c).removesuffix("_self_check") for c in lesson.cells}:
        self_check = next(i for i, cell in enumerate(lesson.cells) if lab.grade_id(cell) == f"{function}_self_check")
        assert "not done yet" in notebook.cell(self_check).text_content(), f"{function}'s self-check"

    assert console_errors(notebook) == []


@pytest.mark.parametrize("name", LESSONS)
def test_axe_finds_no_serious_violation_in_the_lesson_s_outputs(name, run_lessons):
    """axe-core on the page after Run All, in the cells' outputs (the widgets, printouts, figures): no serious
    or critical violation. JupyterLab's own toolbars and editors are outside (not the course's to fix)."""
    require("axe_playwright_python", "it runs axe-core in the page; `make setup` installs it")
    lesson, notebook = run_lessons(name)
    notebook.wait_for_widgets(lesson.widget_cells)
    found = notebook.axe_violations()
    # axe did look at the outputs: text colours, the pictures' alt texts, the buttons' names
    assert {"color-contrast", "image-alt", "button-name"} <= notebook.axe_passed, notebook.axe_passed
    assert found == [], f"{name}: axe-core finds, in the lesson's outputs:\n" + "\n".join(
        f"- {v['id']} ({v['impact']}: {v['help']}) at {v['targets'][:5]}" for v in found)


@pytest.mark.parametrize("name", LESSONS)
def test_moving_a_control_changes_what_the_widget_shows(name, run_lessons):
    lesson, notebook = run_lessons(name)
    notebook.wait_for_widgets(lesson.widget_cells)
    controlled = [index for index in lesson.widget_cells if notebook.has_control(index)]
    assert controlled, f"{name}: no widget has a control to move"
    for k, index in enumerate(controlled):
        old_src, old_readout = notebook.image_src(index), notebook.readout(index)
        done = notebook.move_a_control(index)
        notebook.wait_for_new_picture(index, old_src)
        assert notebook.image_src(index) != old_src
        notebook.page.wait_for_function(
            "([el, old]) => el.textContent !== old",
            arg=[notebook.widget_view(index).locator(".widget-html-content").last.element_handle(), old_readout],
            timeout=10_000)
        assert notebook.readout(index) != old_readout, f"cell {index}: {done} changed the picture, not the readout"
        suffix = f"-{k + 1}" if len(controlled) > 1 else ""
        notebook.screenshot(SCREENSHOTS / f"{name}-3-control-moved{suffix}.png", index)
    assert notebook.dialogs() == []
    assert console_errors(notebook) == []


@pytest.mark.parametrize("name", LESSONS)
def test_every_widget_works_from_the_keyboard_alone(name, run_lessons):
    """For every widget: Tab reaches each of its controls (each named), and a key pressed on one of them
    changes the readout and the picture's alt text, together."""
    lesson, notebook = run_lessons(name)
    notebook.wait_for_widgets(lesson.widget_cells)
    for index in [i for i in lesson.widget_cells if notebook.has_control(i)]:
        stops = notebook.tab_stops(index)
        controls = [s for s in stops if s["kind"] != "other"]
        count = notebook.widget_view(index).locator(notebook.CONTROLS_CSS).count()
        assert len(controls) == count, f"cell {index}: Tab reaches {len(controls)} of the {count} controls: {stops}"
        assert all(c["label"] for c in controls), f"cell {index}: a control without a name: {controls}"
        old_alt, old_readout, old_src = notebook.image_alt(index), notebook.readout(index), notebook.image_src(index)
        done = notebook.keyboard_move(index)
        notebook.wait_for_new_picture(index, old_src)
        notebook.page.wait_for_function(
            "([view, alt, text]) => { const img = view.querySelector('img');"
            " const out = [...view.querySelectorAll('.widget-html-content')].pop();"
            " return img && img.alt !== alt && out.textContent !== text; }",
            arg=[notebook.widget_view(index).element_handle(), old_alt, old_readout], timeout=10_000)
        alt, readout = notebook.image_alt(index), notebook.readout(index)
        assert alt != old_alt and readout != old_readout, f"cell {index}: {done} changed neither"
        assert " ".join(readout.split()) in alt, f"cell {index}: the alt text {alt!r} lacks the readout {readout!r}"
    assert console_errors(notebook) == []


# ------------------------------------------------------------------ what the numbers say

def _numbers(text, label):
    match = re.search(rf"{label}: ([-\d., ]+)", text)
    assert match, f"no {label!r} in the readout {text!r}"
    return [float(v) for v in match.group(1).strip(" ,.").split(",")]


@pytest.mark.parametrize("placement, norm", [("pre-norm", "pre"), ("post-norm", "post")])
def test_04_the_page_shows_the_row_variances_encoder_lib_computes(placement, norm, run_lessons):
    lesson, notebook = run_lessons("04_add_and_norm")
    (index,) = lesson.widget_cells
    notebook.click_toggle(index, placement)
    readout = notebook.widget_view(index).locator(".widget-html-content").last
    readout.filter(has_text=re.compile(rf"^{placement}, residual on")).wait_for(timeout=10_000)
    text = notebook.readout(index)
    shown = _numbers(text, "row variances")
    out = el.encoder_block(fixtures.lesson_input(), fixtures.lesson_block_params(), fixtures.N_HEADS, norm=norm)
    expected = out.var(axis=-1)
    assert np.allclose(shown, expected, atol=1.5e-3), f"{placement}: the page shows {shown}, encoder_lib {expected}"
    if norm == "post":
        assert np.allclose(shown, 1.0, atol=1e-3)  # a layer norm comes last: every row has variance 1
    else:
        assert not np.allclose(shown, 1.0, atol=0.05)  # pre-norm ends in a residual sum
    notebook.screenshot(SCREENSHOTS / f"04_add_and_norm-4-{placement}.png", index)
    assert console_errors(notebook) == []


def test_02_head_1_reads_the_position_encoder_lib_says(run_lessons):
    lesson, notebook = run_lessons("02_multi_head_attention")
    (index,) = lesson.widget_cells
    notebook.click_toggle(index, "2")  # two heads, the lesson's question
    handle = notebook.widget_view(index).locator(".widget-slider .noUi-handle").first
    readout = notebook.widget_view(index).locator(".widget-html-content").last
    if float(handle.get_attribute("aria-valuenow")) != 0:  # an earlier test moved it ("1.0"): back to head 0
        old = notebook.image_src(index)
        notebook.press_slider(index, "Home")
        notebook.wait_for_new_picture(index, old)
    readout.filter(has_text=re.compile(r"^Head 0 of 2")).wait_for(timeout=10_000)

    old = notebook.image_src(index)
    notebook.press_slider(index, "ArrowRight")  # the keyboard, as a learner would
    notebook.wait_for_new_picture(index, old)
    readout.filter(has_text=re.compile(r"^Head 1 of 2")).wait_for(timeout=10_000)
    text = notebook.readout(index)
    match = re.search(r"reads position (\d+) most", text)
    assert match, text
    weights = el.multi_head_attention(fixtures.lesson_input(), fixtures.N_HEADS)[1][1]  # head 1: (seq, seq)
    mean_per_key = weights.mean(axis=0)
    assert int(match.group(1)) == int(mean_per_key.argmax()) == 1, text
    notebook.screenshot(SCREENSHOTS / "02_multi_head_attention-4-head-1.png", index)
    assert console_errors(notebook) == []


def test_04_a_question_answered_wrong_is_told_the_widget_s_answer_and_the_widget_shows_it(run_lessons, student_dir):
    """Predict, then look, in JupyterLab: a wrong answer by mouse and keyboard, the verdict announced (a live
    region), the widget moved to the state that shows the answer, the answer kept for the review."""
    lesson, notebook = run_lessons("04_add_and_norm")
    (index,) = lesson.widget_cells
    notebook.wait_for_widgets(lesson.widget_cells)
    cards = notebook.cell(index).locator(".course-question")
    card = cards.nth(1)  # "Pre-norm with the residual off: are the output rows of mean 0 and variance 1?" (no)
    card.scroll_into_view_if_needed()
    assert "Pre-norm with the residual off" in card.text_content()
    old = notebook.image_src(index)
    card.locator("label", has_text=re.compile(r"^yes$")).click()
    card.locator("button").focus()
    notebook.page.keyboard.press("Enter")
    verdict = card.locator(".course-question-verdict")
    verdict.filter(has_text="Not this time").wait_for(timeout=20_000)
    assert verdict.get_attribute("role") == "status" and "The widget's answer: no" in verdict.text_content()
    notebook.wait_for_new_picture(index, old)
    assert "pre" in notebook.readout(index).lower()
    assert card.locator("button").is_disabled()
    kept = json.loads((student_dir / ".encoder-course-answers.json").read_text())  # the course folder's record
    assert kept["questions"]["04_add_and_norm/pre-no-residual"]["answers"][-1][1] is False
    assert console_errors(notebook) == []


def assert_hand_in_shown(notebook, lesson):
    """The lesson's last cell ran and shows its Hand in button, its label whole."""
    button = notebook.cell(lesson.hand_in_cell).locator("button", has_text="Hand in")
    button.wait_for(timeout=30_000)
    button.scroll_into_view_if_needed()
    label = " ".join(button.text_content().split())
    assert label == f"Hand in {lesson.name}", label
    return button


#: A natural mistake: the sum over every axis, not over the last one (right for one row, wrong for a matrix).
WRONG_SOFTMAX = "    e = np.exp(x - x.max())\n    return e / e.sum()\n"


def test_run_all_with_a_wrong_answer_goes_on_past_its_failing_tests_to_the_hand_in_button(run_lessons, student_dir,
                                                                                           browser, lab_server):
    """Lesson 01 with softmax written wrong: its visible tests fail, and Run All goes on through the rest of the
    lesson to the Hand in button."""
    import nbformat

    path = student_dir / "01_attention" / "01_attention.ipynb"
    notebook_file = nbformat.read(path, as_version=4)
    answer = next(c for c in notebook_file.cells if lab.grade_id(c) == "softmax_answer")
    assert "raise NotImplementedError()" in answer.source
    answer.source = answer.source.replace("    # YOUR CODE HERE\n    raise NotImplementedError()", WRONG_SOFTMAX)
    assert WRONG_SOFTMAX in answer.source + "\n"
    wrong = student_dir / "01_attention" / "01_attention_wrong_softmax.ipynb"
    nbformat.write(notebook_file, wrong)
    lesson = lab.Lesson("01_attention", student_dir)
    with lab.LabNotebook(browser, lab_server, wrong.relative_to(student_dir).as_posix()) as notebook:
        notebook.open()
        notebook.run_all()
        state = notebook.run_state()
        assert state["ran"] == sum(c.cell_type == "code" for c in lesson.cells), state
        tests = next(i for i, c in enumerate(lesson.cells) if lab.grade_id(c) == "softmax_tests")
        errors = {e["index"]: e["text"] for e in notebook.error_outputs()}
        assert tests in errors and "not written yet" not in errors[tests], errors  # the wrong answer's failure
        assert set(errors) == set(lesson.failing), errors
        button = assert_hand_in_shown(notebook, lesson)
        HAND_IN_SHOT.parent.mkdir(parents=True, exist_ok=True)
        notebook.page.screenshot(path=str(HAND_IN_SHOT))
        assert button.is_enabled()
        assert console_errors(notebook) == []
