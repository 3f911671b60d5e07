"""Reading a submitted notebook: the answer cells the grader runs, and what was tampered with.

The grader runs answer cells only, so a submission is graded the same way
whatever happened to the rest of it. What happened is still reported: the
released version of the lesson (``release/<lesson>/``, what ``make student``
wrote) is the reference, and every difference in the cells that nbgrader
manages (locked cells edited, deleted or duplicated; nbgrader's metadata
changed, added or removed) is noted against the exercise it belongs to, or
against the notebook as a whole.

An answer cell is found by its nbgrader ``grade_id``; if that was changed or
removed, by the code cell that defines the exercise's function (the last
one, as Run All would leave it).
"""

import ast
import json
import re
from dataclasses import dataclass, field

#: nbgrader's metadata that decides what a cell is and what it is worth.
MANAGED_KEYS = ("grade", "solution", "locked", "points", "grade_id", "task")
NOTEBOOK = "(notebook)"  # tampering that belongs to no single exercise


def cell_source(cell):
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def _normal(source):
    return source.replace("\r\n", "\n").rstrip()


def managed(cell):
    """The cell's nbgrader metadata as a dict, or None if it has none (a dict with no keys counts)."""
    metadata = cell.get("metadata") if isinstance(cell, dict) else None
    value = metadata.get("nbgrader") if isinstance(metadata, dict) else None
    return value if isinstance(value, dict) else (None if value is None else {"invalid": repr(value)[:50]})


def load_cells(text):
    """The list of cells of a notebook's JSON text; ValueError if it is not a notebook."""
    notebook = json.loads(text)
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
                cells[meta["grade_id"]] = (cell.get("cell_type"), _normal(cell_source(cell)),
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
    except SyntaxError:
        return re.search(rf"^def\s+{re.escape(name)}\s*\(", source, re.M) is not None
    return any(isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name
               for node in tree.body) or any(
        isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets)
        for node in tree.body)


def read_submission(text, released, exercises):
    """Read a submission's JSON ``text`` against the ``released`` lesson; ``exercises`` are the lesson's names."""
    reading = Reading()
    try:
        cells = load_cells(text)
    except (ValueError, TypeError) as exc:
        reading.unreadable = f"the notebook could not be read ({exc})"[:300]
        reading.answers = dict.fromkeys(exercises)
        return reading

    by_id = {}
    for index, cell in enumerate(cells):
        meta = managed(cell)
        if meta is None:
            continue
        grade_id = meta.get("grade_id")
        if not grade_id or grade_id not in released.cells:
            where = exercise_of_grade_id(grade_id or "", exercises)
            reading.note(where, f"cell {index + 1} has nbgrader metadata that the lesson does not have "
                                f"({json.dumps(meta, sort_keys=True)[:120]})")
            continue
        by_id.setdefault(grade_id, []).append((index, cell, meta))

    for grade_id, (cell_type, source, expected_meta) in released.cells.items():
        exercise = exercise_of_grade_id(grade_id, exercises)
        found = by_id.get(grade_id, [])
        is_answer = bool(expected_meta.get("solution"))
        if len(found) > 1:
            reading.note(exercise, f"the cell {grade_id!r} appears {len(found)} times")
        for index, cell, meta in found:
            changed = sorted(k for k in MANAGED_KEYS if meta.get(k) != expected_meta.get(k))
            if changed:
                reading.note(exercise, f"the nbgrader metadata of {grade_id!r} was changed ({', '.join(changed)})")
            if cell.get("cell_type") != cell_type:
                reading.note(exercise, f"the cell {grade_id!r} was changed from {cell_type} to {cell.get('cell_type')}")
            if not is_answer and _normal(cell_source(cell)) != source:
                reading.note(exercise, f"the locked cell {grade_id!r} was edited")
        if not found and not is_answer:
            reading.note(exercise, f"the locked cell {grade_id!r} was deleted")
        if is_answer and exercise != NOTEBOOK:
            if found:
                reading.answers[exercise] = cell_source(found[-1][1])
            else:
                code = [c for c in cells if c.get("cell_type") == "code" and defines(cell_source(c), exercise)]
                if code:
                    reading.answers[exercise] = cell_source(code[-1])
                    reading.note(exercise, f"the answer cell {grade_id!r} lost its nbgrader metadata; graded the "
                                           f"cell that defines `{exercise}`")
                else:
                    reading.answers[exercise] = None
                    reading.note(exercise, f"the answer cell {grade_id!r} was deleted")
    for exercise in exercises:
        reading.answers.setdefault(exercise, None)
    return reading
