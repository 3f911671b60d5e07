"""The report's first screen at 1280x720: four answers, each linking to its section below: what to re-teach (the
first cards), which section needs what (``sections_page.differences``), who needs help (the five furthest behind)
and who may have copied (the strongest flags)."""

from ..files import html_text as esc, learner_html
from .counts import need_help

#: How many of each the first screen names.
CARDS, DIFFERENCES, HELP, FLAGS, IDS = 3, 3, 5, 3, 4


def _box(title, anchor, items, empty):
    body = f"<ul>{''.join(f'<li>{item}</li>' for item in items)}</ul>" if items else f"<p>{empty}</p>"
    return (f"<section class=\"answer\"><h2 class=\"q\"><a href=\"#{anchor}\">{title}</a></h2>{body}"
            f"</section>")


def _who(students, names, most=IDS):
    shown = ", ".join(learner_html(s, names) for s in students[:most])
    return f"<span class=\"ids\">{shown}</span>" + (f" and {len(students) - most} more" if len(students) > most else "")


def _reteach(made, ideas):
    return [f"<a href=\"#top-{together[0].anchor}\"><code>{esc(together[0].exercise)}</code>: "
            f"{esc(made.cards[id(together[0])].title if len(together) == 1 else f'{len(together)} mistakes, one idea')}"
            f"</a> ({len({s for g in together for s in g.students})} learners)" for together in ideas[:CARDS]]


def _sections(made):
    return [f"<a href=\"#{esc(d.anchor)}\"><strong>{esc(d.label)}</strong></a>: {d.words()}"
            for d in made.differences[:DIFFERENCES]]


def _help(made):
    return [f"{_who([learner.student_id], made.names)}: "
            f"{100 * learner.points / learner.max_points if learner.max_points else 0:.0f}% of the points"
            for learner in need_help(made.learners)[:HELP]]


def _copying(made):
    return [f"<a href=\"#flag-{n}\">{len(flag.students)} learners</a>: {_who(flag.students, made.names)}, on "
            + ", ".join(f"<code>{esc(item.exercise)}</code>" for item in flag.shared) + f" (score {flag.score:.2f})"
            for n, flag in enumerate(made.copying.flags[:FLAGS], 1)]


def four_answers(made, ideas):
    """The four answers, as HTML; ``ideas``: the re-teach cards' groups (``page.by_idea``)."""
    sections = _box("Which section needs what", "sections", _sections(made),
                    "No section has more of any mistake than the others, beyond chance.") if made.sections else \
        _box("Which section needs what", "about", [], "One section: <code>c.EncoderCourse.sections</code> sets them.")
    return ("<div class=\"answers\">"
            + _box("What to re-teach first", "reteach", _reteach(made, ideas), "Nobody lost points to a mistake.")
            + sections
            + _box("Who may need help", "help", _help(made), "No learner failed half their exercises.")
            + _box("Who may have copied", "copying", _copying(made), "No learners share an unusual answer.")
            + "</div>")
