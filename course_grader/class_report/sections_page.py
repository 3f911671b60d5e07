"""The report's sections side by side (``course_grader.sections``): exercise by exercise, the points each section lost
a learner, and the gaps named in words, largest first ("section B lost 2.1 times what A lost on pre_norm")."""

from ..files import html_text as esc
from ..sections import in_words
from ..submissions import NOTEBOOK

#: A gap is named when one section lost at least this many times what another lost, a learner...
GAP_RATIO = 1.5
#: ... at least this share of the exercise's points more, a learner (small differences are noise) ...
GAP_SHARE = 0.1
#: ... and the share of its learners who lost points differs by at least this many standard errors (a section of
#: 100 differs from another by 10 learners in 100 by chance alone; the report compares every exercise).
GAP_Z = 3.0
#: The gaps named above the table.
GAPS_NAMED = 5
NO_SECTION = "(no section)"


def lost_a_learner(rows, sections):
    """``({(lesson, exercise): {section: points lost a learner}}, {section: learners}, {(lesson, exercise): most},
    {(lesson, exercise): {section: learners who lost points}})`` over the rows (a learner who handed nothing in lost
    all of an exercise's points)."""
    lost, learners, most, losers = {}, {}, {}, {}
    for r in rows:
        if r.exercise == NOTEBOOK:
            continue
        section = sections.get(r.student_id, NO_SECTION)
        learners.setdefault(section, set()).add(r.student_id)
        key = (r.lesson, r.exercise)
        most[key] = max(most.get(key, 0.0), r.max_points)
        per = lost.setdefault(key, {})
        per[section] = per.get(section, 0.0) + max(0.0, r.max_points - r.points)
        losers.setdefault(key, {}).setdefault(section, 0)
        losers[key][section] += r.points < r.max_points
    counts = {section: len(ids) for section, ids in learners.items()}
    return ({key: {s: total / counts[s] for s, total in per.items()} for key, per in lost.items()}, counts, most,
            losers)


def _z(k1, n1, k2, n2):
    """The two shares ``k1/n1`` and ``k2/n2`` apart in standard errors (pooled)."""
    pooled = (k1 + k2) / (n1 + n2)
    spread = (pooled * (1 - pooled) * (1 / n1 + 1 / n2)) ** 0.5
    return abs(k1 / n1 - k2 / n2) / spread if spread else 0.0


def gaps(lost, most, counts, losers):
    """``[(difference, exercise, more, less, their losses)]``, largest first: where one section lost at least
    ``GAP_RATIO`` times another's points a learner, ``GAP_SHARE`` of the exercise's points more, and the shares
    of their learners who lost points are ``GAP_Z`` standard errors apart."""
    found = []
    for (lesson, exercise), per in lost.items():
        named = {s: v for s, v in per.items() if s != NO_SECTION}
        if len(named) < 2:
            continue
        more, less = max(named, key=named.get), min(named, key=named.get)
        difference, who = named[more] - named[less], losers[lesson, exercise]
        if difference >= GAP_SHARE * most[lesson, exercise] and named[more] >= GAP_RATIO * named[less] and \
                _z(who[more], counts[more], who[less], counts[less]) >= GAP_Z:
            found.append((difference, exercise, more, less, named[more], named[less]))
    return sorted(found, key=lambda gap: (-gap[0], gap[1]))


def gap_words(gap):
    """One gap in words."""
    _, exercise, more, less, a, b = gap
    if b == 0:
        return (f"section {esc(more)} lost {a:.2f} points a learner on <code>{esc(exercise)}</code>; section "
                f"{esc(less)} lost none")
    return (f"section {esc(more)} lost {a / b:.1f} times what {esc(less)} lost on <code>{esc(exercise)}</code> "
            f"({a:.2f} against {b:.2f} points a learner)")


def sections_html(made, sections):
    """The section of the page: the gaps named, then the table of every exercise's losses by section."""
    lost, counts, most, losers = lost_a_learner(made.rows, sections)
    names = sorted(counts, key=lambda s: (s == NO_SECTION, s))
    named = gaps(lost, most, counts, losers)
    said = (f"<p>Where one section lost at least {GAP_RATIO:g} times what another lost and at least "
            f"{100 * GAP_SHARE:.0f}% of the exercise's points more, a learner, and more of its learners lost "
            f"points than chance explains ({GAP_Z:g} standard errors):</p><ul>"
            + "".join(f"<li>{gap_words(gap)}</li>" for gap in named[:GAPS_NAMED]) + "</ul>") if named else \
        "<p>No section lost much more than another on any exercise, beyond what chance explains.</p>"
    head = "".join(f"<th scope=\"col\" class=\"n\">{esc(s)} ({counts[s]})</th>" for s in names)
    body = "".join(
        f"<tr><td><code>{esc(exercise)}</code></td>" + "".join(
            f"<td class=\"n\">{per[s]:.2f}</td>" if s in per else "<td class=\"n\">–</td>" for s in names) + "</tr>"
        for (_, exercise), per in lost.items())
    return (f"<h2 id=\"sections\">Sections side by side</h2><p>{len(names)} sections ({in_words(names)}) graded in "
            f"one run; each column is the points a learner of that section lost, on average (its learners in "
            f"brackets).</p>{said}<table><thead><tr><th scope=\"col\">exercise</th>{head}</tr></thead>"
            f"<tbody>{body}</tbody></table>")
