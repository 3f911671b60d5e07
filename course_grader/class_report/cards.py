"""The re-teach cards: for a group of learners, what they did, the idea to explain again (the hint ladder's idea
rung) and links to the lesson's section that shows it (``Links``)."""

import os
import re
import urllib.parse
from dataclasses import dataclass
from pathlib import Path

from encoder_lib.grading.exercises import EXERCISES


#: What a URL's fragment may hold as it is (RFC 3986's pchar, "/" and "?"): a heading's ":" and "'" stay.
FRAGMENT_SAFE = "-_.~!$&'()*+,;=:@/?"


def site_anchor(anchor):
    """The id the course's website (``make site``, ``tools/site``) gives the heading JupyterLab calls ``anchor``:
    its words, lower case, joined by hyphens."""
    words = re.findall(r"\w+", anchor.replace("-", " ").lower())
    return "-".join(words) or "section"


#: JupyterLab's address where none is given off a hub: its own default, started from the course folder.
DEFAULT_LAB = "http://localhost:8888/"


@dataclass(frozen=True)
class Links:
    """Where a card's links lead, never to a notebook's raw text: the lesson's page on the course's website where
    ``site/`` is there (``make site``; ``site`` its folder, relative from ``report/``), and the lesson in the
    teacher's JupyterLab (``lab``, serving ``lab_root``)."""

    lab: str = None
    lab_root: Path = None
    root: Path = None
    site: str = None

    def relative(self, lesson, anchor=""):
        """The lesson's section: on the website where it is built, else in JupyterLab ("" where neither)."""
        return self.on_site(lesson, anchor) or self.in_lab(lesson, anchor) or ""

    def on_site(self, lesson, anchor=""):
        """The lesson's page on the course's website, at the section, or None without ``site/``."""
        if not self.site:
            return None
        return f"{self.site}{urllib.parse.quote(lesson)}.html" + (f"#{site_anchor(anchor)}" if anchor else "")

    def in_lab(self, lesson, anchor=""):
        """The address that opens the lesson in the teacher's JupyterLab, or None."""
        if not self.lab or self.lab_root is None or self.root is None:
            return None
        notebook = Path(self.root).resolve() / "notebooks" / lesson / f"{lesson}.ipynb"
        try:
            inside = notebook.relative_to(Path(self.lab_root).resolve())
        except ValueError:
            return None
        tree = urllib.parse.quote(inside.as_posix())
        return f"{self.lab.rstrip('/')}/lab/tree/{tree}" + (
            f"#{urllib.parse.quote(anchor, safe=FRAGMENT_SAFE)}" if anchor else "")


def lab_links(root, lab_url=None, lab_root=None, environ=None):
    """The ``Links`` of a course at ``root``: JupyterLab's address from ``lab_url``, else, in a JupyterHub
    server, ``JUPYTERHUB_SERVICE_PREFIX`` (``/user/<name>/``, an address on the hub itself), else JupyterLab's
    default (``DEFAULT_LAB``, started from the course folder); the folder it serves from ``lab_root``, else
    ``JUPYTER_SERVER_ROOT`` (set in JupyterLab's terminals), else the home on a hub and the course folder off one;
    and the course's website where ``site/`` was built (``make site``)."""
    environ = os.environ if environ is None else environ
    if lab_url is not None and not re.fullmatch(r"(https?://[A-Za-z0-9.-]+(:\d+)?)?/[A-Za-z0-9/_.~%@+-]*", lab_url):
        raise ValueError(f"lab_url must be JupyterLab's address, such as https://hub.example.org/user/teacher/ "
                         f"(http or https, no spaces or quotes); got {lab_url!r}")
    lab = lab_url or environ.get("JUPYTERHUB_SERVICE_PREFIX") or None
    served = lab_root or environ.get("JUPYTER_SERVER_ROOT") or (Path.home() if lab else root)
    site = "../site/" if (Path(root) / "site" / "index.html").is_file() else None
    return Links(lab or DEFAULT_LAB, Path(served), Path(root), site)


def _card_markdown(links, lesson):
    """``(render, anchors)``: markdown of a hint rung as HTML, raw HTML escaped, links to a lesson's section
    (``#anchor``) made links to that section on the course's website or in JupyterLab (``Links.relative``), each
    collected in ``anchors``."""
    import mistune

    anchors = []

    class Renderer(mistune.HTMLRenderer):
        def link(self, text, url, title=None):
            if url.startswith("#"):
                anchors.append((urllib.parse.unquote(url[1:]), text))
                url = links.relative(lesson, urllib.parse.unquote(url[1:]))
                if not url:
                    return text
            return super().link(text, url, title)

    return mistune.create_markdown(renderer=Renderer(escape=True)), anchors


@dataclass(frozen=True)
class Card:
    """A re-teach card: what the learners did, the idea (HTML), and where the lesson shows it."""

    title: str
    explanation: str
    idea: str
    lesson: str
    sections: tuple  # (anchor, link text as HTML)


#: Where a note's diagnosis starts (verdict.Verdict.explanation writes these).
_MEASURED = ("What the checks measured: ", "What the other checks measured: ")


def _measured(note, most=400):
    """The diagnosis a grader's note gives, in the note's own words (its first sentence, cut at ``most``), or ''.

    >>> _measured("x: values differ. What the checks measured: your rows sum to 2. The same holds on 1 other.")
    'your rows sum to 2.'
    """
    for lead in _MEASURED:
        if lead in (note or ""):
            text = note.split(lead, 1)[1].strip()
            first = re.split(r"(?<=[.?!])\s+(?=[A-Z])", text, maxsplit=1)[0]
            return first if len(first) <= most else first[:most - 1].rstrip() + "…"
    return ""


def _mistake(exercise, name):
    return next((m for m in exercise.mistakes if m.name == name), None) if exercise else None


def card(group, links):
    """The re-teach card of a group: a named mistake's own idea rung if it has one, else its exercise's."""
    exercise = EXERCISES.get(group.exercise)
    mistake = _mistake(exercise, group.key) if group.named else None
    rungs = (mistake.hints if mistake and mistake.hints else exercise.hints if exercise else ()) or ()
    if group.named:
        explanation = mistake.explanation if mistake else "a mistake the course's catalogue no longer names"
    else:
        measured = _measured(group.example_note)
        explanation = ("no catalogued mistake explains it; " + (
            f"what the grader measured on {group.example_student}'s answer: {measured}" if measured else
            f"the grader measured: {group.key}" if group.key else
            "the checks measured nothing the grader can say in words; the answer most of them wrote is below"))
    if not rungs:
        return Card(group.title, explanation, "", group.lesson, ())
    render, anchors = _card_markdown(links, group.lesson)
    return Card(group.title, explanation, render(rungs[0]), group.lesson, tuple(anchors))


