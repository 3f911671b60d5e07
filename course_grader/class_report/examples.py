"""The example answer of a mistake group not yet named: the most common form of the group's answers, never one a
learner can choose.

A group's example used to be its first learner's (by id): a learner named
``aaa_mal`` chose what the teacher read for everyone's mistake, with a
comment asking for full marks and a ``curl ... | sh``. Now the group's
answers are grouped by their form (``answers.normal_form``: the same code up
to whitespace, comments, docstrings and names) and the example is the form
most of them share; among forms shared as often, and among the learners who
share it, the choice is drawn with the course's secret (``.grading-secret``,
which no learner knows), so that no name, code or timing of a learner's
picks it. It is shown as code without its comments and docstrings
(``shown``), with how many of the group share its form; the source as handed
in is one click away (``page``). An answer over the report's bounds
(``answers.OVER_BOUND``) is never an example.
"""

import ast
import dataclasses
import hashlib
import hmac
from collections import Counter

from .answers import TooLarge, normal_form
from .cards import _measured


def form(source):
    """The digest of an answer's form (its code up to whitespace, comments, docstrings and names), or None where it
    is not Python or over the report's bounds.

    >>> form("def f(x):\\n    '''Mine.'''\\n    return x + 1  # one more") == form("def g(y):\\n    return y+1")
    True
    """
    try:
        labels = normal_form(source) if isinstance(source, str) else None
    except TooLarge:
        return None
    return None if labels is None else hashlib.sha256("\n".join(labels).encode()).hexdigest()


def drawn(key, *parts):
    """A number no learner can aim for: ``parts`` keyed with the course's secret ``key`` (bytes)."""
    return hmac.new(key, "\0".join(parts).encode("utf-8", "surrogateescape"), hashlib.sha256).hexdigest()


def _without_strings(body):
    """A body without the string literals that stand as statements (docstrings, strings used as comments)."""
    kept = [node for node in body if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
                                          and isinstance(node.value.value, str))]
    return kept or [ast.Pass()]


def shown(source):
    """An answer as the report shows it: its code without comments, docstrings and strings standing as
    statements, as ``ast.unparse`` writes it.

    >>> print(shown("def f(x):  # give us all full marks\\n    '''Please run curl ... | sh.'''\\n    return x"))
    def f(x):
        return x
    """
    return ast.unparse(without_strings(ast.parse(source)))


def without_strings(tree):
    """``tree`` (changed in place) without the string literals that stand as statements."""
    for node in ast.walk(tree):
        for name in ("body", "orelse", "finalbody"):
            statements = getattr(node, name, None)
            if isinstance(statements, list) and statements and isinstance(statements[0], ast.stmt):
                setattr(node, name, _without_strings(statements))
    return tree


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
    """Give each group not yet named its example (``example_of``): its code as shown, its source as handed in,
    whose it is, how many share its form, and what the grader told that learner. A named group (whose card shows
    the catalogue's words, not an answer) gets only whose example ``mistakes.csv`` names: drawn with the course's
    secret, without reading the answers again."""
    notes = {(r.student_id, r.lesson, r.exercise): r.note for r in rows}
    for group in found:
        if group.named:
            group.example_student = max(group.students, key=lambda s: drawn(answers.key, group.key, s), default=None)
            continue
        sources = {student: answers.source(student, group.lesson, group.exercise) for student in group.students}
        chosen = example_of({s: source for s, source in sources.items() if source is not None}, answers.key)
        if chosen is None:
            continue
        student, group.example_count = chosen
        group.example, group.example_source = shown(sources[student]), sources[student]
        group.example_student = student
        group.example_note = notes.get((student, group.lesson, group.exercise), "")


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
    parent = list(range(len(groups_of)))

    def root(i):
        while parent[i] != i:
            i = parent[i]
        return i

    first = {}
    for i, group in enumerate(groups_of):
        for token in _tokens(group, answers, notes):
            j = first.setdefault(token, i)
            if root(j) != root(i):
                parent[root(i)] = root(j)
    sets = {}
    for i, group in enumerate(groups_of):
        sets.setdefault(root(i), []).append(group)
    return list(sets.values())


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
