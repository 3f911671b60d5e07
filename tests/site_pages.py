"""The course's website (tools/site) in headless Chromium: open a page offline, move a widget's controls, read it.

Shared by ``tests/test_site.py`` and ``benchmarks/bench_site.py``; not a test
file itself, and free of pytest. The browser is ``tests/browser.py``'s
(Playwright driving Debian's Chromium; nothing is downloaded).

- ``offline(browser)``: a browser context with the network off, every request
  recorded (``context.requests``) and every one that is not a file aborted.
- ``Widget``: one widget on a page: its controls as the page shows them
  (``shown()``: each control's label and value as text), its picture's file,
  alt text and readout, and moves made with the mouse or the keyboard.
"""

import contextlib
import io
from pathlib import Path
from urllib.parse import unquote, urlparse

import numpy as np
import PIL.Image

#: Waits (ms) sized for a loaded 2-core machine.
WAIT_MS = 15_000

# What the page shows for one widget: each control's label, kind and shown value, and the picture.
_JS_SHOWN = """(box) => {
    const img = box.querySelector('img.explorer-picture');
    const svg = box.querySelector('svg.explorer-drawing');  // a widget site.js draws from its numbers
    const controls = [...box.querySelectorAll('.explorer-controls > .control')].map((c) => {
        if (c.matches('.slider')) {
            const input = c.querySelector('input[type=range]');
            return {kind: 'slider', label: c.querySelector('label').textContent, value: c.querySelector('output').textContent,
                    valuetext: input.getAttribute('aria-valuetext'), min: Number(input.min), max: Number(input.max),
                    at: Number(input.value)};
        }
        if (c.matches('.toggle')) {
            const checked = c.querySelector('input:checked');
            return {kind: 'toggle', label: c.querySelector('legend').textContent,
                    value: checked ? c.querySelector('label[for="' + checked.id + '"]').textContent : null};
        }
        return {kind: 'checkbox', label: c.querySelector('label').textContent,
                value: c.querySelector('input').checked ? 'on' : 'off'};
    });
    return {controls, src: img ? img.getAttribute('src') : null,
            alt: img ? img.getAttribute('alt') : svg.getAttribute('aria-label'),
            readout: box.querySelector('.explorer-readout').textContent, state: box.dataset.state || null,
            complete: img ? img.complete && img.naturalWidth > 0 : svg !== null};
}"""

# Times one key press in the page: from the keydown to the widget's new picture loaded (or, when the move
# shows the same file again, to the frame after the readout changed).
_JS_WATCH = """(box) => {
    const record = {key: null, shown: null};
    window.__siteWatch = record;
    const img = box.querySelector('img.explorer-picture');  // none where site.js draws the widget (an SVG)
    const before = box.dataset.state;
    document.addEventListener('keydown', () => { if (record.key === null) record.key = performance.now(); },
                              {capture: true, once: true});
    const check = () => {
        if (record.key !== null && box.dataset.state !== before && (!img || (img.complete && img.naturalWidth > 0))) {
            record.shown = performance.now();
            return;
        }
        requestAnimationFrame(check);
    };
    if (img) img.addEventListener('load', () => { if (record.key !== null && record.shown === null) check(); },
                                  {once: true});
    requestAnimationFrame(check);
    return true;
}"""


@contextlib.contextmanager
def offline(browser, viewport=None):
    """A context whose network is off: file URLs load, every other request is aborted; all are recorded."""
    context = browser.new_context(offline=True, viewport=viewport or {"width": 1280, "height": 900})
    context.requests = []
    context.on("request", lambda request: context.requests.append(request.url))
    context.route("**/*", lambda route: route.continue_() if route.request.url.startswith("file:")
                  else route.abort())
    try:
        yield context
    finally:
        context.close()


def open_page(context, path):
    """``path`` (a file of the site) in a new page of ``context``; ``page.problems`` collects its console
    errors and uncaught exceptions."""
    page = context.new_page()
    page.problems = []
    page.on("console", lambda m: page.problems.append(f"console {m.type}: {m.text}") if m.type in ("error", "warning")
            else None)
    page.on("pageerror", lambda exc: page.problems.append(f"page error: {exc}"))
    page.goto(Path(path).as_uri() if not str(path).startswith("http") else str(path))
    page.wait_for_load_state("load")
    return page


def file_of(url):
    """The file a ``file://`` URL names."""
    parsed = urlparse(url)
    if parsed.scheme != "file":
        raise ValueError(f"url must be a file:// URL, got {url!r}")
    return Path(unquote(parsed.path))


def pixels(data):
    """An image's pixels as an (height, width, 4) array, from its bytes."""
    return np.asarray(PIL.Image.open(io.BytesIO(data)).convert("RGBA"))


class Widget:
    """The widget ``section.explorer`` number ``index`` of ``page``."""

    def __init__(self, page, index):
        self.page = page
        self.box = page.locator("section.explorer").nth(index)
        self.box.scroll_into_view_if_needed()

    @property
    def id(self):
        return self.box.get_attribute("id")

    def shown(self):
        """What the page shows: ``{"controls": [...], "src", "alt", "readout", "state", "complete"}``."""
        return self.box.evaluate(_JS_SHOWN)

    def picture(self):
        """The bytes of the picture the page shows now (read from the file its ``img`` loads; the ``img``'s
        current source, which a ``<picture>`` chooses by the screen's width); None for a drawn widget."""
        if self.box.locator("img.explorer-picture").count() == 0:
            return None
        src = self.box.locator("img.explorer-picture").evaluate("img => img.currentSrc || img.src")
        return file_of(src).read_bytes() if src.startswith("file:") else None

    def wait_until_shown(self):
        """Wait until the picture the page names has loaded (a drawn widget is drawn at once)."""
        self.page.wait_for_function("(box) => { const img = box.querySelector('img.explorer-picture');"
                                    " return img ? img.complete && img.naturalWidth > 0"
                                    " : box.querySelector('svg.explorer-drawing') !== null; }",
                                    arg=self.box.element_handle(), timeout=WAIT_MS, polling="raf")

    def control(self, ci):
        return self.box.locator(".explorer-controls > .control").nth(ci)

    def move_with_mouse(self, ci):
        """Click control ``ci`` to another value: a slider at the far end from its handle, another toggle
        button, or the check box's label."""
        control, shown = self.control(ci), self.shown()["controls"][ci]
        if shown["kind"] == "slider":
            slider = control.locator("input[type=range]")
            box = slider.bounding_box()
            near_start = shown["at"] - shown["min"] <= (shown["max"] - shown["min"]) / 2
            x = box["width"] - 3 if near_start else 3
            slider.click(position={"x": x, "y": box["height"] / 2})
        elif shown["kind"] == "toggle":
            other = control.locator("input[type=radio]:not(:checked):not(:disabled)").first
            control.locator(f'label[for="{other.get_attribute("id")}"]').click()
        else:
            control.locator("label").click()
        self.wait_until_shown()

    def focus(self, ci):
        """Put the keyboard's focus on control ``ci`` (a toggle group: its chosen button)."""
        control, kind = self.control(ci), self.shown()["controls"][ci]["kind"]
        target = {"slider": "input[type=range]", "toggle": "input[type=radio]:checked",
                  "checkbox": "input[type=checkbox]"}[kind]
        control.locator(target).focus()
        return kind

    def key_for(self, ci):
        """The key that moves control ``ci`` (once focused) to another value."""
        shown = self.shown()["controls"][ci]
        if shown["kind"] == "slider":
            return "ArrowLeft" if shown["at"] >= shown["max"] else "ArrowRight"
        return "ArrowRight" if shown["kind"] == "toggle" else "Space"

    def can_move(self, ci):
        """Can control ``ci`` take another value from this state? (Lesson 02's head slider cannot with 1 head.)"""
        shown = self.shown()["controls"][ci]
        return shown["kind"] != "slider" or shown["min"] < shown["max"]

    def move_with_keyboard(self, ci):
        """Move control ``ci`` with a key: arrow keys on a slider or a toggle group, Space on a check box."""
        self.focus(ci)
        self.page.keyboard.press(self.key_for(ci))
        self.wait_until_shown()

    def timed_key(self, ci):
        """Press the key that moves control ``ci``; milliseconds from the key press to the new picture shown."""
        self.focus(ci)
        key = self.key_for(ci)
        self.page.evaluate(_JS_WATCH, self.box.element_handle())
        self.page.keyboard.press(key)
        self.page.wait_for_function("() => window.__siteWatch.shown !== null", timeout=WAIT_MS, polling="raf")
        record = self.page.evaluate("() => window.__siteWatch")
        return record["shown"] - record["key"]
