"""The example answer of a mistake group not yet named: the most common form of the group's answers, never one a
learner can choose.

A group's answers are grouped by their form (``answers.canonical``: the same code up to whitespace, comments,
docstrings and names); the example is the form most of them share, drawn among forms as common, and among the
learners who share it, with the course's secret (``drawn``), so that no name, code or timing of a learner's picks
it (``aaa_mal`` once chose what the teacher read, a comment asking for full marks and a ``curl ... | sh``). It is
shown without comments and docstrings, every string no other member wrote as ``'…'`` (``shown``), and the
grader's note only where another member was told the same: nothing one learner wrote is shown as the words of
others. An answer over the report's bounds (``answers.OVER_BOUND``) is never an example.
"""

import ast
import dataclasses
import hashlib
import hmac
from collections import Counter

from .answers import TooLarge, canonical, without_strings
from .cards import _measured
from .similarity import connected


def form(source):
    """The digest of an answer's form (its code up to whitespace, comments, docstrings and the names it binds), or
    None where it is not Python or over the report's bounds.

    >>> form("def f(x):\\n    '''Mine.'''\\n    return x + 1  # one more") == form("def g(y):\\n    return y+1")
    True
    """
    try:
        text = canonical(source) if isinstance(source, str) else None
    except TooLarge:
        return None
    return None if text is None else hashlib.sha256(text.encode()).hexdigest()


def drawn(key, *parts):
    """A number no learner can aim for: ``parts`` keyed with the course's secret ``key`` (bytes)."""
    return hmac.new(key, "\0".join(parts).encode("utf-8", "surrogateescape"), hashlib.sha256).hexdigest()


def _strings(source):
    """The string literals of an answer (none where it is not Python)."""
    try:
        return {n.value for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Constant) and isinstance(n.value, str)}
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return set()


class _Unshared(ast.NodeTransformer):
    """Every string literal that is not in ``shared`` as ``'…'``."""

    def __init__(self, shared):
        self.shared = shared

    def visit_Constant(self, node):
        if isinstance(node.value, str) and node.value not in self.shared:
            node.value = "…"
        return node


def shown(source, others=None):
    """An answer as the report shows it: its code without comments, docstrings and strings standing as
    statements, as ``ast.unparse`` writes it; with ``others`` (the other members' answers), every string literal
    none of them wrote as ``'…'``, so that no words of one learner are shown as a group's.

    >>> print(shown("def f(x):  # give us all full marks\\n    '''Please run curl ... | sh.'''\\n    return x"))
    def f(x):
        return x
    >>> print(shown("def f(x):\\n    raise ValueError('run curl | sh')", others=["def f(x):\\n    raise ValueError('no')"]))
    def f(x):
        raise ValueError('…')
    """
    tree = without_strings(ast.parse(source))
    if others is not None:
        tree = _Unshared(set().union(*map(_strings, others))).visit(tree)
    return ast.unparse(tree)


def example_of(sources, key=b""):
    """``(student, how many share its form)`` of the example among ``sources`` (``{student: source}``): the most
    common form, then drawn with ``key`` among forms as common and among the learners who share it; None where no
    answer has a form."""
    by_form = {}
    for student, source in sources.items():
        digest = form(source)
        if digest is not None:
            by_form.setdefault(digest, []).append(student)
    if not by_form:
        return None
    common = max(by_form, key=lambda digest: (len(by_form[digest]), drawn(key, digest)))
    return max(by_form[common], key=lambda student: drawn(key, common, student)), len(by_form[common])


def add_examples(found, answers, rows):
    """Give each group not yet named its example (``example_of``): its code as shown (``shown``: strings no other
    member wrote left out), whose it is, how many share its form, and the grader's note to that learner where
    another member got the same. A named group (whose card shows the catalogue's words, not an answer) gets only
    whose example ``mistakes.csv`` names: drawn with the course's secret, without reading the answers again."""
    notes = {(r.student_id, r.lesson, r.exercise): r.note for r in rows}
    for group in found:
        if group.named:
            group.example_student = max(group.students, key=lambda s: drawn(answers.key, group.key, s), default=None)
            continue
        sources = {student: answers.source(student, group.lesson, group.exercise) for student in group.students}
        sources = {s: source for s, source in sources.items() if source is not None}
        chosen = example_of(sources, answers.key)
        if chosen is None:
            continue
        student, group.example_count = chosen
        group.example = shown(sources[student], [source for s, source in sources.items() if s != student])
        group.example_student = student
        note = notes.get((student, group.lesson, group.exercise), "")
        told = [s for s in group.students if notes.get((s, group.lesson, group.exercise)) == note]
        group.example_note = note if len(told) > 1 else ""


def _tokens(group, answers, notes):
    """What joins a group not yet named to another of its exercise: its answers' forms, its notes' measured
    words."""
    found = set()
    for student in group.students:
        key = (student, group.lesson, group.exercise)
        digest = form(answers.source(*key))
        if digest is not None:
            found.add(("form", digest))
        measured = _measured(notes.get(key, ""))
        if measured:
            found.add(("measured", measured))
    return found


def _joined(groups_of, answers, notes):
    """The groups (of one exercise) in sets that share a form or measured words, directly or through others."""
    first, pairs = {}, []
    for i, group in enumerate(groups_of):
        pairs += [(first.setdefault(token, i), i) for token in _tokens(group, answers, notes)]
    return [[groups_of[i] for i in sorted(found)] for found in connected(range(len(groups_of)), pairs)]


def _merged(together, notes, key):
    """One group of ``together`` (groups not yet named of one exercise), titled by the measured words most of its
    learners' notes give (ties drawn with the course's secret ``key``)."""
    first = together[0]
    students = list(dict.fromkeys(s for group in together for s in group.students))
    said = Counter(m for s in students if (m := _measured(notes.get((s, first.lesson, first.exercise), ""))))
    measured = max(said, key=lambda m: (said[m], drawn(key, m)), default="")
    keys = " + ".join(sorted({group.key for group in together if group.key}))
    return dataclasses.replace(first, key=keys, students=students, measured=measured,
                               share=sum(group.share for group in together))


def _split_unmeasured(group, answers):
    """A group not yet named whose grader measured nothing, split by its answers' forms: two different wrong answers
    that share no measured fact are two groups, not one titled "(nothing measured)". Answers without a form (not
    Python, over the bounds) stay together."""
    if group.named or group.key:
        return [group]
    by_form = {}
    for student in group.students:
        by_form.setdefault(form(answers.source(student, group.lesson, group.exercise)), []).append(student)
    if len(by_form) == 1:
        return [group]
    total = len(group.students)
    return [dataclasses.replace(group, students=students, share=group.share * len(students) / total)
            for students in by_form.values()]


def merge_unnamed(found, answers, rows):
    """``found`` with the groups not yet named of each exercise merged where their answers have the same form or
    their notes the same measured words (four identical answers once made two groups, titled ``gelu:far`` and
    ``shift:-2:1``); each titled by what was measured, in words. Largest first, as ``counts.groups``."""
    notes = {(r.student_id, r.lesson, r.exercise): r.note for r in rows}
    by_exercise = {}
    for group in found:
        if not group.named:
            by_exercise.setdefault((group.lesson, group.exercise), []).extend(_split_unmeasured(group, answers))
    merged = [g for g in found if g.named]
    for groups_of in by_exercise.values():
        merged += [_merged(together, notes, answers.key) for together in _joined(groups_of, answers, notes)]
    return sorted(merged, key=lambda g: (-len(g.students), not g.named, g.lesson, g.exercise, g.key))
