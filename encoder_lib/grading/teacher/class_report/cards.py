"""The re-teach cards: for a group of learners, what they did, the idea to explain again (the hint ladder's idea
rung) and links to the lesson's section that shows it (``Links``)."""

import os
import re
import urllib.parse
from dataclasses import dataclass
from pathlib import Path

from ...exercises import EXERCISES
from .counts import NOTHING_MEASURED




def heading_anchor(text):
    """The id JupyterLab gives a markdown heading: its text with spaces as hyphens."""
    plain = re.sub(r"[`*_]", "", text).strip()
    return plain.replace(" ", "-")


#: What a URL's fragment may hold as it is (RFC 3986's pchar, "/" and "?"): a heading's ":" and "'" stay.
FRAGMENT_SAFE = "-_.~!$&'()*+,;=:@/?"


@dataclass(frozen=True)
class Links:
    """Where a card's links lead: ``relative`` from ``report/`` into the course's notebooks, and ``lab`` (the
    teacher's JupyterLab at its root folder, ``lab_root``), or None off a hub."""

    lab: str = None
    lab_root: Path = None
    root: Path = None

    def relative(self, lesson, anchor=""):
        path = f"../notebooks/{urllib.parse.quote(lesson)}/{urllib.parse.quote(lesson)}.ipynb"
        return path + (f"#{urllib.parse.quote(anchor, safe=FRAGMENT_SAFE)}" if anchor else "")

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
    server, ``JUPYTERHUB_SERVICE_PREFIX`` (``/user/<name>/``, an address on the hub itself); the folder it
    serves from ``lab_root``, else ``JUPYTER_SERVER_ROOT`` (set in JupyterLab's terminals), else the home."""
    environ = os.environ if environ is None else environ
    if lab_url is not None and not re.fullmatch(r"(https?://[A-Za-z0-9.-]+(:\d+)?)?/[A-Za-z0-9/_.~%@+-]*", lab_url):
        raise ValueError(f"lab_url must be JupyterLab's address, such as https://hub.example.org/user/teacher/ "
                         f"(http or https, no spaces or quotes); got {lab_url!r}")
    lab = lab_url or environ.get("JUPYTERHUB_SERVICE_PREFIX") or None
    served = lab_root or environ.get("JUPYTER_SERVER_ROOT") or Path.home()
    return Links(lab, Path(served), Path(root))


class _CardMarkdown:
    """Markdown of a hint rung as HTML: raw HTML escaped, links to a lesson's section (``#anchor``) made
    relative links into the lesson's notebook; ``anchors`` collects those sections."""

    def __init__(self, links, lesson):
        import mistune

        outer = self
        self.anchors = []

        class Renderer(mistune.HTMLRenderer):
            def link(self, text, url, title=None):
                if url.startswith("#"):
                    outer.anchors.append((urllib.parse.unquote(url[1:]), text))
                    url = links.relative(lesson, urllib.parse.unquote(url[1:]))
                return super().link(text, url, title)

        self.render = mistune.create_markdown(renderer=Renderer(escape=True))


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
            f"the grader measured: {group.key or NOTHING_MEASURED}"))
    if not rungs:
        return Card(group.title, explanation, "", group.lesson, ())
    markdown = _CardMarkdown(links, group.lesson)
    idea = markdown.render(rungs[0])
    return Card(group.title, explanation, idea, group.lesson, tuple(markdown.anchors))


