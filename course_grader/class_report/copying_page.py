"""The report's "Who may have copied" section, drawn from ``similarity.Copying``: each flag's learners, their answers
side by side with what differs marked, the grader's verdict on each, and the score; the shared answers that are
common in this class folded below."""

from ..files import code_html, html_table, html_text as esc, learner_html
from ..sections import in_words
from .answers import ANSWER_SECONDS, MAX_ANSWER_CHARS, MAX_ANSWER_NODES
from .similarity import CHANCE, FEW, NEAR, SHOWN_NOISE, SHOWN_WINDOW, fingerprints

#: The flags shown in full (the others are listed below them, folded).
FLAGS_SHOWN = 12
#: The answers shown side by side in a flag (a larger group lists the others).
SIDE_BY_SIDE = 3
#: The longest answer shown (the whole one is in autograded/).
MAX_SHOWN_CHARS = 3000


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
        parts.append(f"<mark>{code_html(differs)}</mark>" if differs.strip() else code_html(differs))
        parts.append(code_html(source[start:end]))
        at = end
    return "".join(parts)


def _verdict(row):
    """The grader's verdict on one answer: its status and points, and the mistake it named."""
    if row is None:
        return "not graded"
    points = f"{row.status}, {row.points:g} of {row.max_points:g} points"
    return points + (f": {row.mistake}" if row.mistake and row.status != "passed" else "")


def _verdicts(made, item):
    """What the members share of the grader's verdict on ``item``, in words: the same verdict where it is one (the
    hidden cases, drawn for each hand-in, may measure differently: never a difference of verdicts)."""
    rows = [made.by_key.get((s, item.lesson, item.exercise)) for s in item.students]
    said = {_verdict(row) for row in rows}
    if len(said) == 1:
        return f"each {said.pop()}"
    return "the grader's verdicts: " + "; ".join(f"{esc(s)} {esc(_verdict(r))}" for s, r in zip(item.students, rows))


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
        columns.append(f"<figure><figcaption><span class=\"ids\">{learner_html(student, made.names)}</span>: "
                       f"{esc(_verdict(row))}</figcaption><pre><code>{with_differences_marked(source, _slices(source, other))}"
                       f"</code></pre></figure>")
    more = len(item.students) - len(students)
    rest = f"<p>And {more} more: {', '.join(esc(s) for s in item.students[SIDE_BY_SIDE:])}.</p>" if more else ""
    return f"<div class=\"side\">{''.join(columns)}</div>{rest}"


def _item(made, item):
    n = len(item.students)
    who = "these two" if n == 2 else f"these {n}"
    others = item.writers - n
    return (f"<h4><code>{esc(item.exercise)}</code> ({esc(item.lesson)}): {esc(_verdicts(made, item))}</h4>"
            f"<p>Written by {who}" + (f" and {others} other{'s' * (others > 1)}" if others > 0 else " alone")
            + f" of the {item.answered} learners who answered it; {100 * item.similarity:.0f}% of its code the same "
            f"once names and comments are set aside; score {item.score:.2f} (alike {item.similarity:.2f} &times; "
            f"rare {item.rarity:.2f} &times; length {item.length:.2f}).</p>{_side_by_side(made, item)}")


def _flag(made, n, flag):
    who = ", ".join(learner_html(s, made.names) for s in flag.students)
    shared = "; ".join(f"<code>{esc(item.exercise)}</code> ({esc(_verdicts(made, item))})" for item in flag.shared)
    sections = {made.known.sections[s] for s in flag.students if s in made.known.sections}
    across = f" Across sections {esc(in_words(sections))}." if len(sections) > 1 else ""
    return (f"<section class=\"flag card\" id=\"flag-{n}\"><h3>{n}. <span class=\"ids\">{who}</span>: score "
            f"{flag.score:.2f}</h3><p class=\"count\">{len(flag.students)} learners share unusual answers to "
            f"{len(flag.shared)} exercise{'s' * (len(flag.shared) > 1)}: {shared}.{across}</p>"
            + "".join(_item(made, item) for item in flag.shared) + "</section>")


def _common(made):
    common = made.copying.common
    if not common:
        return "<p>No answer is shared by many learners.</p>"
    table = html_table(("exercise", ("learners",), "why it is common"),
                       [(f"<code>{esc(c.exercise)}</code>", len(c.students), esc(c.why)) for c in common])
    return f"<details><summary>{len(common)} shared answers not flagged: common in this class</summary>{table}</details>"


def _more_flags(made, flags):
    rows = "".join(f"<li><span class=\"ids\">{', '.join(esc(s) for s in flag.students)}</span>: score "
                   f"{flag.score:.2f} ({', '.join(esc(i.exercise) for i in flag.shared)})</li>" for flag in flags)
    return f"<details><summary>{len(flags)} more flags, lower scores</summary><ol>{rows}</ol></details>"


def _over_bound(found):
    """The answers over the report's bounds, compared with nothing and never an example."""
    shown = ", ".join(f"{esc(student)} (<code>{esc(exercise)}</code>)" for student, _, exercise in found[:20])
    return (f"<p>{len(found)} answer{'s' * (len(found) != 1)} over the report's bounds ({MAX_ANSWER_CHARS:,} "
            f"characters, {MAX_ANSWER_NODES:,} syntax nodes, {ANSWER_SECONDS:g} s each) "
            f"{'were' if len(found) != 1 else 'was'} compared with nothing: {shown}"
            + (" ..." if len(found) > 20 else "") + "</p>") if found else ""


def copying(made):
    """The section: the flags, highest score first, then the common shared answers, folded."""
    flags = made.copying.flags
    parts = [f"<p>Learners whose answers are the same ({100 * NEAR:.0f}% or more of the code, once names, comments "
             f"and order are set aside: copydetect's winnowing fingerprints, as MOSS) and unusual in this class: one "
             f"answer that at most {FEW} learners wrote, or answers on several exercises so unusual together that "
             f"chance would bring a group of that size together less than {CHANCE:g} times (a common answer, a "
             f"textbook's, is folded below). Highest score first; a flag to look at, never a penalty. "
             f"{made.copying.compared} answers compared; marked: what an answer does not share with the one beside "
             f"it.</p>", _over_bound(made.over_bound)]
    if not flags:
        parts.append("<p>No two learners share an unusual answer.</p>")
    parts += [_flag(made, n, flag) for n, flag in enumerate(flags[:FLAGS_SHOWN], 1)]
    if len(flags) > FLAGS_SHOWN:
        parts.append(_more_flags(made, flags[FLAGS_SHOWN:]))
    parts.append(_common(made))
    return "\n".join(parts)
