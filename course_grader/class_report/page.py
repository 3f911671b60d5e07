"""The report's page, drawn from ``data.ClassReport``: one file, readable offline, on a projector and on a phone;
no script, nothing fetched; its style sheet is ``style.css``, put inside the page."""

import html
from pathlib import Path

from .counts import HELP_SHARE, hardest, need_help
from ..deadlines import late_words
from .answers import ANSWER_SECONDS, MAX_ANSWER_CHARS, MAX_ANSWER_NODES
from .copying_page import copying as copying_section
from .data import by_exercise
from .sections_page import sections_html
from .first_screen import four_answers
from ..files import code_html, html_text as esc
from ..files import page_head

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
    shown = ", ".join(esc(s) + (f" ({esc(names[s])})" if names.get(s) else "") for s in sorted(students))
    return f"<details><summary>{summary}</summary><p class=\"ids\">{shown}</p></details>"


def _card_html(group, built, links, names, level=3, prefix=""):
    """One group's card: its title and count, what the learners did, the idea, the lesson's links, the ids
    (``prefix`` before its id where the page shows it twice)."""
    tag, sub = f"h{level}", f"h{level + 1}"
    parts = [f"<section class=\"card\" id=\"{prefix}{group.anchor}\"><{tag}><code>{esc(group.exercise)}</code>: "
             f"{esc(built.title)}</{tag}>",
             f"<p class=\"count\">{len(group.students)} learner{'s' * (len(group.students) != 1)} lost its points "
             f"({percent(group.share)} of those who answered {esc(group.exercise)})</p>",
             f"<p class=\"explanation\">What they did: {esc(built.explanation)}</p>"]
    if built.idea:
        parts.append(f"<{sub}>The idea to re-teach</{sub}>{built.idea}")
    else:
        parts.append("<p>No idea rung is written for this exercise (Exercise.hints): its lesson is below.</p>")
    parts.append(_lesson_links(built, links))
    parts.append(_ids(group.students, names, f"The {len(group.students)} learners' ids"))
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


def _cut(text):
    text = text if len(text) <= MAX_EXAMPLE_CHARS else \
        text[:MAX_EXAMPLE_CHARS] + "\n# ... (cut here; the whole answer is in autograded/)"
    return code_html(text)


def _example_html(group):
    """The group's example (``examples``): the form most of its answers share, without comments, docstrings and
    the strings no other member wrote."""
    if group.example is None:
        return "<p>No answer of this group could be read from autograded/ within the report's bounds.</p>"
    note = f"<p class=\"note\">What the grader told them: {esc(group.example_note)}</p>" if group.example_note else ""
    count = len(group.students)
    return (f"<h4>One example answer: the most common form in this group ({group.example_count} of its {count} "
            f"answer{'s' * (count != 1)}), {esc(group.example_student)}'s, without comments, docstrings and the "
            f"strings no other member wrote</h4><pre><code>{_cut(group.example)}</code></pre>{note}")


def img(made, key):
    picture = made.pictures[key]
    return f"<img src=\"{made.drawn[picture]}\" alt=\"{esc(picture.alt())}\">"


def card_html(made, group, level=3, prefix=""):
    return _card_html(group, made.cards[id(group)], made.links, made.names, level, prefix)


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


def _sections(made):
    return sections_html(made, made.sections, made.differences)


def _intro(made):
    handed = sum(1 for learner in made.learners.values() if learner.missing < learner.exercises)
    items = "".join(f"<li><a href=\"#{anchor}\">{title}</a></li>" for anchor, title in _contents(made))
    return ("<h1>What the class got wrong, and what to re-teach</h1>"
            f"<p class=\"meta\">{len(made.learners)} learners ({handed} handed something in); lessons counted: "
            f"{', '.join(esc(lesson) for lesson in made.lessons) or 'none'}.</p>"
            f"{four_answers(made, by_idea(made, made.found))}"
            f"<nav aria-label=\"Contents\"><ol class=\"contents\">{items}</ol></nav>")


def _about(made):
    parts = ["<h2 id=\"about\">About this page</h2>",
             "<p>Written from grades_by_exercise.csv, the gradebook and autograded/; the same counts are in "
             "<a href=\"mistakes.csv\">mistakes.csv</a>. A mistake's share is of the learners who answered its "
             "exercise. Points lost are the points the class did not get: failed, not answered and not handed in.</p>"]
    if not made.has_mistakes:
        parts.append("<p><strong>This grades_by_exercise.csv names no mistakes</strong> (an older make grade wrote "
                     "it): run <code>make grade FORCE=1</code> to grade again and name them.</p>")
    return "\n".join(parts)


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
    return (f"<tr><td><code>{esc(t.exercise)}</code></td><td class=\"n\">{lost:g}</td><td class=\"n\">{failing}</td>"
            f"<td class=\"n\">{s['not answered']}</td><td class=\"n\">{s['missing']}</td><td>{mistake}</td></tr>")


def _glance(made):
    """Per exercise, most points lost first: the points the class lost, learners failing, left blank and not
    handed in, and the mistake that cost most learners."""
    lost = {}
    for r in made.rows:
        lost[r.lesson, r.exercise] = lost.get((r.lesson, r.exercise), 0.0) + max(0.0, r.max_points - r.points)
    ordered = sorted(made.tallied.items(), key=lambda item: (-lost.get(item[0], 0.0), item[0]))
    top = _top_mistake(made)
    head = ("<table><thead><tr><th scope=\"col\">exercise</th><th scope=\"col\" class=\"n\">points lost</th>"
            "<th scope=\"col\" class=\"n\">failing</th><th scope=\"col\" class=\"n\">blank</th>"
            "<th scope=\"col\" class=\"n\">missing</th><th scope=\"col\">top mistake</th></tr></thead><tbody>{}"
            "</tbody></table>")
    rows = [_glance_row(t, lost.get(key, 0.0), top.get(key)) for key, t in ordered]
    parts = ["<h2 id=\"glance\" class=\"visually-hidden\">Exercise by exercise, at a glance</h2>",
             head.format("".join(rows[:GLANCE_ROWS]))]
    if len(rows) > GLANCE_ROWS:
        parts.append(f"<details><summary>All {len(rows)} exercises</summary>{head.format(''.join(rows))}</details>")
    return "\n".join(parts)


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
        return "<h2 id=\"reteach\">Re-teach first</h2><p>Nobody lost points to a mistake: nothing to re-teach.</p>"
    parts = ["<h2 id=\"reteach\">Re-teach first</h2>",
             f"<p>The {len(top)} ideas whose mistakes cost the most learners points, one card each (two mistakes "
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
        return "<h2 id=\"hardest\">The hardest exercises</h2><p>Nobody answered an exercise yet.</p>"
    body = "".join(f"<tr><td><code>{esc(t.exercise)}</code></td><td>{esc(t.lesson)}</td>"
                   f"<td class=\"n\">{percent(t.pass_rate)}</td><td class=\"n\">{t.statuses['passed']} of "
                   f"{t.answered}</td></tr>" for t in rows)
    return ("<h2 id=\"hardest\">The hardest exercises</h2><p>The lowest pass rates among the learners who answered "
            "(handed in, and not left as released).</p><table><thead><tr><th scope=\"col\">exercise</th>"
            "<th scope=\"col\">lesson</th><th scope=\"col\" class=\"n\">pass rate</th><th scope=\"col\" "
            f"class=\"n\">passed</th></tr></thead><tbody>{body}</tbody></table>")


def _help_row(learner, names):
    name = f" ({esc(names[learner.student_id])})" if names.get(learner.student_id) else ""
    points = percent(learner.points / learner.max_points) if learner.max_points else "–"
    return (f"<tr><td class=\"ids\">{esc(learner.student_id)}{name}</td><td class=\"n\">{points}</td>"
            f"<td class=\"n\">{learner.failed}</td>"
            f"<td class=\"n\">{learner.not_answered}</td><td class=\"n\">{learner.missing}</td>"
            f"<td class=\"n\">{learner.passed} of {learner.exercises}</td></tr>")


def _help(made):
    needing = need_help(made.learners)
    head = "<h2 id=\"help\">Learners who may need help</h2>"
    if not needing:
        return head + f"<p>No learner failed or left unanswered {percent(HELP_SHARE)} of their exercises.</p>"
    table = ("<table><thead><tr><th scope=\"col\">learner</th><th scope=\"col\" class=\"n\">points</th>"
             "<th scope=\"col\" class=\"n\">failed</th>"
             "<th scope=\"col\" class=\"n\">not answered</th><th scope=\"col\" class=\"n\">not handed in</th>"
             "<th scope=\"col\" class=\"n\">passed</th></tr></thead><tbody>{}</tbody></table>")
    parts = [head, f"<p>{len(needing)} learners failed, left unanswered or did not hand in at least "
                   f"{percent(HELP_SHARE)} of their exercises (failed counts errors and timeouts too). The "
                   f"{min(HELP_SHOWN, len(needing))} furthest behind, by the share of the points they earned:</p>",
             table.format("".join(_help_row(learner, made.names) for learner in needing[:HELP_SHOWN]))]
    if len(needing) > HELP_SHOWN:
        parts.append(f"<details><summary>The other {len(needing) - HELP_SHOWN}</summary>"
                     + table.format("".join(_help_row(learner, made.names) for learner in needing[HELP_SHOWN:]))
                     + "</details>")
    return "\n".join(parts)


_COUNTS_HEAD = ("<table><thead><tr><th scope=\"col\">exercise</th><th scope=\"col\" class=\"n\">handed in</th>"
                "<th scope=\"col\" class=\"n\">passed</th><th scope=\"col\" class=\"n\">failed</th>"
                "<th scope=\"col\" class=\"n\">not answered</th><th scope=\"col\" class=\"n\">errors</th>"
                "<th scope=\"col\" class=\"n\">timeouts</th><th scope=\"col\" class=\"n\">tampered</th>"
                "</tr></thead><tbody>")


def _counts_row(t):
    s, handed = t.statuses, t.handed_in
    return (f"<tr><td><code>{esc(t.exercise)}</code> ({t.max_points:g} points)</td>"
            f"<td class=\"n\">{_count(handed, t.learners)}</td><td class=\"n\">{_count(s['passed'], handed)}</td>"
            f"<td class=\"n\">{_count(s['failed'], handed)}</td><td class=\"n\">{_count(s['not answered'], handed)}"
            f"</td><td class=\"n\">{_count(t.errors, handed)}</td><td class=\"n\">{_count(s['timeout'], handed)}"
            f"</td><td class=\"n\">{_count(s['tampered'], handed)}</td></tr>")


def _lesson(made, lesson):
    parts = [f"<h3 id=\"lesson-{esc(lesson)}\">{esc(lesson)}</h3>"]
    if lesson in made.pictures:
        parts.append(img(made, lesson))
    else:
        parts.append("<p>Nobody handed this lesson in.</p>")
    rows = [t for (tl, _), t in made.tallied.items() if tl == lesson]
    parts.append(_COUNTS_HEAD + "".join(_counts_row(t) for t in rows) + "</tbody></table>")
    parts.append("<p>Handed in is a share of the class; the other columns are shares of those who handed the lesson "
                 "in. Errors: the answer could not be run at all (its cell raised as it ran, its notebook could not be read) or ran "
                 "out of memory; an answer that raised on a check failed.</p>")
    return "\n".join(parts)


def _folded(summary, body):
    return f"<details><summary>{summary}</summary>\n{body}\n</details>"


def _lessons(made):
    return "<h2 id=\"lessons\">Lesson by lesson</h2>\n" + _folded(
        f"The {len(made.lessons)} lessons' scores and counts", "\n".join(_lesson(made, lesson) for lesson in made.lessons))


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
    parts = ["<h2 id=\"mistakes\">Mistakes, exercise by exercise</h2>",
             "<p>Each exercise's named mistakes and diagnoses, by how many learners lost points to each.</p>"]
    grouped = by_exercise(made.found)
    if not grouped:
        parts.append("<p>Nobody lost points to a mistake.</p>")
        return "\n".join(parts)
    parts.append(_folded(f"The {len(grouped)} exercises with mistakes",
                         "\n".join(_exercise(made, key, found) for key, found in grouped.items())))
    return "\n".join(parts)


def _unnamed(made):
    unnamed = [g for g in made.found if not g.named]
    parts = ["<h2 id=\"unnamed\">Not yet named</h2>",
             "<p>Failures that no catalogued mistake explains, grouped by their signature (the same exercise and the "
             "same measured difference), largest first, each with one example answer: candidates for the "
             "catalogue (<code>tests/mistakes/</code> and the exercise's <code>Mistake</code>s).</p>"]
    if not unnamed:
        parts.append("<p>Every failure was named.</p>")
        return "\n".join(parts)
    parts.append(_folded(f"The {len(unnamed)} groups not yet named, each with an example answer",
                         "\n".join(card_html(made, group) for group in unnamed)))
    return "\n".join(parts)


def _copying(made):
    return copying_section(made, _over_bound(made.over_bound) if made.over_bound else "")


def _over_bound(found):
    """The answers over the report's bounds, compared with nothing and never an example."""
    shown = ", ".join(f"{esc(student)} (<code>{esc(exercise)}</code>)" for student, _, exercise in found[:20])
    return (f"<p>{len(found)} answer{'s' * (len(found) != 1)} over the report's bounds ({MAX_ANSWER_CHARS:,} "
            f"characters, {MAX_ANSWER_NODES:,} syntax nodes, {ANSWER_SECONDS:g} s each) "
            f"{'were' if len(found) != 1 else 'was'} compared with nothing: {shown}"
            + (" ..." if len(found) > 20 else "") + "</p>")


def _late(made):
    parts = ["<h2 id=\"late\">Handed in late</h2>"]
    if not made.known.late:
        parts.append("<p>No hand-in came after its due date (or the learner's extension). A lesson without a due "
                     "date in the gradebook, and a notebook copied in by hand, are never late.</p>")
        return "\n".join(parts)

    body = "".join(f"<tr><td>{esc(late.lesson)}</td><td class=\"ids\">{esc(late.student_id)}</td>"
                   f"<td>{esc(late_words(late.seconds))}</td><td class=\"n\">{late.penalty:g}</td></tr>"
                   for late in sorted(made.known.late, key=lambda l: (l.lesson, -l.seconds, l.student_id)))
    parts.append(f"<p>{len(made.known.late)} hand-ins came after their due date (or the learner's extension), by "
                 f"the exchange's time; the penalty is nbgrader's late-penalty setting's, in points. The histograms and "
                 f"counts above are of what the answers earned, before these penalties; grades.csv has the scores "
                 f"after them.</p>"
                 "<table><thead><tr><th scope=\"col\">lesson</th><th scope=\"col\">learner</th>"
                 "<th scope=\"col\">how late</th><th scope=\"col\" class=\"n\">penalty</th></tr></thead>"
                 f"<tbody>{body}</tbody></table>")
    return "\n".join(parts)


def _by_hand(made):
    marked = sorted(made.known.manual.items())
    counted = {(r.student_id, r.lesson, r.exercise) for r in made.rows}
    marked = [(key, manual) for key, manual in marked if key in counted]
    parts = ["<h2 id=\"by-hand\">Marked by hand</h2>"]
    if not marked:
        parts.append("<p>No score, extra credit or comment was given by hand in formgrader.</p>")
        return "\n".join(parts)
    body = "".join(f"<tr><td class=\"ids\">{esc(student)}</td><td><code>{esc(exercise)}</code></td>"
                   f"<td class=\"n\">{made.graded[student, lesson, exercise]:g}</td>"
                   f"<td class=\"n\">{'' if manual.points is None else format(manual.points, 'g')}</td>"
                   f"<td class=\"n\">{format(manual.extra_credit, 'g') if manual.extra_credit else ''}</td>"
                   f"<td>{esc(manual.comment)}</td></tr>" for (student, lesson, exercise), manual in marked)
    parts.append(f"<p>{len(marked)} exercises you marked in formgrader. The scores on this page (the histograms) "
                 "take your points; the counts keep the grader's verdict on the answer.</p><table><thead><tr><th scope=\"col\">learner</th><th scope=\"col\">exercise</th>"
                 "<th scope=\"col\" class=\"n\">grader</th><th scope=\"col\" class=\"n\">yours</th>"
                 "<th scope=\"col\" class=\"n\">extra credit</th><th scope=\"col\">your comment</th></tr>"
                 f"</thead><tbody>{body}</tbody></table>")
    return "\n".join(parts)


def page(made):
    """The report's HTML."""
    sections = [_glance, *([_sections] if made.sections else []), _reteach, _hardest, _help, _copying, _lessons,
                _mistakes, _unnamed, _late, _by_hand, _about]
    parts = [page_head(esc("What the class got wrong"), REPORT_STYLE) + "<main>", _intro(made)]
    parts += [f"<section>\n{section(made)}\n</section>" for section in sections]
    parts.append("</main></body></html>\n")
    return "\n".join(parts)


def mistake_rows(made):
    """The rows of ``mistakes.csv``: one per group, as the page counts them."""
    return [(g.lesson, g.exercise, g.label, len(g.students), round(g.share, 4),
             g.example_student or sorted(g.students)[0]) for g in made.found]


