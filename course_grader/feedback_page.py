"""The page each learner gets from ``make grade``: ``feedback/<student_id>/index.html``, and one per lesson beside it.

Self-contained (no script, nothing fetched, as its Content-Security-Policy holds; formulas as MathML), readable on
a phone 375 px wide; what it says is docs/teaching/feedback.md's section 4.
"""

import functools
import html
import re
from pathlib import Path

from encoder_lib.grading.exercises import EXERCISES

from . import gradebook, ids
from .downloads import platform_hand_ins
from .files import make_folder, page_head, plain_text, write_file
from .lesson_links import exercise_section, lesson_links
from .submissions import NOTEBOOK

FEEDBACK_STYLE = """
body { font: 17px/1.5 system-ui, sans-serif; max-width: 60rem; margin: 2rem auto; padding: 0 1rem; color: #1a1a1a;
       overflow-wrap: anywhere; }
h1 { font-size: 1.6rem; } h2 { font-size: 1.25rem; margin-top: 2rem; }
table { border-collapse: collapse; width: 100%; table-layout: fixed; }
th, td { text-align: left; vertical-align: top; padding: .4rem .6rem; }
th { border-bottom: 2px solid #444; } td { border-bottom: 1px solid #ccc; }
col.exercise { width: 45%; } col.points { width: 7rem; }
.passed { color: #1b5e20; } .failed, .error, .timeout, .memory, .tampered { color: #b71c1c; } .missing, .not-answered { color: #555; }
.formula { margin-top: .3rem; display: flex; flex-wrap: wrap; column-gap: 1em; row-gap: .2rem; }
.formula .part { max-width: 100%; overflow-x: auto; overflow-y: hidden; padding-bottom: .1rem; }
math { font-size: 1.25rem; } .why { margin: .2rem 0 0; } .late { color: #b71c1c; } .next { margin: .3rem 0 0; color: #1a1a1a; }
@media (max-width: 40rem) {
  body { margin: 1rem auto; padding: 0 .75rem; }
  table, tbody, tr, td { display: block; width: auto; } thead, colgroup { display: none; }
  tr { border-bottom: 1px solid #ccc; padding: .4rem 0; } td { border: 0; padding: .15rem 0; }
  td.points::before { content: "points: "; color: #555; }
  math { font-size: 1.1rem; }
}
"""


#: Where a formula may wrap: after a comma or semicolon followed by a space (``\quad``, ``\qquad``, ``\ ``,
#: ``\,``, ``\;``), outside any braces.
_BREAKS = ("\\qquad", "\\quad", "\\ ", "\\,", "\\;")


def formula_parts(latex):
    r"""``latex`` cut where it may wrap (MathML does not wrap in a browser): after a ``,`` or ``;`` followed by a
    space, outside any braces (so never inside a subscript or a fraction). A part that opens a ``\left`` the
    next closes has its ``\left`` and ``\right`` as plain delimiters.

    >>> formula_parts(r"a = 1,\quad b = \frac{f(1,\ 2)}{2};\quad c_{i,\,j}")
    ['a = 1,', 'b = \\frac{f(1,\\ 2)}{2};', 'c_{i,\\,j}']
    >>> formula_parts(r"g\!\left(x,\, y\right) z")
    ['g\\!(x,', 'y) z']
    """
    parts, depth, start, i = [], 0, 0, 0
    while i < len(latex):
        c = latex[i]
        if c == "\\" and latex[i + 1:i + 2] and latex[i + 1] in "{}":
            i += 2  # an escaped brace is text
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            depth = max(0, depth - 1)
        elif c in ",;" and depth == 0:
            space = next((b for b in _BREAKS if latex.startswith(b, i + 1)), None)
            if space:
                parts.append(latex[start:i + 1].strip())
                start = i = i + 1 + len(space)
                continue
        i += 1
    parts.append(latex[start:].strip())
    parts = [part for part in parts if part]
    if len(parts) > 1 and any(part.count("\\left") != part.count("\\right") for part in parts):
        parts = [re.sub(r"\\(?:left|right)(?![a-zA-Z])\s*", "", part) for part in parts]
    return parts


@functools.lru_cache(maxsize=None)
def _formula(latex):
    try:
        from latex2mathml.converter import convert

        return "".join(f"<span class=\"part\">{convert(part)}</span>" for part in formula_parts(latex))
    except Exception:  # a formula the converter cannot read: show its source
        return f"<code>{html.escape(latex)}</code>"


def _next_step(r, links):
    """Where a learner who lost an exercise's points goes next: its lesson's section, then its hint ladder."""
    if r.status in ("passed", "missing") or r.points >= r.max_points:
        return ""
    section = exercise_section(r.exercise)
    where = links.section(r.lesson, section[0]) if section and links else None
    read = (f"Re-read <a href=\"{html.escape(where[0], quote=True)}\">{html.escape(r.lesson)}: "
            f"{html.escape(section[1])}</a> ({where[1]}); then" if where else
            f"Re-read {html.escape(r.lesson)}: {html.escape(section[1])}; then" if section else "Then")
    return (f"<p class=\"next\">{read}, in the lesson's notebook, run its check cell and then "
            f"<code>grading.hint(\"{html.escape(r.exercise)}\")</code> in a cell below it: each run opens the next "
            f"rung of the hint ladder.</p>")


def _row_html(r, links=None):
    """One exercise's row of a lesson's table (or the notebook's, where it was tampered with)."""
    if r.exercise == NOTEBOOK:
        return (f"<tr><td>the notebook</td><td></td><td class=\"tampered\">changed where it should not be: "
                f"{html.escape(plain_text(r.note))}</td></tr>")
    exercise = EXERCISES[r.exercise]
    why = f"<p class=\"why\">{html.escape(plain_text(r.note))}</p>" if r.note else ""
    return (f"<tr><td><code>{html.escape(r.exercise)}</code><div class=\"formula\">"
            f"{_formula(exercise.formula)}</div></td><td class=\"points\">{r.points:g} of {r.max_points:g}</td>"
            f"<td class=\"{r.status.replace(' ', '-')}\"><strong>{html.escape(r.status)}</strong>{why}"
            f"{_next_step(r, links)}</td></tr>")


def _lesson_html(lesson, lesson_rows, lateness, links=None):
    """One lesson: its heading with its points (less a late penalty, said below it), then its table."""
    points = sum(r.points for r in lesson_rows)
    most = sum(r.max_points for r in lesson_rows)
    if lateness:
        said = lateness.words()
        parts = [f"<h2>{html.escape(lesson)}: {max(0.0, points - lateness.penalty):g} of {most:g}</h2>",
                 f"<p class=\"late\"><strong>{html.escape(said[:1].upper() + said[1:])}</strong>"
                 + (f": {points:g} points before it" if lateness.penalty else "")
                 + f" (by {html.escape(lateness.timed_by)}; the penalty is nbgrader's late-penalty setting's).</p>"]
    else:
        parts = [f"<h2>{html.escape(lesson)}: {points:g} of {most:g}</h2>"]
    parts.append("<table><colgroup><col class=\"exercise\"><col class=\"points\"><col></colgroup>"
                 "<thead><tr><th scope=\"col\">exercise</th><th scope=\"col\">points</th>"
                 "<th scope=\"col\">result</th></tr></thead><tbody>")
    parts += [_row_html(r, links) for r in lesson_rows]
    parts.append("</tbody></table>")
    return parts


#: How a learner finds a lesson's page, by where they handed it in: make release-feedback writes each platform's zip.
FOUND = {None: "each lesson you handed in has its own, which <code>nbgrader fetch_feedback &lt;lesson&gt;</code> "
               "fetches",
         "Canvas": "your teacher hands it back on Canvas, attached to a comment on your submission: open the "
                   "assignment, then Submission Details (or Grades, and the comment beside the assignment)",
         "Moodle": "your teacher hands it back on Moodle, among the feedback files of your submission: open the "
                   "assignment, and see Feedback below your submission"}


def feedback_page(student, rows, late=None, links=None, name="", *, lesson=None, platform=None):
    """One learner's page; ``late`` (``{lesson: deadlines.Lateness}``) says which lessons came late, how late and
    the penalty, which the lesson's points and the total are less; ``links`` (``lesson_links.LessonLinks``) where
    an exercise that lost points sends the learner: its lesson's section; ``name``: the roster's name, which greets
    them (else their id). With ``lesson``, that lesson's page: its rows only, and its points as the heading's, and
    how the learner finds it where they handed it in (``platform``: Canvas, Moodle, None for nbgrader's exchange)."""
    late = late or {}
    lessons = {}
    for r in rows:
        lessons.setdefault(r.lesson, []).append(r)
    total = sum(max(0.0, sum(r.points for r in lesson_rows if r.exercise != NOTEBOOK)
                    - (late[lesson].penalty if late.get(lesson) else 0.0)) for lesson, lesson_rows in lessons.items())
    maximum = sum(r.max_points for r in rows if r.exercise != NOTEBOOK)
    which = f" in {html.escape(lesson)}" if lesson else ""
    title = f"Feedback for {html.escape(student)}" + (f": {html.escape(lesson)}" if lesson else "")
    parts = [page_head(title, FEEDBACK_STYLE),
             f"<h1>Your exercises{which}, {html.escape(plain_text(name) or student)}: {total:g} of {maximum:g} "
             f"points</h1>",
             "<p>Each exercise was graded on its own: its answer cell ran alone, on the checks its self-check shows "
             "and on hidden ones with other shapes and values. Where you lost points, the row links to the lesson's "
             "section that shows the idea, and says how to open the exercise's hint ladder in your notebook.</p>"]
    if lesson:
        parts.append(f"<p>This page is {html.escape(lesson)}'s: {FOUND[platform]}.</p>")
    for shown, lesson_rows in lessons.items():
        parts += _lesson_html(shown, lesson_rows, late.get(shown), links)
    parts.append("</body></html>\n")
    return "\n".join(parts)


def lesson_page_path(root, student, lesson):
    """Where ``write_feedback`` puts ``student``'s page of ``lesson`` alone: beside their whole page,
    ``feedback/<student_id>/<lesson>.html``, which ``make release-feedback`` hands back for that lesson."""
    return Path(root) / "feedback" / ids.folder(student) / f"{lesson}.html"


def write_feedback(root, results, late=None):
    """One page per learner, ``index.html``, and one per lesson of theirs beside it (``lesson_page_path``);
    ``late``: ``{(student, lesson): deadlines.Lateness}``. A page that holds what it would be written with is
    left as it is."""
    by_student, own = {}, {}
    for r in results:
        by_student.setdefault(r.student_id, []).append(r)
    for (student, lesson), lateness in (late or {}).items():
        if lateness:
            own.setdefault(student, {})[lesson] = lateness
    make_folder(Path(root) / "feedback")
    links, roster = lesson_links(root), gradebook.students(root)
    platforms = {key: h["source"] for key, h in platform_hand_ins(root, {r.lesson for r in results})[0].items()}
    for student, rows in by_student.items():
        name = roster[student].name if student in roster else ""
        write_file(make_folder(Path(root) / "feedback" / ids.folder(student)) / "index.html",
                   feedback_page(student, rows, own.get(student), links, name))
        for lesson in dict.fromkeys(r.lesson for r in rows):
            write_file(lesson_page_path(root, student, lesson),
                       feedback_page(student, [r for r in rows if r.lesson == lesson], own.get(student), links,
                                     name, lesson=lesson, platform=platforms.get((student, lesson))))

