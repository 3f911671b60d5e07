"""The hint ladder as a learner uses it, in real JupyterLab in headless Chromium.

Lesson 01's student version with a wrong softmax in its answer cell: after
Run All, the self-check under it shows a hint button; pressed from the
keyboard, it shows rung 1, then 2, then 3, then (self-study: no teacher's
setting) the course's solution beside the learner's code, its differing lines
marked by a character and highlighted, and then says all are shown. axe-core
finds no serious or critical violation in the outputs. The notebook is saved,
its kernel restarted and the page reloaded: run again, the self-check shows
the three rungs and the solution already opened, and the button says so.

Skipped with a reason when Playwright or Chromium is missing; in CI that is a failure.
"""

import re

import nbformat
import pytest

import browser as lab  # tests/browser.py
from conftest import require

LESSON = "01_attention"
WRONG = '''def softmax(x, axis=-1):
    """Softmax of `x` along `axis`: positive weights that sum to 1 along that axis.

    Like el.softmax: a new array in x's dtype, the same on every call, any memory layout.
    """
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum()
'''
BUTTON = "button.encoder-course-hint-button"
DONE = "All 3 hints and the course's solution shown"


@pytest.fixture(scope="module")
def browser(chromium):
    return chromium  # conftest's, the session's one


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """The student versions, with a learner's wrong softmax written into lesson 01's answer cell."""
    student = lab.student_course(tmp_path_factory.mktemp("course"))
    path = student / LESSON / f"{LESSON}.ipynb"
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if lab.grade_id(cell) == "softmax_answer":
            cell.source = WRONG
    nbformat.write(nb, path)
    return student


@pytest.fixture(scope="module")
def server(browser, course, tmp_path_factory):
    with lab.LabServer(course, tmp_path_factory.mktemp("jupyterlab"), cwd=course.parent) as running:
        yield running


def self_check_cell(notebook):
    """The self-check cell of softmax, by the text the cell shows (the report names `softmax`)."""
    return notebook.page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-CodeCell").filter(
        has_text="grading.self_check(softmax)")


def hint_text(cell):
    return cell.locator(".jp-OutputArea-output").all_text_contents()


def press_from_the_keyboard(notebook, cell):
    button = cell.locator(BUTTON)
    button.scroll_into_view_if_needed()
    button.focus()
    assert notebook.page.evaluate("() => document.activeElement.tagName") == "BUTTON"
    notebook.page.keyboard.press("Enter")


def test_the_hint_button_climbs_the_ladder_and_the_count_survives_a_restart(browser, server):
    require("axe_playwright_python", "it runs axe-core in the page; `make setup` installs it")
    with lab.LabNotebook(browser, server, f"{LESSON}/{LESSON}.ipynb") as notebook:
        notebook.open()
        notebook.run_all()
        cell = self_check_cell(notebook)
        button = cell.locator(BUTTON)
        button.wait_for(timeout=60_000)
        assert re.search(r"Show a hint \(1 of 3\)", button.inner_text()), button.inner_text()
        report = " ".join(hint_text(cell))
        assert re.search(r"`softmax`: \d+ of \d+ checks passed", report) and \
            "the reduction runs over every entry at once" in report, report

        for rung, words in enumerate(("What is wrong, on one check.", "The idea.", "A worked step."), start=1):
            press_from_the_keyboard(notebook, cell)
            cell.locator(".jp-OutputArea-output", has_text=words).wait_for(timeout=30_000)
            if rung < 3:
                cell.locator(BUTTON, has_text=f"{rung + 1} of 3").wait_for(timeout=30_000)
        button = cell.locator(BUTTON, has_text="Show the course's solution")
        button.wait_for(timeout=30_000)
        assert "keeps the reduced axis with length 1" in " ".join(hint_text(cell)), "the worked step shown"
        assert "shifted = x - x.max" not in " ".join(hint_text(cell)), "the solution before it is asked for"
        link = cell.locator(".jp-OutputArea-output a[href^='#']").first
        assert link.get_attribute("href") == "#The-softmax"
        press_from_the_keyboard(notebook, cell)
        cell.locator(f"{BUTTON}:disabled", has_text=DONE).wait_for(timeout=30_000)
        solution = cell.locator(".jp-OutputArea-output table", has_text="the course's")
        assert "shifted = x - x.max" in solution.inner_text()
        row = solution.locator("tr", has_text="return e / e.sum()")
        assert row.locator("td").first.inner_text().strip() == "~", "a differing line is marked by a character"
        assert solution.locator("mark").count() == 5, "the differing lines are highlighted as well as marked"

        found = notebook.axe_violations()
        assert "button-name" in notebook.axe_passed
        assert found == [], found

        notebook.page.keyboard.press("Control+s")
        notebook.page.wait_for_function(
            "() => !document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)').classList.contains('jp-mod-dirty')"
            " && document.title.indexOf('*') === -1", timeout=30_000)

        for kernel in server.api("kernels"):
            server.api(f"kernels/{kernel['id']}/restart", method="POST", timeout=60)
        notebook.page.reload(wait_until="domcontentloaded")
        notebook.page.wait_for_selector(".jp-NotebookPanel .jp-Notebook .jp-Cell", timeout=60_000)
        notebook.page.wait_for_function(f"() => ({lab._JS_RUN_STATE})().kernel === 'idle'", timeout=60_000)
        notebook.run_all()
        cell = self_check_cell(notebook)
        cell.locator(BUTTON, has_text=DONE).wait_for(timeout=60_000)
        shown = " ".join(hint_text(cell))
        for words in ("What is wrong, on one check.", "The idea.", "A worked step.", "The course's solution", "shifted = x"):
            assert words in shown, shown
        assert lab.LabNotebook.dialogs(notebook) == []
