"""The course as a website (issue 22): `make site` (tools/site) builds it; real Chromium reads it offline.

The site is built once per test session, into a temporary folder, by the same
``tools.site.build`` that `make site` runs (about a minute: it runs every
teachers' notebook and draws every widget state it keeps; tests/site_fixtures.py).
Then, without a browser:

- every lesson has a page, the index links to each, and every widget cell of
  every notebook is a widget on its page;
- the pages' prose is the notebooks' markdown word for word (nothing
  dropped, nothing added), every formula a ``<math>`` holding its LaTeX;
- no hidden test appears in any file under the site, and a solution only in
  the closed "Show the course's solution" disclosure under its exercise (not
  in the search index; none at all when built with solutions off); the
  exercises' cells are the student version's, without outputs;
- the stored pictures, alt texts and readouts of a sample of states are what
  a fresh widget (the cell run again) draws for them; every move the page can
  make leads to a state it keeps; a reduced grid keeps every value of each
  control and the question's combinations, and says so under the widget;
- "Run this lesson" goes to the Binder badge's address for the lesson, and
  every page links back to the repository; nothing on a page points outside
  the site.

In Chromium, from ``file://`` with the network off: every page opens with no
request leaving the site and no console error; every control of every widget,
moved with the mouse and with the keyboard, shows the picture, alt text and
readout that a fresh widget draws for the state the controls then show. One page is also read from a
local static web server. Without Playwright or Chromium the browser tests
skip, with the reason; in CI (``CI`` set) they fail. How the pages read on a phone, by keyboard, in the
dark and on paper (axe-core among it), and the search: tests/test_site_reading.py.

Publishing (`make publish-site`) is checked on a clone, with a small site.
"""

import functools
import importlib
import html
import http.server
import os
import random
import re
import subprocess
import sys
import threading
from html.parser import HTMLParser
from pathlib import Path

import nbformat
import numpy as np
import pytest

import site_pages
from encoder_lib.plots import markup_words
from encoder_lib.widgets._states import StateSpace
from tools.course import lesson_names

ROOT = Path(__file__).resolve().parent.parent
LESSONS = lesson_names()
build_module = importlib.import_module("tools.site.build")  # the module (tools.site's "build" is its function)
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
BADGE = re.compile(r"\]\((https://mybinder\.org/v2/gh/([^/\s]+)/([^/\s]+)/([^?\s]+)\?urlpath=lab/tree/([^\s)]+))\)")
SAMPLE = 5  # stored states per widget compared with a fresh drawing, besides the start


# the site, built once per session: tests/site_fixtures.py (shared with test_site_reading.py); Chromium: conftest.py
pytest_plugins = ["site_fixtures"]


def teacher(lesson):
    return nbformat.read(ROOT / "notebooks" / lesson / f"{lesson}.ipynb", as_version=4)


def widget_cells(notebook):
    return [cell.id for cell in notebook.cells if cell.cell_type == "code"
            and any(WIDGET_MIME in out.get("data", {}) for out in cell.get("outputs", []))]


class Page(HTMLParser):
    """A page's HTML read back: ``cells[id]`` the words of each markdown cell (formulas and the answers'
    summary line left out), ``formulas[id]`` their LaTeX annotations, ``code[id]`` each code cell's code and
    ``outputs[id]`` the text of its outputs, every ``attrs`` of the tags named in ``TAGS``, ``text``."""

    TAGS = ("a", "img", "script", "link", "section", "details", "input", "output", "p", "source")
    VOID = {"img", "input", "br", "hr", "meta", "link", "source", "col", "wbr"}

    def __init__(self, text):
        super().__init__(convert_charrefs=True)
        self.cells, self.formulas, self.code, self.outputs, self.tags = {}, {}, {}, {}, []
        self.stack, self.text = [], []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag in self.TAGS:
            self.tags.append((tag, attrs))
        classes = (attrs.get("class") or "").split()
        frame = {"tag": tag, "cell": None, "skip": False, "annotation": False, "code": None, "outputs": None}
        if "cell" in classes and attrs.get("data-cell"):
            frame["cell"] = ("markdown" if "markdown" in classes else "code", attrs["data-cell"])
            if frame["cell"][0] == "markdown":
                self.cells[attrs["data-cell"]], self.formulas[attrs["data-cell"]] = [], []
            else:
                self.code.setdefault(attrs["data-cell"], ""), self.outputs.setdefault(attrs["data-cell"], "")
        inside = self._cell()
        if tag in ("math", "summary") and inside:
            frame["skip"] = tag == "math" or "answer-summary" in classes
        if tag == "annotation" and attrs.get("encoding") == "application/x-tex":
            frame["annotation"] = True
        if tag == "pre" and inside and inside[0] == "code" and "highlight" in classes and not self._in("outputs"):
            frame["code"] = inside[1]
        if "outputs" in classes and inside:
            frame["outputs"] = inside[1]
        if tag not in self.VOID:
            self.stack.append(frame)

    def handle_startendtag(self, tag, attrs):
        if tag in self.TAGS:
            self.tags.append((tag, dict(attrs)))

    def handle_endtag(self, tag):
        while self.stack:
            if self.stack.pop()["tag"] == tag:
                break

    def _cell(self):
        return next((f["cell"] for f in reversed(self.stack) if f["cell"]), None)

    def _in(self, key):
        return next((f[key] for f in reversed(self.stack) if f[key]), None)

    def handle_data(self, data):
        self.text.append(data)
        cell = self._cell()
        if not cell:
            return
        if cell[0] == "markdown":
            if any(f["annotation"] for f in self.stack):
                self.formulas[cell[1]].append(data.strip())
            elif not any(f["skip"] for f in self.stack):
                self.cells[cell[1]].append(data)
        elif self._in("code"):
            self.code[cell[1]] += data
        elif self._in("outputs"):
            self.outputs[cell[1]] += data


@functools.lru_cache(maxsize=None)
def read_page(path):
    return Page(Path(path).read_text())


def words(text):
    return [w.strip("_") for w in re.findall(r"\w+", text) if w.strip("_")]


def source_words(markdown):
    """The words of a markdown cell as written: formulas, link addresses and list numbers left out."""
    text = re.sub(r"\$\$.*?\$\$", " ", markdown, flags=re.S)
    text = re.sub(r"\$[^$\n]+\$", " ", text)
    text = re.sub(r"\]\([^)]*\)", "]", text)
    text = re.sub(r"^\s*\d+\.\s", " ", text, flags=re.M)
    return words(html.unescape(text))


def source_formulas(markdown):
    return [(a or b).strip() for a, b in re.findall(r"\$\$(.*?)\$\$|\$([^$\n]+)\$", markdown, flags=re.S)]


# ------------------------------------------------------------------ lessons, prose, formulas

def test_every_lesson_has_a_page_and_the_index_links_to_each(site):
    assert [page.name for page in site.pages] == LESSONS
    index = read_page(site.index.path)
    links = {attrs.get("href") for tag, attrs in index.tags if tag == "a"}
    for lesson in LESSONS:
        assert (site.out / f"{lesson}.html").is_file(), lesson
        assert f"{lesson}.html" in links, f"the index does not link to {lesson}"
    # what the README's table says each lesson answers is on the index
    readme = (ROOT / "README.md").read_text()
    index_words = words("".join(index.text))
    for lesson in LESSONS:
        row = re.search(rf"^\| `{lesson}` \|(.*)\|\s*$", readme, re.M).group(1)
        assert " ".join(words(re.sub(r"`", "", row))) in " ".join(index_words), lesson


def test_every_widget_cell_of_every_notebook_is_a_widget_on_its_page(site):
    for lesson in LESSONS:
        sections = [attrs for tag, attrs in read_page(site.out / f"{lesson}.html").tags if tag == "section"
                    and "explorer" in (attrs.get("class") or "")]
        assert sorted({s["data-cell"] for s in sections}) == sorted(widget_cells(teacher(lesson))), lesson
        assert len(sections) == len([w for w in site.widgets if w.lesson == lesson])


def test_the_pages_prose_is_the_notebooks_markdown_word_for_word(site):
    for lesson in LESSONS:
        page = read_page(site.out / f"{lesson}.html")
        markdown = [c for c in teacher(lesson).cells if c.cell_type == "markdown"
                    and not c.metadata.get("nbgrader", {}).get("solution")]
        assert list(page.cells) == [c.id for c in markdown], f"{lesson}: markdown cells missing or out of order"
        hand_in = {teacher(lesson).cells[k].id for k, part in build_module.hand_in_cells(teacher(lesson)).items()
                   if part == "heading"}
        for cell in markdown:
            expected = cell.source if cell.id not in hand_in else (  # a page hands nothing in, and says so
                cell.source.splitlines()[0] + "\n\n" + build_module.HAND_IN_ON_THE_SITE)
            assert words("".join(page.cells[cell.id])) == source_words(expected), f"{lesson}, cell {cell.id}"


def test_a_page_s_hand_in_section_says_the_page_hands_nothing_in_and_never_to_press_ctrl_s(site):
    for lesson in LESSONS[1:]:
        text = (site.out / f"{lesson}.html").read_text()
        assert "Ctrl+S" not in text and "save it first" not in text, lesson
        assert text.count(build_module.HAND_IN_LABEL) == 1 and "This page hands nothing in." in text, lesson
        assert "not on a course hub with the hand-in service" not in text, lesson  # the notebook's output, not shown


def test_every_formula_is_mathml_that_keeps_its_latex(site):
    count = 0
    for lesson in LESSONS:
        page = read_page(site.out / f"{lesson}.html")
        for cell in teacher(lesson).cells:
            if cell.cell_type == "markdown":
                assert page.formulas[cell.id] == source_formulas(cell.source), f"{lesson}, cell {cell.id}"
                count += len(page.formulas[cell.id])
    assert count >= 10  # the lessons have formulas: the check above saw them


def test_try_it_answers_fold_into_a_details_element(tmp_path):
    from tools.site.build import lesson_body
    from tools.site.pages import CourseLinks

    notebook = nbformat.v4.new_notebook()
    question = nbformat.v4.new_markdown_cell("## Try it\n\n**Question: which key wins?**")
    answer = nbformat.v4.new_markdown_cell("**Answer.** Key 2, with $w = 0.9$.")
    answer.metadata["tags"] = ["try-it-answer"]
    notebook.cells = [question, answer]
    body = lesson_body("01_x", notebook, notebook, {}, CourseLinks("o", "r", "main", "student/"), ["01_x"],
                       tmp_path, "01_x/")
    page = Page(body)
    assert f'<details class="cell markdown try-it-answer" data-cell="{answer.id}">' in body
    assert '<div class="cell markdown" data-cell="' + question.id in body  # the question stays open
    assert words("".join(page.cells[answer.id])) == source_words(answer.source)
    assert page.formulas[answer.id] == ["w = 0.9"]


def test_the_notebooks_try_it_answers_are_folded_on_the_site(site):
    for lesson in LESSONS:
        tagged = [c.id for c in teacher(lesson).cells if "try-it-answer" in c.metadata.get("tags", [])]
        folded = [attrs["data-cell"] for tag, attrs in read_page(site.out / f"{lesson}.html").tags
                  if tag == "details" and "try-it-answer" in attrs.get("class", "")]
        assert folded == tagged, lesson


# ------------------------------------------------------------------ exercises

def solution_lines(notebook):
    """The lines of every solution region (### BEGIN SOLUTION ... ### END SOLUTION) and hidden test."""
    found = []
    for cell in notebook.cells:
        for region in re.findall(r"BEGIN (?:SOLUTION|HIDDEN TESTS)[^\n]*\n(.*?)\n[^\n]*END (?:SOLUTION|HIDDEN TESTS)",
                                 cell.source, flags=re.S):
            found += [line.strip() for line in region.splitlines() if len(line.strip()) >= 12]
    return found


SOLUTION = re.compile(r'<details class="solution".*?</details>', re.S)


def site_texts(site):
    """Every file under the site as text: a page's text content and its raw HTML, a script or style sheet; a page's
    folded solutions (which a learner opens by asking) left out."""
    for path in sorted(site.out.rglob("*")):
        if path.suffix == ".html":
            raw = SOLUTION.sub("", path.read_text())
            yield path, "".join(Page(raw).text) + "\n" + raw
        elif path.suffix in (".js", ".css", ".json", ".txt"):
            yield path, path.read_text()


def test_no_solution_and_no_hidden_test_appears_under_the_site_but_in_its_folded_disclosure(site):
    leaks = []
    texts = list(site_texts(site))
    for lesson in LESSONS:
        learner = site.students[lesson]
        visible = "\n".join(cell.source for cell in learner.cells)  # what the lesson shows learners anyway
        lines = [line for line in solution_lines(teacher(lesson)) if line not in visible]
        assert lines or lesson == "00_start_here", f"{lesson}: no solution found to look for"
        for path, text in texts:
            leaks += [f"{path.name}: {line!r} ({lesson})" for line in lines if line in text]
    for path, text in texts:
        leaks += [f"{path.name}: {marker}" for marker in ("BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS")
                  if marker in text]
    assert not leaks, "\n".join(leaks[:20])


def test_each_exercise_is_followed_by_the_course_s_solution_folded_and_nothing_else_is(site):
    """A closed ``<details>`` (keyboard-operable, nothing fetched) right after each answer cell holds the course's
    solution as tools/solutions.py writes it into the library: the whole function, no marker line."""
    from encoder_lib.grading import EXERCISES
    from encoder_lib.grading.solution_step import course_solutions

    shown = {}
    for lesson in LESSONS:
        text = (site.out / f"{lesson}.html").read_text()
        for answer_id, body in re.findall(r'<div class="cell code exercise" data-cell="([^"]+)">.*?</div></div>\n'
                                          r'<details class="solution" data-cell="\1">(.*?)</details>', text, re.S):
            page = Page(f'<div class="cell code" data-cell="x">{body}</div>')
            assert body.startswith('<summary class="solution-summary">Show the course\'s solution</summary>')
            shown[answer_id] = html.unescape(re.sub(r"<[^>]+>", "", body.split("</summary>", 1)[1]))
            assert "open" not in body.split(">", 1)[0] and not page.tags
        assert len(re.findall(r'<details class="solution"', text)) == len(
            [c for c in teacher(lesson).cells if c.metadata.get("nbgrader", {}).get("grade_id", "").endswith("_answer")])
    library = course_solutions()
    assert sorted(name.removesuffix("_answer") for name in (
        c.metadata["nbgrader"]["grade_id"] for lesson in LESSONS for c in teacher(lesson).cells
        if c.id in shown)) == sorted(EXERCISES)
    for lesson in LESSONS:
        for cell in teacher(lesson).cells:
            if cell.id in shown:
                name = cell.metadata["nbgrader"]["grade_id"].removesuffix("_answer")
                assert shown[cell.id].strip() == library[name]["source"].strip(), name


def test_a_site_built_with_solutions_off_shows_none(tmp_path):
    from tools.site import __main__ as command
    from tools.site.build import lesson_body
    from tools.site.pages import CourseLinks

    answer = next(c for c in teacher("03_feed_forward").cells
                  if c.metadata.get("nbgrader", {}).get("grade_id") == "gelu_answer")
    stub = nbformat.from_dict({**answer, "source": "def gelu(x):\n    raise NotImplementedError()"})
    teachers, learners = nbformat.v4.new_notebook(), nbformat.v4.new_notebook()
    teachers.cells, learners.cells = [nbformat.v4.new_markdown_cell("# GELU"), answer], [stub]
    links = CourseLinks("o", "r", "main", "student/")
    on = lesson_body("03_x", learners, teachers, {}, links, ["03_x"], tmp_path, "03_x/")
    off = lesson_body("03_x", learners, teachers, {}, links, ["03_x"], tmp_path, "03_x/", solutions=False)
    assert on.count('<details class="solution"') == 1 and "erf" in SOLUTION.search(on).group(0)
    assert '<details class="solution"' not in off and "erf" not in off and "SOLUTION" not in on + off
    with pytest.raises(SystemExit):
        command.main(["--solutions", "maybe"])
    dry = subprocess.run(["make", "-C", str(ROOT), "-n", "site", "SITE_SOLUTIONS=off"], capture_output=True,
                         text=True, check=True).stdout
    assert "-m tools.site --solutions off" in dry


def test_exercise_cells_are_the_student_versions_without_outputs(site):
    checked = 0
    for lesson in LESSONS:
        page = read_page(site.out / f"{lesson}.html")
        for cell in site.students[lesson].cells:
            if cell.cell_type == "code" and cell.metadata.get("nbgrader"):
                assert page.code[cell.id].strip() == cell.source.strip(), f"{lesson}, cell {cell.id}"
                assert page.outputs[cell.id].strip() == "", f"{lesson}, cell {cell.id} shows the teacher's output"
                checked += 1
        stubs = [c for c in site.students[lesson].cells if "raise NotImplementedError()" in c.source
                 and c.metadata.get("nbgrader", {}).get("solution")]
        for cell in stubs:
            assert "raise NotImplementedError()" in page.code[cell.id]
    assert checked >= 3 * 8  # an answer, a self-check and tests for at least one exercise per lesson 01-08


# ------------------------------------------------------------------ widgets without a browser

def labelled(explorer):
    """``{control: {label: value}}``, read from a widget: the page's labels back to the widget's values."""
    space = StateSpace(explorer)
    return {name: {label: value for value, label in labels.items()} for name, labels in space.labels.items()}


def state_values(widget, key, by_label):
    """The control values of the page's state ``key`` (indices into each control's labels)."""
    controls = widget.data["controls"]
    indices = [int(i) for i in key.split(",")] if key else []
    return {c["name"]: by_label[c["name"]][c["labels"][i]] for c, i in zip(controls, indices)}


#: Widgets whose cell trains models for seconds (lesson 07's four runs compared, ``TrainingComparisonExplorer.live``):
#: the fresh one is built as ``live`` builds it, by the class from the same finished runs, without training again.
FROM_FINISHED_RUNS = ("TrainingComparisonExplorer",)


def fresh(site, widget_id):
    """A new widget built by its cell's code, for widget ``widget_id`` of the site (built once per test file)."""
    built = site.__dict__.setdefault("fresh_widgets", {})
    if widget_id not in built:
        widget = next(w for w in site.widgets if w.widget_id == widget_id)
        shown = widget.grid.explorer
        if type(shown).__name__ in FROM_FINISHED_RUNS:
            built[widget_id] = type(shown)(shown.runs, shown.warmup_steps, shown.steps)
        else:
            built[widget_id] = site.runs[widget.lesson].fresh(widget.cell_id)[int(widget_id.rsplit("-", 1)[1])]
        assert built[widget_id] is not shown and type(built[widget_id]) is type(shown)
    return built[widget_id]


def assert_shows(site, src, alt, readout, frame, where):
    """The page's picture (its file: ``src``, from the page or the site's folder), alt text and readout are
    the fresh ``frame``'s."""
    stored = site_pages.pixels(site_pages.file_of(src).read_bytes() if src.startswith("file:")
                               else (site.out / src).read_bytes())
    drawn = site_pages.pixels(frame.png)
    assert stored.shape == drawn.shape and np.array_equal(stored, drawn), f"{where}: the picture differs"
    assert alt == frame.alt, f"{where}: the alt text differs"
    assert " ".join(readout.split()) == markup_words(frame.readout), f"{where}: the readout differs"


def test_the_stored_pictures_are_what_a_fresh_widget_draws_for_a_sample_of_states(site):
    """Both pictures of a state: the one for a wide screen is the widget's own; the phone's is the same figure
    stacked (tools/site/phone.py), drawn by a fresh widget laid out the same way (on the lessons whose widget
    cells run in a second or two: not lesson 07, whose cells train models). A drawn widget's alt texts and
    readouts are the widget's (its pictures are checked in Chromium: tests/test_site_reading.py)."""
    from tools.site import phone

    rng = random.Random(22)
    for widget in site.widgets:
        data = widget.data
        if not data["controls"]:
            continue
        explorer = fresh(site, widget.widget_id)
        by_label = labelled(explorer)
        picks = sorted({data["start"], *rng.sample(range(len(data["keys"])), min(SAMPLE, len(data["keys"])))})
        for i in picks:
            values = state_values(widget, data["keys"][i], by_label)
            src, _, alt, readout = data["states"][i][:4]
            frame = explorer.frame(values)
            assert readout == frame.readout, f"{widget.widget_id} at {values}: the readout differs"
            if widget.grid.drawn:
                assert src is None and alt == frame.alt, f"{widget.widget_id} at {values}: the alt text differs"
                continue
            assert_shows(site, src, alt, markup_words(readout), frame, f"{widget.widget_id} at {values}")
        if widget.grid.drawn or widget.lesson == "07_gradients_and_training":  # 07's cells train models again
            continue
        # a widget of its own: once laid out for a phone, a widget draws its wide pictures a little differently
        explorer = site.runs[widget.lesson].fresh(widget.cell_id)[int(widget.widget_id.rsplit("-", 1)[1])]
        start = state_values(widget, data["keys"][data["start"]], by_label)
        with phone.stacked(explorer.figure, explorer.stop_blitting, lambda: explorer.frame(start),
                           explorer.start_blitting):
            for i in picks[:3]:
                values = state_values(widget, data["keys"][i], by_label)
                phone_src, alt, readout = data["states"][i][1:4]
                assert_shows(site, phone_src, alt, markup_words(readout), explorer.frame(values),
                             f"{widget.widget_id} at {values}, for a phone")


def test_every_move_the_page_can_make_leads_to_a_state_it_keeps(site):
    """site.js's lookup, done here for every kept state, control and value the control offers there."""
    for widget in site.widgets:
        data = widget.data
        index = {key: i for i, key in enumerate(data["keys"])}
        assert len(index) == len(data["keys"]), f"{widget.widget_id}: a state is kept twice"
        for i, key in enumerate(data["keys"]):
            at = [int(v) for v in key.split(",")] if key else []
            limits = data["states"][i][4] if len(data["states"][i]) > 4 else None
            for ci, control in enumerate(data["controls"]):
                for vi in (limits[ci] if limits else range(len(control["labels"]))):
                    candidate = ",".join(str(vi if j == ci else v) for j, v in enumerate(at))
                    target = data["redirect"].get(f"{ci}:{candidate}", index.get(candidate))
                    assert target is not None, f"{widget.widget_id}: from {key}, {control['name']} -> {vi} leads nowhere"
                    assert [int(v) for v in data["keys"][target].split(",")][ci] == vi, \
                        f"{widget.widget_id}: from {key}, moving {control['name']} to {vi} shows another value"


def test_linked_controls_move_on_the_page_as_they_do_in_the_widget(site):
    """Lesson 02's head slider follows the number of heads: from head 3 of 4, one head leaves head 0."""
    [widget] = [w for w in site.widgets if w.grid.name == "HeadsExplorer"]
    data = widget.data
    by_label = labelled(fresh(site, widget.widget_id))
    keys = {tuple(state_values(widget, key, by_label).values()): i for i, key in enumerate(data["keys"])}
    assert set(keys) == {(1, 0), (2, 0), (2, 1), (4, 0), (4, 1), (4, 2), (4, 3)}
    n_heads = data["controls"][0]["labels"].index("1")
    target = data["redirect"][f"0:{n_heads},{data['controls'][1]['labels'].index('3')}"]
    assert target == keys[1, 0]
    assert data["states"][keys[1, 0]][4][1] == [0], "with one head, the head slider offers head 0 only"


def test_a_reduced_grid_keeps_every_value_of_each_control_and_the_question_s_combinations(tmp_path, monkeypatch):
    """No widget of the course needs a reduced grid now (the two largest are drawn from their numbers: drawn.py);
    lesson 01's, drawn as pictures, would: reduced, it keeps what QUESTIONS asks and says so."""
    from encoder_lib.widgets.attention import AttentionExplorer
    from tools.site import states
    from tools.site.states import ALL, QUESTIONS

    monkeypatch.setattr(states, "DRAWN", ())
    grid = states.Grid(AttentionExplorer(), "01_attention, cell x")
    assert not grid.drawn and len(grid.states) == 768
    grid.reduce("the room of this test")
    data = grid.render(tmp_path / "w", "w/")
    kept = {tuple(int(v) for v in key.split(",")) for key in data["keys"]}
    assert len(kept) == len(grid.kept) < len(grid.states)
    start = tuple(int(v) for v in data["keys"][data["start"]].split(","))
    names = [c["name"] for c in data["controls"]]
    for ci, control in enumerate(data["controls"]):
        for vi in range(len(control["labels"])):
            assert start[:ci] + (vi,) + start[ci + 1:] in kept, control["name"]
    labels = {c["name"]: c["labels"] for c in data["controls"]}
    for entry in QUESTIONS[grid.name]:
        sizes = 1
        for name, value in entry.items():
            sizes *= len(labels[name]) if value == ALL else 1
        matching = [s for s in kept if all(
            value == ALL or s[names.index(name)] == labels[name].index(grid.space.labels[name][value])
            for name, value in entry.items())
            and all(s[i] == start[i] for i, name in enumerate(names) if name not in entry)]
        assert len(matching) == sizes, entry
    assert f"keeps {len(data['keys']):,} of the widget's {len(grid.states):,} states" in grid.note


def test_every_head_lesson_08_asks_to_try_is_kept_with_every_query_token(site):
    """The Try it text names heads to try ("Try layer 1 head 2, ..."): the page keeps each with every query."""
    [widget] = [w for w in site.widgets if w.grid.name == "AttentionHeadExplorer"]
    cells = teacher(widget.lesson).cells
    at = next(i for i, c in enumerate(cells) if c.get("id") == widget.cell_id)
    text = "\n".join(c.source for c in cells[:at] if c.cell_type == "markdown").rsplit("## Try it", 1)[-1]
    named = [(int(layer), int(head)) for layer, head in re.findall(r"layer\s+(\d+),?\s+head\s+(\d+)", text)]
    assert len(named) >= 3, f"the Try it text names no heads to try: {text[-300:]}"
    labels = {c["name"]: c["labels"] for c in widget.data["controls"]}
    kept = {tuple(int(v) for v in key.split(",")) for key in widget.data["keys"]}
    for layer, head in named:
        at_head = {s[2] for s in kept if s[:2] == (labels["layer"].index(str(layer)), labels["head"].index(str(head)))}
        assert at_head == set(range(len(labels["query"]))), f"layer {layer} head {head}: not every query token kept"


class FakeGrid:
    """What ``plan`` reads of a widget's grid: its states' estimated size; ``reduce`` keeps ten."""

    def __init__(self, where, states, per_state):
        self.where, self.kept, self.per_state, self.reduced, self.why = where, [None] * states, per_state, False, ""

    def reduce(self, room):
        self.reduced, self.kept, self.why = True, self.kept[:10], room


def test_plan_reduces_the_largest_full_grid_of_a_page_over_its_budget_and_no_other():
    from tools.site.states import plan

    big, small, elsewhere = FakeGrid("a", 1000, 8000), FakeGrid("b", 14, 16000), FakeGrid("c", 500, 8000)
    plan({"p1": [big, small], "p2": [elsewhere]})
    assert big.reduced and not small.reduced and not elsewhere.reduced
    assert "its page has room for" in big.why


def test_plan_reduces_across_the_site_when_every_page_fits_but_the_whole_does_not():
    from tools.site.states import plan

    pages = {f"p{i}": [FakeGrid(f"g{i}", 700, 8000)] for i in range(9)}  # 5.6 MB a page, 50 MB in all
    plan(pages)
    reduced = [g for grids in pages.values() for g in grids if g.reduced]
    assert reduced and all("the site has room for" in g.why for g in reduced)
    assert sum(g.per_state * len(g.kept) for grids in pages.values() for g in grids) <= 45_000_000


def test_a_widget_too_large_for_its_page_without_a_question_stops_the_build():
    from encoder_lib.widgets.heads import HeadsExplorer
    from tools.site.render import SiteError
    from tools.site.states import Grid

    grid = Grid(HeadsExplorer(), "02_multi_head_attention, cell x")
    assert len(grid.states) == 7 and grid.estimate > 7 * 1000
    with pytest.raises(SiteError, match=r"more than its page's room; say in tools/site/states.py QUESTIONS"):
        grid.reduce("its page's room")


# ------------------------------------------------------------------ links

def test_a_course_that_names_its_repository_links_it_run_this_lesson_binder_and_its_files():
    from tools.site import pages

    readme = (ROOT / "README.md").read_text().replace("/OWNER/REPO/", "/someone/course/")
    [(badge, owner, repo, ref, path)] = BADGE.findall(readme)
    folder = path.rsplit("/", 2)[0]
    links = pages.course_links(readme)
    assert links.named and (owner, repo) == ("someone", "course")
    lesson = LESSONS[1]
    page = pages.page("t", pages.open_lesson(lesson, links, f"{lesson}/{lesson}.ipynb"), links,
                      run=(lesson, links.binder(lesson)))
    hrefs = re.findall(r'href="([^"]+)"', page)
    binder = badge.replace(path, f"{folder}/{lesson}/{lesson}.ipynb")
    assert hrefs.count(binder) == 2  # Run this lesson, and On Binder
    assert "https://github.com/someone/course" in hrefs and links.colab(lesson) in hrefs
    link_for = pages.link_rewriter(links, "README.md", LESSONS)
    assert link_for("docs/teaching.md") == "https://github.com/someone/course/blob/main/docs/teaching.md"
    assert links.report() is None


def test_a_site_built_from_a_course_that_names_no_repository_links_nothing_there_and_says_which(site):
    """The course as it is names OWNER/REPO: no page links Binder, Colab, GitHub or the published site of OWNER/REPO,
    each lesson says why it offers no Binder or Colab, and `make site` lists what it left out."""
    assert "mybinder.org/v2/gh/OWNER/REPO/" in (ROOT / "README.md").read_text()
    for page in sorted(site.out.glob("*.html")):
        for tag, attrs in read_page(page).tags:
            for name, value in attrs.items():
                assert not re.search(r"OWNER|owner\.github|/REPO\b|mybinder\.org|colab\.research", value or ""), \
                    f"{page.name}: <{tag} {name}={value!r}>"
        text = page.read_text()
        assert 'class="run-lesson"' not in text, page.name
        if page.stem in LESSONS:
            assert "Binder and Google Colab: no link, because this copy of the course names no GitHub repository" \
                in text, page.name
    [line] = [line for line in site.log if line.startswith("links left out:")]
    for what in ("Run this lesson", "On Binder", "Open in Colab", "the footer's link to the repository",
                 "Run the course"):
        assert f"{what} (" in line, line
    for target in re.findall(r"the repository's ([^ ]+) \(", line):  # a link to a file leads to one that is there
        assert (ROOT / target).exists(), target


def test_nothing_a_page_loads_comes_from_outside_the_site(site):
    """Nor what its scripts load: site.js, and MiniSearch (assets/minisearch.js, as npm ships it, its comments
    citing web pages) with the search index (assets/search-index.js: the lessons' words, their links among them)."""
    for path in sorted(site.out.rglob("*.html")):
        for tag, attrs in read_page(path).tags:
            address = (attrs.get("src") if tag in ("img", "script") else attrs.get("href") if tag == "link"
                       else attrs.get("srcset") if tag == "source" else None)
            if tag == "a" and attrs.get("href") and not re.match(r"[a-z]+:|#", attrs["href"]):
                address = attrs["href"].split("#")[0]
            if address is None or address == "":
                continue
            assert not re.match(r"[a-z]+:|//", address), f"{path.name}: <{tag}> loads {address}"
            assert (path.parent / address).is_file(), f"{path.name}: <{tag}> points to {address}, which is not there"
    names = {asset.name for asset in site.assets()}
    assert names == {"site.css", "site.js", "minisearch.js", "minisearch.LICENSE.txt", "search-index.js", "ts-fsrs.js",
                     "ts-fsrs.LICENSE.txt"}, names
    for asset in site.assets():
        text = asset.read_text()
        if asset.name in ("site.css", "site.js"):
            assert not re.search(r"https?://|@import|url\(", text.split("*/", 1)[-1] if asset.suffix == ".css" else
                                 "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("//"))), \
                f"{asset.name} refers to something outside the site"
        elif asset.suffix == ".js":
            assert not re.search(r"XMLHttpRequest|import\(|sendBeacon|WebSocket|(window|globalThis|self)\.fetch",
                                 text), f"{asset.name} could load something"


def test_figures_are_files_of_the_site_with_their_alt_text(site):
    count = 0
    for lesson in LESSONS:
        figures = [attrs for tag, attrs in read_page(site.out / f"{lesson}.html").tags
                   if tag == "img" and "/figures/" in attrs.get("src", "")]
        stored = [o for c in teacher(lesson).cells for o in c.get("outputs", []) if "image/png" in o.get("data", {})]
        assert len(figures) == len(stored), lesson
        for attrs in figures:
            assert attrs.get("alt", "").startswith("Plot:"), attrs
            count += 1
    assert count >= 5


# ------------------------------------------------------------------ building

def make_notebook(path, cells):
    notebook = nbformat.v4.new_notebook()
    notebook.cells = cells
    nbformat.write(notebook, path)
    return path


def test_a_cell_that_fails_stops_the_build_naming_its_notebook_and_cell(tmp_path):
    from tools.site.notebook_run import NotebookRun
    from tools.site.render import SiteError

    path = make_notebook(tmp_path / "x.ipynb", [nbformat.v4.new_code_cell("print('one')"),
                                                nbformat.v4.new_code_cell("1 / 0")])
    with pytest.raises(SiteError, match=r"x\.ipynb, cell 1 .* failed: ZeroDivisionError.*\n.*\none"):
        NotebookRun(path)


def test_a_widget_cell_that_shows_no_course_widget_stops_the_build(tmp_path):
    from tools.site.notebook_run import NotebookRun
    from tools.site.render import SiteError

    cell = nbformat.v4.new_code_cell("import ipywidgets\nipywidgets.IntSlider()")
    cell.outputs = [nbformat.v4.new_output("execute_result", data={WIDGET_MIME: {"model_id": "x"}, "text/plain": ""})]
    with pytest.raises(SiteError, match="shows a widget in the notebook, but running it showed no course widget"):
        NotebookRun(make_notebook(tmp_path / "y.ipynb", [cell]))


def test_a_widget_shown_with_display_and_its_fresh_copy_are_the_cell_s(tmp_path):
    from tools.site.notebook_run import NotebookRun

    setup = nbformat.v4.new_code_cell("from encoder_lib.widgets.add_norm import AddNormExplorer\nn = 0")
    cell = nbformat.v4.new_code_cell("w = AddNormExplorer()\ndisplay(w)\nn += 1")
    run = NotebookRun(make_notebook(tmp_path / "z.ipynb", [setup, cell]))
    [shown] = run.widgets[cell.id]
    [again] = run.fresh(cell.id)
    assert type(again).__name__ == "AddNormExplorer" and again is not shown
    assert again.image.value == shown.image.value


def test_a_notebook_s_print_options_hold_for_its_cells_and_leave_the_process_s_as_they_were(tmp_path):
    """A lesson's first cell sets numpy's print options (4 digits): the site's run keeps them for the notebook's
    next cells and for a widget cell run again, and puts the process's back (a doctest run after the site build,
    in the same pytest worker, printed 4 digits)."""
    from tools.site.notebook_run import NotebookRun

    setup = nbformat.v4.new_code_cell("import numpy as np\nnp.set_printoptions(precision=2)")
    cell = nbformat.v4.new_code_cell("print(np.array([1 / 3]))\nfrom encoder_lib.widgets.add_norm import "
                                     "AddNormExplorer\ndisplay(AddNormExplorer())\nprint(np.array([2 / 3]))")
    before = np.get_printoptions()
    run = NotebookRun(make_notebook(tmp_path / "p.ipynb", [setup, cell]))
    assert np.get_printoptions() == before and before["precision"] == 8
    assert run.output.getvalue().split() == ["[0.33]", "[0.67]"]
    run.fresh(cell.id)
    assert np.get_printoptions() == before and run.output.getvalue().split()[2:] == ["[0.33]", "[0.67]"]


def test_the_widgets_frame_draws_a_state_and_refuses_one_it_cannot_show():
    from encoder_lib.widgets.heads import HeadsExplorer

    explorer = HeadsExplorer()
    frame = explorer.frame({"n_heads": 4, "head": 3})
    assert explorer.values() == {"n_heads": 4, "head": 3} and frame.alt == explorer.image.alt
    assert frame.png == explorer.image.value
    with pytest.raises(ValueError, match="'head' to 3, which it does not offer now"):
        explorer.frame({"n_heads": 1, "head": 3})
    with pytest.raises(ValueError, match="every control"):
        explorer.frame({"n_heads": 1})


def test_settle_moves_linked_controls_as_the_widget_does_without_drawing():
    from encoder_lib.widgets.heads import HeadsExplorer

    explorer = HeadsExplorer(n_heads=4, head=3)
    before = explorer.image.value
    assert explorer.settle([("n_heads", 1)]) == {"n_heads": 1, "head": 0}
    assert explorer.image.value == before, "settle must not draw"
    with pytest.raises(ValueError, match="names the control 'heads'; this widget's controls are 'n_heads', 'head'"):
        explorer.settle([("heads", 2)])


# ------------------------------------------------------------------ in Chromium

def page_paths():
    return ["index.html", *(f"{lesson}.html" for lesson in LESSONS)]


@pytest.mark.parametrize("name", page_paths())
def test_every_page_opens_offline_from_file_and_no_request_leaves_the_site(site, chromium, name):
    with site_pages.offline(chromium) as context:
        page = site_pages.open_page(context, site.out / name)
        widgets = page.locator("section.explorer").count()
        page.wait_for_function(f"() => document.querySelectorAll('section.explorer.explorer-ready').length === {widgets}",
                               timeout=site_pages.WAIT_MS)
        broken = page.evaluate("() => [...document.images].filter(i => !(i.complete && i.naturalWidth > 0))"
                               ".map(i => i.getAttribute('src'))")
        assert not broken, f"{name}: pictures that did not load: {broken}"
        prefix = site.out.as_uri() + "/"
        outside = [url for url in context.requests if not url.startswith(prefix)]
        assert not outside, f"{name} asked for {outside}"
        assert not page.problems, page.problems


@pytest.mark.parametrize("lesson", [lesson for lesson in LESSONS])
def test_every_control_moved_with_the_mouse_and_the_keyboard_shows_the_widget_s_own_drawing(site, chromium, lesson):
    widgets = [w for w in site.widgets if w.lesson == lesson]
    with site_pages.offline(chromium) as context:
        page = site_pages.open_page(context, site.out / f"{lesson}.html")
        for k, widget in enumerate(widgets):
            on_page = site_pages.Widget(page, k)
            assert on_page.id == widget.widget_id
            if not widget.data["controls"]:  # a training run's monitor: the picture it ended with
                assert on_page.picture() == (site.out / widget.data["states"][0][0]).read_bytes()
                continue
            explorer = fresh(site, widget.widget_id)
            by_label = labelled(explorer)

            def values(shown):
                out = {}
                for spec, control in zip(widget.data["controls"], shown["controls"]):
                    assert control["label"] == " ".join(explorer.controls[spec["name"]].description.split()), \
                        f"{widget.widget_id}: the page's label {control['label']!r} is not the widget's"
                    if control["kind"] == "slider":
                        assert control["valuetext"] == control["value"]
                    out[spec["name"]] = by_label[spec["name"]][control["value"]]
                return out

            for ci, spec in enumerate(widget.data["controls"]):
                for how in ("mouse", "keyboard"):
                    before = values(on_page.shown())
                    explorer.frame(before)
                    getattr(on_page, f"move_with_{how}")(ci)
                    shown = on_page.shown()
                    after = values(shown)
                    where = f"{widget.widget_id}: {spec['label']} moved with the {how} from {before} to {after}"
                    assert after[spec["name"]] != before[spec["name"]], f"{where}: the control did not move"
                    if not widget.grid.reduced:  # where the widget keeps every state, the page moves as it does
                        assert explorer.settle([(spec["name"], after[spec["name"]])]) == after, where
                    frame = explorer.frame(after)
                    if widget.grid.drawn:  # its SVG is compared with the widget's PNG in test_site_reading.py
                        assert shown["alt"] == frame.alt and " ".join(shown["readout"].split()) == \
                            markup_words(frame.readout), where
                    else:
                        src = on_page.box.locator("img.explorer-picture").evaluate("img => img.currentSrc")
                        assert_shows(site, src, shown["alt"], shown["readout"], frame, where)
                    if how == "keyboard":
                        assert page.evaluate("(box) => box.contains(document.activeElement)",
                                             on_page.box.element_handle()), f"{where}: the focus left the widget"
        assert not page.problems, page.problems


def test_the_site_works_from_a_static_web_server(site, chromium):
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(site.out))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.RequestHandlerClass.log_message = lambda *args: None
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    origin = f"http://127.0.0.1:{server.server_address[1]}/"
    try:
        context = chromium.new_context()
        requests = []
        context.on("request", lambda request: requests.append(request.url))
        context.route("**/*", lambda route: route.continue_() if route.request.url.startswith(origin)
                      else route.abort())
        page = context.new_page()
        page.goto(origin + "04_add_and_norm.html")
        widget = site_pages.Widget(page, 0)
        page.wait_for_selector("section.explorer.explorer-ready", timeout=site_pages.WAIT_MS)
        before = widget.shown()
        widget.move_with_keyboard(0)
        after = widget.shown()
        assert after["src"] != before["src"] and after["alt"] != before["alt"] and after["complete"]
        assert all(url.startswith(origin) for url in requests), [u for u in requests if not u.startswith(origin)]
        context.close()
    finally:
        server.shutdown()
        server.server_close()


# ------------------------------------------------------------------ publishing, make, README

def git(repo, *args):
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True).stdout.strip()


def test_publish_site_commits_the_site_to_its_own_branch_and_leaves_the_working_tree_alone(tmp_path):
    from tools.site.publish import BRANCH

    repo = tmp_path / "course"
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(repo)], check=True)
    site = tmp_path / "built"
    (site / "01_attention" / "w").mkdir(parents=True)
    (site / "index.html").write_text("<!DOCTYPE html><title>x</title>")
    (site / "01_attention" / "w" / "a.webp").write_bytes(b"RIFF")
    (repo / "notes.txt").write_text("a teacher's uncommitted file\n")
    env = dict(os.environ, GIT_AUTHOR_NAME="T", GIT_AUTHOR_EMAIL="t@example.org", GIT_COMMITTER_NAME="T",
               GIT_COMMITTER_EMAIL="t@example.org")
    status, branch = git(repo, "status", "--porcelain"), git(repo, "rev-parse", "--abbrev-ref", "HEAD")

    def publish(*extra):
        return subprocess.run([sys.executable, "-m", "tools.site.publish", "--root", str(repo), "--site", str(site),
                               *extra], capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)

    first, second = publish(), publish()
    assert first.returncode == 0 and second.returncode == 0, first.stderr + second.stderr
    assert sorted(git(repo, "ls-tree", "-r", "--name-only", BRANCH).splitlines()) == \
        [".nojekyll", "01_attention/w/a.webp", "index.html"]
    assert git(repo, "rev-list", "--count", BRANCH) == "1" and "nothing to commit" in second.stdout
    head = git(repo, "rev-parse", "--short", "HEAD")
    assert git(repo, "log", "-1", "--format=%s", BRANCH).startswith(f"The course's site, built from {head}")
    assert git(repo, "status", "--porcelain") == status and git(repo, "rev-parse", "--abbrev-ref", "HEAD") == branch
    (site / "index.html").unlink()
    refused = publish()
    assert refused.returncode != 0 and "run `make site` first" in refused.stderr


def test_make_has_site_and_publish_site_and_site_is_never_committed():
    makefile = (ROOT / "Makefile").read_text()
    phony = next(line for line in makefile.splitlines() if line.startswith(".PHONY:")).split()
    assert {"site", "publish-site"} <= set(phony)
    assert re.search(r"^\t\$\(BIN\)/python -m tools\.site( |$)", makefile, re.M) and \
        "$(BIN)/python -m tools.site.publish" in makefile
    assert re.search(r"^publish-site: site$", makefile, re.M), "publishing builds the site first"
    assert "/site/" in (ROOT / ".gitignore").read_text().splitlines()


def test_the_readme_keeps_two_set_up_commands_and_the_teachers_page_says_how_to_publish_the_site():
    readme = (ROOT / "README.md").read_text()
    setup = re.search(r"^## Set up\n(.*?)^## ", readme, re.S | re.M).group(1)
    commands = [line.split("#")[0].strip() for block in re.findall(r"```bash\n(.*?)```", setup, re.S)
                for line in block.splitlines() if line.strip()]
    assert commands == ["make lab", "make test"]
    assert re.search(r"^## The course as a website\n(.*?)docs/teaching/website\.md", readme, re.S | re.M), \
        "README: a section '## The course as a website' that sends teachers to docs/teaching/website.md"
    teaching = (ROOT / "docs" / "teaching" / "website.md").read_text()
    section = re.search(r"^# The course's website: building and publishing\n(.*)", teaching, re.S | re.M)
    assert section, "docs/teaching/website.md: its title '# The course's website: building and publishing'"
    for words_ in ("make site", "make publish-site", "git push origin gh-pages", "GitHub Pages", "site/index.html"):
        assert words_ in section.group(1), words_
