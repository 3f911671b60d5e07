"""The website offline after one visit (tools/site/offline.py, static/sw.js): a lesson read once from a web server
works when the server is gone, every widget move, its questions and the search; a page served from the kept copy
says so, and a page of a site updated since the reader's last visit says that."""

import functools
import http.server
import io
import json
import re
import threading
from pathlib import Path

import site_pages
from tools.site import offline

pytest_plugins = ["site_fixtures"]

#: Keeping a page's pictures (lesson 05: every state of three widgets, a few MB) on a loaded machine.
KEEP_MS = 180_000
SCREENSHOT = Path("/tmp/w53/offline_page.png")


class Server:
    """The site on a static web server on 127.0.0.1, which a test stops; ``build`` (when set) is served in place of
    the site's own build in its pages and its worker, as a site rebuilt since would be."""

    def __init__(self, folder, build):
        server = self

        class Handler(http.server.SimpleHTTPRequestHandler):
            def __init__(self, *args, **kwargs):
                super().__init__(*args, directory=str(folder), **kwargs)

            def log_message(self, *args):
                pass

            def send_head(self):
                path = Path(self.translate_path(self.path))
                if server.build is None or not (path.suffix == ".html" or path.name == offline.WORKER):
                    return super().send_head()
                data = path.read_bytes().replace(build.encode(), server.build.encode())
                self.send_response(200)
                self.send_header("Content-Type", self.guess_type(str(path)))
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                return io.BytesIO(data)

        self.build = None
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler))
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()
        self.origin = f"http://127.0.0.1:{self.httpd.server_address[1]}/"

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def site_build(site):
    return re.search(r'<meta name="course-build" content="([0-9a-f]{16})">', (site.out / "index.html").read_text())[1]


def test_every_page_and_the_worker_carry_the_build_and_the_worker_keeps_the_assets_and_the_pages_they_link(site):
    build = site_build(site)
    for page in site.out.glob("*.html"):
        assert f'<meta name="course-build" content="{build}">' in page.read_text(), page.name
    worker = (site.out / offline.WORKER).read_text()
    assert f'var BUILD = "{build}";' in worker
    shell = json.loads(re.search(r"var SHELL = (\[.*?\]);", worker)[1])
    assets = {f"assets/{p.name}" for p in (site.out / "assets").iterdir() if not p.name.endswith(".txt")}
    assert set(shell) == assets | {"index.html", "review.html"}
    assert {"assets/search-index.js", "assets/minisearch.js", "assets/site.js", "assets/ts-fsrs.js"} <= assets
    assert offline.build_id(site.out) != build  # the digest of the stamped files: a rebuild stamps it again


def _every_move(page, widget_index):
    """Move every control of a widget through all its values by keyboard (a slider from its first value to its last,
    a toggle round all its buttons, a check box on and off); returns the moves made. Each move waits until its
    picture has loaded (site_pages.Widget.wait_until_shown fails on one that does not)."""
    widget = site_pages.Widget(page, widget_index)
    moves = 0
    for ci, control in enumerate(widget.shown()["controls"]):
        if not widget.can_move(ci):
            continue
        kind = widget.focus(ci)
        if kind == "slider":
            keys = ["Home"] + ["ArrowRight"] * (control["max"] - control["min"])
        elif kind == "toggle":
            keys = ["ArrowRight"] * widget.control(ci).locator("input[type=radio]:not(:disabled)").count()
        else:
            keys = ["Space", "Space"]
        for key in keys:
            page.keyboard.press(key)
            widget.wait_until_shown()
            assert widget.shown()["complete"], (widget.id, ci, key)
            moves += 1
    return moves


def test_a_lesson_read_once_works_when_its_server_is_gone_every_move_its_questions_and_the_search(site, chromium):
    server = Server(site.out, site_build(site))
    context = chromium.new_context(viewport={"width": 1280, "height": 900})
    try:
        page = site_pages.open_page(context, server.origin + "05_encoder_block.html")
        page.wait_for_function("() => document.documentElement.dataset.offline === 'kept'", timeout=KEEP_MS)
        assert "keeps this page" in page.locator(".offline-status").text_content()
        server.stop()
        assert page.evaluate(f"() => fetch({server.origin + 'nothing-here'!r})"
                             ".then(() => 'served', () => 'failed')") == "failed"  # the server is gone
        page.reload(wait_until="load")
        note = page.locator(".site-note.kept-copy")
        note.wait_for(timeout=site_pages.WAIT_MS)
        assert "No network" in note.text_content()
        page.wait_for_function("() => [...document.querySelectorAll('section.explorer')].every("
                               "(b) => b.classList.contains('explorer-ready'))", timeout=site_pages.WAIT_MS)
        widgets = page.locator("section.explorer").count()
        moves = sum(_every_move(page, k) for k in range(widgets))
        assert moves >= 20, moves
        broken = page.evaluate("() => [...document.images].filter(i => !(i.complete && i.naturalWidth > 0))"
                               ".map(i => i.currentSrc)")
        assert not broken, broken
        form = page.locator("form.question").first
        form.locator("input").first.check()
        form.locator("button").click()
        assert form.locator(".question-verdict").text_content().startswith(("✓", "✗"))
        box = page.locator("#search")
        box.click()
        box.fill("keepdims")
        page.locator("#search-results li a").first.wait_for(timeout=site_pages.WAIT_MS)
        assert "match" in page.locator(".search-status").text_content()
        SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
        page.keyboard.press("Escape")
        page.evaluate("() => window.scrollTo(0, 0)")
        page.screenshot(path=str(SCREENSHOT))
        review = context.new_page()
        review.goto(server.origin + "review.html")  # kept when the worker was installed
        review.locator("#review p").first.wait_for(timeout=site_pages.WAIT_MS)
        assert "Nothing to review" in review.locator("#review").text_content() or \
            review.locator("#review form").count() == 0
        assert not [p for p in page.problems if "Failed to load resource" not in p], page.problems
    finally:
        context.close()
        if server.thread.is_alive():
            server.stop()


def test_a_page_of_a_site_updated_since_the_last_visit_says_so_and_a_first_visit_says_nothing(site, chromium):
    build = site_build(site)
    server = Server(site.out, build)
    context = chromium.new_context()
    try:
        page = site_pages.open_page(context, server.origin + "index.html")
        page.wait_for_function("() => document.documentElement.dataset.offline === 'kept'", timeout=KEEP_MS)
        assert page.locator(".site-note").count() == 0
        page.reload(wait_until="load")
        assert page.locator(".site-note").count() == 0  # the same build again
        server.build = "0123456789abcdef"
        page.reload(wait_until="load")
        note = page.locator(".site-note.updated")
        note.wait_for(timeout=site_pages.WAIT_MS)
        assert "This site was updated since you last read it" in note.text_content()
        assert page.evaluate("() => document.querySelector('meta[name=course-build]').content") == server.build
        page.reload(wait_until="load")
        assert page.locator(".site-note").count() == 0  # said once
    finally:
        context.close()
        server.stop()
