"""The report's page, drawn from ``data.ClassReport``: one file, readable offline, on a projector and on a phone;
no script, nothing fetched; its style sheet is ``style.css``, put inside the page."""

import html
from pathlib import Path

from .counts import HELP_SHARE, hardest, need_help
from ..deadlines import late_words
from .copying_page import copying
from .data import by_exercise
from .sections_page import sections_html
from .first_screen import four_answers
from ..files import code_html, html_table, html_text as esc, learner_html, page_head

#: The re-teach cards shown in full at the top of the page.
TOP_CARDS = 3
#: The learners who may need help shown before the disclosure: the few furthest behind.
HELP_SHOWN = 5
#: The longest example answer shown on the page (the whole one is in autograded/).
MAX_EXAMPLE_CHARS = 4000
#: The page's style sheet, put inside the page (it fetches nothing).
REPORT_STYLE = (Path(__file__).with_name("style.css")).read_text()


def percent(share):
    return f"{100 * share:.0f}%"


def _count(n, of):
    return f"{n} ({percent(n / of)})" if of else f"{n}"


def _ids(students, names, summary):
    shown = ", ".join(learner_html(s, names) for s in sorted(students))
    return f"<details><summary>{summary}</summary><p class=\"ids\">{shown}</p></details>"


def card_html(made, group, level=3, prefix=""):
    """One group's card: its title and count, what the learners did, the idea, the lesson's links, the ids
    (``prefix`` before its id where the page shows it twice)."""
    built, tag, sub = made.cards[id(group)], f"h{level}", f"h{level + 1}"
    parts = [f"<section class=\"card\" id=\"{prefix}{group.anchor}\"><{tag}><code>{esc(group.exercise)}</code>: "
             f"{esc(built.title)}</{tag}>",
             f"<p class=\"count\">{len(group.students)} learner{'s' * (len(group.students) != 1)} lost its points "
             f"({percent(group.share)} of those who answered {esc(group.exercise)})</p>",
             f"<p class=\"explanation\">What they did: {esc(built.explanation)}</p>"]
    if built.idea:
        parts.append(f"<{sub}>The idea to re-teach</{sub}>{built.idea}")
    else:
        parts.append("<p>No idea rung is written for this exercise (Exercise.hints): its lesson is below.</p>")
    parts.append(_lesson_links(built, made.links))
    parts.append(_ids(group.students, made.names, f"The {len(group.students)} learners' ids"))
    if not group.named:
        parts.append(_example_html(group))
    parts.append("</section>")
    return "\n".join(parts)


def _lesson_links(built, links):
    anchors = built.sections or (("", html.escape(built.lesson)),)
    items = []
    for anchor, text in anchors[:2]:
        where = f"{html.escape(built.lesson)}, {text}" if anchor else html.escape(built.lesson)
        for address, how in ((links.on_site(built.lesson, anchor), "on the course's website"),
                             (links.in_lab(built.lesson, anchor), "in JupyterLab")):
            if address:
                items.append(f"<a href=\"{html.escape(address, quote=True)}\">Open {where} {how}</a>")
    if not items:
        return (f"<p class=\"links\">The lesson: <code>notebooks/{html.escape(built.lesson)}/"
                f"{html.escape(built.lesson)}.ipynb</code>, in JupyterLab (<code>make site</code> builds the course's "
                f"website, which the report then links to).</p>")
    return f"<p class=\"links\">{' '.join(items)}</p>"


def _example_html(group):
    """The group's example (``examples``): the form most of its answers share, without comments, docstrings and
    the strings no other member wrote."""
    if group.example is None:
        return "<p>No answer of this group could be read from autograded/ within the report's bounds.</p>"
    note = f"<p class=\"note\">What the grader told them: {esc(group.example_note)}</p>" if group.example_note else ""
    count, shown = len(group.students), group.example[:MAX_EXAMPLE_CHARS]
    shown += "\n# ... (cut here; the whole answer is in autograded/)" if len(group.example) > MAX_EXAMPLE_CHARS else ""
    return (f"<h4>One example answer: the most common form in this group ({group.example_count} of its {count} "
            f"answer{'s' * (count != 1)}), {esc(group.example_student)}'s, without comments, docstrings and the "
            f"strings no other member wrote</h4><pre><code>{code_html(shown)}</code></pre>{note}")


def img(made, key):
    picture = made.pictures[key]
    return f"<img src=\"{made.drawn[picture]}\" alt=\"{esc(picture.alt())}\">"


#: The sections, as the contents list names them: (id, title).
CONTENTS = (("glance", "Exercise by exercise, at a glance"), ("reteach", "Re-teach first"),
            ("hardest", "The hardest exercises"), ("help", "Learners who may need help"),
            ("copying", "Who may have copied"), ("lessons", "Lesson by lesson"),
            ("mistakes", "Mistakes, exercise by exercise"), ("unnamed", "Not yet named"),
            ("late", "Handed in late"), ("by-hand", "Marked by hand"), ("about", "About this page"))
#: The exercises the table at the top shows before its disclosure.
GLANCE_ROWS = 6


def _contents(made):
    if not made.sections:
        return CONTENTS
    return CONTENTS[:1] + (("sections", "Sections side by side"),) + CONTENTS[1:]


def _intro(made):
    handed = sum(1 for learner in made.learners.values() if learner.missing < learner.exercises)
    items = "".join(f"<li><a href=\"#{anchor}\">{title}</a></li>" for anchor, title in _contents(made))
    return ("<h1>What the class got wrong, and what to re-teach</h1>"
            f"<p class=\"meta\">{len(made.learners)} learners ({handed} handed something in); lessons counted: "
            f"{', '.join(esc(lesson) for lesson in made.lessons) or 'none'}.</p>"
            f"{four_answers(made, by_idea(made, made.found))}"
            f"<nav aria-label=\"Contents\"><ol class=\"contents\">{items}</ol></nav>")


def _about(made):
    said = ("<p>Written from grades_by_exercise.csv, the gradebook and autograded/; the same counts are in "
            "<a href=\"mistakes.csv\">mistakes.csv</a>. A mistake's share is of the learners who answered its "
            "exercise. Points lost are the points the class did not get: failed, not answered and not handed in.</p>")
    if made.has_mistakes:
        return said
    return said + ("<p><strong>This grades_by_exercise.csv names no mistakes</strong> (an older make grade wrote "
                   "it): run <code>make grade FORCE=1</code> to grade again and name them.</p>")


def _top_mistake(made):
    """``{(lesson, exercise): the group that cost most learners its points}``."""
    top = {}
    for group in made.found:
        top.setdefault((group.lesson, group.exercise), group)
    return top


def _glance_row(t, lost, top):
    s = t.statuses
    failing = s["failed"] + t.errors + s["timeout"] + s["tampered"]
    mistake = f"<a href=\"#{top.anchor}\">{esc(top.title)}</a> ({len(top.students)})" if top else ""
    return f"<code>{esc(t.exercise)}</code>", f"{lost:g}", failing, s["not answered"], s["missing"], mistake


def _glance(made):
    """Per exercise, most points lost first: the points the class lost, learners failing, left blank and not
    handed in, and the mistake that cost most learners."""
    lost = {}
    for r in made.rows:
        lost[r.lesson, r.exercise] = lost.get((r.lesson, r.exercise), 0.0) + max(0.0, r.max_points - r.points)
    ordered = sorted(made.tallied.items(), key=lambda item: (-lost.get(item[0], 0.0), item[0]))
    top = _top_mistake(made)
    rows = [_glance_row(t, lost.get(key, 0.0), top.get(key)) for key, t in ordered]
    columns = ("exercise", ("points lost",), ("failing",), ("blank",), ("missing",), "top mistake")
    if len(rows) <= GLANCE_ROWS:
        return html_table(columns, rows)
    return html_table(columns, rows[:GLANCE_ROWS]) + _folded(f"All {len(rows)} exercises", html_table(columns, rows))


def by_idea(made, found):
    """``found`` (groups, largest first) as lists of groups, one per idea to re-teach: the groups of one exercise
    whose idea rung is the same (two mistakes the exercise's one idea explains) together, in the order of their
    largest group. A group without an idea rung is its own."""
    ideas = {}
    for group in found:
        idea = made.cards[id(group)].idea
        ideas.setdefault((group.lesson, group.exercise, idea) if idea else id(group), []).append(group)
    return list(ideas.values())


def _idea_card_html(made, together):
    """One card for the groups ``together`` (one idea): each group's title, count and what its learners did, then
    the idea once, the lesson's links and everyone's ids."""
    if len(together) == 1:
        return card_html(made, together[0], prefix="top-")
    first, built = together[0], made.cards[id(together[0])]
    students = sorted({s for group in together for s in group.students})
    did = "".join(f"<li><a href=\"#{g.anchor}\">{esc(g.title)}</a> ({len(g.students)}): "
                  f"{esc(made.cards[id(g)].explanation)}</li>" for g in together)
    return "\n".join([
        f"<section class=\"card\" id=\"top-{first.anchor}\"><h3><code>{esc(first.exercise)}</code>: "
        f"{len(together)} mistakes, one idea</h3>",
        f"<p class=\"count\">{len(students)} learners lost its points to one of them</p>",
        f"<p class=\"explanation\">What they did:</p><ul>{did}</ul>",
        f"<h4>The idea to re-teach</h4>{built.idea}", _lesson_links(built, made.links),
        _ids(students, made.names, f"The {len(students)} learners' ids"), "</section>"])


def _reteach(made):
    ideas = by_idea(made, made.found)
    top = ideas[:TOP_CARDS]
    if not top:
        return "<p>Nobody lost points to a mistake: nothing to re-teach.</p>"
    parts = [f"<p>The {len(top)} ideas whose mistakes cost the most learners points, one card each (two mistakes "
             f"one idea explains share it), with the lesson's section that shows it.</p>"]
    parts += [_idea_card_html(made, together) for together in top]
    rest = [group for together in ideas[TOP_CARDS:] for group in together][:7]
    if rest:
        parts.append("<p>Then: " + "; ".join(f"<a href=\"#{g.anchor}\"><code>{esc(g.exercise)}</code> "
                                             f"{esc(g.label)}</a> ({len(g.students)})" for g in rest) + ".</p>")
    return "\n".join(parts)


def _hardest(made):
    rows = hardest(made.tallied)
    if not rows:
        return "<p>Nobody answered an exercise yet.</p>"
    return ("<p>The lowest pass rates among the learners who answered (handed in, and not left as released).</p>"
            + html_table(("exercise", "lesson", ("pass rate",), ("passed",)), [
                (f"<code>{esc(t.exercise)}</code>", esc(t.lesson), percent(t.pass_rate),
                 f"{t.statuses['passed']} of {t.answered}") for t in rows]))


def _help_table(learners, names):
    return html_table(("learner", ("points",), ("failed",), ("not answered",), ("not handed in",), ("passed",)), [
        (f"<span class=\"ids\">{learner_html(learner.student_id, names)}</span>",
         percent(learner.points / learner.max_points) if learner.max_points else "–", learner.failed,
         learner.not_answered, learner.missing, f"{learner.passed} of {learner.exercises}") for learner in learners])


def _help(made):
    needing = need_help(made.learners)
    if not needing:
        return f"<p>No learner failed or left unanswered {percent(HELP_SHARE)} of their exercises.</p>"
    parts = [f"<p>{len(needing)} learners failed, left unanswered or did not hand in at least "
             f"{percent(HELP_SHARE)} of their exercises (failed counts errors and timeouts too). The "
             f"{min(HELP_SHOWN, len(needing))} furthest behind, by the share of the points they earned:</p>",
             _help_table(needing[:HELP_SHOWN], made.names)]
    if len(needing) > HELP_SHOWN:
        parts.append(_folded(f"The other {len(needing) - HELP_SHOWN}", _help_table(needing[HELP_SHOWN:], made.names)))
    return "\n".join(parts)


def _counts_row(t):
    s, handed = t.statuses, t.handed_in
    return (f"<code>{esc(t.exercise)}</code> ({t.max_points:g} points)", _count(handed, t.learners),
            *(_count(n, handed) for n in (s["passed"], s["failed"], s["not answered"], t.errors, s["timeout"],
                                          s["tampered"])))


def _lesson(made, lesson):
    rows = [t for (tl, _), t in made.tallied.items() if tl == lesson]
    return "\n".join([
        f"<h3 id=\"lesson-{esc(lesson)}\">{esc(lesson)}</h3>",
        img(made, lesson) if lesson in made.pictures else "<p>Nobody handed this lesson in.</p>",
        html_table(("exercise", ("handed in",), ("passed",), ("failed",), ("not answered",), ("errors",),
                    ("timeouts",), ("tampered",)), [_counts_row(t) for t in rows]),
        "<p>Handed in is a share of the class; the other columns are shares of those who handed the lesson in. "
        "Errors: the answer could not be run at all (its cell raised as it ran, its notebook could not be read) or "
        "ran out of memory; an answer that raised on a check failed.</p>"])


def _folded(summary, body):
    return f"<details><summary>{summary}</summary>\n{body}\n</details>"


def _lessons(made):
    return _folded(f"The {len(made.lessons)} lessons' scores and counts",
                   "\n".join(_lesson(made, lesson) for lesson in made.lessons))


def _exercise(made, key, found):
    parts = [f"<h3 id=\"exercise-{esc(key[1])}\"><code>{esc(key[1])}</code></h3>", img(made, key)]
    for group in found:
        if group.named:
            parts.append(card_html(made, group, level=4))
        else:
            parts.append(f"<p>{len(group.students)} learners: {esc(group.label)}; see "
                         f"<a href=\"#{group.anchor}\">its group below</a>.</p>")
    return "\n".join(parts)


def _mistakes(made):
    grouped = by_exercise(made.found)
    return "<p>Each exercise's named mistakes and diagnoses, by how many learners lost points to each.</p>\n" + (
        _folded(f"The {len(grouped)} exercises with mistakes",
                "\n".join(_exercise(made, key, found) for key, found in grouped.items()))
        if grouped else "<p>Nobody lost points to a mistake.</p>")


def _unnamed(made):
    unnamed = [g for g in made.found if not g.named]
    return ("<p>Failures that no catalogued mistake explains, grouped by their signature (the same exercise and the "
            "same measured difference), largest first, each with one example answer: candidates for the catalogue "
            "(<code>tests/mistakes/</code> and the exercise's <code>Mistake</code>s).</p>\n") + (
        _folded(f"The {len(unnamed)} groups not yet named, each with an example answer",
                "\n".join(card_html(made, group) for group in unnamed))
        if unnamed else "<p>Every failure was named.</p>")


def _late(made):
    if not made.known.late:
        return ("<p>No hand-in came after its due date (or the learner's extension). A lesson without a due date in "
                "the gradebook, and a notebook copied in by hand, are never late.</p>")
    rows = [(esc(late.lesson), f"<span class=\"ids\">{esc(late.student_id)}</span>", esc(late_words(late.seconds)),
             f"{late.penalty:g}")
            for late in sorted(made.known.late, key=lambda l: (l.lesson, -l.seconds, l.student_id))]
    return (f"<p>{len(made.known.late)} hand-ins came after their due date (or the learner's extension), by the "
            f"exchange's time; the penalty is nbgrader's late-penalty setting's, in points. The histograms and counts "
            f"above are of what the answers earned, before these penalties; grades.csv has the scores after them.</p>"
            + html_table(("lesson", "learner", "how late", ("penalty",)), rows))


def _by_hand(made):
    counted = {(r.student_id, r.lesson, r.exercise) for r in made.rows}
    marked = [(key, manual) for key, manual in sorted(made.known.manual.items()) if key in counted]
    if not marked:
        return "<p>No score, extra credit or comment was given by hand in formgrader.</p>"
    rows = [(f"<span class=\"ids\">{esc(student)}</span>", f"<code>{esc(exercise)}</code>",
             f"{made.graded[student, lesson, exercise]:g}", "" if manual.points is None else f"{manual.points:g}",
             f"{manual.extra_credit:g}" if manual.extra_credit else "", esc(manual.comment))
            for (student, lesson, exercise), manual in marked]
    return (f"<p>{len(marked)} exercises you marked in formgrader. The scores on this page (the histograms) take your "
            "points; the counts keep the grader's verdict on the answer.</p>" + html_table(
                ("learner", "exercise", ("grader",), ("yours",), ("extra credit",), "your comment"), rows))


def page(made):
    """The report's HTML: each section of the contents under its heading (the first, the table, heard, not seen)."""
    bodies = {"glance": _glance, "sections": sections_html, "reteach": _reteach, "hardest": _hardest, "help": _help,
              "copying": copying, "lessons": _lessons, "mistakes": _mistakes, "unnamed": _unnamed, "late": _late,
              "by-hand": _by_hand, "about": _about}
    parts = [page_head(esc("What the class got wrong"), REPORT_STYLE) + "<main>", _intro(made)]
    for anchor, title in _contents(made):
        hidden = " class=\"visually-hidden\"" if anchor == "glance" else ""
        parts.append(f"<section>\n<h2 id=\"{anchor}\"{hidden}>{title}</h2>\n{bodies[anchor](made)}\n</section>")
    parts.append("</main></body></html>\n")
    return "\n".join(parts)


def mistake_rows(made):
    """The rows of ``mistakes.csv``: one per group, as the page counts them."""
    return [(g.lesson, g.exercise, g.label, len(g.students), round(g.share, 4),
             g.example_student or sorted(g.students)[0]) for g in made.found]


