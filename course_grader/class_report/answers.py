"""The answers as graded (``autograded/``), read once (``report/.answers.json``, by each notebook's size, time and
inode) and bounded, for the similarity (``similarity``) and the examples (``examples``): an answer cell over
``MAX_ANSWER_CHARS`` characters, or whose syntax tree has more than ``MAX_ANSWER_NODES`` nodes or takes more than
``ANSWER_SECONDS`` to walk, is ``OVER_BOUND``, compared with nothing, and the page says so (an 8.6 MB answer cell
once cost every report 36 s and 4.6 GB; the course's longest answer is 1,611 characters and 439 nodes).
"""

import ast
import functools
import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from encoder_lib.grading.exercises import BY_LESSON

from .. import ids, submissions
from ..files import read_json, read_regular, write_file
from ..version import SECRET_FILE

#: The bounds on an answer's source the report reads (see the module's docstring).
MAX_ANSWER_CHARS, MAX_ANSWER_NODES, ANSWER_SECONDS = 20_000, 5_000, 0.5
#: An answer over those bounds: compared with nothing, and listed on the page.
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
        grade_id = (submissions.managed(cell) or {}).get("grade_id")
        if isinstance(grade_id, str) and grade_id in wanted:
            source = submissions.cell_source(cell)
            if source is not None:
                found[wanted[grade_id]] = source
    return found


def graded_answers(root, student, lesson):
    """``{exercise: source}`` of one learner's lesson as graded (``autograded/``); empty when it is not there.
    Read without following links and bounded in size (``submissions.read_hand_in``), from the learner's folder
    (``ids.folder``: never a path made of the id itself); a lesson not of the course is never read."""
    if lesson not in BY_LESSON:
        return {}
    path = Path(root) / "autograded" / ids.folder(student) / lesson / f"{lesson}.ipynb"
    try:
        data, _ = submissions.read_hand_in(path)
    except submissions.NotebookProblem:
        return {}
    return answer_cells(data, BY_LESSON[lesson])


def _course_answers(root, folder, lesson):
    """The answer cells of the course's own notebook of ``lesson`` in ``folder`` (notebooks/ or release/)."""
    path = Path(root) / folder / lesson / f"{lesson}.ipynb"
    try:
        return answer_cells(path.read_bytes(), BY_LESSON[lesson])
    except OSError:
        return {}


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


def without_strings(tree):
    """``tree`` (changed in place) without the string literals that stand as statements (docstrings, strings used
    as comments)."""
    for node in ast.walk(tree):
        for name in ("body", "orelse", "finalbody"):
            body = getattr(node, name, None)
            if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
                setattr(node, name, [s for s in body if not (isinstance(s, ast.Expr) and isinstance(
                    s.value, ast.Constant) and isinstance(s.value.value, str))] or [ast.Pass()])
    return tree


@functools.lru_cache(maxsize=65536)  # the similarity and the examples normalise the same answers
def canonical(source):
    """An answer normalised: without comments and docstrings, every name it binds ``v``, as ``ast.unparse``
    writes it; None where it is not Python; ``TooLarge`` over the report's bounds.

    >>> canonical("def f(x):  # mine\\n    '''Doc.'''\\n    y = x * 2\\n    return np.exp(y)")
    'def f(v):\\n    v = v * 2\\n    return np.exp(v)'
    """
    if source == OVER_BOUND or len(source) > MAX_ANSWER_CHARS:
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


def checked(source):
    """``source`` if it is within the report's bounds as text (``MAX_ANSWER_CHARS``), else ``OVER_BOUND``; its
    syntax tree's bounds are checked where it is normalised (``canonical``)."""
    return source if len(source) <= MAX_ANSWER_CHARS else OVER_BOUND


def _sources_of(root, pairs):
    """``{(student, lesson): {exercise: source or OVER_BOUND}}`` of the answers as graded (one worker's share)."""
    return {(student, lesson): {name: checked(source) for name, source in graded_answers(root, student, lesson).items()}
            for student, lesson in pairs}


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
    """The course's secret (``version.SECRET_FILE``, which make grade wrote), as bytes; empty where there is none."""
    try:
        return (read_regular(Path(root) / SECRET_FILE, 199) or b"").strip()
    except OSError:
        return b""


#: Where the report keeps the answers it read from autograded/, by each notebook's size, time and inode: a regrade
#: reads again only the notebooks the grader wrote since (a class of 200 is 1,600 notebooks).
CACHE = ".answers.json"


def _signature(root, student, lesson):
    try:
        info = os.lstat(Path(root) / "autograded" / ids.folder(student) / lesson / f"{lesson}.ipynb")
    except OSError:
        return None
    return [info.st_size, info.st_mtime_ns, info.st_ino]


def _cached(path):
    try:
        cache = read_json(path, 256 * 2**20)
    except OSError:
        return {}
    return cache if isinstance(cache, dict) and cache.get("version") == CACHE_VERSION else {}


CACHE_VERSION = 1


def read_sources(root, handed, cache_path=None, jobs=2):
    """``{(student, lesson): {exercise: source or OVER_BOUND}}`` of ``handed`` (the lessons handed in), from the
    cache where its notebook is the one read then, else read (in ``jobs`` processes); the cache is written back."""
    cache = _cached(cache_path).get("entries", {}) if cache_path else {}
    found, todo, kept = {}, [], {}
    for student, lesson in handed:
        key, signature = f"{ids.folder(student)}/{lesson}", _signature(root, student, lesson)
        entry = cache.get(key)
        if isinstance(entry, dict) and entry.get("signature") == signature and isinstance(entry.get("answers"), dict):
            found[student, lesson] = entry["answers"]
        else:
            todo.append((student, lesson))
        kept[key] = signature
    found.update(in_parallel(_sources_of, Path(root), todo, jobs))
    if cache_path and todo:
        entries = {key: {"signature": kept[key], "answers": found[s, l]}
                   for (s, l), key in ((pair, f"{ids.folder(pair[0])}/{pair[1]}") for pair in handed)}
        write_file(cache_path, json.dumps({"version": CACHE_VERSION, "entries": entries}))
    return found


@dataclass
class Answers:
    """The answers as graded: ``sources[(student, lesson)] = {exercise: source}`` for every lesson handed in (an
    answer over the report's bounds as ``OVER_BOUND``), read once, and per exercise the course's own answers
    (``course``: the solution, and the answer cell as released: never flagged)."""

    root: Path
    sources: dict = field(default_factory=dict)
    course: dict = field(default_factory=dict)  # exercise -> [source]: the course's solution and released cell
    key: bytes = b""  # the course's secret, which draws the examples (``examples.drawn``)
    too_large: set = field(default_factory=set)  # (student, lesson, exercise) over the syntax tree's bounds

    @classmethod
    def read(cls, root, rows, jobs=None, cache=None):
        found = cls(Path(root), key=_course_key(root))
        handed = list(dict.fromkeys((r.student_id, r.lesson) for r in rows if r.status != "missing"))
        found.sources = read_sources(found.root, handed, cache, jobs or min(2, os.cpu_count() or 1))
        for lesson in dict.fromkeys(lesson for _, lesson in handed):
            for folder in ("notebooks", "release"):
                for name, source in _course_answers(root, folder, lesson).items():
                    found.course.setdefault(name, []).append(source)
        return found

    def over_bound(self):
        """``[(student, lesson, exercise)]`` of the answers over the bounds, which nothing was compared with."""
        return sorted({(student, lesson, exercise) for (student, lesson), sources in self.sources.items()
                       for exercise, source in sources.items() if source == OVER_BOUND} | self.too_large)

    def source(self, student, lesson, exercise):
        """An answer's source as handed in, or None (not there, or over the bounds)."""
        source = self.sources.get((student, lesson), {}).get(exercise)
        return None if source == OVER_BOUND or (student, lesson, exercise) in self.too_large else source
