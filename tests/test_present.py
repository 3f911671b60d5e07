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

A second browser test reads the page as a projector shows it (1280 x 720, 100% zoom): every piece
of text 18 px or more by its computed style, and the picture's smallest label 14 px or more on the
screen: the PNG's smallest font (points times dpi / 72, from the same widget drawn here with
ENCODER_COURSE_PRESENT=1) times the picture's displayed width over its natural width. Its screenshot
(screenshots/present_04_projector.png) must not be blank.
"""

import io
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

import nbformat
import pytest

from conftest import load_tool

ROOT = Path(__file__).resolve().parent.parent
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




class Pages:
    """Pages opened on the session's Chromium, each in a context of its own; ``close`` closes them."""

    def __init__(self, chromium):
        self.chromium, self.opened = chromium, []

    def new_page(self, **options):
        self.opened.append(self.chromium.new_page(**options))
        return self.opened[-1]

    def close(self):
        for page in self.opened:
            page.context.close()


@pytest.fixture(scope="module")
def voila(chromium, tmp_path_factory):
    """tools.present serving lesson 04 on a free loopback port, for this file's browser tests (each page
    opened runs the lesson in a kernel of its own); yields its URL and log. Only where there is a browser."""
    port = present.free_port()
    log = tmp_path_factory.mktemp("voila") / "voila.log"
    with open(log, "w") as out:
        process = subprocess.Popen([sys.executable, "-m", "tools.present", LESSON, "--port", str(port)],
                                   cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        if not wait_for_port(port, process, START_SECONDS):
            pytest.fail(f"Voila did not start listening on port {port} within {START_SECONDS} s:\n{log.read_text()}")
        yield present.url(port), log
    finally:
        stop(process)
    printed = log.read_text()
    assert f"at {present.url(port)}" in printed, printed  # the address, as `make present` prints it
    assert "Traceback" not in printed, printed


def stop(process):
    """SIGTERM: Voila stops its server and shuts its kernels down; SIGKILL to the group if it lingers."""
    process.terminate()
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def is_loopback(url):
    parts = urlsplit(url)
    return parts.scheme in ("data", "blob") or parts.hostname == present.HOST


def test_lesson_04_presents_its_widget_offline_and_without_code(chromium, voila):
    url, log = voila
    from encoder_lib.widgets.add_norm import AddNormExplorer

    requests = []
    browser = Pages(chromium)
    try:
        page = browser.new_page(viewport={"width": 1200, "height": 900})
        page.on("request", lambda request: requests.append(request.url))
        page.on("websocket", lambda ws: requests.append(ws.url))
        # anything for another host is recorded above, then refused: the test never goes online
        page.route("**/*", lambda route: route.continue_() if is_loopback(route.request.url) else route.abort())
        started = time.monotonic()
        page.goto(url, wait_until="domcontentloaded", timeout=RENDER_SECONDS * 1000)
        picture = page.locator(".course-explorer img")
        page.wait_for_function(
            "() => { const img = document.querySelector('.course-explorer img');"
            " return img !== null && img.complete && img.naturalWidth > 0; }",
            timeout=RENDER_SECONDS * 1000)
        render_seconds = time.monotonic() - started
        readout = page.locator(".course-explorer .widget-html").last
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
        page.locator(".course-explorer").first.scroll_into_view_if_needed()
        page.screenshot(path=str(SCREENSHOT))

        def click_and_wait(target, **values):
            before_src, before_text = picture.get_attribute("src"), readout.inner_text()
            target.click()
            page.wait_for_function(
                "([src, text]) => { const img = document.querySelector('.course-explorer img');"
                " const html = [...document.querySelectorAll('.course-explorer .widget-html')].pop();"
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
        page.locator(".course-explorer").first.screenshot(path=str(SCREENSHOT.with_name("present_04_pre_norm_no_residual.png")))
    finally:
        browser.close()

    assert requests, "the page made no requests at all?"
    outside = sorted({u for u in requests if not is_loopback(u)})
    assert not outside, f"the page asked for something outside this computer: {outside}"
    print(f"lesson 04 presented in {render_seconds:.1f} s; {len(requests)} requests, all to {present.HOST}")


# --- readable on a projector -------------------------------------------------

PROJECTOR = {"width": 1280, "height": 720}
BODY_PX = 18   # the smallest text on the page
LABEL_PX = 14  # the smallest label in a picture

# Every visible piece of text in the page's cells: its element, its words and its computed font size.
_JS_TEXT_SIZES = """() => {
    const found = [];
    const walker = document.createTreeWalker(document.querySelector('#rendered_cells') || document.body,
                                             NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        const element = node.parentElement;
        if (!node.nodeValue.trim() || !element || element.closest('script, style, mjx-assistive-mml')) continue;
        const box = element.getBoundingClientRect();
        if (box.width === 0 || box.height === 0 || !element.checkVisibility({visibilityProperty: true})) continue;
        found.push({element: element.tagName.toLowerCase() + '.' + [...element.classList].slice(0, 2).join('.'),
                    text: node.nodeValue.trim().slice(0, 40),
                    px: parseFloat(getComputedStyle(element).fontSize)});
    }
    return found;
}"""

_JS_PICTURE = """() => {
    const img = document.querySelector('.widget-vbox .course-picture img');
    return {natural: [img.naturalWidth, img.naturalHeight], shown: [img.clientWidth, img.clientHeight],
            alt: img.alt,
            // what the picture's onload script (encoder_lib.widgets._base.ACCESSIBLE_JS) adds: it ran here too
            live: document.querySelectorAll('.course-readout [role=status][aria-live=polite]').length,
            pressed: [...document.querySelectorAll('.widget-toggle-buttons button')].map(
                b => b.getAttribute('aria-pressed'))};
}"""


def test_on_a_projector_text_is_18_px_and_plot_labels_14_px(chromium, voila, tmp_path, monkeypatch):
    import numpy as np
    import PIL.Image
    from widget_helpers import smallest_text_px

    from encoder_lib import plots
    from encoder_lib.widgets.add_norm import AddNormExplorer

    url, _log = voila
    browser = Pages(chromium)
    try:
        page = browser.new_page(viewport=PROJECTOR, device_scale_factor=1)
        page.route("**/*", lambda route: route.continue_() if is_loopback(route.request.url) else route.abort())
        page.goto(url, wait_until="domcontentloaded", timeout=RENDER_SECONDS * 1000)
        page.wait_for_function(
            "() => { const img = document.querySelector('.widget-vbox .course-picture img');"
            " return img !== null && img.complete && img.naturalWidth > 0; }",
            timeout=RENDER_SECONDS * 1000)
        assert page.evaluate("() => [innerWidth, innerHeight, devicePixelRatio]") == [1280, 720, 1]
        texts = page.evaluate(_JS_TEXT_SIZES)
        picture = page.evaluate(_JS_PICTURE)
        page.locator(".course-explorer").first.scroll_into_view_if_needed()
        shot = tmp_path / "present_04_projector.png"
        page.screenshot(path=str(shot))
    finally:
        browser.close()

    # text: every piece, markdown, printed output, the widget's labels, buttons and readout
    assert len(texts) > 50, f"the page shows little text: {texts}"
    for kind in ("p", "div.widget-html-content", "button.widget-toggle-button", "pre"):
        assert any(t["element"].startswith(kind) for t in texts), f"no {kind} measured: {texts[:20]}"
    small = [t for t in texts if t["px"] < BODY_PX]
    sizes = sorted({t["px"] for t in texts})
    print(f"text sizes on the page at 1280x720: {sizes} px ({len(texts)} pieces of text)")
    assert not small, f"text under {BODY_PX} px on a projector: {small[:10]}"

    # the picture: the kernel drew it for the projector, and the page shows it at that size
    monkeypatch.setenv(plots.PRESENT_ENV, "1")
    explorer = AddNormExplorer()
    drawn = PIL.Image.open(io.BytesIO(explorer.image.value)).size
    assert tuple(picture["natural"]) == drawn, f"the page's picture is {picture['natural']}, drawn for a projector {drawn}"
    scale = picture["shown"][0] / picture["natural"][0]
    label_px = smallest_text_px(explorer.figure) * scale
    print(f"the picture: {picture['natural']} px drawn at {explorer.figure.dpi:g} dpi, shown at {picture['shown']} "
          f"px; its smallest label is {label_px:.1f} px on the screen")
    assert label_px >= LABEL_PX, f"the picture's smallest label is {label_px:.1f} px on a projector"
    assert picture["alt"].startswith("Plot: ")
    assert picture["live"] == 1 and picture["pressed"] == ["true", "false"], picture

    # the screenshot: the projector's whole window, not blank
    image = np.asarray(PIL.Image.open(shot).convert("L"), dtype=float)
    assert image.shape == (720, 1280)
    assert image.std() > 20 and (image < 128).mean() > 0.01, "the screenshot is blank"
    SCREENSHOT.parent.mkdir(exist_ok=True)
    shutil.copy(shot, SCREENSHOT.with_name("present_04_projector.png"))


def kernels_of(pid):
    """The ipykernel processes started by the process ``pid`` (Voila's kernels), from /proc."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            parent = int(stat.rsplit(")", 1)[1].split()[1])
            line = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except (OSError, ValueError, IndexError):
            continue
        if parent == pid and "ipykernel" in line:
            found.append(int(entry.name))
    return found


def test_a_closed_page_s_kernel_ends_and_an_open_page_s_stays(chromium, tmp_path):
    """`make present` starts a kernel per page; closing the page ends it (here after 3 idle seconds, the
    teacher's default is CLOSE_SECONDS), while the page that stays open keeps its own."""
    port = present.free_port()
    log = tmp_path / "voila.log"
    with open(log, "w") as out:
        process = subprocess.Popen([sys.executable, "-m", "tools.present", LESSON, "--port", str(port),
                                    "--close-seconds", "3"], cwd=ROOT, stdout=out, stderr=subprocess.STDOUT,
                                   start_new_session=True)
    try:
        assert wait_for_port(port, process, START_SECONDS), log.read_text()
        browser = Pages(chromium)
        try:
            pages = [browser.new_page() for _ in range(2)]
            for page in pages:
                page.goto(present.url(port), wait_until="domcontentloaded", timeout=RENDER_SECONDS * 1000)
                page.wait_for_function("() => { const img = document.querySelector('.course-explorer img');"
                                       " return img !== null && img.complete && img.naturalWidth > 0; }",
                                       timeout=RENDER_SECONDS * 1000)
            assert len(kernels_of(process.pid)) == 2, log.read_text()[-2000:]
            pages[0].close()
            deadline = time.monotonic() + 60 + 3  # the culler's period and the idle time, on a busy machine
            while len(kernels_of(process.pid)) > 1 and time.monotonic() < deadline:
                time.sleep(0.5)
            assert len(kernels_of(process.pid)) == 1, "the closed page's kernel is still running"
            time.sleep(8)  # several culling periods: the open page's kernel is kept
            assert len(kernels_of(process.pid)) == 1, "the open page's kernel was ended"
            assert pages[1].locator(".course-explorer img").count() > 0
        finally:
            browser.close()
    finally:
        stop(process)
