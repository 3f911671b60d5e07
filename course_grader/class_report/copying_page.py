"""The report's "Who may have copied" section, drawn from ``similarity.Copying``: each flag's learners, their answers
side by side with what differs marked, the grader's verdict on each, and the score; the shared answers that are
common in this class folded below."""

from ..files import code_html, html_text as esc
from ..sections import in_words
from .similarity import COMMON_LEAST, NEAR, SHOWN_NOISE, SHOWN_WINDOW, fingerprints

#: The flags shown in full (the others are listed below them, folded).
FLAGS_SHOWN = 12
#: The answers shown side by side in a flag (a larger group lists the others).
SIDE_BY_SIDE = 3
#: The longest answer shown (the whole one is in autograded/).
MAX_SHOWN_CHARS = 3000


def code(text):
    """A learner's code as the page shows it (``files.code_html``)."""
    return code_html(text)


def _slices(source, other):
    """Where ``source`` shares code with ``other`` (copydetect's slices on the answers as handed in), as
    ``[(start, end)]``; empty where copydetect finds nothing."""
    from copydetect import compare_files

    try:
        mine, theirs = fingerprints(source, SHOWN_NOISE, SHOWN_WINDOW, raw=True), \
            fingerprints(other, SHOWN_NOISE, SHOWN_WINDOW, raw=True)
        if not mine.hashes or not theirs.hashes:
            return []
        found = compare_files(mine, theirs)[2][0]
    except Exception:  # copydetect's tokenizer on a learner's text: nothing marked rather than no page
        return []
    return sorted(zip(map(int, found[0]), map(int, found[1]))) if len(found) else []


def with_differences_marked(source, shared):
    """``source`` as HTML, escaped, with what it does not share (outside ``shared``'s slices) marked."""
    parts, at = [], 0
    for start, end in shared + [(len(source), len(source))]:
        start, end = max(start, at), max(end, at)
        differs = source[at:start]
        parts.append(f"<mark>{code(differs)}</mark>" if differs.strip() else code(differs))
        parts.append(code(source[start:end]))
        at = end
    return "".join(parts)


def _verdict(row):
    if row is None:
        return "not graded"
    if row.status == "passed":
        return "passed"
    said = row.mistake or (f"not yet named ({row.diagnosis})" if row.diagnosis else "")
    return f"{row.status}" + (f": {said}" if said else "")


def _side_by_side(made, item):
    """The answers of one shared item side by side, each with its learner, the grader's verdict and what it does
    not share with the next one marked."""
    students = item.students[:SIDE_BY_SIDE]
    sources = [made.answers.source(s, item.lesson, item.exercise) or "" for s in students]
    sources = [s if len(s) <= MAX_SHOWN_CHARS else s[:MAX_SHOWN_CHARS] + "\n# ... (cut here)" for s in sources]
    columns = []
    for n, (student, source) in enumerate(zip(students, sources)):
        other = sources[(n + 1) % len(sources)]
        row = made.by_key.get((student, item.lesson, item.exercise))
        name = f" ({esc(made.names[student])})" if made.names.get(student) else ""
        columns.append(f"<figure><figcaption><span class=\"ids\">{esc(student)}</span>{name}: "
                       f"{esc(_verdict(row))}</figcaption><pre><code>{with_differences_marked(source, _slices(source, other))}"
                       f"</code></pre></figure>")
    more = len(item.students) - len(students)
    rest = f"<p>And {more} more: {', '.join(esc(s) for s in item.students[SIDE_BY_SIDE:])}.</p>" if more else ""
    return f"<div class=\"side\">{''.join(columns)}</div>{rest}"


def _item(made, item):
    n = len(item.students)
    return (f"<h4><code>{esc(item.exercise)}</code> ({esc(item.lesson)})</h4>"
            f"<p>Written by {'these ' + str(n) if n > 2 else 'these two'} alone of the {item.answered} learners who "
            f"answered it; {100 * item.similarity:.0f}% of its code the same once names and comments are set aside; "
            f"score {item.score:.2f} (alike {item.similarity:.2f} &times; rare {item.rarity:.2f} &times; length "
            f"{item.length:.2f}).</p>{_side_by_side(made, item)}")


def _flag(made, n, flag):
    who = ", ".join(f"{esc(s)}" + (f" ({esc(made.names[s])})" if made.names.get(s) else "") for s in flag.students)
    exercises = ", ".join(f"<code>{esc(item.exercise)}</code>" for item in flag.shared)
    verdicts = {_verdict(made.by_key.get((s, item.lesson, item.exercise))) for item in flag.shared
                for s in item.students}
    same = f"the grader's verdict on each: {esc(verdicts.pop())}" if len(verdicts) == 1 else \
        "the grader's verdicts differ"
    sections = {made.known.sections[s] for s in flag.students if s in made.known.sections}
    if len(sections) > 1:
        same += f"; across sections {esc(in_words(sections))}"
    return (f"<section class=\"flag card\" id=\"flag-{n}\"><h3>{n}. <span class=\"ids\">{who}</span>: score "
            f"{flag.score:.2f}</h3><p class=\"count\">The same unusual answer to {exercises}; {same}.</p>"
            + "".join(_item(made, item) for item in flag.shared) + "</section>")


def _common(made):
    common = made.copying.common
    if not common:
        return "<p>No answer is shared by many learners.</p>"
    body = "".join(f"<tr><td><code>{esc(c.exercise)}</code></td><td class=\"n\">{len(c.students)}</td>"
                   f"<td>{esc(c.why)}</td></tr>" for c in common)
    return (f"<details><summary>{len(common)} shared answers not flagged: common in this class</summary>"
            "<table><thead><tr><th scope=\"col\">exercise</th><th scope=\"col\" class=\"n\">learners</th>"
            f"<th scope=\"col\">why it is common</th></tr></thead><tbody>{body}</tbody></table></details>")


def _more_flags(made, flags):
    rows = "".join(f"<li><span class=\"ids\">{', '.join(esc(s) for s in flag.students)}</span>: score "
                   f"{flag.score:.2f} ({', '.join(esc(i.exercise) for i in flag.shared)})</li>" for flag in flags)
    return f"<details><summary>{len(flags)} more flags, lower scores</summary><ol>{rows}</ol></details>"


def copying(made, over_bound_html=""):
    """The section: the flags, highest score first, then the common shared answers, folded."""
    flags = made.copying.flags
    parts = ["<h2 id=\"copying\">Who may have copied</h2>",
             f"<p>Learners whose answer to an exercise is the same ({100 * NEAR:.0f}% or more of its code, once "
             f"names, comments and order are set aside: copydetect's winnowing fingerprints, as MOSS) and unusual in "
             f"this class (written by {COMMON_LEAST} learners or fewer; more is a common answer, folded below), "
             f"highest score first. A flag to look at, never a penalty. {made.copying.compared} answers "
             f"compared; marked: what an answer does not share with the one beside it.</p>", over_bound_html]
    if not flags:
        parts.append("<p>No two learners share an unusual answer.</p>")
    parts += [_flag(made, n, flag) for n, flag in enumerate(flags[:FLAGS_SHOWN], 1)]
    if len(flags) > FLAGS_SHOWN:
        parts.append(_more_flags(made, flags[FLAGS_SHOWN:]))
    parts.append(_common(made))
    return "\n".join(parts)
