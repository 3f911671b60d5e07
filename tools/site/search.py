"""The site's search: every section of every lesson, indexed by MiniSearch when the site is built.

MiniSearch (npm, pinned in package.json and package-lock.json; `make site`
installs it with `npm ci`) is a small full-text search library. The index is
built here, by MiniSearch itself run in Node (``INDEXER``), from one document
per section of each page: its lesson, its heading, its address and its words,
prose and code together (a learner looks for ``keepdims`` as often as for
"mean pooling"). The page loads the library and the index as two scripts of
the site's own (``assets/minisearch.js``, ``assets/search-index.js``), the first
time the search box is used: nothing is fetched, so it works from ``file://``
and offline. ``SEARCH_OPTIONS`` are the options the index is built with and
searched with; site.js reads them from the index's script.
"""

import html
import json
import re
import shutil
import subprocess
from dataclasses import dataclass, field

from ..course import ROOT
from .render import SiteError

PACKAGE = "minisearch"
LIBRARY = ROOT / "node_modules" / PACKAGE / "dist" / "umd" / "index.js"  # the page's: a plain script
FOR_NODE = ROOT / "node_modules" / PACKAGE / "dist" / "cjs" / "index.cjs"  # the same library, for Node
LICENSE = ROOT / "node_modules" / PACKAGE / "LICENSE.txt"
#: The index's options: the fields searched and kept, and how a query matches (site.js searches with them).
SEARCH_OPTIONS = {"fields": ["title", "text"], "storeFields": ["title", "lesson", "url"],
                  "searchOptions": {"boost": {"title": 3}, "prefix": True, "fuzzy": 0.15, "combineWith": "AND"}}
INDEXER = r"""
const loaded = require(process.argv[1]);
const MiniSearch = loaded.default || loaded;
const fs = require('fs');
const {documents, options} = JSON.parse(fs.readFileSync(0, 'utf8'));
const index = new MiniSearch(options);
index.addAll(documents);
process.stdout.write(JSON.stringify(index));
"""


@dataclass
class Section:
    """One document of the index: a section of a page, and the words under its heading."""

    lesson: str
    title: str
    url: str
    words: list = field(default_factory=list)


def sections(name, lesson_title, page_html):
    """The sections of a page's HTML ``page_html`` (``name``.html): one per ``<h2>``, the part before the first
    one under the lesson's own title, each with its plain words (formulas as their LaTeX source, code as written)."""
    body = page_html.split("<main", 1)[-1].split("</main>", 1)[0]
    body = re.sub(r"<script.*?</script>", " ", body, flags=re.S)
    # what every page has (where to open it, its contents, the lessons before and after, a widget's printed copy),
    # and the course's solutions, which a learner opens by asking, never by searching
    body = re.sub(r'<section class="open-lesson".*?</section>|<nav class="(?:toc|lessons)".*?</nav>'
                  r'|<div class="explorer-print">.*?</div>\n|<details class="solution".*?</details>', " ", body,
                  flags=re.S)
    body = re.sub(r"<math.*?<annotation[^>]*>(.*?)</annotation>.*?</math>", r" \1 ", body, flags=re.S)
    found = [Section(lesson_title, lesson_title, f"{name}.html")]
    for piece in re.split(r"(<h2 id=\"[^\"]*\">.*?</h2>)", body, flags=re.S):
        heading = re.match(r"<h2 id=\"([^\"]*)\">(.*?)</h2>", piece, flags=re.S)
        if heading:
            found.append(Section(lesson_title, _plain(heading.group(2)), f"{name}.html#{heading.group(1)}"))
        else:
            found[-1].words.append(_plain(piece))
    return [s for s in found if " ".join(s.words).strip() or s.title != lesson_title]


def _plain(markup):
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", markup)).split())


def node():
    """The Node.js that builds the index, or a SiteError that says how to get it and MiniSearch."""
    executable = shutil.which("node")
    if executable is None or not LIBRARY.is_file() or not FOR_NODE.is_file():
        raise SiteError("the site's search needs Node.js and MiniSearch: install Node.js (with npm) and run "
                        "`npm ci` in the course's folder (`make site` does), which installs the version "
                        "package-lock.json pins into node_modules/")
    return executable


def build_index(documents, assets):
    """Write ``assets/search-index.js`` (the index MiniSearch built from ``documents``, a list of ``Section``) and
    ``assets/minisearch.js`` (the library, with its licence beside it); returns the index's size in bytes."""
    payload = {"documents": [{"id": k, "title": d.title, "lesson": d.lesson, "url": d.url,
                              "text": " ".join(d.words)} for k, d in enumerate(documents)],
               "options": SEARCH_OPTIONS}
    result = subprocess.run([node(), "-e", INDEXER, str(FOR_NODE)], input=json.dumps(payload), capture_output=True,
                            text=True, timeout=120)
    if result.returncode != 0:
        raise SiteError(f"MiniSearch could not build the site's search index: {result.stderr.strip()[-500:]}")
    version = json.loads((LIBRARY.parents[2] / "package.json").read_text())["version"]
    script = (f"// The course's search index, built by MiniSearch {version} when the site was built "
              "(tools/site/search.py).\n"
              f"window.courseSearch = {{options: {json.dumps(SEARCH_OPTIONS)}, index: {result.stdout}}};\n")
    (assets / "search-index.js").write_text(script)
    shutil.copy2(LIBRARY, assets / "minisearch.js")
    shutil.copy2(LICENSE, assets / "minisearch.LICENSE.txt")
    return len(script.encode())
