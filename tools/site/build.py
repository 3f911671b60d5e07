"""Build the site: every lesson a page, from its notebooks, with its widgets' states drawn at build time."""

import hashlib
import io
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
import PIL.Image

from encoder_lib._display import figure_alt_text
from encoder_lib.widgets._base import canvas_png

from .. import colab, student
from ..course import ROOT, lesson_names
from ..solutions import without_markers
from . import offline, pages, phone, questions, review, search
from .notebook_run import NotebookRun
from .render import SiteError, code_block, highlight_css, markdown_html, outputs_html
from .states import Grid, plan

STATIC = Path(__file__).resolve().parent / "static"
TRY_IT_ANSWER = "try-it-answer"  # the tag of a markdown cell that answers a "Try it" question
ANSWER_SUMMARY = "The answer: open it once you have tried"
SOLUTION_SUMMARY = "Show the course's solution"
#: The page's one script, these in this order: the widgets, the review's scheduler, the questions.
SCRIPTS = ("site.js", "schedule.js", "questions.js")


@dataclass
class Widget:
    """One widget on the site: where it is, its grid of states, and the data its page holds."""

    lesson: str
    cell_id: str
    widget_id: str
    grid: Grid
    data: dict = field(default_factory=dict)


@dataclass
class Page:
    """One page: its file, and the files only it uses (its figures and widgets' pictures)."""

    name: str
    title: str
    path: Path
    folder: Path = None
    widgets: list = field(default_factory=list)

    def files(self):
        """The page's own files: the page and, under its folder, its figures and pictures."""
        own = [self.path]
        if self.folder is not None and self.folder.is_dir():
            own += sorted(p for p in self.folder.rglob("*") if p.is_file())
        return own

    def size(self):
        return sum(p.stat().st_size for p in self.files())


@dataclass
class Site:
    """What ``build`` made: its folder, the index, the lessons' pages, each lesson's notebook run."""

    out: Path
    index: Page
    pages: list
    runs: dict
    students: dict
    seconds: float = 0.0
    search_bytes: int = 0  # assets/search-index.js

    @property
    def widgets(self):
        return [w for p in self.pages for w in p.widgets]

    def assets(self):
        return sorted(p for p in (self.out / "assets").rglob("*") if p.is_file())

    def size(self):
        return sum(p.stat().st_size for p in self.out.rglob("*") if p.is_file())


def student_versions(root, lessons, log):
    """Each lesson's student version, as ``make student`` writes it (nbgrader, on a copy of the lessons)."""
    with tempfile.TemporaryDirectory(prefix="site-student-") as tmp:
        copy = Path(tmp)
        for name in lessons:
            shutil.copytree(Path(root) / "notebooks" / name, copy / "notebooks" / name,
                            ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
        shutil.copy2(Path(root) / "nbgrader_config.py", copy)
        start = time.perf_counter()
        student.generate(copy, course=root)
        log(f"student versions written by nbgrader in {time.perf_counter() - start:.1f} s")
        if colab.placeholder_warning(root):
            log(colab.placeholder_warning(root))
        return {name: nbformat.read(copy / "release" / name / f"{name}.ipynb", as_version=4) for name in lessons}


def _tags(*cells):
    return {tag for cell in cells if cell is not None for tag in cell.get("metadata", {}).get("tags", [])}


def phone_figure(figure, alt, where):
    """The PNG of a notebook's ``figure`` drawn again for a phone (``phone.stacked``), and the smallest text in
    it (px); ``alt`` is the stored picture's alt text, which the figure must have too (it is the same one)."""
    if figure_alt_text(figure) != alt:
        raise SiteError(f"{where}: the figure the cell draws now is not the one its stored output shows (its alt "
                        "text differs); re-run the notebook (tools/execute_notebooks.py)")
    with phone.stacked(figure):
        return canvas_png(figure.canvas), phone.smallest_text_px(figure)


class FigureStore:
    """A lesson's figures on its page, under ``folder`` (``url`` from the page): each cell's stored pictures, and
    beside each the phone drawing of the figure the cell drew when it ran (``figures[cell id]``)."""

    def __init__(self, folder, url, figures):
        self.folder, self.url, self.figures, self.written = folder, url, figures, set()

    def store(self, png):
        digest = hashlib.sha256(png).hexdigest()[:16]
        if digest not in self.written:
            (self.folder / "figures").mkdir(parents=True, exist_ok=True)
            (self.folder / "figures" / f"{digest}.png").write_bytes(png)
            self.written.add(digest)
        return f"{self.url}figures/{digest}.png", PIL.Image.open(io.BytesIO(png)).size

    def saver(self, cell_id, where):
        """``save_figure(png, alt)`` for ``outputs_html``: the cell's next stored picture, as a ``<picture>``."""
        drawn = iter(self.figures.get(cell_id, []))

        def save_figure(png, alt):
            src, size = self.store(png)
            figure = next(drawn, None)
            if figure is None:
                raise SiteError(f"{where}: shows more pictures than its code draws now; re-run the notebook")
            text_px = phone.smallest_text_px(figure)  # the stored picture is the figure at its dpi, cropped
            phone_png, phone_text_px = phone_figure(figure, alt, where)
            phone_src, phone_size = self.store(phone_png)
            return '<div class="figure">' + pages.picture_html(
                src, phone_src, alt, size, phone_size, [text_px, phone_text_px], "figure-picture") + "</div>"
        return save_figure


def lesson_body(name, learner, teacher, widgets_html, links, lessons, folder, url, figures=None, solutions=True):
    """A lesson's cells as HTML: ``learner`` is its student version (what the learner sees), ``teacher``
    the teachers' version (its stored outputs); ``widgets_html[cell id]`` the widgets a cell shows; under the
    first cell, where to open the lesson (its student notebook is ``url``/<name>.ipynb) and its contents;
    ``figures[cell id]`` the matplotlib figures a cell showed when it ran (``NotebookRun.figures``), each
    drawn again for phones beside its stored picture. ``solutions``: each exercise's answer cell is followed by the
    course's solution, folded (``solution_html``)."""
    by_id = {cell.get("id"): cell for cell in teacher.cells}
    link_for = pages.link_rewriter(links, f"notebooks/{name}/{name}.ipynb", lessons)
    ids, parts, headings = set(), [], []
    store = FigureStore(folder, url, figures or {})
    missing = set(widgets_html) - {cell.get("id") for cell in learner.cells}
    if missing:
        raise SiteError(f"{name}: the student version has no cell with the id of the widget cells {sorted(missing)}")
    hand_in = hand_in_cells(learner)
    for index, cell in enumerate(learner.cells):
        source = by_id.get(cell.get("id"))
        if cell.get("id") == colab.CELL_ID:
            continue  # the first cell installs the course's library where it is missing: the notebook's, not the page's
        if index in hand_in:  # the page hands nothing in: it says where to, and shows the button's cell without it
            parts.append(_hand_in_html(cell, hand_in[index], link_for, ids, headings))
        elif cell.cell_type == "markdown":
            parts.append(_markdown_cell(cell, source, markdown_html(cell.source, link_for, ids, headings)))
        elif cell.cell_type == "code":
            parts.append(_code_cell(cell, source, widgets_html, store, f"{name}, cell {index} (id {cell.get('id')})"))
            if solutions and source is not None and pages.exercise_part(source) == "answer":
                parts.append(solution_html(source))
    # under the lesson's first cell (its title, time and what it teaches): where to open it, and its contents
    parts[1:1] = [pages.open_lesson(name, links, f"{url}{name}.ipynb"),
                  pages.contents([h for h in headings if h[0] in (2, 3)])]
    return "\n".join(parts)


HAND_IN_CALL = "grading.hand_in_button("
#: The "Hand in" section on a page, which hands nothing in (the notebook's words are for JupyterLab).
HAND_IN_ON_THE_SITE = (
    "This page hands nothing in. In a class on a course hub, open the lesson there, in JupyterLab: its last cell "
    "shows a **Hand in** button, which hands your notebook in and shows the grader's verdict a few seconds later "
    "(per exercise the points, the checks, what is wrong and a first hint); only your latest hand-in counts. "
    "Anywhere else, hand in as your teacher says.")
HAND_IN_LABEL = "Hand in: in JupyterLab on a course hub, this cell shows the button"


def hand_in_cells(notebook):
    """``{index: "heading" or "button"}``: the cell that shows the Hand in button, and the markdown cell just above it
    when it is the section's heading (``## Hand in``)."""
    found = {}
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type == "code" and HAND_IN_CALL in cell.source:
            found[index] = "button"
            above = notebook.cells[index - 1] if index else None
            if above is not None and above.cell_type == "markdown" and above.source.startswith("## Hand in"):
                found[index - 1] = "heading"
    return found


def _hand_in_html(cell, part, link_for, ids, headings):
    cell_id = pages.esc(cell.get("id"))
    if part == "heading":
        text = markdown_html(cell.source.splitlines()[0] + "\n\n" + HAND_IN_ON_THE_SITE, link_for, ids, headings)
        return f'<div class="cell markdown" data-cell="{cell_id}">\n{text}</div>'
    return (f'<div class="cell code" data-cell="{cell_id}"><p class="cell-label">{HAND_IN_LABEL}</p>'
            f'{code_block(cell.source, label="code")}<div class="outputs"></div></div>')


def _markdown_cell(cell, source, text):
    """A markdown cell, its HTML ``text``; a "Try it" answer folded in a ``<details>``."""
    cell_id = pages.esc(cell.get("id"))
    if TRY_IT_ANSWER in _tags(cell, source):
        return (f'<details class="cell markdown try-it-answer" data-cell="{cell_id}">'
                f'<summary class="answer-summary">{ANSWER_SUMMARY}</summary>\n{text}</details>')
    return f'<div class="cell markdown" data-cell="{cell_id}">\n{text}</div>'


def _code_cell(cell, source, widgets_html, store, where):
    """A code cell: its code (the student version's), and what it shows: its widgets, or the teachers' version's
    stored outputs (none for an exercise's cells, which the learner has not run yet)."""
    cell_id = cell.get("id")
    part = pages.exercise_part(cell) or (pages.exercise_part(source) if source is not None else None)
    label = f'<p class="cell-label">{pages.EXERCISE_LABELS[part]}</p>' if part else ""
    if cell_id in widgets_html:
        shown = widgets_html[cell_id]
    elif part or source is None:
        shown = ""
    else:
        shown = outputs_html(source.get("outputs", []), store.saver(cell_id, where), where)
    kind = " exercise" if part else ""
    return (f'<div class="cell code{kind}" data-cell="{pages.esc(cell_id)}">{label}'
            f'{code_block(cell.source, label="code")}<div class="outputs">{shown}</div></div>')


def solution_html(source):
    """The course's solution of an answer cell (``source``, the teachers' version's, its marker lines taken out)
    in a closed ``<details>`` under the exercise: a learner opens it by asking, from the keyboard too, and nothing
    is fetched. The search leaves it out."""
    code = code_block(without_markers(source.get("source", "")), label="the course's solution")
    return (f'<details class="solution" data-cell="{pages.esc(source.get("id"))}"><summary class="solution-summary">'
            f'{SOLUTION_SUMMARY}</summary>\n{code}</details>')


def build(out=None, root=ROOT, lessons=None, log=print, solutions=True):
    """Write the site into ``out`` (default ``root/site``), replacing what is there; returns the ``Site``.

    ``lessons``: the lessons to build (default: all). ``solutions=False``: no exercise shows the course's solution
    (a teacher whose graded class reads the public site). The site is written
    into a new folder beside ``out`` and moved into place when complete, so a
    failed build leaves the last site as it was.
    """
    started = time.perf_counter()
    root = Path(root)
    out = Path(out) if out is not None else root / "site"
    every = lesson_names(root)
    lessons = list(every if lessons is None else lessons)
    unknown = [name for name in lessons if name not in every]
    if unknown or not lessons:
        raise ValueError(f"lessons must be some of {every}, got {lessons}")
    readme = (root / "README.md").read_text()
    course = Course(readme, pages.course_links(readme), lessons, student_versions(root, lessons, log),
                    *_run_lessons(root, lessons, log), solutions=solutions)
    if out.exists() and any(out.iterdir()) and not (out / "index.html").is_file():
        raise SiteError(f"{out} exists and is not a site this tool wrote (no index.html): not replacing it")
    out.parent.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix=f".{out.name}-building-", dir=out.parent))
    try:
        built, index, search_bytes = _write(stage, course, log)
        if out.exists():
            shutil.rmtree(out)
        stage.rename(out)
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise
    for page in [*built, index]:  # the files are where they were moved to
        page.path = out / page.path.name
        if page.folder is not None:
            page.folder = out / page.folder.name
    return Site(out, index, built, course.runs, course.students, time.perf_counter() - started, search_bytes)


@dataclass
class Course:
    """What the pages are made from: the README, where the course lives, the lessons, their student versions,
    their notebooks run (``runs``) and their widgets' grids (``grids[lesson]``: ``(cell id, k, Grid)``)."""

    readme: str
    links: pages.CourseLinks
    lessons: list
    students: dict
    runs: dict
    grids: dict
    solutions: bool = True  # each exercise followed by the course's solution, folded

    def title(self, name):
        return pages.notebook_title(self.runs[name].notebook, name)


def _run_lessons(root, lessons, log):
    """Each lesson's teachers' notebook run, and its widgets' grids, reduced where the budget asks (``plan``)."""
    runs, grids = {}, {}
    for name in lessons:
        run = runs[name] = NotebookRun(root / "notebooks" / name / f"{name}.ipynb")
        log(f"{name}: ran in {run.seconds:.1f} s, {sum(map(len, run.widgets.values()))} widgets")
        grids[name] = []
        for cell_id, explorers in run.widgets.items():
            for k, explorer in enumerate(explorers):
                grid = Grid(explorer, f"{name}, cell {cell_id}" + (f" widget {k}" if len(explorers) > 1 else ""))
                for asked in run.questions.get(cell_id, []):  # the states its questions show, kept by any grid
                    if asked.explorer is explorer:
                        grid.wanted.update(questions.show_state(grid, a, grid.where) for a in asked.answers)
                grids[name].append((cell_id, k, grid))
    plan({name: [g for _, _, g in found] for name, found in grids.items()}, log)
    return runs, grids


def _write(stage, course, log):
    """Write the site into ``stage``: its assets, every lesson's page, the index, the search index; returns the
    lessons' pages, the index and the search index's bytes."""
    (stage / "assets").mkdir()
    (stage / "assets" / "site.css").write_text((STATIC / "site.css").read_text() + "\n"
                                               + (STATIC / "questions.css").read_text() + "\n/* code */\n"
                                               + highlight_css() + "\n")
    # the widgets, then the questions above them (one file: the pages' frame loads one script)
    (stage / "assets" / "site.js").write_text("\n".join((STATIC / name).read_text() for name in SCRIPTS))
    review.copy_library(stage / "assets")
    built = [_write_lesson(stage, name, course, log) for name in course.lessons]
    index = Page("index", pages.TITLE, stage / "index.html")
    titles = {name: course.title(name) for name in course.lessons}
    index.path.write_text(pages.page(pages.TITLE, pages.index_body(
        course.readme, course.runs[course.lessons[0]].notebook, course.lessons, titles,
        {name: pages.minutes(course.runs[name].notebook) for name in course.lessons}, course.links), course.links))
    _write_review(stage, course)
    documents = [section for page in built
                 for section in search.sections(page.name, page.title, page.path.read_text())]
    search_bytes = search.build_index(documents, stage / "assets")
    log(f"search index: {len(documents)} sections, {search_bytes / 1e6:.2f} MB")
    log(f"offline reading: {offline.WORKER}, build {offline.write_worker(stage, STATIC)}")
    log(f"links left out: {course.links.report()}" if course.links.report() else
        f"links: the repository {course.links.repository}, its Binder and Colab (the README's Binder badge)")
    return built, index, search_bytes


def _write_lesson(stage, name, course, log):
    """One lesson's page, its widgets' pictures and data, its figures and its student notebook to download."""
    folder = stage / name
    page = Page(name, course.title(name), stage / f"{name}.html", folder)
    widgets_html = {}
    blocks = questions.in_page_order(course.students[name], [(cell_id, f"w-{cell_id}-{k}") for cell_id, k, grid
                                                             in course.grids[name] if _asked(course, name, cell_id, grid)])
    for cell_id, k, grid in course.grids[name]:
        widgets_html[cell_id] = widgets_html.get(cell_id, "") + _questions_html(
            course, name, cell_id, grid, f"w-{cell_id}-{k}")
        widget = Widget(name, cell_id, f"w-{cell_id}-{k}", grid)
        start = time.perf_counter()
        widget.data = grid.render(folder / f"{cell_id}-{k}", f"{name}/{cell_id}-{k}/", log)
        log(f"{grid.where}: {grid.name}, {len(grid.kept)} of {len(grid.states)} states drawn in "
            f"{time.perf_counter() - start:.1f} s")
        widgets_html[cell_id] = widgets_html.get(cell_id, "") + pages.explorer_html(
            widget.widget_id, cell_id, grid.explorer, widget.data, _note(grid)) + questions.skip_next(
            blocks, widget.widget_id)
        page.widgets.append(widget)
    body = lesson_body(name, course.students[name], course.runs[name].notebook, widgets_html, course.links,
                       course.lessons, folder, f"{name}/", course.runs[name].figures, solutions=course.solutions)
    folder.mkdir(parents=True, exist_ok=True)
    nbformat.write(course.students[name], folder / f"{name}.ipynb")  # the student version, to download
    body += pages.lesson_nav(course.lessons, name, {n: course.title(n) for n in course.lessons})
    page.path.write_text(pages.page(f"{page.title} · {pages.TITLE}", body, course.links,
                                    run=(name, course.links.binder(name)),
                                    skip_to=questions.block_id(blocks[0]) if blocks else None))
    return page


def _asked(course, name, cell_id, grid):
    """``[(Question, Answer)]`` asked above ``grid``'s widget in lesson ``name``'s cell ``cell_id``."""
    return [pair for asked in course.runs[name].questions.get(cell_id, []) if asked.explorer is grid.explorer
            for pair in zip(asked.questions, asked.answers)]


def _questions_html(course, name, cell_id, grid, widget_id):
    """The questions asked above one widget, as forms that move it to the state each answer names."""
    asked = _asked(course, name, cell_id, grid)
    if not asked:
        return ""
    records = [questions.record(q, a, name, course.title(name)) for q, a in asked]
    return questions.asked_html(records, widget_id, [grid.key(questions.show_state(grid, a, grid.where))
                                                     for _, a in asked])


def _write_review(stage, course):
    """The review page: every lesson's questions, asked again in the browser when due."""
    records = [questions.record(q, a, name, course.title(name)) for name in course.lessons
               for cell_id, _, grid in course.grids[name] for q, a in _asked(course, name, cell_id, grid)]
    (stage / "review.html").write_text(pages.page(f"Review · {pages.TITLE}", review.body(records), course.links,
                                                  scripts=[review.SCRIPT]))


def _note(grid):
    """What the page says under a widget about its states."""
    if grid.note:
        return grid.note
    if grid.drawn:
        return (f"All {len(grid.states):,} states of this widget: this page draws each one from the numbers the "
                "widget's own figure shows, with its colour map and labels.")
    if grid.states != [()]:
        return f"All {len(grid.states):,} states of this widget, drawn by its own code when the site was built."
    return "This widget has no controls: it shows the picture it ended with when the site was built."
