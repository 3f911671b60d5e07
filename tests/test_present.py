"""The presentation view, `make present`: a lesson's widgets through Voila, without code, offline.

The fast tests check how tools.present names lessons and builds Voila's
command. The browser test runs tools.present (what `make present` runs) for
lesson 04 on a free loopback port, opens the page in headless Chromium
(Playwright, driving the system's /usr/bin/chromium) and checks, as a teacher
in front of a class would see it:

- the widget draws (its picture loads) and no code is shown;
- the exercises' self-checks print nothing on the page;
- clicking "pre-norm", then the residual checkbox, changes the picture and the
  readout's row variances, to what the library's widget says for that state;
- every request the page made (documents, scripts, styles, fonts, images,
  websockets) went to 127.0.0.1: nothing comes from a CDN.

It saves screenshots/present_04_add_and_norm.png (the page with the widget)
and present_04_pre_norm_no_residual.png (the widget after the clicks). Without Playwright or
Chromium it skips, with the reason; in CI (`.ci/run`) it fails instead.
"""

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

import nbformat
import pytest

from conftest import in_ci, load_tool, require

ROOT = Path(__file__).resolve().parent.parent
# the system's Chromium; ENCODER_COURSE_CHROMIUM (as for tests/browser.py) points elsewhere
CHROMIUM = os.environ.get("ENCODER_COURSE_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
LESSON = "notebooks/04_add_and_norm/04_add_and_norm.ipynb"
SCREENSHOT = ROOT / "screenshots" / "present_04_add_and_norm.png"
START_SECONDS = 60     # until Voila listens
RENDER_SECONDS = 180   # until the notebook has run and the widget has drawn (a busy 2-core machine)
CHANGE_SECONDS = 30    # until a click has redrawn the picture


present = load_tool("present")


# --- naming a lesson ------------------------------------------------------

@pytest.mark.parametrize("name", [None, "04_add_and_norm", "04", "notebooks/04_add_and_norm",
                                  "notebooks/04_add_and_norm/", LESSON, str(ROOT / LESSON)])
def test_names_of_lesson_04(name):
    assert present.resolve_notebook(name) == (ROOT / LESSON).resolve()


def test_every_lesson_resolves_by_name_and_number():
    for lesson in present.lesson_names():
        notebook = ROOT / "notebooks" / lesson / f"{lesson}.ipynb"
        assert present.resolve_notebook(lesson) == notebook
        assert present.resolve_notebook(lesson.split("_")[0]) == notebook


def test_an_unknown_lesson_lists_the_lessons():
    with pytest.raises(SystemExit, match="04_add_and_norm"):
        present.resolve_notebook("99_no_such_lesson")


def test_voila_serves_on_loopback_without_code_and_with_the_course_template():
    cmd = present.command(ROOT / LESSON, 8866)
    assert cmd[:3] == [sys.executable, "-m", "voila"]
    assert "--Voila.ip=127.0.0.1" in cmd and "--no-browser" in cmd and "--port=8866" in cmd
    assert "--strip_sources=True" in cmd and f"--template={present.TEMPLATE}" in cmd
    template = Path(present.environment()["JUPYTER_PATH"].split(os.pathsep)[0]) / "voila" / "templates"
    assert (template / present.TEMPLATE / "index.html.j2").is_file()


def test_make_present_runs_the_tool():
    makefile = (ROOT / "Makefile").read_text()
    recipe = makefile.split("\npresent:", 1)[1].split("\n\n", 1)[0]
    assert "tools.present" in recipe and "$(NB)" in recipe


# --- the page in a browser -------------------------------------------------

def require_browser():
    sync_api = require("playwright.sync_api", "the presentation view is checked in a browser driven by Playwright")
    if not (os.path.isfile(CHROMIUM) and os.access(CHROMIUM, os.X_OK)):
        message = f"no Chromium at {CHROMIUM} (`apt-get install chromium`); the presentation view is checked in it"
        if in_ci():
            pytest.fail(f"CI must run this test: {message}. `.ci/run` installs it.", pytrace=False)
        pytest.skip(message)
    return sync_api


def wait_for_port(port, process, seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            return False
        try:
            with socket.create_connection((present.HOST, port), timeout=1):
                return True
        except OSError:
            time.sleep(0.2)
    return False


@pytest.fixture
def sync_api():
    """Playwright's sync API, with the system's Chromium there to drive."""
    return require_browser()


@pytest.fixture
def voila(sync_api, tmp_path):
    """tools.present serving lesson 04 on a free loopback port; yields its URL and log."""
    port = present.free_port()
    log = tmp_path / "voila.log"
    with open(log, "w") as out:
        process = subprocess.Popen([sys.executable, "-m", "tools.present", LESSON, "--port", str(port)],
                                   cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        if not wait_for_port(port, process, START_SECONDS):
            pytest.fail(f"Voila did not start listening on port {port} within {START_SECONDS} s:\n{log.read_text()}")
        yield present.url(port), log
    finally:
        # SIGTERM: Voila stops its server and shuts its kernel down
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    printed = log.read_text()
    assert f"at {present.url(port)}" in printed, printed  # the address, as `make present` prints it
    assert "Traceback" not in printed, printed


def is_loopback(url):
    parts = urlsplit(url)
    return parts.scheme in ("data", "blob") or parts.hostname == present.HOST


def test_lesson_04_presents_its_widget_offline_and_without_code(sync_api, voila):
    url, log = voila
    from encoder_lib.widgets.add_norm import AddNormExplorer

    requests = []
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1200, "height": 900})
            page.on("request", lambda request: requests.append(request.url))
            page.on("websocket", lambda ws: requests.append(ws.url))
            # anything for another host is recorded above, then refused: the test never goes online
            page.route("**/*", lambda route: route.continue_() if is_loopback(route.request.url) else route.abort())
            started = time.monotonic()
            page.goto(url, wait_until="domcontentloaded", timeout=RENDER_SECONDS * 1000)
            picture = page.locator(".widget-vbox img")
            page.wait_for_function(
                "() => { const img = document.querySelector('.widget-vbox img');"
                " return img !== null && img.complete && img.naturalWidth > 0; }",
                timeout=RENDER_SECONDS * 1000)
            render_seconds = time.monotonic() - started
            readout = page.locator(".widget-vbox .widget-html").last
            body = page.inner_text("body")

            # the lesson, its printed numbers and its widget; no code, no self-check
            assert "Add & Norm" in body
            assert "row variances" in body
            # code cells show their outputs only (markdown cells keep their rendered text in an input area)
            assert page.locator(".jp-CodeCell").count() > 0
            assert page.locator(".jp-CodeCell .jp-InputArea, .jp-CodeMirrorEditor, .cm-editor").count() == 0
            # the exercises' cells are left out of the page
            notebook = nbformat.read(ROOT / LESSON, as_version=4)
            shown = [cell for cell in notebook.cells if "nbgrader" not in cell.metadata]
            assert page.locator("[cell-index]").count() == len(shown) < len(notebook.cells)
            for code in ("import numpy", "from encoder_lib", "AddNormExplorer()", "def layer_norm", "grading."):
                assert code not in body, f"the page shows code: {code!r}"
            for check in ("checks passed", "Well done"):
                assert check not in body, f"the page shows a self-check's output: {check!r}"
            assert "Traceback" not in body
            errors = page.locator('[data-mime-type="application/vnd.jupyter.stderr"], '
                                  '[data-mime-type="application/vnd.jupyter.error"]')
            assert errors.count() == 0, errors.all_inner_texts()

            explorer = AddNormExplorer()
            assert readout.inner_text().strip() == explorer.describe(explorer.state)
            SCREENSHOT.parent.mkdir(exist_ok=True)
            page.locator(".widget-vbox").first.scroll_into_view_if_needed()
            page.screenshot(path=str(SCREENSHOT))

            def click_and_wait(target, **values):
                before_src, before_text = picture.get_attribute("src"), readout.inner_text()
                target.click()
                page.wait_for_function(
                    "([src, text]) => { const img = document.querySelector('.widget-vbox img');"
                    " const html = [...document.querySelectorAll('.widget-vbox .widget-html')].pop();"
                    " return img.getAttribute('src') !== src && html.innerText !== text; }",
                    arg=[before_src, before_text], timeout=CHANGE_SECONDS * 1000)
                for name, value in values.items():
                    explorer.controls[name].value = value
                assert readout.inner_text().strip() == explorer.describe(explorer.state)
                return explorer.state

            post_variances = explorer.state["variances"]
            pre = click_and_wait(page.locator(".widget-toggle-buttons button", has_text="pre-norm"), norm="pre")
            assert pre["variances"] != post_variances and not pre["unit_rows"]
            no_residual = click_and_wait(page.locator(".widget-checkbox input"), residual=False)
            assert no_residual["variances"] != pre["variances"]
            page.locator(".widget-vbox").first.screenshot(path=str(SCREENSHOT.with_name("present_04_pre_norm_no_residual.png")))
        finally:
            browser.close()

    assert requests, "the page made no requests at all?"
    outside = sorted({u for u in requests if not is_loopback(u)})
    assert not outside, f"the page asked for something outside this computer: {outside}"
    print(f"lesson 04 presented in {render_seconds:.1f} s; {len(requests)} requests, all to {present.HOST}")
