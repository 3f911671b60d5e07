"""The answers as graded (``autograded/``): read once, bounded, and compared once normalised (``fingerprint``), for
the identical answers and the example answers the report shows (``examples``).

Every step that reads an answer's source is bounded in size and time: an answer cell over ``MAX_ANSWER_CHARS``
characters, or whose syntax tree has more than ``MAX_ANSWER_NODES`` nodes or takes more than ``ANSWER_SECONDS``
to walk, is not normalised: its fingerprint is ``OVER_BOUND``, the page says so, and it is compared with nothing
(an 8.6 MB answer cell once cost every ``make grade`` and ``make report`` 36 s and 4.6 GB). The course's longest
answer is 1,611 characters and 439 nodes.
"""

import ast
import collections
import hashlib
import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from ...exercises import EXERCISES
from .. import ids, submissions
from .rows import course_lessons

#: An answer is trivial (never flagged as identical) below this many syntax-tree nodes.
MIN_ANSWER_NODES = 30
#: The bounds on an answer's source the report reads (see the module's docstring).
MAX_ANSWER_CHARS, MAX_ANSWER_NODES, ANSWER_SECONDS = 20_000, 5_000, 0.5
#: The fingerprint of an answer over those bounds: compared with nothing, and listed on the page.
OVER_BOUND = "over the bound"


class TooLarge(Exception):
    """An answer over the report's bounds (its size, its syntax tree's nodes, the time to walk them)."""



def answer_cells(data, names):
    """``{exercise: source}`` of the answer cells (nbgrader ``grade_id`` ``<exercise>_answer``) in a notebook's
    bytes, for the exercises ``names``; empty if it is not a notebook."""
    try:
        cells = submissions.load_cells(data)
    except (ValueError, TypeError, MemoryError):
        return {}
    wanted = {f"{name}_answer": name for name in names}
    found = {}
    for cell in cells:
        meta = cell.get("metadata")
        meta = meta.get("nbgrader") if isinstance(meta, dict) else None
        grade_id = meta.get("grade_id") if isinstance(meta, dict) else None
        if isinstance(grade_id, str) and grade_id in wanted:
            source = submissions.cell_source(cell)
            if source is not None:
                found[wanted[grade_id]] = source
    return found


def lesson_exercises(lesson):
    return [name for name, exercise in EXERCISES.items() if exercise.lesson == lesson]


def graded_answers(root, student, lesson):
    """``{exercise: source}`` of one learner's lesson as graded (``autograded/``); empty when it is not there.
    Read without following links and bounded in size (``submissions.read_notebook``), from the learner's folder
    (``ids.folder``: never a path made of the id itself); a lesson not of the course is never read."""
    if lesson not in course_lessons():
        return {}
    path = Path(root) / "autograded" / ids.folder(student) / lesson / f"{lesson}.ipynb"
    try:
        data = submissions.read_notebook(path)
    except submissions.NotebookProblem:
        return {}
    return answer_cells(data, lesson_exercises(lesson))


def _course_answers(root, folder, lesson):
    """The answer cells of the course's own notebook of ``lesson`` in ``folder`` (notebooks/ or release/)."""
    path = Path(root) / folder / lesson / f"{lesson}.ipynb"
    try:
        return answer_cells(path.read_bytes(), lesson_exercises(lesson))
    except OSError:
        return {}


def _is_docstring(node):
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)


def _labels(tree):
    """The syntax tree as a flat list, breadth first, each node with its number of children: names, arguments
    and functions renamed by order of appearance (``v0``, ``v1``, ...), attributes, keywords and constants
    kept, docstrings left out. Two trees give the same list only if they are the same up to names. ``TooLarge``
    past ``MAX_ANSWER_NODES`` nodes or ``ANSWER_SECONDS``."""
    names, labels, pending = {}, [], collections.deque([tree])
    deadline = time.perf_counter() + ANSWER_SECONDS
    while pending:
        if len(labels) >= MAX_ANSWER_NODES or (len(labels) % 256 == 0 and time.perf_counter() > deadline):
            raise TooLarge
        node = pending.popleft()
        kind, children = type(node), 0
        skip = node.body[0] if kind in _FUNCTIONS and len(node.body) > 1 and _is_docstring(node.body[0]) else None
        for name in () if kind is ast.arg else node._fields:  # an argument's annotation says nothing
            value = getattr(node, name, None)
            if isinstance(value, ast.AST):
                pending.append(value)
                children += 1
            elif type(value) is list:
                for item in value:
                    if isinstance(item, ast.AST) and item is not skip:
                        pending.append(item)
                        children += 1
        labels.append(f"{_label(node, kind, names)}/{children}")
    return labels


_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


def _label(node, kind, names):
    if kind is ast.Name:
        return names.setdefault(node.id, f"v{len(names)}")
    if kind is ast.arg:
        return "arg " + names.setdefault(node.arg, f"v{len(names)}")
    if kind in _FUNCTIONS:
        return "def " + names.setdefault(node.name, f"v{len(names)}")
    if kind is ast.Attribute:
        return "." + node.attr
    if kind is ast.Constant:
        return repr(node.value)
    if kind is ast.keyword:
        return f"{node.arg}="
    return kind.__name__


def normal_form(source):
    """The labels of an answer's syntax tree (``_labels``), or None where it is not Python; ``TooLarge`` over the
    bounds."""
    if len(source) > MAX_ANSWER_CHARS:
        raise TooLarge
    try:
        return _labels(ast.parse(source))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def fingerprint(source):
    """A digest of an answer's code with its whitespace, comments, docstrings and names normalised (two answers
    that differ only in those get the same digest), or None for a trivial answer or one that is not Python, or
    ``OVER_BOUND``.

    >>> fingerprint("def f(x):\\n    y = x * 2  # twice\\n    return y + 1") == fingerprint(
    ...     "def g(a):\\n    b = a*2\\n    return b+1")
    True
    >>> fingerprint("x = 1\\n" * 20_000)
    'over the bound'
    """
    if not isinstance(source, str):
        return None
    if source not in _FINGERPRINTS:
        try:
            labels = normal_form(source) or []
        except TooLarge:
            return OVER_BOUND  # not kept: its source may be megabytes
        _FINGERPRINTS[source] = hashlib.sha256("\n".join(labels).encode()).hexdigest()[:32] \
            if len(labels) >= MIN_ANSWER_NODES else None
    return _FINGERPRINTS[source]


_FINGERPRINTS = {}  # source -> fingerprint: a class's answers repeat (the course's solution, a shared answer)


#: The version of ``fingerprint``: the grader stores fingerprints with it, and others are computed again.
FINGERPRINT_VERSION = 2


def answer_prints(sources):
    """What the grader stores in ``grading.json`` (``"answer_prints"``) of the answers ``{exercise: source}`` it
    graded, so that the report needs not read and normalise every notebook again."""
    return {"version": FINGERPRINT_VERSION, "prints": {name: fingerprint(source) for name, source in sources.items()}}


def stored_prints(root, student, lesson):
    """``{exercise: fingerprint}`` as ``grading.json`` holds them for this version of ``fingerprint``, or None."""
    if lesson not in course_lessons():
        return None
    try:
        with open(Path(root) / "autograded" / ids.folder(student) / lesson / "grading.json", "rb") as f:
            stored = json.loads(f.read(4 * 2**20)).get("answer_prints")
        prints = stored["prints"] if stored.get("version") == FINGERPRINT_VERSION else None
    except (OSError, ValueError, AttributeError, TypeError, KeyError):
        return None
    if not isinstance(prints, dict) or not all(isinstance(k, str) and (v is None or isinstance(v, str))
                                               for k, v in prints.items()):
        return None
    return prints


def _fingerprints_of(root, pairs):
    """``{(student, lesson): {exercise: fingerprint}}`` of the answers as graded (one worker's share): as the
    grader stored them, else from the notebook."""
    found = {}
    for student, lesson in pairs:
        prints = stored_prints(root, student, lesson)
        if prints is None:
            prints = {name: fingerprint(source) for name, source in graded_answers(root, student, lesson).items()}
        found[student, lesson] = prints
    return found


def in_parallel(work, root, pairs, jobs, at_least=200):
    """``work(root, pairs)`` (a dict) in ``jobs`` forked processes over shares of ``pairs``, merged: in one
    process where fork is not there, or for fewer than ``at_least`` pairs."""
    import multiprocessing

    if jobs < 2 or len(pairs) < at_least or "fork" not in multiprocessing.get_all_start_methods():
        return work(root, pairs)
    from concurrent.futures import ProcessPoolExecutor

    shares = [pairs[i::jobs] for i in range(jobs)]
    merged = {}
    with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("fork")) as pool:
        for part in pool.map(work, [root] * jobs, shares):
            merged.update(part)
    return merged


def _course_key(root):
    """The course's secret (``.grading-secret``, which make grade wrote), as bytes; empty where there is none."""
    try:
        with open(Path(root) / ".grading-secret", "rb") as f:
            return f.read(200).strip()
    except OSError:
        return b""


@dataclass
class Answers:
    """The answers as graded: ``prints[(student, lesson)] = {exercise: fingerprint}`` for every lesson handed in,
    read once (in ``jobs`` processes), and per exercise the fingerprints never flagged: the course's solution,
    and the answer cell as released. ``source`` reads an answer's text when the page shows it."""

    root: Path
    prints: dict = field(default_factory=dict)
    course: dict = field(default_factory=dict)  # exercise -> {fingerprint}
    key: bytes = b""  # the course's secret, which draws the examples (``examples.drawn``)
    _read: dict = field(default_factory=dict)

    @classmethod
    def read(cls, root, rows, jobs=None):
        found = cls(Path(root), key=_course_key(root))
        handed = list(dict.fromkeys((r.student_id, r.lesson) for r in rows if r.status != "missing"))
        found.prints = in_parallel(_fingerprints_of, found.root, handed, jobs or min(2, os.cpu_count() or 1))
        for lesson in dict.fromkeys(lesson for _, lesson in handed):
            for folder in ("notebooks", "release"):
                for name, source in _course_answers(root, folder, lesson).items():
                    found.course.setdefault(name, set()).add(fingerprint(source))
        return found

    def over_bound(self):
        """``[(student, lesson, exercise)]`` of the answers over the bounds, which nothing was compared with."""
        return sorted((student, lesson, exercise) for (student, lesson), prints in self.prints.items()
                      for exercise, normal in prints.items() if normal == OVER_BOUND)

    def source(self, student, lesson, exercise):
        if (student, lesson) not in self._read:
            self._read[student, lesson] = graded_answers(self.root, student, lesson)
        return self._read[student, lesson].get(exercise)


def identical_answers(answers, rows):
    """``[(students, [(lesson, exercise)])]``: learners whose non-trivial answers to those exercises are the same
    once normalised (``fingerprint``); answers not counted (missing, not answered), trivial ones, and those the
    same as the course's solution or its released cell are left out. Most exercises shared first."""
    counted = {(r.student_id, r.lesson, r.exercise) for r in rows if r.status not in ("missing", "not answered")}
    by_answer = {}
    for (student, lesson), prints in answers.prints.items():
        for exercise, normal in prints.items():
            if (student, lesson, exercise) not in counted:
                continue
            if normal not in (None, OVER_BOUND) and normal not in answers.course.get(exercise, ()):
                by_answer.setdefault((lesson, exercise, normal), []).append(student)
    by_students = {}
    for (lesson, exercise, _), students in by_answer.items():
        if len(students) > 1:
            by_students.setdefault(tuple(sorted(set(students))), []).append((lesson, exercise))
    return sorted(by_students.items(), key=lambda item: (-len(item[1]), -len(item[0]), item[0]))
