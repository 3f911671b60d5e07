"""The course as a learner opens it: the student versions in JupyterLab, driven in headless Chromium.

Shared by ``tests/test_browser_lab.py`` and ``benchmarks/bench_browser.py``;
not a test file itself (pytest collects only ``test_*.py``), and free of
pytest so that the benchmark can use it too.

- ``student_course(folder)`` writes the student versions, with
  ``tools.student``, into a copy of the course in ``folder``: the
  learner's own ``student/`` is never touched.
- ``LabServer`` runs JupyterLab from this environment (``.venv``) on a free
  loopback port with a token, with its own config, runtime, data, settings,
  workspaces, IPython and matplotlib folders, so that nothing of the user's
  (settings, workspaces, kernels, startup files) changes what it shows. It
  uses the venv's app settings, i.e. the ``jupyter/overrides.json`` that
  ``make setup`` installs.
- ``chromium()`` starts Playwright's Chromium from the Debian package;
  Playwright never downloads a browser here.
- ``LabNotebook`` opens one notebook in a fresh page, runs it the way a
  learner does (Run menu, Run All Cells), and reads what it shows: widgets,
  their pictures and readouts, error outputs, console errors.

Environment:

``ENCODER_COURSE_CHROMIUM``
    The Chromium executable to drive (default ``/usr/bin/chromium``). Point it
    at a path that does not exist to check that, with ``CI`` set, the browser
    tests fail rather than skip when there is no browser.
"""

import contextlib
import json
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import nbformat

from tools.course import ROOT, jupyter_env
CHROMIUM_ENV = "ENCODER_COURSE_CHROMIUM"
DEFAULT_CHROMIUM = "/usr/bin/chromium"
# Headless, as root, offline: no sandbox (root), no GPU, and none of Chromium's
# own background traffic (without these it floods refused connections).
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]
VIEWPORT = {"width": 1280, "height": 900}
#: Run All of a lesson, sized for a 2-core machine busy with three other CPU-bound processes (alone: well
#: under a minute for the longest lesson).
RUN_ALL_SECONDS = 360
AXE_MAX_HEIGHT = 60_000  # px: the window axe-core checks a whole notebook in (see LabNotebook.axe_violations)
OVERRIDES = ROOT / "jupyter" / "overrides.json"
PAGE_CONFIG = ROOT / "jupyter" / "page_config.json"
# What a cell shows for a widget that did not render: the widget manager's
# placeholder, or the text/plain fallback of an ipywidgets VBox.
NOT_RENDERED = ("Loading widget", "VBox(children=")
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


# ------------------------------------------------------------------ what to drive

def chromium_path():
    return os.environ.get(CHROMIUM_ENV) or DEFAULT_CHROMIUM


def missing_browser():
    """Why the browser cannot be driven here (a sentence), or None when it can."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError as exc:
        return f"playwright is not installed ({exc}); `make setup` installs it from requirements.txt"
    path = chromium_path()
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        return (f"no Chromium at {path} ({CHROMIUM_ENV} or the default {DEFAULT_CHROMIUM}); "
                "install Debian's `chromium` package (`.ci/run` does)")
    return None


# ------------------------------------------------------------------ the course

def student_course(folder):
    """Write the student versions of every lesson into a copy of the course in ``folder``
    (``grading_helpers.made_student``: tools.student runs once a session).

    Returns ``folder/student``, which holds ``<lesson>/<lesson>.ipynb``.
    """
    from grading_helpers import made_student  # tests/grading_helpers.py

    return made_student(folder) / "student"


def grade_id(cell):
    return cell.metadata.get("nbgrader", {}).get("grade_id", "")



def log_tail(path, lines):
    """The last ``lines`` lines of a server's log file, for an error message ("" if it cannot be read)."""
    try:
        return "\n".join(Path(path).read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""

class Lesson:
    """What the tests expect of one lesson's student version, read from the notebooks.

    ``widget_cells``: indices of the cells that show a widget (their stored
    output, in the teachers' version, is a widget view); ``failing``: ``{cell
    index: function}`` for each cell that fails while the function it names is
    not written (the visible-tests cells, and the lesson's own cells that use
    the learner's function: tools/student.py tags them ``raises-exception``,
    so that Run All goes on past them); ``hand_in_cell``: the index of the
    cell that shows the **Hand in** button (None where there is none).
    """

    def __init__(self, name, student_dir):
        from tools import student as tool

        self.name = name
        self.path = f"{name}/{name}.ipynb"
        teacher = nbformat.read(ROOT / "notebooks" / self.path, as_version=4)
        student = nbformat.read(Path(student_dir) / self.path, as_version=4)
        shows_widget = {cell.get("id") for cell in teacher.cells if cell.cell_type == "code"
                        and any(WIDGET_MIME in out.get("data", {}) for out in cell.get("outputs", []))}
        self.cells = student.cells
        self.widget_cells = [i for i, cell in enumerate(student.cells) if cell.get("id") in shows_widget]
        if len(self.widget_cells) != len(shows_widget):
            raise RuntimeError(f"{self.path}: the student version lost the ids of its widget cells")
        names = tool.learner_functions(student)
        self.failing = {}
        for i, cell in enumerate(student.cells):
            if tool.RAISES in cell.metadata.get("tags", []):
                used = [n for n in sorted(names) if n in cell.source]
                self.failing[i] = grade_id(cell).removesuffix("_tests") if grade_id(cell) else used[0]
        self.hand_in_cell = next((i for i, c in enumerate(student.cells) if c.cell_type == "code"
                                  and "grading.hand_in_button(" in c.source), None)


# ------------------------------------------------------------------ JupyterLab

def _ipykernel_version():
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("ipykernel")
    except PackageNotFoundError:
        return "(not installed)"


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LabServer:
    """JupyterLab serving ``root_dir``, isolated in ``work_dir``; a context manager that always stops it."""

    def __init__(self, root_dir, work_dir, cwd=None, startup_timeout=180, env=None):
        self.root_dir = Path(root_dir)
        # `make lab` runs `jupyter lab student` in the course folder, where nbgrader's
        # extensions find nbgrader_config.py; ``cwd`` is that folder
        self.cwd = Path(cwd) if cwd else self.root_dir
        self.work_dir = Path(work_dir)
        self.startup_timeout = startup_timeout
        self.port = free_port()
        self.token = secrets.token_hex(16)
        self.base = f"http://127.0.0.1:{self.port}"
        self.log_path = self.work_dir / "jupyterlab.log"
        self.process = None
        self.extra_env = dict(env or {})  # what the server and its kernels get besides (a hand-in service's address)

    def environment(self):
        env = dict(os.environ)
        for name in ("JUPYTER_PATH", "JUPYTER_CONFIG_PATH", "JUPYTERLAB_DIR", "PYTHONSTARTUP"):
            env.pop(name, None)  # nothing of the user's set-up
        folders = {
            "JUPYTER_CONFIG_DIR": "config",
            "JUPYTER_RUNTIME_DIR": "runtime",
            "JUPYTER_DATA_DIR": "data",
            "JUPYTERLAB_SETTINGS_DIR": "lab-user-settings",
            "JUPYTERLAB_WORKSPACES_DIR": "lab-workspaces",
            "IPYTHONDIR": "ipython",
            "MPLCONFIGDIR": "matplotlib",
        }
        for name, sub in folders.items():
            (self.work_dir / sub).mkdir(parents=True, exist_ok=True)
            env[name] = str(self.work_dir / sub)
        env.update(self.extra_env)
        return jupyter_env(env)  # the kernel and extensions of this environment

    def command(self):
        command = [
            sys.executable, "-m", "jupyterlab",
            "--no-browser",
            "--ServerApp.ip=127.0.0.1",
            f"--ServerApp.port={self.port}",
            "--ServerApp.port_retries=0",
            f"--IdentityProvider.token={self.token}",
            f"--ServerApp.root_dir={self.root_dir}",
        ]
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            command.append("--allow-root")
        return command

    def start(self):
        self.work_dir.mkdir(parents=True, exist_ok=True)
        log = open(self.log_path, "wb")
        self.process = subprocess.Popen(self.command(), cwd=self.cwd, env=self.environment(),
                                        stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                        start_new_session=True)  # its own process group, kernels included
        log.close()
        deadline = time.monotonic() + self.startup_timeout
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"JupyterLab exited with code {self.process.returncode}:\n{self.log_tail()}")
            try:
                if self.api("status", timeout=2) is not None:
                    return self
            except (OSError, urllib.error.URLError, ValueError):
                pass
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"JupyterLab did not answer within {self.startup_timeout} s:\n{self.log_tail()}")
            time.sleep(0.25)

    def api(self, path, method="GET", timeout=10):
        request = urllib.request.Request(f"{self.base}/api/{path}", method=method,
                                         headers={"Authorization": f"token {self.token}"})
        with urllib.request.urlopen(request, timeout=timeout) as response:
            body = response.read()
        return json.loads(body) if body else {}

    def url(self, path, workspace=None):
        """The page that opens ``path``; in its own JupyterLab workspace when ``workspace`` is given
        (a workspace remembers the tabs opened, and would reopen an earlier notebook beside it)."""
        where = f"workspaces/{workspace}/" if workspace else ""
        return f"{self.base}/lab/{where}tree/{path}?token={self.token}"

    def log_tail(self, lines=40):
        return log_tail(self.log_path, lines)

    def stop(self):
        """Shut down: politely (kernels too), then by the process group's id if it lingers."""
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        with contextlib.suppress(OSError, urllib.error.URLError, ValueError):
            self.api("shutdown", method="POST", timeout=5)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        # kernels started by the server are in its process group; none may outlive it
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()


# ------------------------------------------------------------------ the browser

@contextlib.contextmanager
def chromium():
    """Playwright's Chromium from ``chromium_path()``, headless; closed on exit."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS, headless=True)
        try:
            yield browser
        finally:
            browser.close()


# JavaScript run in the page. The cells of the notebook, in order (JupyterLab's
# default windowing, "contentVisibility", keeps every cell in the DOM).
_JS_CELLS = "document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell')"

_JS_RUN_STATE = """() => {
    const cells = [...%s];
    const prompts = cells.filter(c => c.classList.contains('jp-CodeCell'))
        .map(c => (c.querySelector('.jp-InputPrompt') || {}).textContent || '');
    // the status bar's kernel item: "Python 3 (ipykernel) | Idle" once a kernel is connected and idle
    // (the toolbar's execution indicator already says idle while there is no kernel yet)
    const item = document.querySelector('.jp-StatusBar-TextItem[title^="Change kernel"]');
    const text = item ? item.textContent.trim() : '';
    return {
        ran: prompts.filter(p => /\\[\\d+\\]/.test(p)).length,
        queued: prompts.filter(p => p.includes('*')).length,
        kernel: /^No Kernel/.test(text) ? 'none' : (text.split('|').pop() || '').trim().toLowerCase(),
    };
}""" % _JS_CELLS

_JS_WIDGETS = """(indices) => {
    const cells = [...%s];
    return indices.map(i => {
        const cell = cells[i];
        if (!cell) return {index: i, missing: true, outputs: []};
        const outputs = [...cell.querySelectorAll('.jp-OutputArea-output')].map(out => {
            const view = out.querySelector('.widget-vbox, .jupyter-widgets');
            const imgs = [...out.querySelectorAll('img')];
            const htmls = [...out.querySelectorAll('.widget-html-content')];
            return {
                widget: !!view,
                questions: !!out.querySelector('.course-questions'),
                images: imgs.map(img => ({loaded: img.complete && img.naturalWidth > 0,
                                          width: img.naturalWidth, src: img.src.slice(0, 80), alt: img.alt})),
                readout: htmls.length ? htmls[htmls.length - 1].textContent : null,
                text: out.textContent.slice(0, 300),
            };
        });
        return {index: i, outputs};
    });
}""" % _JS_CELLS

_JS_ERRORS = """() => {
    const cells = [...%s];
    const found = [];
    cells.forEach((cell, index) => {
        cell.querySelectorAll('.jp-OutputArea-output').forEach(out => {
            const mime = out.getAttribute('data-mime-type') || '';
            const stderr = out.querySelector('[data-mime-type="application/vnd.jupyter.stderr"]');
            if (mime.includes('stderr') || mime.includes('error') || stderr) {
                found.push({index, mime, text: out.textContent});
            }
        });
    });
    return found;
}""" % _JS_CELLS

# Times one key press on a focused control up to the new picture in the page:
# a capturing keydown listener stamps the press, a MutationObserver the new
# picture in the widget (each redraw puts in a new <img>, with a new src and
# alt: encoder_lib.widgets._base.Picture), its load event the decoded picture.
_JS_WATCH = """(view) => {
    const record = {key: null, src: null, load: null};
    window.__courseWatch = record;
    const old = view.querySelector('img');
    const onKey = () => { if (record.key === null) record.key = performance.now(); };
    document.addEventListener('keydown', onKey, {capture: true, once: true});
    const observer = new MutationObserver(() => {
        const img = view.querySelector('img');
        if (record.src === null && img && (img !== old || img.src !== old.src)) {
            record.src = performance.now();
            observer.disconnect();
            const loaded = () => { if (record.load === null) record.load = performance.now(); };
            img.addEventListener('load', loaded, {once: true});
            if (img.complete && img.naturalWidth > 0) requestAnimationFrame(loaded);
        }
    });
    observer.observe(view, {subtree: true, childList: true, attributes: true, attributeFilter: ['src']});
    return true;
}"""


# The focused element, if it is inside ``view`` (a widget): what kind of control it is and its name.
_JS_ACTIVE = """(view) => {
    const e = document.activeElement;
    if (!e || !view.contains(e)) return null;
    const kind = e.classList.contains('noUi-handle') ? 'slider'
        : e.matches('.widget-toggle-buttons button') ? 'toggle'
        : e.matches('input[type=checkbox]') ? 'checkbox' : 'other';
    const label = e.getAttribute('aria-label') || (e.closest('label') || e).textContent.trim();
    return {kind, label, pressed: e.classList.contains('mod-active'),
            at_max: e.getAttribute('aria-valuenow') === e.getAttribute('aria-valuemax')};
}"""


class LabNotebook:
    """One notebook of ``server`` in a fresh page of ``browser``; a context manager that closes the page."""

    def __init__(self, browser, server, path):
        self.server = server
        self.path = path
        self.context = browser.new_context(viewport=VIEWPORT)
        self.page = self.context.new_page()
        self.console_errors = []
        self.page.on("console", self._console)
        self.page.on("pageerror", lambda exc: self.console_errors.append(f"page error: {exc}"))

    def _console(self, message):
        if message.type == "error":
            location = message.location or {}
            self.console_errors.append(f"console error: {message.text} ({location.get('url', '')})")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        with contextlib.suppress(Exception):
            self.context.close()

    # ---------------------------------------------------------- running it

    def open(self, timeout=180):
        """Open the notebook and wait until its kernel is idle."""
        workspace = re.sub(r"[^A-Za-z0-9_-]", "-", Path(self.path).stem) + "-" + secrets.token_hex(3)
        self.page.goto(self.server.url(self.path, workspace), wait_until="domcontentloaded")
        self.page.wait_for_selector(".jp-NotebookPanel .jp-Notebook .jp-Cell", timeout=timeout * 1000)
        self.page.wait_for_function(f"() => ({_JS_RUN_STATE})().kernel === 'idle'", timeout=timeout * 1000)

    def run_all(self, timeout=RUN_ALL_SECONDS):
        """Run > Run All Cells, as a learner does; returns when no cell is queued and the kernel is idle."""
        self.page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Run$")).click()
        self.page.locator('.lm-Menu-item[data-command="runmenu:run-all"]').click()
        self.wait_until_run(timeout)

    def wait_until_run(self, timeout=RUN_ALL_SECONDS, settled=2.0):
        """Wait until no cell is queued and the kernel is idle, and stays so for ``settled`` seconds with no new
        cell run: past a cell tagged raises-exception, JupyterLab queues the next cells again only after the
        error's reply, and the kernel is idle for a moment between the two."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                self.page.wait_for_function(
                    f"() => {{ const s = ({_JS_RUN_STATE})(); return s.ran > 0 && s.queued === 0 && "
                    "s.kernel === 'idle'; }", timeout=max(1.0, deadline - time.monotonic()) * 1000, polling=100)
            except Exception as exc:
                raise AssertionError(f"{self.path}: Run All had not finished after {timeout} s: "
                                     f"{self.diagnosis()}") from exc
            before = self.run_state()
            self.page.wait_for_timeout(settled * 1000)
            if self.run_state() == before:
                return

    def diagnosis(self):
        """What the page's run state says, with the likely cause when the kernel never got the cells."""
        state = self.run_state()
        hint = ""
        if state["queued"] > 0 and state["kernel"] == "idle":
            # cells queued, an idle kernel: execute requests that never reached it
            hint = (f"; cells wait for an idle kernel: ipykernel {_ipykernel_version()}? Versions 7.0 to 7.3 "
                    "can miss a request that arrives while they send a reply (ipython/ipykernel#1554, "
                    "fixed in 7.4.0)")
        return f"{state}{hint}"

    def run_state(self):
        return self.page.evaluate(_JS_RUN_STATE)

    # ---------------------------------------------------------- reading it

    def widgets(self, indices):
        """For each cell index: its outputs, each with whether it is a widget view and its images."""
        return self.page.evaluate(_JS_WIDGETS, indices)

    def wait_for_widgets(self, indices, timeout=90):
        """Wait until every output of those cells is a widget whose pictures have loaded."""
        try:
            self.page.wait_for_function(
                f"""(indices) => ({_JS_WIDGETS})(indices).every(cell => cell.outputs.length > 0 &&
                    cell.outputs.every(o => o.questions ||
                                         (o.widget && o.images.length > 0 && o.images.every(i => i.loaded))))""",
                arg=indices, timeout=timeout * 1000, polling=100)
        except Exception as exc:
            raise AssertionError(f"{self.path}: the widgets of cells {indices} were not all shown after "
                                 f"{timeout} s: {self.widgets(indices)}; {self.diagnosis()}") from exc

    def error_outputs(self):
        """Every output shown as an error or on stderr: ``[{index, mime, text}]``."""
        return self.page.evaluate(_JS_ERRORS)

    def notebook_text(self):
        # textContent, not innerText: cells off screen are not rendered (content-visibility), and
        # their innerText is empty
        return self.page.locator(f"{_CELL_CSS}").evaluate_all("cells => cells.map(c => c.textContent).join('\\n')")

    def dialogs(self):
        """The text of any dialog or notification toast covering the page."""
        return self.page.evaluate(
            "() => [...document.querySelectorAll('.jp-Dialog, .Toastify__toast')].map(e => e.textContent)")

    def cell(self, index):
        return self.page.locator(f"{_CELL_CSS}").nth(index)

    def widget_view(self, index):
        """The outermost box of the cell's (first) course widget: the questions asked above it are not it."""
        return self.cell(index).locator(".jp-OutputArea-output .course-explorer").first

    def image(self, index):
        """The widget's picture: a new <img> after each redraw, so this finds the current one each time."""
        return self.widget_view(index).locator("img").first

    def readout(self, index):
        return self.widget_view(index).locator(".widget-html-content").last.text_content()

    def image_src(self, index):
        return self.image(index).get_attribute("src")

    def image_alt(self, index):
        """The text alternative of the widget's picture (its ``alt``)."""
        return self.image(index).get_attribute("alt")

    # ---------------------------------------------------------- moving controls

    def press_slider(self, index, key="ArrowRight", which=0):
        """Focus the cell's ``which``-th slider handle and press ``key``."""
        handle = self.widget_view(index).locator(".widget-slider .noUi-handle").nth(which)
        handle.scroll_into_view_if_needed()
        handle.focus()
        self.page.keyboard.press(key)

    def click_toggle(self, index, label):
        button = self.widget_view(index).locator(".widget-toggle-buttons button", has_text=re.compile(
            rf"^\s*{re.escape(label)}\s*$"))
        button.scroll_into_view_if_needed()
        button.click()

    CONTROLS_CSS = ".widget-slider .noUi-handle, .widget-toggle-buttons button, .widget-checkbox input"

    def has_control(self, index):
        """Whether the cell's widget has a control a learner can move (a progress display has none)."""
        return self.widget_view(index).locator(self.CONTROLS_CSS).count() > 0

    def move_a_control(self, index):
        """Move one control of the cell's widget as a learner would; returns what was done.

        The first slider one step (right, or left at its end) with the keyboard;
        without a slider, a click on the first toggle button not selected.
        """
        view = self.widget_view(index)
        view.scroll_into_view_if_needed()
        handles = view.locator(".widget-slider .noUi-handle")
        if handles.count():
            handle = handles.first
            at_max = handle.get_attribute("aria-valuenow") == handle.get_attribute("aria-valuemax")
            key = "ArrowLeft" if at_max else "ArrowRight"
            handle.focus()
            self.page.keyboard.press(key)
            return f"slider {key}"
        button = view.locator(".widget-toggle-buttons button:not(.mod-active)").first
        label = button.inner_text().strip()
        button.click()
        return f"clicked {label!r}"

    # ---------------------------------------------------------- everyone can use it

    def tab_stops(self, index, max_presses=40):
        """Click the widget's title (text, no control) and press Tab until the focus has gone through the
        widget and left it: ``[{kind, label, pressed, at_max}]``, the widget's tab stops in order."""
        view = self.widget_view(index)
        view.scroll_into_view_if_needed()
        view.locator(".widget-html").first.click()
        stops, entered = [], False
        for _ in range(max_presses):
            self.page.keyboard.press("Tab")
            active = self.page.evaluate(_JS_ACTIVE, view.element_handle())
            if active is None and entered:
                return stops
            if active is not None:
                entered = True
                stops.append(active)
        raise AssertionError(f"cell {index}: {max_presses} presses of Tab did not go through the widget: {stops}")

    def keyboard_move(self, index):
        """Move one control of the cell's widget with the keyboard alone: click its title, Tab to the
        first slider (or else the first toggle button not pressed, or else a checkbox), press a key.
        Returns what was done, e.g. ``"Tab x1, ArrowRight on slider 'head'"``."""
        stops = self.tab_stops(index)
        controls = [(k, stop) for k, stop in enumerate(stops) if stop["kind"] != "other"]
        if not controls:
            raise AssertionError(f"cell {index}: no control of the widget takes the focus from Tab: {stops}")
        choice = (next((c for c in controls if c[1]["kind"] == "slider"), None)
                  or next((c for c in controls if c[1]["kind"] == "toggle" and not c[1]["pressed"]), None)
                  or next(c for c in controls if c[1]["kind"] == "checkbox"))
        position, stop = choice
        key = {"slider": "ArrowLeft" if stop["at_max"] else "ArrowRight"}.get(stop["kind"], "Space")
        view = self.widget_view(index)
        view.locator(".widget-html").first.click()
        presses = 0
        while True:  # Tab to the widget's first stop, then on to the chosen one
            self.page.keyboard.press("Tab")
            presses += 1
            if self.page.evaluate(_JS_ACTIVE, view.element_handle()) is not None:
                break
            if presses > 20:
                raise AssertionError(f"cell {index}: Tab never reached the widget")
        for _ in range(position):
            self.page.keyboard.press("Tab")
        active = self.page.evaluate(_JS_ACTIVE, view.element_handle())
        assert active == stop, f"cell {index}: Tab reached {active}, not {stop}"
        self.page.keyboard.press(key)
        return f"Tab to stop {position + 1} of the widget, {key} on {stop['kind']} {stop['label']!r}"

    def axe_violations(self, within=".jp-OutputArea", impacts=("serious", "critical")):
        """axe-core's violations of ``impacts`` in the elements ``within`` (the cells' outputs: JupyterLab's own
        toolbars and editors are not the course's): ``[{id, impact, help, targets}]``. The ids of the rules
        that some node passed are left in ``self.axe_passed``."""
        from axe_playwright_python.sync_playwright import Axe

        # axe checks the colours of text on the screen only: text scrolled out of the notebook's view, and
        # all text under JupyterLab's <body> (0 px high, overflow hidden, the shell positioned absolutely
        # over it, which axe does not follow) counts as hidden, and the colour check quietly skips it. So,
        # for the check: the body not clipping, every cell painted, a window as tall as the notebook.
        self.page.add_style_tag(content="body { overflow: visible !important; } .jp-Cell, "
                                        ".jp-WindowedPanel-viewport > * { content-visibility: visible !important; }")
        height = self.page.evaluate(
            "() => { const outer = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) "
            ".jp-WindowedPanel-outer'); return outer.scrollHeight - outer.clientHeight; }")
        self.page.set_viewport_size({"width": VIEWPORT["width"], "height": min(VIEWPORT["height"] + height + 200,
                                                                                 AXE_MAX_HEIGHT)})
        try:
            self.page.wait_for_function(  # every output in the window (the notebook may scroll past its end)
                "() => [...document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-OutputArea')]"
                ".every(out => out.getBoundingClientRect().bottom <= innerHeight)", timeout=10_000)
            results = Axe().run(self.page, context={"include": [within]},
                                options={"resultTypes": ["violations"]})
        finally:
            self.page.set_viewport_size(VIEWPORT)
        self.axe_passed = {rule["id"] for rule in results.response["passes"]}  # rules some node passed
        return [{"id": v["id"], "impact": v["impact"], "help": v["help"],
                 "targets": [node["target"] for node in v["nodes"]]}
                for v in results.response["violations"] if v["impact"] in impacts]

    def wait_for_new_picture(self, index, old_src, timeout=60):
        """Wait until the cell's widget picture has a src other than ``old_src`` and has loaded."""
        # the view, not its <img>: each redraw puts in a new <img>, and an old one may be gone already
        self.widget_view(index).element_handle().wait_for_element_state("visible")
        self.page.wait_for_function(
            "([view, old]) => { const img = view.querySelector('img');"
            " return img !== null && img.src !== old && img.complete && img.naturalWidth > 0; }",
            arg=[self.widget_view(index).element_handle(), old_src], timeout=timeout * 1000, polling="raf")

    def timed_key(self, index, key, timeout=30):
        """Press ``key`` on the focused control; milliseconds from the key press to the new src and
        to the new picture loaded."""
        self.page.evaluate(_JS_WATCH, self.widget_view(index).element_handle())
        self.page.keyboard.press(key)
        self.page.wait_for_function("() => window.__courseWatch.load !== null", timeout=timeout * 1000,
                                    polling="raf")
        record = self.page.evaluate("() => window.__courseWatch")
        return record["src"] - record["key"], record["load"] - record["key"]

    def screenshot(self, path, index=None):
        """A screenshot of the viewport, with the cell ``index`` (if given) scrolled into view."""
        if index is not None:
            cell = self.cell(index)
            cell.scroll_into_view_if_needed()
            # a long notebook renders only the cells in view (windowing): wait until the cell has painted
            cell.wait_for(state="visible", timeout=10_000)
            self.page.evaluate("() => new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)))")
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        self.page.screenshot(path=str(path))


_CELL_CSS = ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell"
