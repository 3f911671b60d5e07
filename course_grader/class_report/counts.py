"""The class counted: each exercise's statuses (``Tally``), the learners who lost its points to one mistake or one
measured failure (``Group``), the hardest exercises, each learner's exercises, each lesson's scores."""

import hashlib
import re
from collections import Counter
from dataclasses import KW_ONLY, dataclass, field

from .. import submissions

#: How ``mistakes.csv`` names a group of failures no catalogued mistake explains.
UNNAMED = "not yet named: "
NOTHING_MEASURED = "(nothing measured)"
#: The hardest exercises listed.
HARDEST = 5
#: A learner may need help when at least this share of their exercises was not passed.
HELP_SHARE = 0.5


@dataclass
class Tally:
    """One exercise's rows counted by status."""

    lesson: str
    exercise: str
    max_points: float = 0.0
    statuses: Counter = field(default_factory=Counter)

    @property
    def learners(self):
        return sum(self.statuses.values())

    @property
    def handed_in(self):
        return self.learners - self.statuses["missing"]

    @property
    def answered(self):
        """Handed in with an answer: what the pass rate and the mistakes' shares are shares of."""
        return self.handed_in - self.statuses["not answered"]

    @property
    def errors(self):
        return self.statuses["error"] + self.statuses["memory"]

    @property
    def pass_rate(self):
        return self.statuses["passed"] / self.answered if self.answered else None


def tallies(rows):
    """``{(lesson, exercise): Tally}`` in the rows' order; a notebook's tampering is no exercise."""
    found = {}
    for row in rows:
        if row.exercise == submissions.NOTEBOOK:
            continue
        tally = found.setdefault((row.lesson, row.exercise), Tally(row.lesson, row.exercise))
        tally.max_points = max(tally.max_points, row.max_points)
        tally.statuses[row.status] += 1
    return found


@dataclass
class Group:
    """Learners who lost an exercise's points to one named mistake (``named``) or with one diagnosis."""

    lesson: str
    exercise: str
    key: str  # the mistake's name, or the diagnosis's signature
    named: bool
    students: list = field(default_factory=list)
    _: KW_ONLY
    share: float = 0.0
    example: str = None  # an unnamed group's example answer as shown (``examples``), and whose it is, how many of
    example_student: str = None  # the group share its form, and what its note said (where another was told it too)
    example_count: int = 0
    example_note: str = ""
    measured: str = ""  # a group not yet named: what the grader measured, in its notes' words (``examples``)

    @property
    def label(self):
        """How mistakes.csv and the pictures name the group."""
        if not self.named and not self.key and self.example:  # split by answer: each its own name
            return UNNAMED + f"{self.example_count} wrote {_gist(self.example)}"
        return self.key if self.named else UNNAMED + (self.key or NOTHING_MEASURED)

    @property
    def title(self):
        """How a card names it: a group not yet named by what was measured, in words, where the notes say it."""
        if self.named:
            return self.key
        if self.measured:
            return f"not yet named: {self.measured}"
        if not self.key and self.example:  # nothing measured: the answer most of them wrote says what they did
            return f"not yet named: {self.example_count} of them wrote {_gist(self.example)}"
        return f"not yet named ({self.key or NOTHING_MEASURED})"

    @property
    def anchor(self):
        digest = hashlib.sha256(f"{self.lesson}\0{self.exercise}\0{self.label}".encode()).hexdigest()[:8]
        return "g-" + re.sub(r"[^A-Za-z0-9_-]+", "-", f"{self.exercise}-{self.label}")[:80] + f"-{digest}"


def _gist(code, most=70):
    """An answer's code in one line, ``def`` line left out, its end kept (where it returns what it computed) within
    ``most`` characters: ``…; return gamma * row / np.sqrt(row.var() + eps) + beta``."""
    lines = [line.strip() for line in code.splitlines() if line.strip() and not line.lstrip().startswith("def ")]
    kept = []
    for line in reversed(lines or [code.strip()]):
        if kept and len("; ".join([line, *kept])) > most:
            break
        kept.insert(0, line)
    text = "; ".join(kept)
    text = text if len(text) <= most else "…" + text[-(most - 1):]
    return f"`{'…; ' if len(kept) < len(lines) and not text.startswith('…') else ''}{text}`"


def groups(rows, tallied):
    """Every ``Group`` of the rows, largest first: named mistakes of rows that lost points (a row naming two
    mistakes counts for each), and failures no mistake explains by their diagnosis."""
    found = {}
    for row in rows:
        if not row.lost_points or row.exercise == submissions.NOTEBOOK:
            continue
        if row.mistakes:
            keys = [(m, True) for m in dict.fromkeys(row.mistakes)]
        elif row.status == "failed":
            keys = [(row.diagnosis, False)]
        else:
            continue
        for key, named in keys:
            group = found.setdefault((row.lesson, row.exercise, key, named), Group(row.lesson, row.exercise, key, named))
            group.students.append(row.student_id)
    for group in found.values():
        answered = tallied[group.lesson, group.exercise].answered
        group.share = len(group.students) / answered if answered else 0.0
    return sorted(found.values(), key=lambda g: (-len(g.students), not g.named, g.lesson, g.exercise, g.key))


def hardest(tallied, most=HARDEST):
    """The exercises with the lowest pass rate among the learners who answered them (nobody answered: left out)."""
    answered = [t for t in tallied.values() if t.answered]
    return sorted(answered, key=lambda t: (t.pass_rate, -t.answered))[:most]


@dataclass
class LearnerTally:
    """One learner's exercises over the lessons counted."""

    student_id: str
    _: KW_ONLY
    exercises: int = 0
    passed: int = 0
    failed: int = 0  # failed, error, timeout, memory
    not_answered: int = 0
    missing: int = 0
    points: float = 0.0
    max_points: float = 0.0

    @property
    def not_passed(self):
        return self.failed + self.not_answered + self.missing


def learners(rows):
    """``{student_id: LearnerTally}`` in the rows' order."""
    found = {}
    for row in rows:
        if row.exercise == submissions.NOTEBOOK:
            continue
        learner = found.setdefault(row.student_id, LearnerTally(row.student_id))
        learner.exercises += 1
        learner.points += row.points
        learner.max_points += row.max_points
        learner.passed += row.status == "passed"
        learner.not_answered += row.status == "not answered"
        learner.missing += row.status == "missing"
        learner.failed += row.status not in ("passed", "not answered", "missing", "tampered")
    return found


def need_help(found, share=HELP_SHARE):
    """The learners with at least ``share`` of their exercises failed, unanswered or not handed in, furthest behind
    first: the smallest share of the points, then the most exercises not passed, then the most not handed in."""
    needing = [learner for learner in found.values() if learner.exercises and learner.not_passed / learner.exercises
               >= share]
    return sorted(needing, key=lambda learner: (learner.points / learner.max_points if learner.max_points else 0.0,
                                                -learner.not_passed, -learner.missing, learner.student_id))


def lesson_scores(rows, lesson):
    """``(max points, [points of each learner who handed the lesson in])``."""
    totals, most, handed = {}, {}, set()
    for row in rows:
        if row.lesson != lesson or row.exercise == submissions.NOTEBOOK:
            continue
        totals[row.student_id] = totals.get(row.student_id, 0.0) + row.points
        most[row.exercise] = max(most.get(row.exercise, 0.0), row.max_points)
        if row.status != "missing":
            handed.add(row.student_id)
    return sum(most.values()), [totals[s] for s in totals if s in handed]


