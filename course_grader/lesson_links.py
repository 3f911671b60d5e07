"""Where a learner's feedback page sends them for an exercise they lost points on: its lesson's section.

The exercise's idea rung (``Exercise.hints[0]``) names the section of its lesson that shows the idea; the page
links there: on a JupyterHub (``c.EncoderCourse.hub_url``, else the hub ``make grade`` runs on), into the
learner's JupyterLab through ``user-redirect``, at the lesson nbgitpuller pulled; elsewhere on the course's website
(``c.EncoderCourse.site_url``, else the README's Binder badge's GitHub Pages address).
"""

import os
import re
import urllib.parse
from dataclasses import dataclass
from pathlib import Path

from encoder_lib.grading.exercises import EXERCISES

from .class_report.cards import FRAGMENT_SAFE, site_anchor
from .course_config import course_config

#: Where the nbgitpuller link puts the lessons in a learner's home (``tools.classroom.TARGET``).
HUB_FOLDER = "encoder-course"
_LINK = re.compile(r"\[([^\]]+)\]\(#([^)\s]+)\)")
#: What the README's Binder badge names until a fork sets its own GitHub owner and repository.
PLACEHOLDER = ("OWNER", "REPO")
_BADGE = re.compile(r"\(https://mybinder\.org/v2/gh/([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+)/")


def exercise_section(name):
    """``(anchor, heading)`` of the lesson's section an exercise's idea rung links to, or None."""
    exercise = EXERCISES.get(name)
    found = _LINK.search(exercise.hints[0]) if exercise and exercise.hints else None
    return (urllib.parse.unquote(found.group(2)), found.group(1)) if found else None


def _badge(root):
    """``(owner, repository)`` the README's Binder badge names, or None."""
    try:
        found = _BADGE.search((Path(root) / "README.md").read_text(errors="replace"))
    except OSError:
        return None
    return (found.group(1), found.group(2)) if found else None


def published_site(root):
    """The course website's GitHub Pages address, from the README's Binder badge (as ``make site`` reads it), or
    None: also where the badge still names the course's placeholder, ``OWNER/REPO``, which a fork replaces."""
    badge = _badge(root)
    if badge is None or badge == PLACEHOLDER:
        return None
    return f"https://{badge[0].lower()}.github.io/{badge[1]}/"


def unlinked_warning(root, links=None):
    """A sentence for the teacher where the feedback pages can link no lesson because the README's Binder badge
    still names ``OWNER/REPO`` and no setting says where the lessons are; else None."""
    links = lesson_links(root) if links is None else links
    if links.hub or links.site or _badge(root) != PLACEHOLDER:
        return None
    return ("warning: the feedback pages link no lesson section: the README's Binder badge still names OWNER/REPO, "
            "the placeholder a fork replaces with its own GitHub owner and repository (the course's website is then "
            "at https://<owner>.github.io/<repo>/); or set c.EncoderCourse.site_url (the website's address) or "
            "c.EncoderCourse.hub_url (your JupyterHub's) in nbgrader_config.py. The pages name each section "
            "without a link meanwhile.")


@dataclass(frozen=True)
class LessonLinks:
    """The hub's address (its base path or URL, ending in ``/``) or the website's; None where unknown."""

    hub: str = None
    site: str = None

    def section(self, lesson, anchor):
        """``(address, where in words)`` of a lesson's section, or None."""
        if self.hub:
            path = urllib.parse.quote(f"{HUB_FOLDER}/{lesson}/{lesson}.ipynb")
            return (f"{self.hub}hub/user-redirect/lab/tree/{path}#{urllib.parse.quote(anchor, safe=FRAGMENT_SAFE)}",
                    "in your JupyterLab on the hub")
        if self.site:
            return f"{self.site}{urllib.parse.quote(lesson)}.html#{site_anchor(anchor)}", "on the course's website"
        return None


def _address(value, what):
    if value is None:
        return None
    if not isinstance(value, str) or not re.fullmatch(r"(https?://[A-Za-z0-9.-]+(:\d+)?)?/[A-Za-z0-9/_.~%@+-]*", value):
        raise ValueError(f"c.EncoderCourse.{what} in nbgrader_config.py must be an address such as "
                         f"https://hub.example.org/ (http or https, no spaces or quotes); got {value!r}")
    return value if value.endswith("/") else value + "/"


def lesson_links(root, environ=None):
    """The ``LessonLinks`` of the course at ``root`` (see the module's docstring); ValueError on a setting that is
    not an address."""
    environ = os.environ if environ is None else environ
    settings = course_config(root).EncoderCourse
    hub = _address(settings.get("hub_url"), "hub_url")
    if hub is None and re.fullmatch(r"/[A-Za-z0-9/_.~%@+-]*", environ.get("JUPYTERHUB_BASE_URL") or ""):
        hub = _address(environ["JUPYTERHUB_BASE_URL"], "hub_url")  # make grade in a terminal of the hub
    site = _address(settings.get("site_url"), "site_url") or published_site(root)
    return LessonLinks(hub, None if hub else site)
