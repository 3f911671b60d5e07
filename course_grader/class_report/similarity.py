"""Who may have copied: learners whose answer to an exercise is the same, ranked by how unusual it is in this class.

In a class of 200, short exercises collide constantly: a 2-line ``post_norm``
written the same way by 14 learners says nothing, while a renamed, reordered
and re-commented 12-line answer that two learners alone wrote says a lot.
So, exercise by exercise:

1. each counted answer (handed in and answered, within the report's bounds:
   ``answers``) is normalised (``canonical``): comments, docstrings and the
   names it binds (arguments, variables, functions) go, so that a rename or a
   new comment changes nothing;
2. ``copydetect`` (MIT; winnowing fingerprints, the method of MOSS) takes
   each normalised answer's fingerprints: k-grams of its text, winnowed.
   Fingerprints are a set, so statements moved about keep theirs, and two
   answers are near (``NEAR``) when each shares that much of its code with
   the other (copydetect's ``compare_files``, both ways);
3. answers that are near, directly or through others, are one shared answer;
   it is common, and goes to the folded list, when more than ``COMMON_LEAST``
   learners wrote it (ten learners of 200 sharing one wrong answer is a
   misconception taught or passed round, not a copy to look at), when it is near
   the course's own solution (public) or its released cell, when the grader
   named a catalogued mistake on every one of them (its model: learners make
   those on their own), or when it is too short to tell apart (``MIN_CHARS``);
4. every other shared answer flags its learners, scored by how alike the
   answers are (the lowest similarity between two of them), how rare it is
   (``log(answered / learners) / log(answered)``: 2 of 180 scores 0.87) and
   how much code it is (``FULL_CHARS`` counts in full); the learners flagged
   together on several exercises add their scores.

A flag is for the teacher to look at, never a penalty: the page shows each
flag's learners, their answers side by side with what differs marked, the
grader's verdict on each, and the score.
"""

import ast
import io
import math
import time
from dataclasses import dataclass

from .answers import ANSWER_SECONDS, MAX_ANSWER_NODES, OVER_BOUND, TooLarge
from .examples import without_strings

#: Two answers are near when each shares at least this much of its fingerprinted code with the other.
NEAR = 0.8
#: A shared answer is common when more than this many learners wrote it, in a class of any size.
COMMON_LEAST = 4
#: Normalised answers shorter than this (characters) are too short to tell apart; this long or longer count in full.
MIN_CHARS, FULL_CHARS = 60, 400
#: copydetect's noise threshold (the k of its k-grams, in characters of normalised code) and winnowing window.
NOISE, WINDOW = 12, 4
#: The same for the page's side-by-side view, on the answers as handed in (copydetect's own filter: tokens).
SHOWN_NOISE, SHOWN_WINDOW = 10, 3


class _Renamed(ast.NodeTransformer):
    """Every name the answer binds as ``v`` (its functions as ``f``), annotations gone."""

    def __init__(self, bound):
        self.bound = bound

    def visit_Name(self, node):
        if node.id in self.bound:
            node.id = "v"
        return node

    def visit_arg(self, node):
        node.arg, node.annotation = "v", None
        return node

    def visit_FunctionDef(self, node):
        node.name, node.returns = "f", None
        self.generic_visit(node)
        return node

    visit_AsyncFunctionDef = visit_FunctionDef


def _bound(tree):
    """The names an answer binds (arguments, assignments, loops, functions); ``TooLarge`` past the bounds."""
    names, deadline = set(), time.perf_counter() + ANSWER_SECONDS
    for n, node in enumerate(ast.walk(tree)):
        if n >= MAX_ANSWER_NODES or (n % 256 == 0 and time.perf_counter() > deadline):
            raise TooLarge
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names.add(node.name)
    return names


def canonical(source):
    """An answer normalised: without comments and docstrings, every name it binds ``v``, as ``ast.unparse``
    writes it; None where it is not Python; ``TooLarge`` over the report's bounds.

    >>> canonical("def f(x):  # mine\\n    '''Doc.'''\\n    y = x * 2\\n    return np.exp(y)")
    'def f(v):\\n    v = v * 2\\n    return np.exp(v)'
    """
    if source == OVER_BOUND:
        raise TooLarge
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    bound = _bound(tree)
    try:
        return ast.unparse(_Renamed(bound).visit(without_strings(tree)))
    except RecursionError:
        raise TooLarge from None


def fingerprints(text, noise=NOISE, window=WINDOW, raw=False):
    """copydetect's ``CodeFingerprint`` of ``text``: of the normalised text as it is, or (``raw``) of an answer as
    handed in, through copydetect's own filter (Python tokens, names and comments set aside)."""
    from copydetect import CodeFingerprint

    return CodeFingerprint("answer.py", noise, window, filter=raw, fp=io.StringIO(text))


def similarity(a, b):
    """How alike two fingerprinted answers are: the lower of the shares of each one's code found in the other."""
    from copydetect import compare_files

    if not a.hashes or not b.hashes:
        return 0.0
    return float(min(compare_files(a, b)[1]))


def _near(a, b):
    """Whether two fingerprinted answers are near: a quick look at their fingerprints first."""
    if not a.hashes or not b.hashes:
        return False
    if len(a.hashes & b.hashes) < (NEAR - 0.2) * min(len(a.hashes), len(b.hashes)):
        return False
    return similarity(a, b) >= NEAR


@dataclass(frozen=True)
class SharedAnswer:
    """One exercise's answer that ``students`` share and few others wrote: its score, and what makes it."""

    lesson: str
    exercise: str
    students: tuple
    similarity: float  # the lowest between two of the answers
    answered: int  # learners who answered the exercise
    chars: int  # of the normalised answer (its shortest form)

    @property
    def rarity(self):
        n = len(self.students)
        return math.log(self.answered / n) / math.log(self.answered) if self.answered > n else 0.0

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
    """One exercise's counted answers, by normalised form, fingerprinted, clustered."""

    def __init__(self, lesson, exercise, sources, course):
        self.lesson, self.exercise = lesson, exercise
        self.forms, self.too_large = {}, set()
        for student, source in sources.items():
            try:
                text = canonical(source)
            except TooLarge:
                self.too_large.add((student, lesson, exercise))
                continue
            if text is not None:
                self.forms.setdefault(text, []).append(student)
        self.answered = sum(len(students) for students in self.forms.values())
        self.prints = {text: fingerprints(text) for text in self.forms if len(text) >= MIN_CHARS}
        self.course = [fingerprints(t) for t in filter(None, map(_safe_canonical, course)) if len(t) >= MIN_CHARS]

    def clusters(self):
        """The forms near one another (directly or through others), as lists of forms, largest first."""
        texts = list(self.prints)
        parent = list(range(len(texts)))

        def root(i):
            while parent[i] != i:
                parent[i] = parent[parent[i]]
                i = parent[i]
            return i

        for i, a in enumerate(texts):
            for j in range(i + 1, len(texts)):
                if root(i) != root(j) and _near(self.prints[a], self.prints[texts[j]]):
                    parent[root(j)] = root(i)
        found = {}
        for i, text in enumerate(texts):
            found.setdefault(root(i), []).append(text)
        return sorted(found.values(), key=lambda forms: -sum(len(self.forms[t]) for t in forms))


def _safe_canonical(source):
    try:
        return canonical(source)
    except TooLarge:
        return None


def _common_why(exercise, forms, students, named):
    """Why a shared answer is common (words), or ''."""
    if any(_near(exercise.prints[text], course) for text in forms for course in exercise.course):
        return "the course's own solution (public), or near it"
    mistakes = {named.get((student, exercise.lesson, exercise.exercise)) for student in students}
    if None not in mistakes:
        return (f"the catalogued mistake{'s' * (len(mistakes) > 1)} {', '.join(sorted(mistakes))}, which learners "
                f"make on their own")
    if len(students) > COMMON_LEAST:
        return f"written by {len(students)} of the {exercise.answered} learners who answered it"
    return ""


def _lowest_similarity(exercise, forms):
    if len(forms) == 1:
        return 1.0
    return min(similarity(exercise.prints[a], exercise.prints[b]) for i, a in enumerate(forms) for b in forms[i + 1:])


def _shared_answers(exercise, named):
    """``(flagged [SharedAnswer], common [Common])`` of one exercise."""
    flagged, common = [], []
    for forms in exercise.clusters():
        students = tuple(sorted(s for text in forms for s in exercise.forms[text]))
        if len(students) < 2:
            continue
        why = _common_why(exercise, forms, students, named)
        if why:
            common.append(Common(exercise.lesson, exercise.exercise, students, why))
            continue
        flagged.append(SharedAnswer(exercise.lesson, exercise.exercise, students, _lowest_similarity(exercise, forms),
                              exercise.answered, min(len(text) for text in forms)))
    short = [(text, students) for text, students in exercise.forms.items() if len(text) < MIN_CHARS and
             len(students) > 1]
    common += [Common(exercise.lesson, exercise.exercise, tuple(sorted(students)),
                      f"too short to tell apart ({len(text)} characters of code)") for text, students in short]
    return flagged, common


def find_copying(answers, rows):
    """The ``Copying`` of the answers as graded (``answers.Answers``) that ``rows`` count: handed in and answered."""
    counted = {(r.student_id, r.lesson, r.exercise) for r in rows if r.status not in ("missing", "not answered")}
    named = {(r.student_id, r.lesson, r.exercise): r.mistakes[0] for r in rows if r.mistakes and r.lost_points}
    by_exercise = {}
    for (student, lesson), sources in answers.sources.items():
        for exercise, source in sources.items():
            if (student, lesson, exercise) in counted and isinstance(source, str):
                by_exercise.setdefault((lesson, exercise), {})[student] = source
    flagged, common, too_large, compared = {}, [], set(), 0
    for (lesson, exercise), sources in sorted(by_exercise.items()):
        found = _Exercise(lesson, exercise, sources, answers.course.get(exercise, ()))
        too_large |= found.too_large
        compared += found.answered
        items, shared = _shared_answers(found, named)
        common += shared
        for item in items:
            flagged.setdefault(item.students, []).append(item)
    flags = sorted((Flag(students, tuple(items)) for students, items in flagged.items()),
                   key=lambda flag: (-flag.score, flag.students))
    return Copying(tuple(flags), tuple(sorted(common, key=lambda c: (c.lesson, c.exercise, -len(c.students)))),
                   compared, frozenset(too_large))
