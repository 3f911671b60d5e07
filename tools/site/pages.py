"""The site's pages as HTML: the frame every page shares, a lesson's cells and widgets, the index.

Where the course lives comes from one place, the README's Binder badge
(``course_links``): the repository the site links back to, and each lesson's
"Run this lesson" address (the badge's, opening that lesson's student version) and its "Open in Colab" one.
While the badge names the placeholder ``OWNER/REPO`` there is no such place: the pages link none of them (each
says why), and ``CourseLinks.left_out`` lists every link left out, which `make site` prints.
"""

import html
import json
import posixpath
import re
from collections import Counter
from dataclasses import dataclass, field

from .. import colab, publish_student
from . import phone
from .offline import BUILD_PLACEHOLDER
from .render import _PLACED, SiteError, markdown_html

TITLE = "The Transformer encoder block"
CSP = "default-src 'self'; img-src 'self'; style-src 'self'; script-src 'self'"
BINDER_BADGE = re.compile(r"\[!\[Binder\]\([^)]*\)\]\((?P<url>https://mybinder\.org/v2/gh/(?P<owner>[^/\s]+)/"
                          r"(?P<repo>[^/\s]+)/(?P<ref>[^?\s]+)\?urlpath=lab/tree/(?P<path>[^\s)&#]+))\)")


@dataclass(frozen=True)
class CourseLinks:
    """Where the course lives, read from the README's Binder badge; every address is None while the badge names
    the placeholder ``OWNER/REPO`` (``named`` False), and ``left_out`` then counts the links each page left out."""

    owner: str
    repo: str
    ref: str
    folder: str  # where Binder's copy keeps the lessons: "student/"
    left_out: Counter = field(default_factory=Counter, compare=False, repr=False)

    @property
    def named(self):
        return (self.owner, self.repo) != colab.PLACEHOLDER

    @property
    def repository(self):
        return f"https://github.com/{self.owner}/{self.repo}" if self.named else None

    @property
    def published(self):
        """Where GitHub Pages publishes the site (`make publish-site`): what a printed page gives as its links'
        addresses."""
        return f"https://{self.owner.lower()}.github.io/{self.repo}/" if self.named else None

    def binder(self, lesson):
        """The Binder badge's address, opening ``lesson``'s notebook (the student version)."""
        if not self.named:
            return None
        return (f"https://mybinder.org/v2/gh/{self.owner}/{self.repo}/{self.ref}"
                f"?urlpath=lab/tree/{self.folder}{lesson}/{lesson}.ipynb")

    def source(self, path):
        """A file of the repository, on GitHub."""
        return f"{self.repository}/blob/{self.ref}/{path}" if self.named else None

    def colab(self, lesson):
        """Colab's address of ``lesson``'s student version (``make publish-student``'s branch); None for OWNER/REPO."""
        return colab.colab_url((self.owner, self.repo), publish_student.BRANCH, lesson)

    def missing(self, what):
        """Count a link left out for want of a repository (``what``: which); returns None, the link's address."""
        self.left_out[what] += 1

    def report(self):
        """What `make site` says of the links it left out, or None: every link leads somewhere."""
        if not self.left_out:
            return None
        return ("the README's Binder badge names OWNER/REPO, no repository, so the site links none of these (each "
                "page says why; put your repository in the badge's line): " +
                "; ".join(f"{what} ({count})" for what, count in sorted(self.left_out.items())))


def course_links(readme):
    """The ``CourseLinks`` of the README's text ``readme`` (its one Binder badge)."""
    found = list(BINDER_BADGE.finditer(readme))
    if len(found) != 1:
        raise SiteError(f"README.md should have one Binder badge ([![Binder](...)](https://mybinder.org/v2/gh/...)), "
                        f"found {len(found)}")
    match = found[0]
    path = match.group("path")
    parts = path.split("/")
    if len(parts) < 2 or not parts[-1].endswith(".ipynb"):
        raise SiteError(f"the Binder badge should open a lesson's notebook (<folder>/<lesson>/<lesson>.ipynb), "
                        f"not {path}")
    return CourseLinks(match.group("owner"), match.group("repo"), match.group("ref"),
                       "/".join(parts[:-2]) + "/" if len(parts) > 2 else "")


def link_rewriter(links, here, lessons):
    """``link_for(url)`` for a page made from the file at ``here`` (a path in the repository): a link to a
    lesson's notebook goes to its page, one to a page of the site stays, another relative link goes to the
    file on GitHub."""
    pages = {f"notebooks/{name}/{name}.ipynb": f"{name}.html" for name in lessons}
    site = {"index.html", *pages.values()}

    def link_for(url):
        if re.match(r"[a-z][a-z0-9+.-]*:", url, re.I) or url.startswith("#") or not url or url.split("#")[0] in site:
            return url
        path, _, fragment = url.partition("#")
        target = posixpath.normpath(posixpath.join(posixpath.dirname(here), path))
        if target in pages:
            return pages[target] + (f"#{fragment}" if fragment else "")
        if not links.named:
            return links.missing(f"the repository's {target}")
        return links.source(target) + (f"#{fragment}" if fragment else "")

    link_for.published = links.published
    return link_for


def esc(text):
    return html.escape(str(text), quote=True)


def page(title, body, links, run=None, assets="assets/", scripts=(), skip_to=None):
    """A whole page: ``body`` (HTML) in the site's frame, with a "Run this lesson" link when ``run`` is
    ``(lesson, its Binder address)``; ``scripts``: files of ``assets`` it loads before the site's own; ``skip_to``:
    the id of the page's first questions, which a skip link at its top leads to, past the code above them."""
    skips = f'\n<a class="skip" href="#{esc(skip_to)}">Skip to the questions</a>' if skip_to else ""
    loaded = "".join(f'<script src="{assets}{esc(name)}"></script>\n' for name in scripts)
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="{CSP}">
<meta name="course-build" content="{BUILD_PLACEHOLDER}">
<title>{esc(title)}</title>
<link rel="stylesheet" href="{assets}site.css">
</head>
<body>
<a class="skip" href="#main">Skip to the lesson</a>{skips}
{header(run, links)}
<main id="main">
{body}
</main>
<footer class="site"><div class="inner">
<p>An open course; its notebooks, library and tests are {repository_html(links)}.
The widgets on these pages show pictures drawn by the widgets' own code when the site was built; in JupyterLab
they are drawn as you move them.</p>
<p class="offline-status" role="status" hidden></p>
</div></footer>
{loaded}<script src="{assets}site.js"></script>
</body>
</html>
"""


def repository_html(links):
    """Where the course's repository is: a link, or why there is none."""
    if not links.named:
        links.missing("the footer's link to the repository")
        return "in its repository, which this copy of the course does not name (its README still says OWNER/REPO)"
    return f'at <a href="{esc(links.repository)}">{esc(links.repository)}</a>'


def contents(headings):
    """The page's contents: a list of its sections (``headings``: ``(level, id, HTML)``, levels 2 and 3), folded
    in a ``<details>`` that site.js opens on a wide screen."""
    items, open_h2 = [], False
    for level, anchor, text in headings:
        text = _PLACED.sub("", text)
        if level == 2:
            items.append(("</ol></li>" if open_h2 == "sub" else "</li>" if open_h2 else "")
                         + f'<li><a href="#{esc(anchor)}">{text}</a>')
            open_h2 = True
        elif level == 3 and open_h2:
            items.append(("<ol>" if open_h2 is True else "") + f'<li><a href="#{esc(anchor)}">{text}</a></li>')
            open_h2 = "sub"
    if not items:
        return ""
    items.append("</ol></li>" if open_h2 == "sub" else "</li>")
    count = sum(1 for level, _, _ in headings if level == 2)
    return (f'<nav class="toc" aria-label="Contents"><details><summary>Contents: {count} sections</summary>'
            f'<ol>{"".join(items)}</ol></details></nav>')


#: Why a page has no Binder or Colab link: the copy of the course it was built from names no repository.
NO_REPOSITORY = ("no link, because this copy of the course names no GitHub repository: the README's Binder badge "
                 "still says <code>OWNER/REPO</code>, which a fork replaces with its own.")


def colab_note(links, lesson):
    """The lesson on Google Colab (its first cell installs the library there); no link for ``OWNER/REPO``."""
    if links.colab(lesson) is None:
        links.missing("Open in Colab")
        return f"Google Colab: {NO_REPOSITORY}"
    return (f'<a class="colab-link" href="{esc(links.colab(lesson))}">Open in Colab</a>: Google\'s notebooks, with a '
            "Google account; the notebook's first cell installs the course's library, <code>encoder_lib</code>, "
            "there (about a minute). Save a copy in your Drive to keep your work.")


def open_lesson(lesson, links, download):
    """Where to open the lesson: on Binder, on Colab, as a notebook to download (``download``: its address)."""
    binder = links.binder(lesson)
    if binder is None:  # no repository: neither Binder nor Colab has a copy to open, and one line says why
        links.missing("On Binder")
        links.missing("Open in Colab")
        online = f"<li>Binder and Google Colab: {NO_REPOSITORY}</li>"
    else:
        online = (f'<li><a class="binder-link" href="{esc(binder)}">On Binder</a>: JupyterLab in your browser, '
                  "nothing to install, with the exercises to write (the first start after a change to the course "
                  f"takes minutes).</li><li>{colab_note(links, lesson)}</li>")
    return (f'<section class="open-lesson" aria-labelledby="open-{esc(lesson)}">'
            f'<p class="open-title" id="open-{esc(lesson)}">Open this lesson</p><ul>{online}'
            f'<li><a class="download-notebook" href="{esc(download)}" download>Download the notebook</a> '
            f'(<code>{esc(lesson)}.ipynb</code>, the exercises left for you): it runs in the course\'s JupyterLab, '
            'with <code>make lab</code> in a copy of the course, which installs its library.</li></ul></section>')


def header(run=None, links=None):
    """Every page's header: the course's name, "Run this lesson" when ``run`` is ``(lesson, its Binder address)``
    (none when the address is None: ``links`` names no repository), the search box (shown by site.js) and the place
    of its results."""
    run_html = ""
    if run and run[1] is None:
        links.missing("Run this lesson")
    elif run:
        run_html = (f'<a class="run-lesson" href="{esc(run[1])}">Run this lesson</a>'
                    '<span class="run-note">in JupyterLab on Binder, with its exercises to write</span>')
    return f"""<header class="site"><div class="inner">
<a class="course" href="index.html">{esc(TITLE)}</a>
{run_html}
<form class="search" role="search" hidden><label for="search">Search the course</label>
<input type="search" id="search" name="q" autocomplete="off" spellcheck="false" aria-controls="search-results"></form>
</div></header>
<section class="search-results" id="search-results" aria-label="Search results" hidden>
<p class="search-status" role="status" aria-live="polite"></p><ol></ol></section>"""


# ------------------------------------------------------------------ widgets

def _json(data):
    """``data`` as JSON that is safe inside a ``<script>`` element."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).replace("</", "<\\/")


def explorer_html(widget_id, cell_id, explorer, data, note):
    """A widget as HTML controls, its first picture and readout, and its states' data for ``site.js``."""
    start = data["states"][data["start"]]
    at = [int(i) for i in data["keys"][data["start"]].split(",")] if data["keys"][data["start"]] else []
    limits = start[4] if len(start) > 4 else None
    controls = [control_html(f"{widget_id}-c{ci}", ci, spec, at[ci], limits[ci] if limits else None)
                for ci, spec in enumerate(data["controls"])]
    page_data = {key: data[key] for key in ("controls", "keys", "states", "start", "redirect", "text_px")
                 if key in data}
    controls_html = f'<div class="explorer-controls">{"".join(controls)}</div>' if controls else ""
    if "drawing" in data:  # site.js draws it, and its printed copy, from the numbers in its data
        page_data["drawing"] = data["drawing"]
        picture, printed = "", '<div class="explorer-printed-drawing"></div>'
    else:
        picture = picture_html(start[0], start[1], start[2], data["size"], data["phone_size"], data["text_px"],
                               "explorer-picture")
        printed = picture_html(start[0], None, start[2], data["size"], None, data["text_px"], "explorer-printed")
    return (f'<section class="explorer" id="{widget_id}" data-cell="{esc(cell_id)}" '
            f'data-widget="{esc(type(explorer).__name__)}" aria-labelledby="{widget_id}-title">\n'
            f'<p class="explorer-title" id="{widget_id}-title">{esc(explorer.title)}</p>\n'
            f'<p class="explorer-caption">{explorer.caption}</p>\n'
            f'{controls_html}\n{extras_html(widget_id, explorer.extras)}'
            f'<div class="explorer-figure">{picture}</div>\n'
            f'<p class="explorer-readout" role="status" aria-live="polite" aria-atomic="true">{start[3]}</p>\n'
            f'<div class="explorer-print">{printed}<p>{start[3]}</p><p class="explorer-note">{PRINTED}</p></div>\n'
            f'<p class="explorer-note">{esc(note)}</p>\n'
            f'<script type="application/json" class="explorer-data">{_json(page_data)}</script>\n'
            '</section>')


def control_html(cid, ci, spec, vi, allowed):
    """Control ``ci`` (``spec``: its kind, label and values' labels) as HTML, id ``cid``, at value ``vi``;
    ``allowed``: the values it offers there, when not all."""
    labels = spec["labels"]
    if spec["kind"] == "slider":
        low, high = (allowed[0], allowed[-1]) if allowed else (0, len(labels) - 1)
        return (f'<div class="control slider"><label for="{cid}">{esc(spec["label"])}</label>'
                f'<input type="range" id="{cid}" data-control="{ci}" min="{low}" max="{high}" step="1" '
                f'value="{vi}" aria-valuetext="{esc(labels[vi])}">'
                f'<output for="{cid}" data-control="{ci}">{esc(labels[vi])}</output></div>')
    if spec["kind"] == "toggle":
        options = "".join(
            f'<input type="radio" id="{cid}-{k}" name="{cid}" data-control="{ci}" value="{k}"'
            f'{" checked" if k == vi else ""}{" disabled" if allowed and k not in allowed else ""}>'
            f'<label for="{cid}-{k}">{esc(label)}</label>' for k, label in enumerate(labels))
        return (f'<fieldset class="control toggle"><legend>{esc(spec["label"])}</legend>'
                f'<span class="options">{options}</span></fieldset>')
    checked = " checked" if labels[vi] == "on" else ""
    return (f'<div class="control checkbox"><input type="checkbox" id="{cid}" data-control="{ci}"'
            f'{checked}><label for="{cid}">{esc(spec["label"])}</label></div>')


def extras_html(widget_id, extras):
    """What a widget shows beside its controls (a training run's progress bar), as HTML."""
    parts = []
    for extra in extras:
        if hasattr(extra, "max") and hasattr(extra, "value") and type(extra).__name__.endswith("Progress"):
            parts.append(f'<p class="explorer-extra"><label>{esc(extra.description)} '
                         f'<progress max="{extra.max}" value="{extra.value}">{extra.value} of {extra.max}</progress>'
                         f'</label></p>')
        else:
            raise SiteError(f"{widget_id}: the site cannot show a {type(extra).__name__} beside a widget yet")
    return "".join(parts)


#: Under a widget on paper (the print style sheet shows the widget as it starts, without its controls).
PRINTED = "Printed as the widget starts; on the course's web page or in JupyterLab, its controls move it."


def picture_html(src, phone_src, alt, size, phone_size, text_px, css_class):
    """An ``<img>`` (``css_class``) of ``src``, ``size`` (width, height) px, and, when ``phone_src`` is given, a
    ``<picture>`` that shows ``phone_src`` (``phone_size``) on a screen too narrow for ``src``. Each carries the
    smallest text drawn in it, in its own pixels (``text_px``: the two pictures'), as ``data-text-px``."""
    width, height = size
    img = (f'<img class="{css_class}" src="{esc(src)}" alt="{esc(alt)}" width="{width}" height="{height}" '
           f'data-text-px="{text_px[0]}">')
    if phone_src is None:
        return img
    phone_width, phone_height = phone_size
    return (f'<picture><source media="{phone.media_query(width)}" srcset="{esc(phone_src)}" '
            f'width="{phone_width}" height="{phone_height}" data-text-px="{text_px[1]}">{img}</picture>')


# ------------------------------------------------------------------ lessons

EXERCISE_LABELS = {
    "answer": "Your answer: in JupyterLab you write this function here (Run this lesson)",
    "self_check": "Self-check: in JupyterLab it checks your answer when you run it",
    "tests": "Visible tests: in JupyterLab they run your answer on the self-check's cases",
}


def exercise_part(cell):
    """``"answer"``, ``"self_check"`` or ``"tests"`` for an exercise's cell (nbgrader's metadata); else None."""
    meta = cell.get("metadata", {}).get("nbgrader", {})
    if not meta:
        return None
    grade_id = meta.get("grade_id", "")
    if meta.get("solution"):
        return "answer"
    if meta.get("grade"):
        return "tests"
    if grade_id.endswith("_self_check"):
        return "self_check"
    return "tests" if meta.get("locked") else None


def lesson_nav(lessons, name, titles):
    """Links to the lessons before and after ``name``."""
    i = lessons.index(name)
    items = []
    if i > 0:
        items.append(f'<li>Before: <a href="{lessons[i - 1]}.html">{esc(titles[lessons[i - 1]])}</a></li>')
    if i + 1 < len(lessons):
        items.append(f'<li>Next: <a href="{lessons[i + 1]}.html">{esc(titles[lessons[i + 1]])}</a></li>')
    return f'<nav class="lessons" aria-label="Lessons"><ul>{"".join(items)}</ul></nav>' if items else ""


def notebook_title(notebook, fallback):
    """A notebook's title: its first ``# `` heading, formulas left as their source."""
    for cell in notebook.cells:
        if cell.cell_type == "markdown":
            match = re.search(r"^# (.+)$", cell.source, re.M)
            if match:
                return match.group(1).strip()
    return fallback


def minutes(notebook):
    """The minutes a lesson says it takes ("**Time:** about 35 minutes"), or None."""
    for cell in notebook.cells:
        if cell.cell_type == "markdown":
            match = re.search(r"\*\*Time:\*\*\s*about\s+(\d+)\s+minutes", cell.source)
            if match:
                return int(match.group(1))
    return None


# ------------------------------------------------------------------ the index

def run_course(links, first):
    """The index's "Run the course" link, on Binder from lesson ``first``; nothing without a repository."""
    if not links.named:
        links.missing("Run the course")
        return ""
    return (f'<p><a class="run-lesson" href="{esc(links.binder(first))}">Run the course</a> '
            f'<span class="run-note">in JupyterLab on Binder, starting at {esc(first)}</span></p>\n')


def readme_parts(readme):
    """``(title, intro markdown, {lesson: what it answers})`` from the README."""
    title = re.search(r"^# (.+)$", readme, re.M)
    if not title:
        raise SiteError("README.md has no title (a first line '# ...')")
    body = readme[title.end():]
    intro = body[:body.index("\n## ")] if "\n## " in body else body
    intro = "\n".join(line for line in re.sub(r"<!--.*?-->", "", intro, flags=re.S).splitlines()
                      if not line.startswith("[![")).strip()
    section = re.search(r"^## The lessons\n(.*?)(?=^## |\Z)", readme, re.M | re.S)
    if not section:
        raise SiteError("README.md has no '## The lessons' section with the lessons' table")
    rows = {}
    for line in section.group(1).splitlines():
        match = re.match(r"\|\s*`(\w+)`\s*\|(.*)\|\s*$", line)
        if match:
            rows[match.group(1)] = match.group(2).strip()
    if not rows:
        raise SiteError("README.md's '## The lessons' section has no table of lessons (| `00_start_here` | ... |)")
    return title.group(1).strip(), intro, rows


def index_body(readme, start_notebook, lessons, titles, times, links):
    """The index: the start lesson's opening, the README's table of lessons, how the site works."""
    title, intro, rows = readme_parts(readme)
    missing = [name for name in lessons if name not in rows]
    if missing:
        raise SiteError(f"README.md's table of lessons has no row for {', '.join(missing)}")
    link_for = link_rewriter(links, "README.md", lessons)
    opening = start_notebook.cells[0].source
    opening = "\n".join(line for line in opening.splitlines()
                        if not line.startswith("# ") and not line.startswith("**Time:**")).strip()
    table = ["| lesson | what it answers, with which widget | minutes |", "| --- | --- | --- |"]
    for name in lessons:
        table.append(f"| [{titles[name]}]({name}.html) | {rows[name]} | {times.get(name) or ''} |")
    where = (f"open the lesson with **Run this lesson** (JupyterLab on Binder, nothing to install), or on your own "
             f"machine with `make lab` in a copy of the [course's repository]({links.repository})." if links.named
             else "run `make lab` in a copy of the course's repository, on your own machine (this copy of the course "
                  "names no repository, so its pages offer no Binder).")
    how = ("Every lesson is a page here, made from its notebook: the text, the code and what it printed, and its "
           "widgets, which work on the page. Each state of a widget was drawn by the widget's own code when the site "
           "was built, so nothing runs but the page. The exercises are shown as you get them, with the function left "
           f"for you to write: to write them, and to run the code, {where}")
    ids = set()
    toc = contents([(2, "lessons", "The lessons"), (2, "how", "Reading the course here"),
                    (2, "about", "About the course")])
    return (f'<h1 id="top">{esc(title)}</h1>\n' + toc
            + markdown_html(opening, link_for, ids)
            + run_course(links, lessons[0])
            + "<h2 id=\"lessons\">The lessons</h2>\n" + markdown_html("\n".join(table), link_for, ids)
            + "<h2 id=\"how\">Reading the course here</h2>\n" + markdown_html(how, link_for, ids)
            + "<h2 id=\"about\">About the course</h2>\n" + markdown_html(intro, link_for, ids))
