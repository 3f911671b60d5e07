"""Who may have copied: learners who share answers few others wrote, judged by how unusual what they share is.

Each counted answer is normalised (``answers.canonical``) and fingerprinted by ``copydetect`` (MIT; winnowing, the
method of MOSS); two answers are near when each shares ``NEAR`` of its code with the other. Set aside: answers near
the course's own solution (public), pairs that both got a catalogued mistake named, answers shorter than
``MIN_CHARS``. For two learners whose answers are near, the **writers** of what they share are the learners who
wrote an answer at least that close to either one's (``_Exercise.writers``). Learners are linked where one shared
answer has at most ``FEW`` writers, or where they share answers on two exercises or more; a group of linked
learners, of any size, is flagged when one answer they all share has at most ``FEW`` writers, or when chance would
bring a group of that size together on answers that unusual less than ``CHANCE`` times (``_chance``: ``C(N, g)
prod (writers / N)^g``); a group that is not is looked at within (``_within``). docs/teaching/feedback.md says it
for teachers; a flag is for the teacher to look at, never a penalty.
"""

import hashlib
import io
import math
from dataclasses import dataclass
from itertools import combinations

from .answers import TooLarge, canonical

#: Two answers are near when each shares at least this much of its fingerprinted code with the other.
NEAR = 0.8
#: An answer that at most this many learners wrote is unusual on its own.
FEW = 4
#: A group is flagged when chance would bring a group of its size together on its shared answers less often.
CHANCE = 0.01
#: Normalised answers shorter than this (characters) are too short to tell apart; this long or longer count in full.
MIN_CHARS, FULL_CHARS = 60, 400
#: copydetect's noise threshold (the k of its k-grams, in characters of normalised code) and winnowing window.
NOISE, WINDOW = 12, 4
#: The same for the page's side-by-side view, on the answers as handed in (copydetect's own filter: tokens).
SHOWN_NOISE, SHOWN_WINDOW = 10, 3


def _stable_hash(text):
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "big",
                          signed=True)


def fingerprints(text, noise=NOISE, window=WINDOW, raw=False):
    """copydetect's ``CodeFingerprint`` of ``text``: of the normalised text as it is, or (``raw``) of an answer as
    handed in, through copydetect's own filter (Python tokens, names and comments set aside). Its k-grams are
    hashed with a stable hash: copydetect's is Python's ``hash``, which every process seeds anew, so that the same
    class had other flags on every run."""
    from copydetect import CodeFingerprint, utils

    utils.hash = _stable_hash  # the name copydetect's hashed_kgrams looks up before the builtin
    return CodeFingerprint("answer.py", noise, window, filter=raw, fp=io.StringIO(text))


def similarity(a, b):
    """How alike two fingerprinted answers are: the lower of the shares of each one's code found in the other."""
    from copydetect import compare_files

    if not a.hashes or not b.hashes:
        return 0.0
    return float(min(compare_files(a, b)[1]))


def _near(a, b):
    """How alike two fingerprinted answers are where they are near (a quick look at their fingerprints first),
    else 0."""
    if not a.hashes or not b.hashes or len(a.hashes & b.hashes) < (NEAR - 0.2) * min(len(a.hashes), len(b.hashes)):
        return 0.0
    found = similarity(a, b)
    return found if found >= NEAR else 0.0


@dataclass(frozen=True, kw_only=True)
class SharedAnswer:
    """One exercise's answer that ``students`` share, and ``writers``: how many learners wrote something that
    close (``students`` among them)."""

    lesson: str
    exercise: str
    students: tuple
    similarity: float  # the lowest between two of the answers
    answered: int  # learners who answered the exercise
    chars: int  # of the normalised answer (its shortest form)
    writers: int

    @property
    def rarity(self):
        return math.log(self.answered / self.writers) / math.log(self.answered) if self.answered > self.writers else 0.0

    @property
    def length(self):
        return min(1.0, self.chars / FULL_CHARS)

    @property
    def score(self):
        return self.similarity * self.rarity * self.length


@dataclass(frozen=True)
class Flag:
    """Learners flagged together: the answers they share, one per exercise."""

    students: tuple
    shared: tuple

    @property
    def score(self):
        return sum(item.score for item in self.shared)


@dataclass(frozen=True)
class Common:
    """A shared answer not flagged, and why (in words)."""

    lesson: str
    exercise: str
    students: tuple
    why: str


@dataclass(frozen=True)
class Copying:
    """What the similarity found: ``flags``, highest score first; ``common``, the shared answers not flagged;
    ``compared``, how many answers were; ``too_large``, those over the syntax tree's bounds."""

    flags: tuple = ()
    common: tuple = ()
    compared: int = 0
    too_large: frozenset = frozenset()


class _Exercise:
    """One exercise's counted answers, by normalised form, fingerprinted, with every near pair of forms."""

    def __init__(self, lesson, exercise, sources, course):
        self.lesson, self.exercise = lesson, exercise
        self.forms, self.too_large, self.of = {}, set(), {}
        for student, source in sources.items():
            try:
                text = canonical(source)
            except TooLarge:
                self.too_large.add((student, lesson, exercise))
                continue
            if text is not None:
                self.forms.setdefault(text, []).append(student)
                self.of[student] = text
        self.answered = len(self.of)
        prints = {text: fingerprints(text) for text in self.forms if len(text) >= MIN_CHARS}
        course = [fingerprints(t) for t in map(canonical, course) if t and len(t) >= MIN_CHARS]
        self.public = {text for text, fp in prints.items() if any(_near(fp, c) for c in course)}
        texts = [text for text in prints if text not in self.public]
        self.close = {text: {text: 1.0} for text in texts}
        for a, b in combinations(texts, 2):
            alike = _near(prints[a], prints[b])
            if alike:
                self.close[a][b] = self.close[b][a] = alike

    def writers(self, a, b):
        """How many learners wrote an answer at least as close to form ``a`` or ``b`` as they are to each other."""
        least = self.close[a][b]
        return sum(len(self.forms[t]) for t in set(self.close[a]) | set(self.close[b])
                   if max(self.close[a].get(t, 0.0), self.close[b].get(t, 0.0)) >= least)

    def components(self):
        """The forms near one another, directly or through others, as lists of forms."""
        return connected(self.close, [(a, b) for a in self.close for b in self.close[a] if a < b])


def connected(nodes, pairs):
    """``nodes`` joined by ``pairs``, directly or through others: lists, in the order of their first node."""
    around = {node: set() for node in nodes}
    for a, b in pairs:
        around[a].add(b)
        around[b].add(a)
    seen, found = set(), []
    for start in around:
        if start not in seen:
            group, todo = [], [start]
            seen.add(start)
            while todo:
                group.append(todo.pop())
                fresh = around[group[-1]] - seen
                seen |= fresh
                todo += fresh
            found.append(group)
    return found


def _pairs(exercise, named):
    """``{(x, y): (writers, similarity, chars)}`` of the learners whose answers are near, but for pairs that both
    got a catalogued mistake named (learners make those on their own)."""
    found = {}
    for a in exercise.close:
        for b in exercise.close[a]:
            if a > b:
                continue
            n, alike = exercise.writers(a, b), exercise.close[a][b]
            for x in exercise.forms[a]:
                for y in exercise.forms[b]:
                    if x != y and not (named.get((x, exercise.lesson, exercise.exercise)) and
                                       named.get((y, exercise.lesson, exercise.exercise))):
                        found[min(x, y), max(x, y)] = (n, alike, min(len(a), len(b)))
    return found


def _chance(group, shared):
    """How many groups of this size chance would bring together on answers this unusual (``CHANCE``'s measure)."""
    g = len(group)
    log = math.lgamma(shared[0].answered + 1) - math.lgamma(g + 1) - math.lgamma(shared[0].answered - g + 1)
    return math.exp(min(50.0, log + g * sum(math.log(item.writers / item.answered) for item in shared)))


def _shared(group, links, exercises):
    """The ``SharedAnswer`` of each exercise on which every learner of ``group`` is near another of it."""
    found = []
    for key, exercise in exercises.items():
        pairs = [links[pair][key] for pair in combinations(group, 2) if key in links.get(pair, {})]
        if {s for pair in combinations(group, 2) if key in links.get(pair, {}) for s in pair} == set(group):
            found.append(SharedAnswer(lesson=key[0], exercise=key[1], students=group, answered=exercise.answered,
                                      similarity=min(p[1] for p in pairs), chars=min(p[2] for p in pairs),
                                      writers=max(len(group), max(p[0] for p in pairs))))
    return found


def _flagged(group, links, exercises):
    shared = _shared(group, links, exercises)
    if any(item.writers <= FEW for item in shared) or (len(shared) > 1 and _chance(group, shared) < CHANCE):
        return Flag(group, tuple(shared))
    return None


def _groups(links):
    """The learners linked, directly or through others, as sorted tuples."""
    return [tuple(sorted(group)) for group in connected(sorted({s for pair in links for s in pair}), links)]


def _within(group, linked):
    """Where a linked group as a whole is not flagged, the groups inside it that may be: the learners linked on
    one same answer at most ``FEW`` wrote, and those linked on one same pair of exercises."""
    pairs = [pair for pair in combinations(group, 2) if pair in linked]
    keys = {key for pair in pairs for key in linked[pair]}
    wanted = [lambda shared, key=key: shared.get(key, (FEW + 1,))[0] <= FEW for key in keys]
    wanted += [lambda shared, a=a, b=b: a in shared and b in shared for a, b in combinations(sorted(keys), 2)]
    return {tuple(inner) for test in wanted for inner in _groups([p for p in pairs if test(linked[p])])}


def _flags(links, exercises):
    """Every group of linked learners that is flagged, or else the groups within it that are (``_within``), the
    largest of those that overlap."""
    linked = {pair: shared for pair, shared in links.items()
              if len(shared) > 1 or any(n <= FEW for n, _, _ in shared.values())}
    flags = []
    for group in _groups(linked):
        flag = _flagged(group, links, exercises)
        inner = [f for f in map(lambda g: _flagged(g, links, exercises), _within(group, linked)) if f] \
            if flag is None else [flag]
        flags += [f for f in inner if not any(set(f.students) < set(other.students) for other in inner)]
    return flags


def _common(exercise, flagged):
    """The shared answers of ``exercise`` not flagged (``Common``), with why."""
    common = []
    groups = [(forms, tuple(sorted(s for t in forms for s in exercise.forms[t]))) for forms in exercise.components()]
    groups += [([t], tuple(sorted(exercise.forms[t]))) for t in exercise.public]
    for forms, students in groups:
        if len(students) < 2 or set(students) <= flagged:
            continue
        why = "the course's own solution (public), or near it" if forms[0] in exercise.public else \
            f"written by {len(students)} of the {exercise.answered} learners who answered it, who share no other " \
            f"unusual answer"
        common.append(Common(exercise.lesson, exercise.exercise, students, why))
    common += [Common(exercise.lesson, exercise.exercise, tuple(sorted(students)),
                      f"too short to tell apart ({len(text)} characters of code)")
               for text, students in exercise.forms.items() if len(text) < MIN_CHARS and len(students) > 1]
    return common


def find_copying(answers, rows):
    """The ``Copying`` of the answers as graded (``answers.Answers``) that ``rows`` count: handed in and answered."""
    counted = {(r.student_id, r.lesson, r.exercise) for r in rows if r.status not in ("missing", "not answered")}
    named = {(r.student_id, r.lesson, r.exercise): r.mistakes[0] for r in rows if r.mistakes and r.lost_points}
    by_exercise = {}
    for (student, lesson), sources in answers.sources.items():
        for exercise, source in sources.items():
            if (student, lesson, exercise) in counted and isinstance(source, str):
                by_exercise.setdefault((lesson, exercise), {})[student] = source
    exercises, links = {}, {}
    for key, sources in sorted(by_exercise.items()):
        exercises[key] = _Exercise(*key, sources, answers.course.get(key[1], ()))
        for pair, found in _pairs(exercises[key], named).items():
            links.setdefault(pair, {})[key] = found
    flags = sorted(_flags(links, exercises), key=lambda flag: (-flag.score, flag.students))
    common = []
    for key, exercise in exercises.items():
        flagged = {s for flag in flags for item in flag.shared if (item.lesson, item.exercise) == key
                   for s in item.students}
        common += _common(exercise, flagged)
    common += _named_common(by_exercise, named, flags)
    return Copying(tuple(flags), tuple(sorted(common, key=lambda c: (c.lesson, c.exercise, -len(c.students)))),
                   sum(e.answered for e in exercises.values()),
                   frozenset(t for e in exercises.values() for t in e.too_large))


def _named_common(by_exercise, named, flags):
    """Each catalogued mistake two learners or more made: common (learners make those on their own)."""
    by_mistake = {}
    for (student, lesson, exercise), mistake in named.items():
        if student in by_exercise.get((lesson, exercise), {}):
            by_mistake.setdefault((lesson, exercise, mistake), []).append(student)
    return [Common(lesson, exercise, tuple(sorted(students)),
                   f"the catalogued mistake {mistake}, which learners make on their own")
            for (lesson, exercise, mistake), students in by_mistake.items() if len(students) > 1]
