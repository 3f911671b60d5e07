"""The course's website as readers read it (issue 33): on a phone, by keyboard, in the dark, on paper, searched.

The site and Chromium are the session's (tests/site_fixtures.py, shared with
tests/test_site.py). Each page is opened once, from ``file://`` with the
network off, and read at 320, 375, 768 and 1280 px:

- the page never scrolls sideways: ``scrollWidth`` is the viewport's; every
  block that scrolls in its own box (code, an output, a table, a formula) takes
  the keyboard focus and shows a focus ring;
- at 375 px no text in a picture (a widget's, a plot's, a drawn one's) is
  below 11 CSS px: the smallest text drawn in it, in its own pixels, times the
  scale the page shows it at; a widget's controls are under its picture; and
  no text of the page itself (prose, code, a formula's scripts, a label) is
  below 11 CSS px, every fold opened;
- from the top of a lesson, a skip link leads past the code to its first
  questions, and under each widget with questions another to the next ones;
- axe-core finds no serious or critical violation at 375 px in the dark
  palette and at 1280 px in the light one: each layout and each palette, the
  palettes' colours being the same at every width (a test holds that).

Without a browser: every widget's every state is reachable from every other,
one control at a time, and a move never changes another control than the
widget itself does; each page has its contents, where to open the lesson, and
its student notebook to download. In Chromium again: the widgets the page
draws itself draw what the widget's figure draws; the search finds
"keepdims", "warm-up" and "mean pooling" in the lessons that say them; lesson
05 printed (its PDF, A4) has no code block cut at the page's edge, no
controls, each widget as it starts with its readout, and links' addresses.
"""

import collections
import io
import re
from pathlib import Path

import nbformat
import numpy as np
import PIL.Image
import pytest

import site_pages
from encoder_lib.plots import markup_words
from encoder_lib.widgets._states import StateSpace
from tools.course import lesson_names

pytest_plugins = ["site_fixtures"]

ROOT = Path(__file__).resolve().parent.parent
LESSONS = lesson_names()
PAGES = ["index.html", *(f"{lesson}.html" for lesson in LESSONS)]
NARROW = (320, 375, 768)
#: axe-core at each width it runs at, in one colour scheme: each scheme and each layout (a phone's, a desktop's) is
#: checked once, each run taking a second or more on a lesson's page; the colours do not depend on the width
#: (``test_the_colours_do_not_depend_on_the_width``), so a phone in the dark shows a desktop's dark colours.
AXE_SCHEMES = {375: "dark", 1280: "light"}
SMALLEST_TEXT = 11  # CSS px, at 375 px: a picture's (8 pt at the phone drawing's 100 dpi, shown 1:1: 11.1)
SMALLEST_PAGE_TEXT = 11  # CSS px, at 375 px: the page's own text (formulas' scripts too)

# Every piece of text the page shows (every fold opened) whose font is under the smallest size: its words, its
# element and its size. A MathML token (mi, mn, mo) is an element as any other: its computed size is its script's.
_JS_SMALL_TEXT = """(smallest) => {
    document.querySelectorAll('details').forEach((d) => { d.open = true; });
    const small = [];
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    while (walker.nextNode()) {
        const node = walker.currentNode, el = node.parentElement;
        if (!node.textContent.trim() || !el || el.closest('script, style, annotation, [hidden]')) continue;
        const range = document.createRange();
        range.selectNodeContents(node);
        if (range.getClientRects().length === 0) continue;  // not drawn
        const px = parseFloat(getComputedStyle(el).fontSize);
        if (px < smallest) small.push(el.tagName.toLowerCase() + ' ' + px.toFixed(1) + ' px: ' +
                                      node.textContent.trim().slice(0, 40));
    }
    return small;
}"""

# Every element that scrolls sideways in its own box, and whether it can take the focus; the page's width.
_JS_SCROLLING = """() => {
    const boxes = [...document.querySelectorAll('body *')].filter((el) => {
        const style = getComputedStyle(el);
        return el.clientWidth > 0 && el.scrollWidth > el.clientWidth + 1 && ['auto', 'scroll'].includes(style.overflowX);
    });
    return {width: document.documentElement.scrollWidth,
            unfocusable: boxes.filter((el) => el.tabIndex < 0).map((el) => el.outerHTML.slice(0, 120)),
            count: boxes.length};
}"""

# Each picture's smallest text in CSS px as the page shows it: the drawing's smallest text (its own px, kept by the
# build as data-text-px on the <img>, the phone drawing's <source> or the <svg>) times its shown width over its own.
_JS_TEXT = """() => [...document.querySelectorAll('img.explorer-picture, img.figure-picture, svg.explorer-drawing')]
    .filter((el) => el.getBoundingClientRect().width > 0).map((el) => {
        if (el.tagName.toLowerCase() === 'svg') {
            return {what: 'drawn ' + el.closest('section').id, px: Number(el.dataset.textPx),
                    scale: el.getBoundingClientRect().width / el.viewBox.baseVal.width};
        }
        const source = el.parentElement.querySelector('source');
        const phone = source && el.currentSrc.endsWith(source.getAttribute('srcset'));
        return {what: el.currentSrc.split('/').slice(-2).join('/'), px: Number((phone ? source : el).dataset.textPx),
                scale: el.getBoundingClientRect().width / el.naturalWidth};
    })"""

# Where a widget's picture and its controls are on the page.
_JS_PLACES = """() => [...document.querySelectorAll('section.explorer')]
    .filter((box) => box.querySelector('.explorer-controls'))
    .map((box) => ({picture: box.querySelector('.explorer-figure').getBoundingClientRect().bottom,
                    controls: box.querySelector('.explorer-controls').getBoundingClientRect().top}))"""


def axe_serious(page, where):
    from axe_playwright_python.sync_playwright import Axe

    # preload off: axe would read the style sheets again with XMLHttpRequest, which file:// refuses
    results = Axe().run(page, options={"resultTypes": ["violations"], "preload": False})
    return [f"{where}: {v['id']} ({v['impact']}): {v['help']} at {[n['target'] for n in v['nodes']][:4]}"
            for v in results.response["violations"] if v["impact"] in ("serious", "critical")]


@pytest.mark.parametrize("name", PAGES)
def test_the_page_fits_every_screen_reads_on_a_phone_and_passes_axe_light_and_dark(site, chromium, name):
    problems = []
    with site_pages.offline(chromium, viewport={"width": 320, "height": 800}) as context:
        page = site_pages.open_page(context, site.out / name)
        page.wait_for_function("() => [...document.querySelectorAll('section.explorer')].every("
                               "(b) => b.classList.contains('explorer-ready'))", timeout=site_pages.WAIT_MS)
        for width in (*NARROW, 1280):
            page.set_viewport_size({"width": width, "height": 800})
            page.wait_for_timeout(50)  # the boxes' ResizeObserver
            found = page.evaluate(_JS_SCROLLING)
            if width in NARROW and found["width"] != width:
                problems.append(f"{width} px: the page is {found['width']} px wide")
            problems += [f"{width} px: scrolls but takes no focus: {html}" for html in found["unfocusable"]]
            if width == 375:
                for picture in page.evaluate(_JS_TEXT):
                    if picture["px"] * min(picture["scale"], 1) < SMALLEST_TEXT:
                        problems.append(f"375 px: {picture['what']}: smallest text {picture['px']} px shown at "
                                        f"{picture['scale']:.2f}, {picture['px'] * picture['scale']:.1f} CSS px")
                problems += [f"375 px: a widget's controls are not under its picture: {p}"
                             for p in page.evaluate(_JS_PLACES) if p["controls"] < p["picture"]]
                if found["count"]:  # the focus ring of a box that scrolls
                    ring = page.evaluate("""() => { const box = [...document.querySelectorAll('.scroll')]
                        .find((el) => el.tabIndex >= 0); box.focus();
                        const style = getComputedStyle(box); return [style.outlineStyle, style.outlineWidth]; }""")
                    if ring[0] == "none" or float(ring[1].rstrip("px")) < 2:
                        problems.append(f"375 px: a box that scrolls shows no focus ring when focused: {ring}")
            if width in AXE_SCHEMES:
                page.emulate_media(color_scheme=AXE_SCHEMES[width])
                problems += axe_serious(page, f"{width} px, {AXE_SCHEMES[width]}")
                page.emulate_media(color_scheme="light")
        problems += page.problems
    assert not problems, f"{name}:\n" + "\n".join(problems)


#: What may carry a colour in a style sheet: the properties (shorthands such as ``border`` and ``outline`` too) and
#: the values (a hex colour, rgb(), hsl(), a custom property).
COLOUR_PROPERTIES = r"(color|background|border(-(top|right|bottom|left))?(-color)?$|outline|fill|stroke|\w*-shadow)"
COLOUR_VALUE = r"#[0-9a-fA-F]{3,8}\b|\b(rgb|rgba|hsl|hsla)\(|var\(--"


def test_the_colours_do_not_depend_on_the_width():
    """The style sheet's colours are set for a colour scheme, never for a width: what axe-core finds of the dark
    scheme's colours at 375 px holds at every width (``AXE_SCHEMES``)."""
    css = re.sub(r"/\*.*?\*/", "", (ROOT / "tools" / "site" / "static" / "site.css").read_text(), flags=re.S)
    widths = [m.start() for m in re.finditer(r"@media[^{]*(?:max|min)-width", css)]
    assert widths, "the style sheet has no layout for a phone"
    for start in widths:
        depth, end = 0, css.index("{", start)
        for end in range(end, len(css)):
            depth += {"{": 1, "}": -1}.get(css[end], 0)
            if depth == 0:
                break
        block = css[css.index("{", start) + 1:end]
        for prop, value in re.findall(r"([\w-]+)\s*:\s*([^;{}]*)", block):
            assert not (prop.startswith("--") or re.match(COLOUR_PROPERTIES, prop) or re.search(COLOUR_VALUE, value)), \
                f"a width's rules set a colour: {prop}: {value}"
    assert set(AXE_SCHEMES.values()) == {"light", "dark"}


# ------------------------------------------------------------------ widgets whole

def test_every_widget_state_is_reachable_and_a_move_changes_only_the_control_moved(site):
    """site.js's lookup, done here: from every state, each control to each value it offers leads where the widget
    itself goes (StateSpace.move), which for independent controls changes that control alone; and from the
    start every state is reached, and the start from every state."""
    for widget in site.widgets:
        data, space = widget.data, widget.grid.space
        assert len(data["keys"]) == len(space.states), f"{widget.widget_id}: the page keeps only some states"
        index = {key: i for i, key in enumerate(data["keys"])}
        position = {n: {v: k for k, v in enumerate(space.values[n])} for n in space.names}
        key_of = {i: tuple(space.values[n][int(v)] for n, v in zip(space.names, key.split(",")))
                  for i, key in enumerate(data["keys"]) if key}
        moves = collections.defaultdict(set)
        for i, key in enumerate(data["keys"]):
            if not key:
                continue
            at, state = [int(v) for v in key.split(",")], key_of[i]
            for ci, name in enumerate(space.names):
                for value in space.offered(state)[name]:
                    vi = position[name][value]
                    candidate = ",".join(str(vi if j == ci else v) for j, v in enumerate(at))
                    target = data["redirect"].get(f"{ci}:{candidate}", index.get(candidate))
                    assert key_of[target] == space.move(state, name, value), \
                        f"{widget.widget_id}: from {state}, {name} -> {value} goes elsewhere than the widget goes"
                    if not space.linked:
                        changed = [n for n, a, b in zip(space.names, state, key_of[target]) if a != b]
                        assert changed in ([], [name]), f"{widget.widget_id}: moving {name} moved {changed}"
                    moves[i].add(target)
        if not moves:
            continue
        reached, todo = {data["start"]}, [data["start"]]
        while todo:
            for j in moves[todo.pop()] - reached:
                reached.add(j)
                todo.append(j)
        back = {data["start"]}
        changed = True
        while changed:
            before = len(back)
            back |= {i for i, targets in moves.items() if targets & back}
            changed = len(back) != before
        assert reached == set(range(len(data["keys"]))) == back, f"{widget.widget_id}: states cut off"


def test_lesson_08s_head_widget_keeps_all_1008_states(site):
    [widget] = [w for w in site.widgets if w.grid.name == "AttentionHeadExplorer"]
    assert len(widget.data["keys"]) == len(widget.grid.states) == 6 * 12 * 14 and widget.grid.drawn


def _go_to(page, box, key):
    """Move a widget's controls, one by one as a reader would, to the page's state ``key``; returns the state shown."""
    return page.evaluate("""([box, key]) => {
        key.split(',').map(Number).forEach((vi, ci) => {
            const slider = box.querySelector(`input[type=range][data-control="${ci}"]`);
            if (slider) { slider.value = vi; slider.dispatchEvent(new Event('input')); return; }
            const radio = box.querySelector(`input[type=radio][data-control="${ci}"][value="${vi}"]`);
            if (radio) { radio.checked = true; radio.dispatchEvent(new Event('change')); return; }
            const check = box.querySelector(`input[type=checkbox][data-control="${ci}"]`);
            const labels = JSON.parse(box.querySelector('script.explorer-data').textContent).controls[ci].labels;
            check.checked = labels[vi] === 'on'; check.dispatchEvent(new Event('change'));
        });
        return box.dataset.state; }""", [box, key])


def _figure_texts(figure):
    """The words matplotlib draws in ``figure``: its visible texts, a tick's label only when the axis draws that
    tick (``Axis._update_ticks``, matplotlib's own choice: the ticks within the axis's limits)."""
    from matplotlib.axis import Axis, Tick
    from matplotlib.text import Text

    words = []

    def walk(artist, drawn):
        for child in artist.get_children():
            if isinstance(child, Axis):
                walk(child, {id(tick) for tick in child._update_ticks()})
                continue
            if isinstance(child, Tick) and drawn is not None and id(child) not in drawn:
                continue
            if isinstance(child, Text) and child.get_visible() and child.get_text().strip():
                words.append(child.get_text())
            walk(child, drawn)

    walk(figure, None)
    return sorted(words)


def test_a_drawn_widget_draws_what_its_figure_draws_for_a_sample_of_states(site, chromium):
    """For lessons 01 and 08's attention widgets, drawn by site.js from their numbers: in Chromium at the wide
    layout, the SVG's heatmap cells have the colours of the widget's PNG at their centres, its bars' tops are
    where the PNG's are, and its words are the figure's."""
    import random

    rng = random.Random(33)
    drawn = [w for w in site.widgets if w.grid.drawn]
    assert {w.grid.name for w in drawn} == {"AttentionExplorer", "AttentionHeadExplorer"}
    with site_pages.offline(chromium) as context:
        for widget in drawn:
            page = site_pages.open_page(context, site.out / f"{widget.lesson}.html")
            box = page.locator(f"section#{widget.widget_id}")
            box.scroll_into_view_if_needed()
            explorer = site.runs[widget.lesson].fresh(widget.cell_id)[int(widget.widget_id.rsplit("-", 1)[1])]
            space = StateSpace(explorer)
            layout = widget.data["drawing"]["layouts"]["wide"]
            for i in [widget.data["start"], *rng.sample(range(len(widget.data["keys"])), 3)]:
                key = widget.data["keys"][i]
                assert _go_to(page, box.element_handle(), key) == key
                values = dict(zip(space.names, (space.values[n][int(v)] for n, v in zip(space.names, key.split(",")))))
                frame = explorer.frame(values)
                where = f"{widget.widget_id} at {values}"
                svg = box.locator("svg.explorer-drawing")
                assert svg.get_attribute("aria-label") == frame.alt, where
                assert " ".join(box.locator(".explorer-readout").text_content().split()) == markup_words(frame.readout)
                shown = svg.evaluate("(svg) => [...svg.querySelectorAll('text')].map((t) => t.textContent)")
                assert sorted(shown) == _figure_texts(explorer.figure), f"{where}: the words differ"
                width, height = layout["size"]
                place = svg.bounding_box()
                assert place["width"] == pytest.approx(width, abs=0.5), where
                shot = page.screenshot(clip={"x": place["x"], "y": place["y"], "width": width, "height": height})
                ours = np.asarray(PIL.Image.open(io.BytesIO(shot)).convert("RGB")).astype(int)
                theirs = np.asarray(PIL.Image.open(io.BytesIO(frame.png)).convert("RGB")).astype(int)
                assert ours.shape[:2] == theirs.shape[:2] == (height, width), where
                _compare_cells_and_bars(ours, theirs, layout, widget.data["drawing"]["frames"][i], where)
            page.close()


def _compare_cells_and_bars(ours, theirs, layout, frame, where):
    for panel, state in zip(layout["panels"], frame):
        if not state:
            continue
        x0, y0, w, h = panel["box"]
        (xl0, xl1), (yl0, yl1) = panel["xlim"], panel["ylim"]

        def px(x, y):
            return int(round(x0 + w * (x - xl0) / (xl1 - xl0))), int(round(y0 + h * (yl1 - y) / (yl1 - yl0)))

        if "image" in state:
            e = panel["extent"]
            rows = int(round(abs(e[3] - e[2])))
            cols = int(round(e[1] - e[0]))
            assert panel["origin"] == "upper", where  # imshow's default: the array's first row at the top
            for r in range(rows):
                for c in range(cols):
                    x, y = px(e[0] + c + 0.5, min(e[2], e[3]) + r + 0.5)
                    assert np.abs(ours[y, x] - theirs[y, x]).max() <= 8, \
                        f"{where}: cell ({r}, {c}) is {ours[y, x]} on the page, {theirs[y, x]} in the widget"
        if "bars" in state:
            for k, height in enumerate(state["bars"]):
                if height < 0.05:
                    continue
                x, _ = px(k, 0)
                top = {name: _first_dark_from_top(image[:, x], y0, y0 + h) for name, image in
                       (("page", ours), ("widget", theirs))}
                assert abs(top["page"] - top["widget"]) <= 2, f"{where}: bar {k}'s top: {top}"


def _first_dark_from_top(column, start, end):
    """The first row, from ``start`` down, whose pixel is clearly not white (a bar's edge or colour)."""
    for y in range(int(start) + 2, int(end)):
        if column[y].sum() < 600:
            return y
    return None


# ------------------------------------------------------------------ contents, where to open it

def test_each_page_lists_its_sections_and_each_lesson_where_to_open_it(site):
    for page in [site.index, *site.pages]:
        text = page.path.read_text()
        toc = re.search(r'<nav class="toc" aria-label="Contents">(.*?)</nav>', text, re.S)
        assert toc, f"{page.path.name} has no contents"
        h2 = re.findall(r'<h2 id="([^"]+)"', text)
        assert h2 and all(f'href="#{anchor}"' in toc.group(1) for anchor in h2), page.path.name
        if page is site.index:
            continue
        name = page.name
        download = re.search(r'<a class="download-notebook" href="([^"]+)" download>', text)
        notebook = nbformat.read(site.out / download.group(1), as_version=4)
        assert [c.source for c in notebook.cells] == [c.source for c in site.students[name].cells], name
        assert "BEGIN SOLUTION" not in download.group(0) + (site.out / download.group(1)).read_text()
        # the course's own README names OWNER/REPO: no Binder or Colab link, and the page says why (test_site.py: a
        # course that names its repository links both; test_colab.py: a fork's Colab link)
        assert 'class="binder-link"' not in text and 'class="colab-link"' not in text, name
        assert "Binder and Google Colab: no link" in text and "OWNER/REPO" in text, name
        # the notebook's first cell installs the course's library where it is missing; the page leaves it off
        assert notebook.cells[0].id == "install-course" and 'data-cell="install-course"' not in text, name


# ------------------------------------------------------------------ search

SEARCHES = {"keepdims": ("keepdims",), "warm-up": ("warm-up", "warmup", "warm up"), "mean pooling": ("mean pooling",)}


def lessons_saying(site, words):
    """The lessons whose page says one of ``words``: in their student version's text or code (a solution's code,
    which the page leaves out, does not count)."""
    found = []
    for lesson in LESSONS:
        text = " ".join(c.source for c in site.students[lesson].cells).lower()
        if any(w in text for w in words):
            found.append(lesson)
    return found


def test_the_search_finds_keepdims_warm_up_and_mean_pooling_where_the_lessons_say_them(site, chromium):
    with site_pages.offline(chromium) as context:
        page = site_pages.open_page(context, site.out / "index.html")
        box = page.locator("form.search input")
        for query, words in SEARCHES.items():
            expected = lessons_saying(site, words)
            assert expected, query
            box.fill(query)
            page.wait_for_function("(q) => document.querySelector('.search-status').textContent.includes(q)",
                                   arg=query, timeout=site_pages.WAIT_MS)
            hrefs = page.locator("#search-results li a").evaluate_all("(a) => a.map((link) => link.getAttribute('href'))")
            found = [href.split("#")[0][:-len(".html")] for href in hrefs]
            assert found and found[0] in expected, f"{query!r}: first found {found[:3]}, said in {expected}"
            assert set(expected) <= set(found), f"{query!r}: found in {sorted(set(found))}, said in {expected}"
        page.locator("#search-results li a").first.click()
        page.wait_for_load_state("load")
        assert page.url.startswith((site.out / found[0]).as_uri()), page.url
        assert not [u for u in context.requests if not u.startswith("file:")]
        assert not page.problems, page.problems


# ------------------------------------------------------------------ print

A4_MARGIN_MM = 15
A4_TEXT_PX = round((210 - 2 * A4_MARGIN_MM) / 25.4 * 96)  # the width Chromium lays a printed A4 page out in


def test_lesson_05_printed_has_no_code_cut_at_the_edge_no_controls_and_its_widgets_as_they_start(site, chromium):
    with site_pages.offline(chromium, viewport={"width": 1280, "height": 900}) as context:
        page = site_pages.open_page(context, site.out / "05_encoder_block.html")
        widget = site_pages.Widget(page, 0)
        page.wait_for_selector("section.explorer.explorer-ready", timeout=site_pages.WAIT_MS)
        start = widget.shown()
        widget.move_with_keyboard(0)  # a reader moved it; on paper it is as it starts
        pdf = page.pdf(format="A4", margin={side: f"{A4_MARGIN_MM}mm" for side in ("top", "right", "bottom", "left")})
        assert pdf.startswith(b"%PDF") and len(re.findall(rb"/Type\s*/Page\b", pdf)) >= 5
        page.emulate_media(media="print")
        page.set_viewport_size({"width": A4_TEXT_PX, "height": 1100})
        cut = page.evaluate("""(width) => [...document.querySelectorAll('pre')].filter((pre) =>
            pre.scrollWidth > pre.clientWidth + 1 || pre.getBoundingClientRect().right > width + 1)
            .map((pre) => pre.textContent.slice(0, 60))""", A4_TEXT_PX)
        assert not cut, f"code blocks cut at the page's edge: {cut[:5]}"
        hidden = page.evaluate("""() => [...document.querySelectorAll(
            '.explorer-controls, .explorer-figure, form.search, nav.toc, .open-lesson')]
            .filter((el) => el.getClientRects().length > 0).map((el) => el.className)""")
        assert not hidden, f"printed, yet controls: {hidden}"
        printed = widget.box.locator(".explorer-print")
        assert printed.is_visible() and printed.locator("img").get_attribute("src") == start["src"]
        assert start["readout"].split()[:6] == printed.locator("p").first.text_content().split()[:6]
        after = page.evaluate("""() => [...document.querySelectorAll('main a[href^="http"]')].map((a) =>
            [a.getAttribute('href'), getComputedStyle(a, '::after').content])""")
        assert all(href in content for href, content in after), f"a link printed without its address: {after}"
        assert not page.problems, page.problems


# ------------------------------------------------------------------ the course's solutions

def test_an_exercise_s_solution_opens_from_the_keyboard_when_asked_and_fetches_nothing(site, chromium):
    with site_pages.offline(chromium) as context:
        page = site_pages.open_page(context, site.out / "01_attention.html")
        details = page.locator("details.solution").first
        assert details.get_attribute("open") is None and not details.locator("pre").is_visible()
        details.locator("summary").focus()
        page.keyboard.press("Enter")
        page.wait_for_function("() => document.querySelector('details.solution').open", timeout=site_pages.WAIT_MS)
        assert "shifted = x - x.max(axis=axis, keepdims=True)" in details.locator("pre").inner_text()
        page.keyboard.press("Enter")
        page.wait_for_function("() => !document.querySelector('details.solution').open", timeout=site_pages.WAIT_MS)
        assert not [u for u in context.requests if not u.startswith("file:")]
        assert not page.problems, page.problems


@pytest.mark.parametrize("name", [*PAGES, "review.html"])
def test_no_text_of_a_page_is_under_11_px_on_a_phone(site, chromium, name):
    with site_pages.offline(chromium, viewport={"width": 375, "height": 800}) as context:
        page = site_pages.open_page(context, site.out / name)
        small = page.evaluate(_JS_SMALL_TEXT, SMALLEST_PAGE_TEXT)
        assert not small, f"{name} at 375 px: {len(small)} texts under {SMALLEST_PAGE_TEXT} px: {small[:12]}"


def _tabs_to_first_question(page, most=12):
    """Tab presses from the top of the page (Enter on a skip link to the questions, when the focus is on one)
    until the focus is in a question's form; None if it is not there after ``most`` presses."""
    for presses in range(1, most + 1):
        page.keyboard.press("Tab")
        focused = page.evaluate("() => { const a = document.activeElement; return {question: Boolean("
                                "a.closest('form.question')), skip: a.matches('a.skip') && "
                                "a.getAttribute('href').startsWith('#questions-')}; }")
        if focused["question"]:
            return presses
        if focused["skip"]:
            page.keyboard.press("Enter")
    return None


@pytest.mark.parametrize("lesson", [lesson for lesson in LESSONS if lesson != "00_start_here"])
def test_a_skip_link_leads_past_the_code_to_the_first_questions_and_under_each_widget_to_the_next(site, chromium,
                                                                                                   lesson):
    with site_pages.offline(chromium, viewport={"width": 375, "height": 800}) as context:
        page = site_pages.open_page(context, site.out / f"{lesson}.html")
        blocks = page.locator("div.questions")
        if blocks.count() == 0:
            return
        presses = _tabs_to_first_question(page)  # skip to the lesson, skip to the questions (Enter), the review
        assert presses is not None and presses <= 4, f"{lesson}: {presses} Tab presses to the first question"  # link
        for k in range(blocks.count() - 1):
            following = blocks.nth(k + 1).get_attribute("id")
            link = page.locator(f'.skip-next a[href="#{following}"]')
            assert link.count() == 1, f"{lesson}: no skip link to {following}"
            link.focus()
            assert link.is_visible(), "a skip link is seen when it has the focus"
            page.keyboard.press("Enter")
            page.keyboard.press("Tab")
            assert page.evaluate("(id) => document.activeElement.closest('div.questions')?.id", following) == \
                following, f"{lesson}: Enter on the skip link, then Tab, did not reach {following}"
