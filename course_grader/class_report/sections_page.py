"""The report's sections side by side (``course_grader.sections``): for each named mistake, each group of failures
measured alike and each exercise's lost points, each section's share against the rest of the class, by Fisher's
exact test (a 20-of-140 against 0-of-160 is certain; 2 of 30 against 1 of 30 is chance), the false-discovery rate
held at ``FDR`` across every comparison the page makes (Benjamini-Hochberg); then the points each section lost a
learner, exercise by exercise."""

from dataclasses import dataclass

from ..files import html_table, html_text as esc
from ..sections import in_words
from ..submissions import NOTEBOOK

#: The false-discovery rate held across the comparisons: of the differences named, at most this share by chance.
FDR = 0.05
#: The differences named in the section.
NAMED = 12
NO_SECTION = "(no section)"


@dataclass(frozen=True)
class Difference:
    """One section's share of a mistake (or of learners who lost an exercise's points) against the rest's."""

    section: str
    label: str  # the mistake's name, or what was measured, or "lost points on <exercise>"
    exercise: str
    anchor: str  # the card to re-teach from
    counts: tuple  # (with it in the section, who answered there, with it elsewhere, who answered elsewhere)
    p: float

    def words(self):
        k, n, k2, n2 = self.counts
        return (f"section {esc(self.section)}: {k} of {n} ({100 * k / n:.0f}%) against {k2} of {n2} "
                f"({100 * k2 / n2:.0f}%) in the others, on <code>{esc(self.exercise)}</code>")


def answered_by_section(rows, sections):
    """``{(lesson, exercise): {section: learners who answered}}``."""
    found = {}
    for r in rows:
        if r.exercise != NOTEBOOK and r.status not in ("missing", "not answered"):
            found.setdefault((r.lesson, r.exercise), {}).setdefault(sections.get(r.student_id, NO_SECTION), set()).add(
                r.student_id)
    return found


def _candidates(groups, rows):
    """``(label, lesson, exercise, anchor, learners)``: every mistake group and each exercise's lost points."""
    found = [(g.title, g.lesson, g.exercise, g.anchor, set(g.students)) for g in groups]
    lost = {}
    for r in rows:
        if r.exercise != NOTEBOOK and r.status not in ("missing", "not answered") and r.lost_points:
            lost.setdefault((r.lesson, r.exercise), set()).add(r.student_id)
    return found + [(f"lost points on {exercise}", lesson, exercise, f"sections-{exercise}", students)
                    for (lesson, exercise), students in lost.items()]


def differences(groups, rows, sections):
    """The ``Difference``s the false-discovery rate holds among the mistake ``groups`` (``counts.Group``) and the
    exercises' lost points of ``rows``, smallest p first."""
    from scipy.stats import false_discovery_control, fisher_exact

    answered, tests = answered_by_section(rows, sections), []
    for label, lesson, exercise, anchor, students in _candidates(groups, rows):
        per = answered.get((lesson, exercise), {})
        named = [s for s in per if s != NO_SECTION]
        for section in named if len(named) > 1 else ():
            mine, rest = per[section], set().union(*(per[s] for s in named if s != section))
            k, k2 = len(students & mine), len(students & rest)
            if k * len(rest) > k2 * len(mine):  # a section that has more of it than the others
                table = [[k, len(mine) - k], [k2, len(rest) - k2]]
                tests.append(Difference(section, label, exercise, anchor, (k, len(mine), k2, len(rest)),
                                        float(fisher_exact(table, alternative="greater")[1])))
    if not tests:
        return []
    adjusted = false_discovery_control([t.p for t in tests])
    found = sorted((t for t, q in zip(tests, adjusted) if q <= FDR), key=lambda t: (t.p, t.label))
    named = {(t.section, t.exercise) for t in found if not t.anchor.startswith("sections-")}
    return [t for t in found if not (t.anchor.startswith("sections-") and (t.section, t.exercise) in named)]


def lost_a_learner(rows, sections):
    """``({(lesson, exercise): {section: points lost a learner}}, {section: learners})`` over the rows (a learner who
    handed nothing in lost all of an exercise's points)."""
    lost, learners = {}, {}
    for r in rows:
        if r.exercise != NOTEBOOK:
            section = sections.get(r.student_id, NO_SECTION)
            learners.setdefault(section, set()).add(r.student_id)
            per = lost.setdefault((r.lesson, r.exercise), {})
            per[section] = per.get(section, 0.0) + max(0.0, r.max_points - r.points)
    counts = {section: len(ids) for section, ids in learners.items()}
    return {key: {s: total / counts[s] for s, total in per.items()} for key, per in lost.items()}, counts


def difference_item(difference):
    return (f"<li><a href=\"#{esc(difference.anchor)}\"><strong>{esc(difference.label)}</strong></a>: "
            f"{difference.words()}</li>")


def sections_html(made):
    """The section of the page: the differences found (``differences``), then the table of every exercise's losses
    by section."""
    found = made.differences
    lost, counts = lost_a_learner(made.rows, made.sections)
    names = sorted(counts, key=lambda s: (s == NO_SECTION, s))
    said = (f"<p>Where one section has more of a mistake (or of learners who lost an exercise's points) than the "
            f"others, more than chance explains (Fisher's exact test, the false-discovery rate held at {FDR:g} over "
            f"the page's comparisons), each with its card to re-teach from:</p><ul>"
            + "".join(difference_item(d) for d in found[:NAMED]) + "</ul>") if found else \
        "<p>No section has more of any mistake than the others, beyond what chance explains.</p>"
    table = html_table(("exercise", *((f"{esc(s)} ({counts[s]})",) for s in names)), [
        (f"<code id=\"sections-{esc(exercise)}\">{esc(exercise)}</code>", *(f"{per[s]:.2f}" if s in per else "–"
                                                                           for s in names))
        for (_, exercise), per in lost.items()])
    return (f"<p>{len(names)} sections ({in_words(names)}) graded in one run.</p>{said}<p>Each column is the points "
            f"a learner of that section lost, on average (its learners in brackets).</p>{table}")
