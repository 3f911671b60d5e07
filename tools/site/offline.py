"""The site offline after one visit: its service worker, and the build every page and the worker carry.

A site served over http(s) (GitHub Pages, any static host) registers its
service worker, ``sw.js`` at the site's root (``static/sw.js``, written here
with the site's build and the files it keeps when installed: the assets, the
index and the review page). Each page then asks it to keep the page, every
picture of its widgets' states, its figures and its notebook (``static/site.js``),
so that a lesson read once works with no network: its widgets, questions and
search. Online, every request goes to the network first, so the reader reads
the site as it is now. Opened from files (``file://``), a page needs no worker:
it loads everything from the disk.

The build (``BUILD_PLACEHOLDER`` in each page's ``<meta name="course-build">``,
then the digest of the site's files) tells a page that the site changed since
the reader last read it in that browser: it says so at its top.
"""

import hashlib
import json

from .render import SiteError

WORKER = "sw.js"
BUILD_PLACEHOLDER = "COURSE-BUILD-PLACEHOLDER"
#: What the worker keeps when it is installed, besides the assets: the pages every page links to.
PAGES = ("index.html", "review.html")


def build_id(stage):
    """The digest of every file of the site in ``stage`` (its pages still holding ``BUILD_PLACEHOLDER``)."""
    digest = hashlib.sha256()
    for path in sorted(p for p in stage.rglob("*") if p.is_file() and p.name != WORKER):
        digest.update(path.relative_to(stage).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def write_worker(stage, static):
    """Stamp every page of ``stage`` with the site's build and write its service worker (from ``static/sw.js``);
    returns the build."""
    build = build_id(stage)
    for page in stage.glob("*.html"):
        text = page.read_text()
        if text.count(BUILD_PLACEHOLDER) != 1:
            raise SiteError(f"{page.name}: its frame should carry the site's build once (tools/site/pages.py)")
        page.write_text(text.replace(BUILD_PLACEHOLDER, build))
    shell = sorted(p.relative_to(stage).as_posix() for p in (stage / "assets").iterdir() if p.is_file()
                   and not p.name.endswith(".txt"))
    shell += [name for name in PAGES if (stage / name).is_file()]
    source = (static / WORKER).read_text()
    (stage / WORKER).write_text(source.replace("'__BUILD__'", json.dumps(build))
                                .replace("__SHELL__", json.dumps(shell)))
    return build
