"""What the class got wrong and what to re-teach tomorrow: ``report/index.html`` and ``report/mistakes.csv``.

    python -m encoder_lib.grading.class_report [--root .] [--lessons 01_attention,02_...] [--lab-url URL]

``make grade`` writes the report when it has graded; ``make report`` writes it
again from what grading left, without grading: ``grades_by_exercise.csv``
(each exercise's status, and the mistake or the diagnosis the grader named),
the gradebook (the roster's names, read with sqlite3) and ``autograded/``
(the answers as graded, for the example answers; for identical answers the
fingerprints the grader stored in each ``grading.json``, else the notebook,
read in two processes).

The page (one file, readable offline, on a projector and on a phone; no
script, nothing fetched: its pictures are in the page):

- the re-teach cards first: for the named mistakes and the failures not yet
  named that cost the most learners points, the idea to explain again (the
  idea rung of the hint ladder: the mistake's own, else its exercise's) and
  links to the lesson's section that shows it: relative, into
  ``../notebooks/``, and on a hub into the teacher's JupyterLab;
- the exercises with the lowest pass rate among the learners who answered,
  and the learners who may need help (most exercises failed, unanswered or
  not handed in);
- per lesson, a histogram of the scores (what the answers earned, before
  any late penalty) and each exercise's counts: handed in, passed, failed,
  not answered, errors, timeouts, tampered;
- per exercise, its named mistakes and diagnoses by how many learners lost
  points to each, a bar chart of them, and the learners' ids behind a
  disclosure;
- the failures no catalogued mistake explains, grouped by their signature
  (the same exercise and the same measured diagnosis), largest first, with
  one example answer each: what to add to the catalogue for the next class;
- the learners whose non-trivial answers are the same once whitespace,
  comments and names are normalised: a flag for the teacher to look at,
  never a penalty.

``mistakes.csv`` (``lesson,exercise,mistake,learners,share,example_student_id``)
holds the same groups with the same counts; ``share`` is of the learners who
answered the exercise. Every text a learner wrote (ids, notes, answers) is
escaped on the page and neutralised in the CSV (``report.write_csv``).
"""

import argparse
import ast
import base64
import collections
import csv
import dataclasses
import html
import hashlib
import io
import json
import os
import re
import sys
import time
import urllib.parse
from collections import Counter
from dataclasses import KW_ONLY, dataclass, field
from pathlib import Path

from . import gradebook, report, submissions
from .exercises import EXERCISES

FOLDER = "report"
#: The statuses ``grades_by_exercise.csv`` may hold, as ``make grade`` writes them.
STATUSES = ("passed", "failed", "not answered", "missing", "error", "timeout", "memory", "tampered")
#: The columns every ``grades_by_exercise.csv`` has, and those an older ``make grade`` did not write.
REQUIRED = report.COLUMNS
OPTIONAL = ("mistake", "diagnosis")
MISTAKE_COLUMNS = ("lesson", "exercise", "mistake", "learners", "share", "example_student_id")
#: How a row joins several mistakes, and several diagnosis keys.
#: How ``mistakes.csv`` names a group of failures no catalogued mistake explains.
UNNAMED = "not yet named: "
NOTHING_MEASURED = "(nothing measured)"
#: The re-teach cards shown in full at the top of the page.
TOP_CARDS = 3
#: The hardest exercises listed; the learners who may need help shown before the disclosure.
HARDEST, HELP_SHOWN = 5, 10
#: A learner may need help when at least this share of their exercises was not passed.
HELP_SHARE = 0.5
#: An answer is trivial (never flagged as identical) below this many syntax-tree nodes.
MIN_ANSWER_NODES = 30
#: The longest example answer shown on the page (the whole one is in autograded/).
MAX_EXAMPLE_CHARS = 4000
#: The course's blue and its text colour (WCAG AA on white).
BAR, TEXT = "#0072B2", "#1a1a1a"


# ---------------------------------------------------------------- what grading left


def _unquoted(text):
    """A field as ``report.csv_field`` wrote it, without the ``'`` it put before what looked like a formula."""
    return text[1:] if text.startswith("'") and text[1:].lstrip().startswith(report.FORMULA_STARTS) else text


def _number(text, path, line, column):
    try:
        return float(text)
    except ValueError:
        raise ValueError(f"{path} line {line}: {column} must be a number, got {report.plain_text(text)[:40]!r}") \
            from None


def _row(fields, path, line):
    """The ``report.Result`` of one CSV record (a dict), checked."""
    status = fields["status"]
    if status not in STATUSES:
        raise ValueError(f"{path} line {line}: status must be one of {', '.join(STATUSES)}; got "
                         f"{report.plain_text(status)[:40]!r}")
    mistakes = (m.strip() for m in (fields.get("mistake") or "").split(report.MISTAKE_JOIN.strip()))
    by_grader = (fields.get(report.GRADER_POINTS) or "").strip()
    late = fields.get(report.LATE)
    late = None if late is None else _number(late.strip(), path, line, report.LATE) if late.strip() else 0.0
    return report.Result(fields["student_id"], fields["lesson"], fields["exercise"],
                         _number(fields["points"], path, line, "points"),
                         _number(fields["max_points"], path, line, "max_points"), status, note=fields["note"],
                         mistake=report.MISTAKE_JOIN.join(m for m in mistakes if m),
                         diagnosis=(fields.get("diagnosis") or "").strip(),
                         grader_points=_number(by_grader, path, line, report.GRADER_POINTS) if by_grader else None,
                         late=late)


def read_rows(path):
    """``(rows, has_mistakes)``: the ``report.Result``s of a ``grades_by_exercise.csv``, and whether it names mistakes
    (an older ``make grade`` wrote no mistake and diagnosis columns). ValueError, naming the line, on a bad row."""
    path = Path(path)
    with open(path, newline="", encoding="utf-8", errors="replace") as f:
        reader = csv.reader(f)
        header = next(reader, None)
        if header is None or any(c not in header for c in REQUIRED):
            raise ValueError(f"{path} is not a grades_by_exercise.csv: its first line must name the columns "
                             f"{','.join(REQUIRED)}; it is {report.plain_text(','.join(header or []))[:120]!r}")
        rows, seen = [], {}
        for line, record in enumerate(reader, 2):
            if not record:
                continue
            fields = {name: _unquoted(value) for name, value in zip(header, record)}
            if any(name not in fields for name in REQUIRED):
                raise ValueError(f"{path} line {line} has {len(record)} fields, not the {len(header)} of its header")
            row = _row(fields, path, line)
            key = (row.student_id, row.lesson, row.exercise)
            if key in seen:
                raise ValueError(f"{path} line {line} repeats the row of line {seen[key]} "
                                 f"({report.plain_text(' '.join(key))[:120]})")
            seen[key] = line
            rows.append(row)
    return rows, all(c in header for c in OPTIONAL)


def course_lessons():
    """The course's lessons that have exercises, in course order."""
    return list(dict.fromkeys(exercise.lesson for exercise in EXERCISES.values()))


def lesson_order(rows, lessons=None):
    """The lessons counted: ``lessons`` (checked against the course's), else every lesson the rows hold, in
    course order (lessons the course no longer has after it)."""
    known = course_lessons()
    if lessons is not None:
        lessons = list(lessons)
        unknown = [lesson for lesson in lessons if lesson not in known]
        if unknown:
            raise ValueError(f"lessons must name lessons of the course ({', '.join(known)}); got "
                             f"{', '.join(map(repr, unknown))}")
        return [lesson for lesson in known if lesson in lessons]
    present = dict.fromkeys(row.lesson for row in rows)
    return [lesson for lesson in known if lesson in present] + [lesson for lesson in present if lesson not in known]


def roster(root):
    """``{student_id: name}`` of the learners the gradebook names (first and last name, where it has them)."""
    return {sid: student.name for sid, student in gradebook.students(root).items() if student.name}


# ---------------------------------------------------------------- counting


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
    example: str = None  # an unnamed group's example answer, and whose it is, and what its note said
    example_student: str = None
    example_note: str = ""

    @property
    def label(self):
        """How mistakes.csv and the pictures name the group."""
        return self.key if self.named else UNNAMED + (self.key or NOTHING_MEASURED)

    @property
    def title(self):
        """How a card names it."""
        return self.key if self.named else f"not yet named ({self.key or NOTHING_MEASURED})"

    @property
    def anchor(self):
        digest = hashlib.sha256(f"{self.lesson}\0{self.exercise}\0{self.label}".encode()).hexdigest()[:8]
        return "g-" + re.sub(r"[^A-Za-z0-9_-]+", "-", f"{self.exercise}-{self.label}")[:80] + f"-{digest}"


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
class Learner:
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
    """``{student_id: Learner}`` in the rows' order."""
    found = {}
    for row in rows:
        if row.exercise == submissions.NOTEBOOK:
            continue
        learner = found.setdefault(row.student_id, Learner(row.student_id))
        learner.exercises += 1
        learner.points += row.points
        learner.max_points += row.max_points
        if row.status == "passed":
            learner.passed += 1
        elif row.status == "not answered":
            learner.not_answered += 1
        elif row.status == "missing":
            learner.missing += 1
        elif row.status != "tampered":
            learner.failed += 1
    return found


def need_help(found, share=HELP_SHARE):
    """The learners with at least ``share`` of their exercises failed, unanswered or not handed in, most first."""
    needing = [learner for learner in found.values() if learner.exercises and learner.not_passed / learner.exercises
               >= share]
    return sorted(needing, key=lambda learner: (-learner.not_passed, -learner.missing, learner.student_id))


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


# ---------------------------------------------------------------- the answers as graded


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
    Read without following links and bounded in size (``submissions.read_notebook``); a student id or lesson
    that is not a safe name is never made into a path."""
    if not submissions.SAFE_NAME.fullmatch(student) or lesson not in course_lessons():
        return {}
    path = Path(root) / "autograded" / student / lesson / f"{lesson}.ipynb"
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
    kept, docstrings left out. Two trees give the same list only if they are the same up to names."""
    names, labels, pending = {}, [], collections.deque([tree])
    while pending:
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


def fingerprint(source):
    """A digest of an answer's code with its whitespace, comments, docstrings and names normalised (two answers
    that differ only in those get the same digest), or None for a trivial answer or one that is not Python.

    >>> fingerprint("def f(x):\\n    y = x * 2  # twice\\n    return y + 1") == fingerprint(
    ...     "def g(a):\\n    b = a*2\\n    return b+1")
    True
    """
    if not isinstance(source, str):
        return None
    if source not in _FINGERPRINTS:
        try:
            labels = _labels(ast.parse(source))
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            labels = []
        _FINGERPRINTS[source] = hashlib.sha256("\n".join(labels).encode()).hexdigest()[:32] \
            if len(labels) >= MIN_ANSWER_NODES else None
    return _FINGERPRINTS[source]


_FINGERPRINTS = {}  # source -> fingerprint: a class's answers repeat (the course's solution, a shared answer)


#: The version of ``fingerprint``: the grader stores fingerprints with it, and others are computed again.
FINGERPRINT_VERSION = 1


def answer_prints(sources):
    """What the grader stores in ``grading.json`` (``"answer_prints"``) of the answers ``{exercise: source}`` it
    graded, so that the report needs not read and normalise every notebook again."""
    return {"version": FINGERPRINT_VERSION, "prints": {name: fingerprint(source) for name, source in sources.items()}}


def stored_prints(root, student, lesson):
    """``{exercise: fingerprint}`` as ``grading.json`` holds them for this version of ``fingerprint``, or None."""
    if not submissions.SAFE_NAME.fullmatch(student) or lesson not in course_lessons():
        return None
    try:
        with open(Path(root) / "autograded" / student / lesson / "grading.json", "rb") as f:
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


def _in_parallel(work, root, pairs, jobs, at_least=200):
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


@dataclass
class Answers:
    """The answers as graded: ``prints[(student, lesson)] = {exercise: fingerprint}`` for every lesson handed in,
    read once (in ``jobs`` processes), and per exercise the fingerprints never flagged: the course's solution,
    and the answer cell as released. ``source`` reads an answer's text when the page shows it."""

    root: Path
    prints: dict = field(default_factory=dict)
    course: dict = field(default_factory=dict)  # exercise -> {fingerprint}
    _read: dict = field(default_factory=dict)

    @classmethod
    def read(cls, root, rows, jobs=None):
        found = cls(Path(root))
        handed = list(dict.fromkeys((r.student_id, r.lesson) for r in rows if r.status != "missing"))
        found.prints = _in_parallel(_fingerprints_of, found.root, handed, jobs or min(2, os.cpu_count() or 1))
        for lesson in dict.fromkeys(lesson for _, lesson in handed):
            for folder in ("notebooks", "release"):
                for name, source in _course_answers(root, folder, lesson).items():
                    found.course.setdefault(name, set()).add(fingerprint(source))
        return found

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
            if normal is not None and normal not in answers.course.get(exercise, ()):
                by_answer.setdefault((lesson, exercise, normal), []).append(student)
    by_students = {}
    for (lesson, exercise, _), students in by_answer.items():
        if len(students) > 1:
            by_students.setdefault(tuple(sorted(set(students))), []).append((lesson, exercise))
    return sorted(by_students.items(), key=lambda item: (-len(item[1]), -len(item[0]), item[0]))


def add_examples(found, answers, rows):
    """Give each group not yet named one example answer: the first learner's (by id) that can be read."""
    notes = {(r.student_id, r.lesson, r.exercise): r.note for r in rows}
    for group in found:
        if group.named:
            continue
        for student in sorted(group.students):
            source = answers.source(student, group.lesson, group.exercise)
            if source is not None:
                group.example, group.example_student = source, student
                group.example_note = notes.get((student, group.lesson, group.exercise), "")
                break


# ---------------------------------------------------------------- re-teach cards


def heading_anchor(text):
    """The id JupyterLab gives a markdown heading: its text with spaces as hyphens."""
    plain = re.sub(r"[`*_]", "", text).strip()
    return plain.replace(" ", "-")


#: What a URL's fragment may hold as it is (RFC 3986's pchar, "/" and "?"): a heading's ":" and "'" stay.
FRAGMENT_SAFE = "-_.~!$&'()*+,;=:@/?"


@dataclass(frozen=True)
class Links:
    """Where a card's links lead: ``relative`` from ``report/`` into the course's notebooks, and ``lab`` (the
    teacher's JupyterLab at its root folder, ``lab_root``), or None off a hub."""

    lab: str = None
    lab_root: Path = None
    root: Path = None

    def relative(self, lesson, anchor=""):
        path = f"../notebooks/{urllib.parse.quote(lesson)}/{urllib.parse.quote(lesson)}.ipynb"
        return path + (f"#{urllib.parse.quote(anchor, safe=FRAGMENT_SAFE)}" if anchor else "")

    def in_lab(self, lesson, anchor=""):
        """The address that opens the lesson in the teacher's JupyterLab, or None."""
        if not self.lab or self.lab_root is None or self.root is None:
            return None
        notebook = Path(self.root).resolve() / "notebooks" / lesson / f"{lesson}.ipynb"
        try:
            inside = notebook.relative_to(Path(self.lab_root).resolve())
        except ValueError:
            return None
        tree = urllib.parse.quote(inside.as_posix())
        return f"{self.lab.rstrip('/')}/lab/tree/{tree}" + (
            f"#{urllib.parse.quote(anchor, safe=FRAGMENT_SAFE)}" if anchor else "")


def lab_links(root, lab_url=None, lab_root=None, environ=None):
    """The ``Links`` of a course at ``root``: JupyterLab's address from ``lab_url``, else, in a JupyterHub
    server, ``JUPYTERHUB_SERVICE_PREFIX`` (``/user/<name>/``, an address on the hub itself); the folder it
    serves from ``lab_root``, else ``JUPYTER_SERVER_ROOT`` (set in JupyterLab's terminals), else the home."""
    environ = os.environ if environ is None else environ
    if lab_url is not None and not re.fullmatch(r"(https?://[A-Za-z0-9.-]+(:\d+)?)?/[A-Za-z0-9/_.~%@+-]*", lab_url):
        raise ValueError(f"lab_url must be JupyterLab's address, such as https://hub.example.org/user/teacher/ "
                         f"(http or https, no spaces or quotes); got {lab_url!r}")
    lab = lab_url or environ.get("JUPYTERHUB_SERVICE_PREFIX") or None
    served = lab_root or environ.get("JUPYTER_SERVER_ROOT") or Path.home()
    return Links(lab, Path(served), Path(root))


class _CardMarkdown:
    """Markdown of a hint rung as HTML: raw HTML escaped, links to a lesson's section (``#anchor``) made
    relative links into the lesson's notebook; ``anchors`` collects those sections."""

    def __init__(self, links, lesson):
        import mistune

        outer = self
        self.anchors = []

        class Renderer(mistune.HTMLRenderer):
            def link(self, text, url, title=None):
                if url.startswith("#"):
                    outer.anchors.append((urllib.parse.unquote(url[1:]), text))
                    url = links.relative(lesson, urllib.parse.unquote(url[1:]))
                return super().link(text, url, title)

        self.render = mistune.create_markdown(renderer=Renderer(escape=True))


@dataclass(frozen=True)
class Card:
    """A re-teach card: what the learners did, the idea (HTML), and where the lesson shows it."""

    title: str
    explanation: str
    idea: str
    lesson: str
    sections: tuple  # (anchor, link text as HTML)


#: Where a note's diagnosis starts (verdict.Verdict.explanation writes these).
_MEASURED = ("What the checks measured: ", "What the other checks measured: ")


def _measured(note, most=400):
    """The diagnosis a grader's note gives, in the note's own words (its first sentence, cut at ``most``), or ''.

    >>> _measured("x: values differ. What the checks measured: your rows sum to 2. The same holds on 1 other.")
    'your rows sum to 2.'
    """
    for lead in _MEASURED:
        if lead in (note or ""):
            text = note.split(lead, 1)[1].strip()
            first = re.split(r"(?<=[.?!])\s+(?=[A-Z])", text, maxsplit=1)[0]
            return first if len(first) <= most else first[:most - 1].rstrip() + "…"
    return ""


def _mistake(exercise, name):
    return next((m for m in exercise.mistakes if m.name == name), None) if exercise else None


def card(group, links):
    """The re-teach card of a group: a named mistake's own idea rung if it has one, else its exercise's."""
    exercise = EXERCISES.get(group.exercise)
    mistake = _mistake(exercise, group.key) if group.named else None
    rungs = (mistake.hints if mistake and mistake.hints else exercise.hints if exercise else ()) or ()
    if group.named:
        explanation = mistake.explanation if mistake else "a mistake the course's catalogue no longer names"
    else:
        measured = _measured(group.example_note)
        explanation = ("no catalogued mistake explains it; " + (
            f"what the grader measured on {group.example_student}'s answer: {measured}" if measured else
            f"the grader measured: {group.key or NOTHING_MEASURED}"))
    if not rungs:
        return Card(group.title, explanation, "", group.lesson, ())
    markdown = _CardMarkdown(links, group.lesson)
    idea = markdown.render(rungs[0])
    return Card(group.title, explanation, idea, group.lesson, tuple(markdown.anchors))


# ---------------------------------------------------------------- pictures


def _figure(width, height, left=0.1, bottom=0.2):
    from matplotlib.figure import Figure

    figure = Figure(figsize=(width, height), dpi=100)
    figure.subplots_adjust(left=left, right=0.97, top=0.93, bottom=bottom)  # fixed: a layout engine costs 40%
    return figure


def _png(figure):
    """The figure as a ``data:`` address (a picture inside the page, nothing fetched)."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", facecolor="white")
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def _style(axes):
    for side in ("top", "right"):
        axes.spines[side].set_visible(False)
    axes.tick_params(labelsize=14, colors=TEXT)


@dataclass(frozen=True)
class Picture:
    """What a picture shows, as plain values (drawn in another process): ``kind`` "scores" (``labels`` the
    scores, ``counts`` the learners at each) or "mistakes" (``labels`` the groups, ``counts`` their learners)."""

    kind: str
    title: str  # the lesson or the exercise
    labels: tuple
    counts: tuple
    most: float = 0.0

    def alt(self):
        """The picture's text alternative: what it plots, and every number it shows."""
        if self.kind == "scores":
            spread = ", ".join(f"{v} points: {n}" for v, n in zip(self.labels, self.counts))
            return (f"Histogram of the scores in {self.title} of the {sum(self.counts)} learners who handed it "
                    f"in, out of {self.most:g} points. Learners per score: {spread}.")
        listed = "; ".join(f"{label}: {n}" for label, n in zip(self.labels, self.counts))
        return f"Bar chart of the mistakes in {self.title}, by the learners who lost its points to each: {listed}."


def score_picture(lesson, most, scores):
    """The ``Picture`` of a lesson's scores: learners at each whole score from 0 to ``most``."""
    counts = Counter(round(s) for s in scores)
    values = list(range(0, int(round(most)) + 1)) if most <= 30 else sorted(counts)
    return Picture("scores", lesson, tuple(values), tuple(counts.get(v, 0) for v in values), most)


def mistakes_picture(exercise, found):
    """The ``Picture`` of an exercise's groups, largest first."""
    return Picture("mistakes", exercise, tuple(report.plain_text(g.label) for g in found),
                   tuple(len(g.students) for g in found))


def draw(picture):
    """A ``Picture`` drawn with matplotlib: its ``data:`` address."""
    import matplotlib

    with matplotlib.rc_context({"text.parse_math": False}):
        if picture.kind == "scores":
            figure = _figure(6.4, 2.8, left=0.13, bottom=0.24)
            axes = figure.add_subplot()
            bars = axes.bar(picture.labels, picture.counts, color=BAR, width=0.8)
            axes.set_xticks(picture.labels)
            axes.set_xlabel(f"points, of {picture.most:g}", fontsize=14, color=TEXT)
            axes.set_ylabel("learners", fontsize=14, color=TEXT)
        else:
            labels = [_short(label) for label in picture.labels]
            left = min(0.6, 0.03 + 8.6 * max(len(label) for label in labels) / 800)  # 14 px text, 800 px wide
            figure = _figure(8.0, 0.5 * len(labels) + 1.0, left=left, bottom=0.9 / (0.5 * len(labels) + 1.0))
            axes = figure.add_subplot()
            bars = axes.barh(range(len(labels)), picture.counts, color=BAR, height=0.7)
            axes.set_yticks(range(len(labels)), labels)
            axes.invert_yaxis()
            axes.set_xlabel("learners who lost its points", fontsize=14, color=TEXT)
        axes.bar_label(bars, fontsize=13, color=TEXT, padding=2)
        axes.margins(x=0.08) if picture.kind != "scores" else axes.margins(y=0.15)
        _style(axes)
        return _png(figure)


def draw_all(pictures, jobs=None):
    """``{picture: data: address}``, drawn in ``jobs`` forked processes."""
    import matplotlib.figure  # noqa: F401 (imported once, before the fork)

    unique = list(dict.fromkeys(pictures))
    drawn = _in_parallel(_draw_share, None, unique, jobs or min(2, os.cpu_count() or 1), at_least=8)
    return drawn


def _draw_share(_, pictures):
    return {picture: draw(picture) for picture in pictures}


def _short(text, most=44):
    text = report.plain_text(text)
    return text if len(text) <= most else text[:most - 1] + "\u2026"


# ---------------------------------------------------------------- the page

STYLE = """
html { font-size: 18px; } body { font: 1rem/1.5 system-ui, sans-serif; color: #1a1a1a; background: #fff;
  max-width: 68rem; margin: 1.5rem auto; padding: 0 1rem; overflow-wrap: anywhere; }
h1 { font-size: 1.8rem; } h2 { font-size: 1.45rem; margin-top: 2.2rem; border-bottom: 2px solid #444; }
h3 { font-size: 1.2rem; margin-top: 1.6rem; } h4, h5 { font-size: 1.05rem; margin: .8rem 0 .3rem; }
table { border-collapse: collapse; width: 100%; margin: .6rem 0; }
th, td { text-align: left; vertical-align: top; padding: .3rem .45rem; border-bottom: 1px solid #bbb; }
th { border-bottom: 2px solid #444; } td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; }
.card { border: 2px solid #0072B2; border-radius: .4rem; padding: .2rem 1rem .6rem; margin: 1rem 0; }
.card h3, .card h4 { margin-top: .6rem; } .count { font-weight: 600; }
.explanation { font-style: italic; } .links a { margin-right: 1.2rem; }
a { color: #0b57a8; } a:visited { color: #6a1b9a; }
img { max-width: 100%; height: auto; display: block; margin: .6rem 0; }
pre { white-space: pre-wrap; background: #f3f3f3; padding: .6rem; border-radius: .3rem; font-size: 1rem;
  overflow-wrap: anywhere; } code { font-size: 1rem; } h1 code, h2 code, h3 code, h4 code { font-size: inherit; }
details { margin: .3rem 0 .8rem; } summary { cursor: pointer; color: #0b57a8; }
.ids { font-family: ui-monospace, monospace; } .note { color: #333; }
"""
#: The page loads nothing and runs nothing: its pictures are data: addresses, its style is inline.
POLICY = "default-src 'none'; img-src data:; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'"


def esc(text):
    """Learner-derived text as the page shows it: plain text, escaped."""
    return html.escape(report.plain_text(text), quote=True)


def percent(share):
    return f"{100 * share:.0f}%"


def _count(n, of):
    return f"{n} ({percent(n / of)})" if of else f"{n}"


def _ids(students, names, summary):
    shown = ", ".join(esc(s) + (f" ({esc(names[s])})" if names.get(s) else "") for s in sorted(students))
    return f"<details><summary>{summary}</summary><p class=\"ids\">{shown}</p></details>"


def _card_html(group, built, links, names, level=3, prefix=""):
    """One group's card: its title and count, what the learners did, the idea, the lesson's links, the ids
    (``prefix`` before its id where the page shows it twice)."""
    tag, sub = f"h{level}", f"h{level + 1}"
    parts = [f"<section class=\"card\" id=\"{prefix}{group.anchor}\"><{tag}><code>{esc(group.exercise)}</code>: "
             f"{esc(built.title)}</{tag}>",
             f"<p class=\"count\">{len(group.students)} learner{'s' * (len(group.students) != 1)} lost its points "
             f"({percent(group.share)} of those who answered {esc(group.exercise)})</p>",
             f"<p class=\"explanation\">What they did: {esc(built.explanation)}</p>"]
    if built.idea:
        parts.append(f"<{sub}>The idea to re-teach</{sub}>{built.idea}")
    else:
        parts.append("<p>No idea rung is written for this exercise (Exercise.hints): its lesson is below.</p>")
    parts.append(_lesson_links(built, links))
    parts.append(_ids(group.students, names, f"The {len(group.students)} learners' ids"))
    if not group.named:
        parts.append(_example_html(group))
    parts.append("</section>")
    return "\n".join(parts)


def _lesson_links(built, links):
    anchors = built.sections or (("", html.escape(built.lesson)),)
    items = []
    for anchor, text in anchors[:2]:
        where = f"{html.escape(built.lesson)}, {text}" if anchor else html.escape(built.lesson)
        items.append(f"<a href=\"{html.escape(links.relative(built.lesson, anchor), quote=True)}\">"
                     f"Open {where} (the course's notebook)</a>")
        lab = links.in_lab(built.lesson, anchor)
        if lab:
            items.append(f"<a href=\"{html.escape(lab, quote=True)}\">Open {where} in JupyterLab</a>")
    return f"<p class=\"links\">{' '.join(items)}</p>"


def _example_html(group):
    if group.example is None:
        return "<p>No answer of this group could be read from autograded/.</p>"
    text = group.example if len(group.example) <= MAX_EXAMPLE_CHARS else \
        group.example[:MAX_EXAMPLE_CHARS] + "\n# ... (cut here; the whole answer is in autograded/)"
    note = f"<p class=\"note\">What the grader told them: {esc(group.example_note)}</p>" if group.example_note else ""
    return (f"<h4>One example answer, {esc(group.example_student)}'s</h4>"
            f"<pre><code>{html.escape(text.replace(chr(13), ''))}</code></pre>{note}")


@dataclass(frozen=True)
class LateHandIn:
    student_id: str
    lesson: str
    seconds: float
    penalty: float


@dataclass
class FromGradebook:
    """What the gradebook adds to grades_by_exercise.csv: the roster's ``names``, the scores and comments given by
    hand in formgrader (``manual``: ``{(student, lesson, exercise): gradebook.Manual}``), and the ``late``
    hand-ins with their recorded penalty: late as the CSV's ``late`` column says (``make grade`` wrote it, by the
    exchange's time), or, in an older CSV without it, by the gradebook's recorded time against the due date or
    the learner's extension."""

    names: dict = field(default_factory=dict)
    manual: dict = field(default_factory=dict)
    late: list = field(default_factory=list)

    @classmethod
    def read(cls, root, rows):
        from .deadlines import Deadlines

        recorded = gradebook.late(root)
        late = []
        if any(r.late is not None for r in rows):  # the CSV says
            flagged = {(r.student_id, r.lesson): r.late for r in rows if r.late and r.status != "missing"}
            for (student, lesson), seconds in flagged.items():
                hand_in = recorded.get((student, lesson))
                late.append(LateHandIn(student, lesson, seconds, hand_in.penalty if hand_in else 0.0))
            return cls(roster(root), gradebook.manual_marks(root), late)
        rules = Deadlines.read(root)
        handed = dict.fromkeys((r.student_id, r.lesson) for r in rows if r.status != "missing")
        for student, lesson in handed:
            hand_in = recorded.get((student, lesson))
            seconds = rules.seconds_late(student, lesson, hand_in.handed_in) if hand_in else 0.0
            if seconds > 0:
                late.append(LateHandIn(student, lesson, seconds, hand_in.penalty))
        return cls(roster(root), gradebook.manual_marks(root), late)

    def marked(self, rows):
        """The rows with the points given by hand as the gradebook has them now: the teacher's score where there
        is one (else the grader's), plus extra credit; from the grader's own points, so that a CSV ``make grade``
        wrote with the marks already in (``grader_points``) is not marked twice."""
        marked = []
        for row in rows:
            manual = self.manual.get((row.student_id, row.lesson, row.exercise))
            points = row.auto_points
            if manual:
                points = (points if manual.points is None else manual.points) + (manual.extra_credit or 0.0)
            marked.append(row if points == row.points else dataclasses.replace(row, points=points))
        return marked


@dataclass
class ClassReport:
    """Everything the page and the CSV show, computed once."""

    rows: list
    lessons: list
    has_mistakes: bool
    known: FromGradebook
    links: Links
    _: KW_ONLY
    graded: dict = None  # (student, lesson, exercise) -> the grader's points, before any by hand
    tallied: dict = None
    found: list = None
    learners: dict = None
    identical: list = None
    cards: dict = None
    pictures: dict = None  # lesson or (lesson, exercise) -> Picture
    drawn: dict = None  # Picture -> data: address

    @property
    def names(self):
        return self.known.names

    @classmethod
    def of(cls, rows, lessons, has_mistakes, known, links, answers, *, jobs=None):
        made = cls(known.marked(rows), lessons, has_mistakes, known, links)
        made.graded = {(r.student_id, r.lesson, r.exercise): r.auto_points for r in rows}
        made.tallied = tallies(made.rows)
        made.found = groups(made.rows, made.tallied)
        add_examples(made.found, answers, made.rows)
        made.learners = learners(made.rows)
        made.identical = identical_answers(answers, made.rows)
        made.cards = {id(g): card(g, links) for g in made.found}
        made.pictures = {lesson: score_picture(lesson, *lesson_scores(made.rows, lesson)) for lesson in lessons
                         if lesson_scores(made.rows, lesson)[1]}
        made.pictures.update({key: mistakes_picture(key[1], found) for key, found in made.by_exercise().items()})
        made.drawn = draw_all(list(made.pictures.values()), jobs)
        return made

    def by_exercise(self):
        """``{(lesson, exercise): [Group]}`` in course order, each largest first."""
        found = {}
        for group in self.found:
            found.setdefault((group.lesson, group.exercise), []).append(group)
        return dict(sorted(found.items(), key=lambda item: _course_position(*item[0])))

    def img(self, key):
        picture = self.pictures[key]
        return f"<img src=\"{self.drawn[picture]}\" alt=\"{esc(picture.alt())}\">"

    def card_html(self, group, level=3, prefix=""):
        return _card_html(group, self.cards[id(group)], self.links, self.names, level, prefix)


def _head(title):
    return (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<meta http-equiv=\"Content-Security-Policy\" content=\"{POLICY}\">"
            f"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>{esc(title)}</title><style>{STYLE}</style></head><body><main>")


def _intro(made):
    handed = sum(1 for learner in made.learners.values() if learner.missing < learner.exercises)
    parts = [f"<h1>What the class got wrong, and what to re-teach</h1>",
             f"<p>{len(made.learners)} learners, {handed} of whom handed something in; lessons counted: "
             f"{', '.join(esc(lesson) for lesson in made.lessons) or 'none'}. Written {time.strftime('%Y-%m-%d %H:%M')} "
             f"from grades_by_exercise.csv; the same counts are in <a href=\"mistakes.csv\">mistakes.csv</a>. "
             f"A mistake's share is of the learners who answered its exercise.</p>"]
    if not made.has_mistakes:
        parts.append("<p><strong>This grades_by_exercise.csv names no mistakes</strong> (an older make grade wrote "
                     "it): run <code>make grade FORCE=1</code> to grade again and name them.</p>")
    return "\n".join(parts)


def _reteach(made):
    top = made.found[:TOP_CARDS]
    if not top:
        return "<h2 id=\"reteach\">Re-teach first</h2><p>Nobody lost points to a mistake: nothing to re-teach.</p>"
    parts = ["<h2 id=\"reteach\">Re-teach first</h2>",
             f"<p>The {len(top)} mistakes that cost the most learners points, each with the idea to explain again "
             f"and the lesson's section that shows it.</p>"]
    parts += [made.card_html(group, prefix="top-") for group in top]
    rest = made.found[TOP_CARDS:TOP_CARDS + 7]
    if rest:
        parts.append("<p>Then: " + "; ".join(f"<a href=\"#{g.anchor}\"><code>{esc(g.exercise)}</code> "
                                             f"{esc(g.label)}</a> ({len(g.students)})" for g in rest) + ".</p>")
    return "\n".join(parts)


def _hardest(made):
    rows = hardest(made.tallied)
    if not rows:
        return "<h2 id=\"hardest\">The hardest exercises</h2><p>Nobody answered an exercise yet.</p>"
    body = "".join(f"<tr><td><code>{esc(t.exercise)}</code></td><td>{esc(t.lesson)}</td>"
                   f"<td class=\"n\">{percent(t.pass_rate)}</td><td class=\"n\">{t.statuses['passed']} of "
                   f"{t.answered}</td></tr>" for t in rows)
    return ("<h2 id=\"hardest\">The hardest exercises</h2><p>The lowest pass rates among the learners who answered "
            "(handed in, and not left as released).</p><table><thead><tr><th scope=\"col\">exercise</th>"
            "<th scope=\"col\">lesson</th><th scope=\"col\" class=\"n\">pass rate</th><th scope=\"col\" "
            f"class=\"n\">passed</th></tr></thead><tbody>{body}</tbody></table>")


def _help_row(learner, names):
    name = f" ({esc(names[learner.student_id])})" if names.get(learner.student_id) else ""
    return (f"<tr><td class=\"ids\">{esc(learner.student_id)}{name}</td><td class=\"n\">{learner.failed}</td>"
            f"<td class=\"n\">{learner.not_answered}</td><td class=\"n\">{learner.missing}</td>"
            f"<td class=\"n\">{learner.passed} of {learner.exercises}</td></tr>")


def _help(made):
    needing = need_help(made.learners)
    head = "<h2 id=\"help\">Learners who may need help</h2>"
    if not needing:
        return head + f"<p>No learner failed or left unanswered {percent(HELP_SHARE)} of their exercises.</p>"
    table = ("<table><thead><tr><th scope=\"col\">learner</th><th scope=\"col\" class=\"n\">failed</th>"
             "<th scope=\"col\" class=\"n\">not answered</th><th scope=\"col\" class=\"n\">not handed in</th>"
             "<th scope=\"col\" class=\"n\">passed</th></tr></thead><tbody>{}</tbody></table>")
    parts = [head, f"<p>{len(needing)} learners failed, left unanswered or did not hand in at least "
                   f"{percent(HELP_SHARE)} of their exercises (failed counts errors and timeouts too), most first.</p>",
             table.format("".join(_help_row(learner, made.names) for learner in needing[:HELP_SHOWN]))]
    if len(needing) > HELP_SHOWN:
        parts.append(f"<details><summary>The other {len(needing) - HELP_SHOWN}</summary>"
                     + table.format("".join(_help_row(learner, made.names) for learner in needing[HELP_SHOWN:]))
                     + "</details>")
    return "\n".join(parts)


_COUNTS_HEAD = ("<table><thead><tr><th scope=\"col\">exercise</th><th scope=\"col\" class=\"n\">handed in</th>"
                "<th scope=\"col\" class=\"n\">passed</th><th scope=\"col\" class=\"n\">failed</th>"
                "<th scope=\"col\" class=\"n\">not answered</th><th scope=\"col\" class=\"n\">errors</th>"
                "<th scope=\"col\" class=\"n\">timeouts</th><th scope=\"col\" class=\"n\">tampered</th>"
                "</tr></thead><tbody>")


def _counts_row(t):
    s, handed = t.statuses, t.handed_in
    return (f"<tr><td><code>{esc(t.exercise)}</code> ({t.max_points:g} points)</td>"
            f"<td class=\"n\">{_count(handed, t.learners)}</td><td class=\"n\">{_count(s['passed'], handed)}</td>"
            f"<td class=\"n\">{_count(s['failed'], handed)}</td><td class=\"n\">{_count(s['not answered'], handed)}"
            f"</td><td class=\"n\">{_count(t.errors, handed)}</td><td class=\"n\">{_count(s['timeout'], handed)}"
            f"</td><td class=\"n\">{_count(s['tampered'], handed)}</td></tr>")


def _lesson(made, lesson):
    parts = [f"<h3 id=\"lesson-{esc(lesson)}\">{esc(lesson)}</h3>"]
    if lesson in made.pictures:
        parts.append(made.img(lesson))
    else:
        parts.append("<p>Nobody handed this lesson in.</p>")
    rows = [t for (tl, _), t in made.tallied.items() if tl == lesson]
    parts.append(_COUNTS_HEAD + "".join(_counts_row(t) for t in rows) + "</tbody></table>")
    parts.append("<p>Handed in is a share of the class; the other columns are shares of those who handed the lesson "
                 "in. Errors: the answer cell failed or ran out of memory.</p>")
    return "\n".join(parts)


def _lessons(made):
    return "<h2 id=\"lessons\">Lesson by lesson</h2>\n" + "\n".join(_lesson(made, lesson) for lesson in made.lessons)


def _exercise(made, key, found):
    parts = [f"<h3 id=\"exercise-{esc(key[1])}\"><code>{esc(key[1])}</code></h3>", made.img(key)]
    for group in found:
        if group.named:
            parts.append(made.card_html(group, level=4))
        else:
            parts.append(f"<p>{len(group.students)} learners: {esc(group.label)}; see "
                         f"<a href=\"#{group.anchor}\">its group below</a>.</p>")
    return "\n".join(parts)


def _mistakes(made):
    parts = ["<h2 id=\"mistakes\">Mistakes, exercise by exercise</h2>",
             "<p>Each exercise's named mistakes and diagnoses, by how many learners lost points to each.</p>"]
    by_exercise = made.by_exercise()
    if not by_exercise:
        parts.append("<p>Nobody lost points to a mistake.</p>")
    parts += [_exercise(made, key, found) for key, found in by_exercise.items()]
    return "\n".join(parts)


def _course_position(lesson, exercise):
    names = list(EXERCISES)
    return (names.index(exercise) if exercise in names else len(names), lesson, exercise)


def _unnamed(made):
    unnamed = [g for g in made.found if not g.named]
    parts = ["<h2 id=\"unnamed\">Not yet named</h2>",
             "<p>Failures that no catalogued mistake explains, grouped by their signature (the same exercise and the "
             "same measured difference), largest first, each with one example answer: candidates for the "
             "catalogue (<code>tests/mistakes/</code> and the exercise's <code>Mistake</code>s).</p>"]
    if not unnamed:
        parts.append("<p>Every failure was named.</p>")
    parts += [made.card_html(group) for group in unnamed]
    return "\n".join(parts)


def _identical(made):
    parts = ["<h2 id=\"identical\">Identical answers</h2>",
             "<p>Learners whose answers are the same once whitespace, comments and names are normalised: a flag to "
             "look at, never a penalty. Answers left as released, trivial ones and the course's own solution are "
             "not listed.</p>"]
    if not made.identical:
        parts.append("<p>No two learners handed in the same non-trivial answer.</p>")
        return "\n".join(parts)
    body = "".join(f"<tr><td>{', '.join(f'<code>{esc(e)}</code>' for _, e in shared)}</td>"
                   f"<td class=\"n\">{len(students)}</td><td class=\"ids\">{', '.join(esc(s) for s in students)}</td></tr>"
                   for students, shared in made.identical)
    parts.append("<table><thead><tr><th scope=\"col\">the same answer to</th><th scope=\"col\" class=\"n\">learners"
                 "</th><th scope=\"col\">who</th></tr>"
                 f"</thead><tbody>{body}</tbody></table>")
    return "\n".join(parts)


def _late(made):
    parts = ["<h2 id=\"late\">Handed in late</h2>"]
    if not made.known.late:
        parts.append("<p>No hand-in came after its due date (or the learner's extension). A lesson without a due "
                     "date in the gradebook, and a notebook copied in by hand, are never late.</p>")
        return "\n".join(parts)
    from .deadlines import late_words

    body = "".join(f"<tr><td>{esc(late.lesson)}</td><td class=\"ids\">{esc(late.student_id)}</td>"
                   f"<td>{esc(late_words(late.seconds))}</td><td class=\"n\">{late.penalty:g}</td></tr>"
                   for late in sorted(made.known.late, key=lambda l: (l.lesson, -l.seconds, l.student_id)))
    parts.append(f"<p>{len(made.known.late)} hand-ins came after their due date (or the learner's extension), by "
                 f"the exchange's time; the penalty is nbgrader's late-penalty setting's, in points. The histograms and "
                 f"counts above are of what the answers earned, before these penalties; grades.csv has the scores "
                 f"after them.</p>"
                 "<table><thead><tr><th scope=\"col\">lesson</th><th scope=\"col\">learner</th>"
                 "<th scope=\"col\">how late</th><th scope=\"col\" class=\"n\">penalty</th></tr></thead>"
                 f"<tbody>{body}</tbody></table>")
    return "\n".join(parts)


def _by_hand(made):
    marked = sorted(made.known.manual.items())
    counted = {(r.student_id, r.lesson, r.exercise) for r in made.rows}
    marked = [(key, manual) for key, manual in marked if key in counted]
    parts = ["<h2 id=\"by-hand\">Marked by hand</h2>"]
    if not marked:
        parts.append("<p>No score, extra credit or comment was given by hand in formgrader.</p>")
        return "\n".join(parts)
    body = "".join(f"<tr><td class=\"ids\">{esc(student)}</td><td><code>{esc(exercise)}</code></td>"
                   f"<td class=\"n\">{made.graded[student, lesson, exercise]:g}</td>"
                   f"<td class=\"n\">{'' if manual.points is None else format(manual.points, 'g')}</td>"
                   f"<td class=\"n\">{format(manual.extra_credit, 'g') if manual.extra_credit else ''}</td>"
                   f"<td>{esc(manual.comment)}</td></tr>" for (student, lesson, exercise), manual in marked)
    parts.append(f"<p>{len(marked)} exercises you marked in formgrader. The scores on this page (the histograms) "
                 "take your points; the counts keep the grader's verdict on the answer.</p><table><thead><tr><th scope=\"col\">learner</th><th scope=\"col\">exercise</th>"
                 "<th scope=\"col\" class=\"n\">grader</th><th scope=\"col\" class=\"n\">yours</th>"
                 "<th scope=\"col\" class=\"n\">extra credit</th><th scope=\"col\">your comment</th></tr>"
                 f"</thead><tbody>{body}</tbody></table>")
    return "\n".join(parts)


def page(made):
    """The report's HTML."""
    sections = [_reteach, _hardest, _help, _lessons, _mistakes, _unnamed, _identical, _late, _by_hand]
    parts = [_head("What the class got wrong"), _intro(made)]
    parts += [f"<section>\n{section(made)}\n</section>" for section in sections]
    parts.append("</main></body></html>\n")
    return "\n".join(parts)


def mistake_rows(made):
    """The rows of ``mistakes.csv``: one per group, as the page counts them."""
    return [(g.lesson, g.exercise, g.label, len(g.students), round(g.share, 4), sorted(g.students)[0])
            for g in made.found]


# ---------------------------------------------------------------- writing it


def build(root, lessons=None, lab_url=None, rows=None):
    """Write ``report/index.html`` and ``report/mistakes.csv`` for the course at ``root``; returns the page's path.

    ``lessons``: the lessons counted (default: all the CSV holds); ``lab_url``: the teacher's JupyterLab
    (``lab_links``); ``rows``: ``(rows, has_mistakes)`` when the caller has them, else read from
    ``grades_by_exercise.csv``.
    """
    root = Path(root)
    if not root.is_dir():
        raise ValueError(f"root must be the course folder, got {str(root)!r}, which is not a folder")
    csv_path = root / "grades_by_exercise.csv"
    if rows is None:
        if not csv_path.is_file():
            raise FileNotFoundError(f"{csv_path} is missing: run `make grade` first")
        rows = read_rows(csv_path)
    all_rows, has_mistakes = rows
    counted = lesson_order(all_rows, lessons)
    rows = [row for row in all_rows if row.lesson in counted]
    made = ClassReport.of(rows, counted, has_mistakes, FromGradebook.read(root, rows), lab_links(root, lab_url),
                          Answers.read(root, rows))
    folder = report.make_folder(root / FOLDER)
    report.write_file(folder / "index.html", page(made))
    report.write_csv(folder / "mistakes.csv", MISTAKE_COLUMNS, mistake_rows(made))
    return folder / "index.html"


def main(argv=None):
    parser = argparse.ArgumentParser(prog="make report", description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path.cwd(), help="the course folder (default: here)")
    parser.add_argument("--lessons", default=None, help="the lessons counted, separated by commas (default: all)")
    parser.add_argument("--lab-url", default=None,
                        help="your JupyterLab's address, for links that open a lesson in it "
                             "(default on a hub: /user/<you>/)")
    args = parser.parse_args(argv)
    lessons = [name.strip() for name in args.lessons.split(",") if name.strip()] if args.lessons else None
    started = time.perf_counter()
    try:
        lessons = lessons or report.lessons_set(args.root.resolve())  # LESSONS=, else the course's setting
        written = build(args.root.resolve(), lessons, args.lab_url)
    except (ValueError, FileNotFoundError) as exc:
        print(f"make report: {exc}", file=sys.stderr)
        return 2
    print(f"the class report: {written} and {written.parent / 'mistakes.csv'} "
          f"({time.perf_counter() - started:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
