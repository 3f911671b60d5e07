"""A seeded class as grading would leave it, without grading it: for the class report's tests and its benchmark.

``seeded_class(root, learners, seed)`` writes, in a copy of the course at
``root`` (its ``notebooks/`` copied from this one):

- ``grades_by_exercise.csv``, as ``make grade`` writes it, every field
  through ``write_csv``: each learner's exercises passed, not answered
  (the cell as released), missing (a lesson not handed in), or failed with
  a catalogued mistake (``tests/mistakes/``, named in the ``mistake`` column)
  or with one of ``UNLISTED``'s answers, which no mistake explains (their
  ``diagnosis`` signature in its column);
- ``autograded/<student>/<lesson>/<lesson>.ipynb``: the teachers' notebook
  with the learner's answers in its answer cells, as the grader keeps it;
- with ``roster=True``, ``gradebook.db`` with every learner's name.

It returns a ``Seeded``: what was drawn, counted the way the report must
count it. Not a test file (pytest collects only ``test_*.py``), and free of
pytest, so that ``benchmarks/bench_report.py`` uses it too.
"""

import copy
import json
import os
import random
import shutil
import sys
import warnings
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from encoder_lib.grading import EXERCISES
from course_grader import ids
from course_grader.files import write_csv
from course_grader.gradebook_writer import open_gradebook as open_course_gradebook
from course_grader.outputs import COLUMNS
from tests.mistakes import MISTAKES

ROOT = Path(__file__).resolve().parents[2]
COLUMNS = COLUMNS + ("mistake", "diagnosis")
STUB = "# YOUR CODE HERE\nraise NotImplementedError()"


@dataclass(frozen=True)
class Unlisted:
    """A wrong answer no catalogued mistake explains, and the diagnosis signature grading gave it."""

    exercise: str
    source: str
    diagnosis: str


UNLISTED = (
    Unlisted("softmax", "def softmax(x, axis=-1):\n    e = np.exp(x - x.max(axis=axis, keepdims=True))\n"
                        "    return e / e.max(axis=axis, keepdims=True)\n", "sums"),
    Unlisted("layer_norm", "def layer_norm(x, gamma=None, beta=None, eps=1e-5):\n    mean = x.mean(axis=-1, "
                           "keepdims=True)\n    out = (x - mean) / (x.max(axis=-1, keepdims=True) + eps)\n"
                           "    if gamma is not None:\n        out = out * gamma\n    if beta is not None:\n"
                           "        out = out + beta\n    return out\n", "pattern:rows | scale"),
    Unlisted("gelu", "def gelu(x):\n    return np.maximum(x, 0) * (1 + np.tanh(x)) / 2 + 0 * x\n", "some-rows"),
)


@dataclass
class Seeded:
    """What ``seeded_class`` drew: ``statuses[exercise][status]``, ``named[(exercise, mistake)]`` and
    ``unnamed[(exercise, diagnosis)]`` as sets of learners, ``kinds[student]``, and the wrong answers' texts
    ``wrong[(student, lesson, exercise)]``."""

    statuses: dict = field(default_factory=dict)
    named: dict = field(default_factory=dict)
    unnamed: dict = field(default_factory=dict)
    kinds: dict = field(default_factory=dict)
    rows: list = field(default_factory=list)
    wrong: dict = field(default_factory=dict)

    def answered(self, exercise):
        counts = self.statuses[exercise]
        return sum(counts.values()) - counts["missing"] - counts["not answered"]


def lessons():
    return list(dict.fromkeys(e.lesson for e in EXERCISES.values()))


def copy_notebooks(root):
    """The course's teachers' notebooks in ``root/notebooks`` (the report links into them)."""
    if not (Path(root) / "notebooks").exists():
        shutil.copytree(ROOT / "notebooks", Path(root) / "notebooks",
                        ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))


def _answer_cell(cell):
    meta = cell.get("metadata", {}).get("nbgrader", {})
    grade_id = meta.get("grade_id", "")
    return grade_id[:-len("_answer")] if meta.get("solution") and grade_id.endswith("_answer") else None


def write_graded(root, student, lesson, solution, answers, own=False):
    """The notebook as graded: ``solution`` (a notebook's dict) with ``answers`` ({exercise: source}) put in;
    with ``own``, every answer cell starts with a comment of the learner's, so that no two texts are the same
    (as in a real class), while their code still is."""
    notebook = copy.deepcopy(solution)
    for cell in notebook["cells"]:
        name = _answer_cell(cell)
        if name in answers:
            cell["source"] = answers[name]
        if name and own:
            source = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
            cell["source"] = f"# {student}'s answer\n{source}"
    notebook["metadata"]["learner"] = student
    folder = Path(root) / "autograded" / ids.folder(student) / lesson  # as the grader names it
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{lesson}.ipynb").write_text(json.dumps(notebook))


def _draw(rng, kind, n_lessons):
    """``(lessons handed in: a count, {exercise: wrong answer})`` for a learner of ``kind``."""
    handed = rng.randrange(1, n_lessons) if kind == "partly done" else n_lessons
    wrong = {}
    if kind == "mistakes":
        for mistake in rng.sample(MISTAKES, rng.randint(1, 3)):
            wrong.setdefault(mistake.exercise, mistake)
    elif kind == "unlisted":
        unlisted = rng.choice(UNLISTED)
        wrong[unlisted.exercise] = unlisted
    return handed, wrong


def _row(seeded, student, lesson, name, status, note="", mistake="", diagnosis=""):
    points = float(EXERCISES[name].points)
    seeded.rows.append((student, lesson, name, points if status == "passed" else 0.0, points, status, note, mistake,
                        diagnosis))
    seeded.statuses.setdefault(name, Counter())[status] += 1


def _learner(seeded, root, student, kind, rng, solutions, own):
    handed, wrong = _draw(rng, kind, len(solutions))
    if kind == "unlisted":  # each in turn, so that a class of any size draws each of them
        unlisted = UNLISTED[(sum(k == "unlisted" for k in seeded.kinds.values()) - 1) % len(UNLISTED)]
        wrong = {unlisted.exercise: unlisted}
    for n, (lesson, solution) in enumerate(solutions.items()):
        names = [name for name, e in EXERCISES.items() if e.lesson == lesson]
        if n >= handed:
            for name in names:
                _row(seeded, student, lesson, name, "missing", "not handed in")
            continue
        answers = {}
        for name in names:
            answer = wrong.get(name)
            if kind == "blank":
                answers[name] = STUB
                _row(seeded, student, lesson, name, "not answered", "not answered: the answer cell is as released")
            elif answer is None:
                _row(seeded, student, lesson, name, "passed")
            elif isinstance(answer, Unlisted):
                answers[name] = seeded.wrong[student, lesson, name] = answer.source
                seeded.unnamed.setdefault((name, answer.diagnosis), set()).add(student)
                _row(seeded, student, lesson, name, "failed", "its output differs", diagnosis=answer.diagnosis)
            else:
                answers[name] = seeded.wrong[student, lesson, name] = answer.source.strip() + "\n"
                seeded.named.setdefault((name, answer.model), set()).add(student)
                _row(seeded, student, lesson, name, "failed", f"Your `{name}` gives exactly what this known mistake gives, on every case it was run on: {answer.explanation}.", answer.model)
        write_graded(root, student, lesson, solution, answers, own)


def seeded_class(root, learners, seed=0, roster=False, own=False,
                 shares=(("correct", .35), ("blank", .1), ("partly done", .2), ("mistakes", .25), ("unlisted", .1))):
    """Write a seeded class's grades_by_exercise.csv and autograded/ notebooks into ``root``; a ``Seeded``.
    ``own``: every answer text the learner's own (``write_graded``)."""
    root = Path(root)
    copy_notebooks(root)
    rng = random.Random(seed)
    solutions = {lesson: json.loads((root / "notebooks" / lesson / f"{lesson}.ipynb").read_text())
                 for lesson in lessons()}
    seeded = Seeded()
    kinds, weights = zip(*shares)
    for i in range(learners):
        student = f"learner{i:04d}"
        kind = rng.choices(kinds, weights)[0]
        seeded.kinds[student] = kind
        _learner(seeded, root, student, kind, rng, solutions, own)
    write_rows(root, seeded.rows)
    if roster:
        write_roster(root, list(seeded.kinds))
    return seeded


def write_rows(root, rows):
    write_csv(Path(root) / "grades_by_exercise.csv", COLUMNS, rows)


def open_gradebook(root):
    """nbgrader's Gradebook of the course at ``root`` (a new one runs alembic, from this environment), with the
    course's nbgrader_config.py; nbgrader's SQLAlchemy warnings are not ours."""
    if not (Path(root) / "nbgrader_config.py").exists():
        shutil.copy(ROOT / "nbgrader_config.py", Path(root) / "nbgrader_config.py")
    path = os.environ.get("PATH", "")
    os.environ["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{path}"
    try:
        return open_course_gradebook(root)
    finally:
        os.environ["PATH"] = path


def write_roster(root, students):
    """A gradebook naming every learner (``Ada Learner0001``), as ``nbgrader db student import`` leaves it."""
    with warnings.catch_warnings(), open_gradebook(root) as gradebook:
        warnings.simplefilter("ignore")
        for student in students:
            gradebook.update_or_create_student(student, first_name="Ada", last_name=student.title(),
                                               email=f"{student}@school.example")


def add_lesson(gradebook, lesson, due=None):
    """``lesson`` in the gradebook with its notebook and each exercise's test and answer cells, as `make
    student` records it, and its due date (nbgrader's text) if given."""
    gradebook.update_or_create_assignment(lesson, duedate=due)
    gradebook.add_notebook(lesson, lesson)
    for name, exercise in EXERCISES.items():
        if exercise.lesson == lesson:
            gradebook.add_grade_cell(f"{name}_tests", lesson, lesson, max_score=exercise.points, cell_type="code")
            gradebook.add_solution_cell(f"{name}_answer", lesson, lesson)


def hand_in(gradebook, lesson, student, when=None, penalty=0.0):
    """A submission recorded as `make grade` records it: its time (None: copied in by hand) and late penalty."""
    submission = gradebook.update_or_create_submission(lesson, student, timestamp=when)
    for notebook in submission.notebooks:
        notebook.late_submission_penalty = penalty
    gradebook.db.commit()


# ---------------------------------------------------------------- a seeded class to grade for real


def answer_in(notebook, exercise, source):
    """``notebook`` (a dict) with ``exercise``'s answer cell holding ``source``."""
    for cell in notebook["cells"]:
        if _answer_cell(cell) == exercise:
            cell["source"] = source
    return notebook


def hand_in_folder(root, student, lesson, notebook, when=None):
    """``submitted/<student>/<lesson>/<lesson>.ipynb``, and ``timestamp.txt`` (nbgrader collect's) if ``when``."""
    folder = Path(root) / "submitted" / student / lesson
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{lesson}.ipynb").write_text(json.dumps(notebook))
    if when is not None:
        (folder / "timestamp.txt").write_text(when)
    return folder


def seeded_submissions(root, learners, lessons, seed=0):
    """Hand in a seeded class of ``learners`` for ``lessons`` in ``root/submitted`` (after `make student`), to be
    graded by `make grade`; a ``Seeded`` of what each exercise must come out as. ``unnamed`` is keyed by
    ``(exercise, None)``: grading decides the signature."""
    root, rng, seeded = Path(root), random.Random(seed), Seeded()
    solved = {lesson: json.loads((root / "notebooks" / lesson / f"{lesson}.ipynb").read_text()) for lesson in lessons}
    blank = {lesson: json.loads((root / "release" / lesson / f"{lesson}.ipynb").read_text()) for lesson in lessons}
    catalogue = [m for m in MISTAKES if m.lesson in lessons]
    unlisted = [u for u in UNLISTED if EXERCISES[u.exercise].lesson in lessons]
    for i in range(learners):
        student = f"seeded{i:02d}"
        kind = ("mistakes", "mistakes", "unlisted", "correct", "blank", "partly done")[i % 6]
        seeded.kinds[student] = kind
        handed = rng.randrange(1, len(lessons)) if kind == "partly done" else len(lessons)
        wrong = {}
        if kind == "mistakes":
            for mistake in rng.sample(catalogue, 2):
                wrong.setdefault(mistake.exercise, mistake)
        elif kind == "unlisted":
            choice = unlisted[i % len(unlisted)]
            wrong[choice.exercise] = choice
        for n, lesson in enumerate(lessons):
            names = [name for name, e in EXERCISES.items() if e.lesson == lesson]
            if n >= handed:
                for name in names:
                    _row(seeded, student, lesson, name, "missing")
                continue
            notebook = copy.deepcopy(blank[lesson] if kind == "blank" else solved[lesson])
            for name in names:
                answer = wrong.get(name)
                if kind == "blank":
                    _row(seeded, student, lesson, name, "not answered")
                elif answer is None:
                    _row(seeded, student, lesson, name, "passed")
                else:
                    source = answer.source.strip() + "\n"
                    answer_in(notebook, name, source)
                    seeded.wrong[student, lesson, name] = source
                    if isinstance(answer, Unlisted):
                        seeded.unnamed.setdefault((name, None), set()).add(student)
                    else:
                        seeded.named.setdefault((name, answer.model), set()).add(student)
                    _row(seeded, student, lesson, name, "failed")
            hand_in_folder(root, student, lesson, notebook)
    return seeded
