"""Reading what learners handed in: ``submitted/`` as it is on disk, and each notebook against its lesson.

Whatever is in ``submitted/``, reading it never stops the class: every
problem becomes a note against the learner and lesson it belongs to.
``scan`` walks ``submitted/<student_id>/<lesson>/`` without following any
link (a link, or anything but a folder or a regular file, is ``tampered``; a
notebook over ``MAX_NOTEBOOK_BYTES`` is not read); a learner's id is their
folder's name, kept as it is (``ids``). ``read_hand_in`` reads a notebook's
bytes the same way. ``read_submission`` reads its JSON against the lesson's
released version: answer cells are found by their ``grade_id`` (else by the
last code cell that defines the exercise), and every change to a cell
nbgrader manages is noted against its exercise or the notebook; a notebook
that is not JSON, nested too deep or too large is unreadable, and says why.
"""

import ast
import json
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path

from .ids import folder, of_folder

#: nbgrader's metadata that decides what a cell is and what it is worth.
MANAGED_KEYS = ("grade", "solution", "locked", "points", "grade_id", "task")
NOTEBOOK = "(notebook)"  # tampering that belongs to no single exercise
#: The largest notebook read: a lesson with its outputs is well under 2 MB; a 100 MB one took a worker to 2.5 GB.
MAX_NOTEBOOK_BYTES = 20 * 2**20
#: The most lists and dicts a notebook's JSON may open (brackets counted in its bytes, an upper bound).
MAX_NOTEBOOK_ITEMS = 500_000


# ---------------------------------------------------------------- submitted/ on disk


@dataclass(frozen=True)
class Handed:
    """One lesson of one learner as found in ``submitted/``: a notebook to read, or the problem that stops it."""

    student: str  # the learner's id: their folder's name in submitted/
    lesson: str
    path: Path = None
    status: str = ""  # "tampered" or "error" when there is a problem
    problem: str = ""


def _kind(path):
    """"link", "folder", "file", "other", or None when nothing is there; never follows a link."""
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return None
    return "link" if stat.S_ISLNK(mode) else "folder" if stat.S_ISDIR(mode) else \
        "file" if stat.S_ISREG(mode) else "other"


def _notebook_in(folder, lesson):
    """``<lesson>.ipynb`` in a lesson folder, or the only notebook there; None if there is none to choose."""
    expected = folder / f"{lesson}.ipynb"
    if _kind(expected) is not None:
        return expected
    try:
        others = sorted(entry.name for entry in os.scandir(folder) if entry.name.endswith(".ipynb"))
    except OSError:
        return None
    return folder / others[0] if len(others) == 1 else None


def _handed(student, lesson, folder, where):
    """The ``Handed`` of one lesson folder (``where`` is how notes name it), or None if nothing was handed in."""
    kind = _kind(folder)
    if kind is None:
        return None
    if kind != "folder":
        return Handed(student, lesson, status="tampered", problem=f"{where} is a {_WHAT[kind]}, not a folder: not followed")
    notebook = _notebook_in(folder, lesson)
    if notebook is None:
        return None
    kind, name = _kind(notebook), f"{where}/{ascii(notebook.name)}"
    if kind != "file":
        return Handed(student, lesson, status="tampered", problem=f"{name} is a {_WHAT.get(kind, 'thing')}, not a "
                                                                  f"regular file: not read")
    size = os.lstat(notebook).st_size
    if size > MAX_NOTEBOOK_BYTES:
        return Handed(student, lesson, status="error", problem=f"{name} is {size / 2**20:.1f} MB: notebooks over "
                                                               f"{MAX_NOTEBOOK_BYTES // 2**20} MB are not read")
    return Handed(student, lesson, path=notebook)


_WHAT = {"link": "symbolic link", "folder": "folder", "file": "file", "other": "special file (not a regular file)"}


@dataclass
class Class:
    """What ``submitted/`` holds: ``handed[(student, lesson)]``, the learners' ids, and notices in words."""

    handed: dict = field(default_factory=dict)
    students: list = field(default_factory=list)
    notices: list = field(default_factory=list)


def _learner_name(raw, taken, notices):
    """The id of the learner whose folder in submitted/ is ``raw``: its name, as it is (``ids.of_folder``)."""
    student = of_folder(raw, taken)
    taken.add(student)
    if student != raw:
        notices.append(f"submitted/{ascii(raw)} is not a name an id can keep: the learner's id is {ascii(student)}")
    if folder(student) != student:
        notices.append(f"submitted/{ascii(raw)} is not a safe folder name: the learner's id is kept as it is, and "
                       f"their folders in autograded/ and feedback/ are named {folder(student)}")
    return student


def _note_strangers(place, lessons, notices):
    """Note what a learner's folder holds besides lesson folders (a folder name with a newline, say): ignored."""
    try:
        strangers = sorted(e.name for e in os.scandir(place) if e.name not in lessons and not e.name.startswith("."))
    except OSError:
        return
    if strangers:
        notices.append(f"submitted/{ascii(place.name)} holds what is no lesson of this course, ignored: "
                       + ", ".join(ascii(name) for name in strangers[:5]) + (" ..." if len(strangers) > 5 else ""))


def scan(submitted, lessons):
    """Read ``submitted/`` (a Path) for ``lessons`` without following links; a ``Class``."""
    found = Class()
    try:
        entries = sorted(os.scandir(submitted), key=lambda e: e.name)
    except OSError:
        return found
    taken = set()
    for entry in entries:
        if entry.name.startswith("."):
            continue
        kind = _kind(entry.path)
        if kind not in ("folder", "link"):
            found.notices.append(f"submitted/{ascii(entry.name)} is not a folder: ignored")
            continue
        student = _learner_name(entry.name, taken, found.notices)
        found.students.append(student)
        if kind == "folder":
            _note_strangers(Path(entry.path), lessons, found.notices)
        for lesson in lessons:
            where = f"submitted/{ascii(entry.name)}/{lesson}"
            handed = Handed(student, lesson, status="tampered",
                            problem=f"submitted/{ascii(entry.name)} is a symbolic link: not followed") \
                if kind == "link" else _handed(student, lesson, Path(entry.path) / lesson, where)
            if handed is not None:
                found.handed[student, lesson] = handed
    return found


class NotebookProblem(Exception):
    """A notebook that could not be read: ``status`` (tampered or error) and ``note``."""

    def __init__(self, status, note):
        super().__init__(note)
        self.status, self.note = status, note


def file_status(info):
    """What changes whenever a file's content does: its size, inode, modification and change times (no learner can
    set a change time back)."""
    return info.st_size, info.st_ino, info.st_mtime_ns, info.st_ctime_ns


def read_hand_in(path, expect=None):
    """``(bytes, file_status)`` of a notebook, read without following a link, from a regular file of at most
    ``MAX_NOTEBOOK_BYTES``; ``NotebookProblem`` otherwise (the file may have changed since ``scan`` looked). With
    ``expect`` (the status of an earlier read), ``NotebookProblem`` where the file changed since: what is graded is
    what was planned and timed."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        status = "tampered" if _kind(path) == "link" else "error"
        raise NotebookProblem(status, f"the notebook could not be opened ({exc.strerror})") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotebookProblem("tampered", "the notebook is not a regular file: not read")
        if expect is not None and file_status(info) != tuple(expect):
            raise NotebookProblem("error", "the notebook changed after make grade planned its grading: graded on "
                                           "the next run")
        with os.fdopen(fd, "rb", closefd=False) as f:
            data = f.read(MAX_NOTEBOOK_BYTES + 1)
    except OSError as exc:
        raise NotebookProblem("error", f"the notebook could not be read ({exc.strerror})") from None
    finally:
        os.close(fd)
    if len(data) > MAX_NOTEBOOK_BYTES:
        raise NotebookProblem("error", f"the notebook is over {MAX_NOTEBOOK_BYTES // 2**20} MB: not read")
    return data, file_status(info)


# ---------------------------------------------------------------- one notebook's cells


def cell_source(cell):
    """A cell's source as text, or None if it is neither a string nor a list of strings."""
    source = cell.get("source", "")
    if isinstance(source, str):
        return source
    if isinstance(source, list) and all(isinstance(line, str) for line in source):
        return "".join(source)
    return None


def answer_digest(source):
    """The SHA-256 (hex) of an answer cell's text: the same answer, the same digest."""
    import hashlib

    return hashlib.sha256(source.encode("utf-8", "surrogatepass")).hexdigest()


def _normal(source):
    return source.replace("\r\n", "\n").rstrip()


def managed(cell):
    """The cell's nbgrader metadata as a dict, or None if it has none (a dict with no keys counts)."""
    metadata = cell.get("metadata") if isinstance(cell, dict) else None
    value = metadata.get("nbgrader") if isinstance(metadata, dict) else None
    return value if isinstance(value, dict) else (None if value is None else {"invalid": repr(value)[:50]})


def load_cells(text):
    """The list of cells of a notebook's JSON (text or bytes); ValueError, saying why, if it is not a notebook."""
    data = text.encode("utf-8", "surrogateescape") if isinstance(text, str) else text
    items = data.count(b"[") + data.count(b"{")
    if items > MAX_NOTEBOOK_ITEMS:
        raise ValueError(f"it opens {items} lists and objects, more than {MAX_NOTEBOOK_ITEMS}")
    try:
        notebook = json.loads(data)
    except UnicodeDecodeError:
        notebook = json.loads(data.decode("utf-8", "replace"))
    except RecursionError:
        raise ValueError("it is nested too deep") from None
    cells = notebook.get("cells") if isinstance(notebook, dict) else None
    if not isinstance(cells, list) or not all(isinstance(c, dict) for c in cells):
        raise ValueError("it has no list of cells")
    return cells


@dataclass
class ReleasedLesson:
    """The cells nbgrader manages in a lesson's released (student) version, by grade_id."""

    cells: dict  # grade_id -> (cell_type, normalised source, {managed key: value})

    @classmethod
    def from_text(cls, text):
        cells = {}
        for cell in load_cells(text):
            meta = managed(cell)
            if meta and meta.get("grade_id"):
                cells[meta["grade_id"]] = (cell.get("cell_type"), _normal(cell_source(cell) or ""),
                                           {k: meta.get(k) for k in MANAGED_KEYS})
        return cls(cells)


def as_released(source, released, exercise):
    """Is ``source`` the exercise's answer cell exactly as the lesson released it (the stub, not answered)?"""
    cell = released.cells.get(f"{exercise}_answer")
    return cell is not None and source is not None and _normal(source) == cell[1]


@dataclass
class Reading:
    """What the grader takes from one submitted notebook."""

    answers: dict = field(default_factory=dict)  # exercise -> source of its answer cell, or None
    tampering: dict = field(default_factory=dict)  # exercise (or NOTEBOOK) -> [notes]
    unreadable: str = None  # why the notebook could not be read at all

    def note(self, exercise, text):
        self.tampering.setdefault(exercise, []).append(text)


def exercise_of_grade_id(grade_id, exercises):
    """The exercise a cell belongs to: the longest exercise name its grade_id starts with, plus '_'."""
    matches = [name for name in exercises if str(grade_id).startswith(name + "_")]
    return max(matches, key=len) if matches else NOTEBOOK


def defines(source, name):
    """Does this cell define ``name`` at its top level?"""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):  # not Python, or nested past the parser's limits
        return re.search(rf"^def\s+{re.escape(name)}\s*\(", source, re.M) is not None
    return any(isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name
               for node in tree.body) or any(
        isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets)
        for node in tree.body)


@dataclass(frozen=True)
class Cell:
    """A submitted cell as the checks below read it: its position, type and source (None where they are not
    text), and its nbgrader metadata (None if it has none)."""

    index: int
    cell_type: object
    source: object
    meta: object


def _cells(raw, reading, exercises):
    """The notebook's cells as ``Cell``s; a source that is not text, or a grade_id that is not a name, is noted."""
    cells = []
    for index, cell in enumerate(raw):
        meta, source = managed(cell), cell_source(cell)
        where = NOTEBOOK
        if meta is not None and not isinstance(meta.get("grade_id", ""), str):
            reading.note(NOTEBOOK, f"cell {index + 1} has a grade_id that is not a name ({repr(meta['grade_id'])[:60]})")
            meta = {**meta, "grade_id": None}
        elif meta is not None:
            where = exercise_of_grade_id(meta.get("grade_id") or "", exercises)
        if source is None:
            reading.note(where, f"the source of cell {index + 1} is not text ({type(cell.get('source')).__name__})")
        cells.append(Cell(index, cell.get("cell_type"), source, meta))
    return cells


def _by_grade_id(cells, released, reading, exercises):
    """{grade_id: [Cell]} of the cells whose nbgrader metadata names a cell of the lesson; the others noted."""
    by_id = {}
    for cell in cells:
        if cell.meta is None:
            continue
        grade_id = cell.meta.get("grade_id")
        if not grade_id or grade_id not in released.cells:
            where = exercise_of_grade_id(grade_id or "", exercises)
            reading.note(where, f"cell {cell.index + 1} has nbgrader metadata that the lesson does not have "
                                f"({json.dumps(cell.meta, sort_keys=True, default=repr)[:120]})")
            continue
        by_id.setdefault(grade_id, []).append(cell)
    return by_id


def _check_managed(grade_id, expected, found, reading, exercise):
    """Note every way the copies ``found`` of the lesson's managed cell ``grade_id`` differ from it."""
    cell_type, source, expected_meta = expected
    if len(found) > 1:
        reading.note(exercise, f"the cell {grade_id!r} appears {len(found)} times")
    for cell in found:
        changed = sorted(k for k in MANAGED_KEYS if cell.meta.get(k) != expected_meta.get(k))
        if changed:
            reading.note(exercise, f"the nbgrader metadata of {grade_id!r} was changed ({', '.join(changed)})")
        if cell.cell_type != cell_type:
            kind = cell.cell_type if isinstance(cell.cell_type, str) else repr(cell.cell_type)
            reading.note(exercise, f"the cell {grade_id!r} was changed from {cell_type} to {kind[:40]}")
        if not expected_meta.get("solution") and (cell.source is None or _normal(cell.source) != source):
            reading.note(exercise, f"the locked cell {grade_id!r} was edited")
    if not found and not expected_meta.get("solution"):
        reading.note(exercise, f"the locked cell {grade_id!r} was deleted")


def _answer(grade_id, found, cells, reading, exercise):
    """The source of the exercise's answer cell: by its grade_id, else the last code cell that defines it."""
    if found:
        return found[-1].source
    code = [c for c in cells if c.cell_type == "code" and c.source is not None and defines(c.source, exercise)]
    if code:
        reading.note(exercise, f"the answer cell {grade_id!r} lost its nbgrader metadata; graded the cell that "
                               f"defines `{exercise}`")
        return code[-1].source
    reading.note(exercise, f"the answer cell {grade_id!r} was deleted")
    return None


def read_submission(text, released, exercises):
    """Read a submission's JSON ``text`` (str or bytes) against the ``released`` lesson; ``exercises`` are the
    lesson's names."""
    reading = Reading()
    try:
        raw = load_cells(text)
    except (ValueError, TypeError, MemoryError) as exc:
        reading.unreadable = f"the notebook could not be read ({exc})"[:300]
        reading.answers = dict.fromkeys(exercises)
        return reading
    cells = _cells(raw, reading, exercises)
    by_id = _by_grade_id(cells, released, reading, exercises)
    for grade_id, expected in released.cells.items():
        exercise = exercise_of_grade_id(grade_id, exercises)
        found = by_id.get(grade_id, [])
        _check_managed(grade_id, expected, found, reading, exercise)
        if expected[2].get("solution") and exercise != NOTEBOOK:
            reading.answers[exercise] = _answer(grade_id, found, cells, reading, exercise)
    for exercise in exercises:
        reading.answers.setdefault(exercise, None)
    return reading
