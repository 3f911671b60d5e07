"""The nbgrader pipeline: `make student` writes the student versions without ever overwriting a
learner's work, and `make grade` gives each exercise its points and nothing else.

The fast tests check tools/student.py's copying on small files. The tests
marked ``grading`` (select them with ``-m grading``) run the real pipeline,
`make student` then `make grade`, in a temporary copy of the course, on these
submissions, all graded by one `nbgrader autograde` run:

- the untouched student versions, which must score 0;
- the source notebooks (with the solutions), which must score full marks;
- one submission per catalogued mistake (tests/mistakes.py): the source with
  only that exercise's answer replaced, which must lose exactly that
  exercise's points;
- answers that raise, print a megabyte, or loop forever, which must lose only
  their own exercise's points while the rest of the notebook is still graded.
"""

import json
import os
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import nbformat
import pytest

from conftest import load_tool
from mistakes import MISTAKES

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
# A short per-cell limit for the copy, so the endless loop costs little time.
CELL_TIMEOUT = 10


student_tool = load_tool("student")


# ---------------------------------------------------------------------------
# tools/student.py: regenerating never overwrites a learner's changes


def release(tmp_path, files):
    """Write ``files`` ({relative path: text}) as the release folder's content."""
    for rel, text in files.items():
        path = tmp_path / "release" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def sync(tmp_path, messages):
    return student_tool.sync(tmp_path / "release", tmp_path / "student", out=messages.append)


def test_first_generation_writes_every_file_of_every_lesson(tmp_path):
    release(tmp_path, {"01_a/01_a.ipynb": "a1", "01_a/data/table.csv": "1,2", "02_b/02_b.ipynb": "b1"})
    messages = []
    report = sync(tmp_path, messages)
    assert sorted(report["written"]) == ["01_a/01_a.ipynb", "01_a/data/table.csv", "02_b/02_b.ipynb"]
    assert (tmp_path / "student/01_a/data/table.csv").read_text() == "1,2"
    assert (tmp_path / "student/02_b/02_b.ipynb").read_text() == "b1"
    assert messages == []
    manifest = json.loads((tmp_path / "student/.generated.json").read_text())
    assert manifest["written"]["01_a/01_a.ipynb"] == student_tool.sha256(b"a1")


def test_a_changed_notebook_is_kept_and_the_update_written_beside_it(tmp_path):
    release(tmp_path, {"01_a/01_a.ipynb": "a1", "02_b/02_b.ipynb": "b1"})
    sync(tmp_path, [])
    mine = tmp_path / "student/01_a/01_a.ipynb"
    mine.write_text("a1 with my answers")

    # the same lesson again: nothing to say, nothing written
    messages = []
    report = sync(tmp_path, messages)
    assert messages == [] and report["new"] == [] and report["updated"] == []
    assert mine.read_text() == "a1 with my answers"

    # both lessons change: the learner's file is kept, the untouched one updated
    release(tmp_path, {"01_a/01_a.ipynb": "a2", "02_b/02_b.ipynb": "b2"})
    report = sync(tmp_path, messages)
    assert mine.read_text() == "a1 with my answers"
    assert (tmp_path / "student/01_a/01_a.new.ipynb").read_text() == "a2"
    assert (tmp_path / "student/02_b/02_b.ipynb").read_text() == "b2"
    assert report["updated"] == ["02_b/02_b.ipynb"] and report["kept"] == ["01_a/01_a.ipynb"]
    assert messages == ["kept your changes to student/01_a/01_a.ipynb; "
                        "the updated lesson is student/01_a/01_a.new.ipynb"]

    # regenerating the same version again writes no second copy and says nothing
    messages.clear()
    sync(tmp_path, messages)
    assert messages == []
    assert sorted(p.name for p in (tmp_path / "student/01_a").iterdir()) == ["01_a.ipynb", "01_a.new.ipynb"]


def test_an_update_never_overwrites_a_changed_new_file_either(tmp_path):
    release(tmp_path, {"01_a/01_a.ipynb": "a1"})
    sync(tmp_path, [])
    (tmp_path / "student/01_a/01_a.ipynb").write_text("mine")
    release(tmp_path, {"01_a/01_a.ipynb": "a2"})
    sync(tmp_path, [])
    (tmp_path / "student/01_a/01_a.new.ipynb").write_text("a2, mine too")
    release(tmp_path, {"01_a/01_a.ipynb": "a3"})
    messages = []
    sync(tmp_path, messages)
    assert (tmp_path / "student/01_a/01_a.ipynb").read_text() == "mine"
    assert (tmp_path / "student/01_a/01_a.new.ipynb").read_text() == "a2, mine too"
    assert (tmp_path / "student/01_a/01_a.new2.ipynb").read_text() == "a3"
    assert messages == ["kept your changes to student/01_a/01_a.ipynb; "
                        "the updated lesson is student/01_a/01_a.new2.ipynb"]


def test_an_untouched_new_file_is_refreshed_and_an_adopted_one_is_not_rewritten(tmp_path):
    release(tmp_path, {"01_a/01_a.ipynb": "a1"})
    sync(tmp_path, [])
    (tmp_path / "student/01_a/01_a.ipynb").write_text("mine")
    release(tmp_path, {"01_a/01_a.ipynb": "a2"})
    sync(tmp_path, [])
    release(tmp_path, {"01_a/01_a.ipynb": "a3"})
    sync(tmp_path, [])
    new = tmp_path / "student/01_a/01_a.new.ipynb"
    assert new.read_text() == "a3" and not (tmp_path / "student/01_a/01_a.new2.ipynb").exists()

    # the learner adopts the update (renames it over their file) and works on it
    mine = tmp_path / "student/01_a/01_a.ipynb"
    new.replace(mine)
    mine.write_text("a3 with my answers")
    messages = []
    sync(tmp_path, messages)
    assert messages == [] and not new.exists() and mine.read_text() == "a3 with my answers"


def test_a_deleted_file_is_written_again(tmp_path):
    release(tmp_path, {"01_a/01_a.ipynb": "a1"})
    sync(tmp_path, [])
    (tmp_path / "student/01_a/01_a.ipynb").write_text("mine")
    (tmp_path / "student/01_a/01_a.ipynb").unlink()
    report = sync(tmp_path, [])
    assert report["written"] == ["01_a/01_a.ipynb"]
    assert (tmp_path / "student/01_a/01_a.ipynb").read_text() == "a1"


def test_without_a_manifest_an_existing_different_file_counts_as_the_learner_s(tmp_path):
    release(tmp_path, {"01_a/01_a.ipynb": "a1"})
    (tmp_path / "student/01_a").mkdir(parents=True)
    (tmp_path / "student/01_a/01_a.ipynb").write_text("made by hand")
    messages = []
    sync(tmp_path, messages)
    assert (tmp_path / "student/01_a/01_a.ipynb").read_text() == "made by hand"
    assert (tmp_path / "student/01_a/01_a.new.ipynb").read_text() == "a1"
    assert len(messages) == 1


# ---------------------------------------------------------------------------
# The whole pipeline, in a temporary copy of the course


def make(target, root, timeout):
    """Run `make <target>` in the course copy; setup is taken as done (.venv is this one)."""
    return subprocess.run(["make", "-o", ".venv/.installed", target], cwd=root, timeout=timeout,
                          capture_output=True, text=True)


def grade_cells(path):
    """{grade_id: points} of a notebook's graded cells."""
    cells = nbformat.read(path, as_version=4).cells
    return {c.metadata["nbgrader"]["grade_id"]: c.metadata["nbgrader"]["points"]
            for c in cells if c.metadata.get("nbgrader", {}).get("grade")}


def with_answer(path, exercise, source):
    """The notebook at ``path`` with only ``exercise``'s answer cell replaced by ``source``."""
    nb = nbformat.read(path, as_version=4)
    cells = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == f"{exercise}_answer"]
    assert len(cells) == 1, f"{path.name} has {len(cells)} answer cells for {exercise}"
    cells[0].source = source.strip() + "\n"
    return nb


# Answers that go wrong in ways that must not disturb the rest of the grading:
# each must lose only its own exercise's points.
ROBUSTNESS_EXERCISE = "feed_forward"
ROBUSTNESS = {
    "raises": 'def feed_forward(*args, **kwargs):\n    raise ValueError("not today")\n',
    "prints_a_megabyte_line": 'def feed_forward(x, *args, **kwargs):\n    print("x" * 10**6)\n    return x\n',
    "prints_a_megabyte_in_lines": 'def feed_forward(x, *args, **kwargs):\n'
                                  '    print(("x" * 99 + "\\n") * 10**4)\n    return x\n',
    "loops_forever": "def feed_forward(*args, **kwargs):\n    while True:\n        pass\n",
}


class Course:
    """A graded copy of the course: where it is, and the scores in its gradebook."""

    def __init__(self, root):
        self.root = root
        self.points = {}     # assignment -> notebook -> {grade_id: points}, from the sources
        for path in sorted((root / "notebooks").glob("*/*.ipynb")):
            cells = grade_cells(path)
            if cells:
                self.points.setdefault(path.parent.name, {})[path.stem] = cells
        self.submitted = {}  # student -> [assignment]

    def notebook_of(self, assignment, grade_id):
        return next(nb for nb, cells in self.points[assignment].items() if grade_id in cells)

    def submit(self, student, assignment, notebooks):
        """Place ``notebooks`` ({name: NotebookNode}) as ``student``'s submission of ``assignment``."""
        folder = self.root / "submitted" / student / assignment
        folder.mkdir(parents=True)
        for name, nb in notebooks.items():
            nbformat.write(nb, folder / f"{name}.ipynb")
        self.submitted.setdefault(student, []).append(assignment)

    def read_scores(self):
        """{student: {assignment: {grade_id: score}}} for every submission, from gradebook.db."""
        self.scores = {}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # nbgrader's SQLAlchemy warnings (SAWarning is a RuntimeWarning)
            from nbgrader.api import Gradebook

            with Gradebook(f"sqlite:///{self.root / 'gradebook.db'}", "encoder-course") as gb:
                for student, assignments in self.submitted.items():
                    for assignment in assignments:
                        self.scores.setdefault(student, {})[assignment] = {
                            grade_id: gb.find_grade(grade_id, notebook, assignment, student).score
                            for notebook, cells in self.points[assignment].items() for grade_id in cells}

    def expect_lost(self, student, assignment, lost):
        """``student``'s grade cells in ``assignment`` score 0 for the exercises in ``lost`` and
        full marks for every other one."""
        scores = self.scores[student][assignment]
        expected = {g: (0 if g.removesuffix("_tests") in lost else p)
                    for cells in self.points[assignment].values() for g, p in cells.items()}
        assert scores == expected, f"{student} in {assignment}"


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    root = tmp_path_factory.mktemp("course")
    shutil.copytree(ROOT / "notebooks", root / "notebooks",
                    ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
    for name in ("Makefile", "nbgrader_config.py", "requirements.txt", "pyproject.toml"):
        shutil.copy(ROOT / name, root / name)
    shutil.copytree(ROOT / "tools", root / "tools", ignore=shutil.ignore_patterns("__pycache__"))
    (root / ".venv").symlink_to(BIN.parent)
    with open(root / "nbgrader_config.py", "a") as config:
        config.write(f"\nc.Execute.timeout = {CELL_TIMEOUT}\n")

    course = Course(root)
    if not course.points:
        pytest.skip("no notebook has nbgrader exercises yet")

    made = make("student", root, timeout=300)
    assert made.returncode == 0, made.stdout + made.stderr
    course.student_output = made.stdout

    for assignment, notebooks in course.points.items():
        course.submit("untouched", assignment, {
            nb: nbformat.read(root / "student" / assignment / f"{nb}.ipynb", as_version=4) for nb in notebooks})
        course.submit("solutions", assignment, {
            nb: nbformat.read(root / "notebooks" / assignment / f"{nb}.ipynb", as_version=4) for nb in notebooks})
    for mistake in MISTAKES:
        notebook = course.notebook_of(mistake.assignment, f"{mistake.exercise}_tests")
        path = root / "notebooks" / mistake.assignment / f"{notebook}.ipynb"
        course.submit(f"mistake-{mistake.id}", mistake.assignment,
                      {notebook: with_answer(path, mistake.exercise, mistake.source)})
    course.robustness_assignment = next(a for a in course.points for nb, cells in course.points[a].items()
                                        if f"{ROBUSTNESS_EXERCISE}_tests" in cells)
    notebook = course.notebook_of(course.robustness_assignment, f"{ROBUSTNESS_EXERCISE}_tests")
    path = root / "notebooks" / course.robustness_assignment / f"{notebook}.ipynb"
    for case, source in ROBUSTNESS.items():
        course.submit(case, course.robustness_assignment, {notebook: with_answer(path, ROBUSTNESS_EXERCISE, source)})

    course.graded = make("grade", root, timeout=1500)
    course.read_scores()
    return course


@pytest.mark.grading
@pytest.mark.timeout(1800)
def test_make_student_and_make_grade_run_and_grade_every_submission(course):
    lessons = sum(1 for p in (course.root / "notebooks").iterdir() if any(p.glob("*.ipynb")))
    assert f"{lessons} written, 0 updated, 0 kept" in course.student_output
    assert course.graded.returncode == 0, course.graded.stdout[-5000:] + course.graded.stderr[-5000:]
    assert sorted(p.name for p in (course.root / "student").iterdir() if p.is_dir()) == \
        sorted(p.name for p in (course.root / "notebooks").iterdir() if any(p.glob("*.ipynb")))
    rows = (course.root / "grades.csv").read_text().splitlines()
    header = rows[0].split(",")
    table = [dict(zip(header, row.split(","))) for row in rows[1:]]
    for assignment in course.points:
        [row] = [r for r in table if r["student_id"] == "solutions" and r["assignment"] == assignment]
        assert float(row["score"]) == float(row["max_score"]) > 0, row


@pytest.mark.grading
@pytest.mark.timeout(1800)
def test_the_untouched_student_version_scores_nothing(course):
    for assignment in course.points:
        course.expect_lost("untouched", assignment, {g.removesuffix("_tests") for cells in
                                                     course.points[assignment].values() for g in cells})


@pytest.mark.grading
@pytest.mark.timeout(1800)
def test_the_solutions_score_full_marks(course):
    for assignment in course.points:
        course.expect_lost("solutions", assignment, set())


@pytest.mark.grading
@pytest.mark.timeout(1800)
@pytest.mark.parametrize("mistake", MISTAKES, ids=[m.id for m in MISTAKES])
def test_a_mistake_loses_its_exercise_s_points_and_no_others(course, mistake):
    course.expect_lost(f"mistake-{mistake.id}", mistake.assignment, {mistake.exercise})


@pytest.mark.grading
@pytest.mark.timeout(1800)
@pytest.mark.parametrize("case", list(ROBUSTNESS))
def test_a_broken_answer_loses_only_its_own_points(course, case):
    course.expect_lost(case, course.robustness_assignment, {ROBUSTNESS_EXERCISE})
    graded = course.root / "autograded" / case / course.robustness_assignment
    [notebook] = graded.glob("*.ipynb")
    nb = nbformat.read(notebook, as_version=4)
    [tests] = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == f"{ROBUSTNESS_EXERCISE}_tests"]
    errors = [o.ename for o in tests.outputs if o.output_type == "error"]
    assert errors, "the grade cell should show why it failed"
    if case == "loops_forever":
        assert "CellTimeoutError" in errors
    if case == "prints_a_megabyte_in_lines":
        # nbgrader's LimitOutput keeps the first 1000 lines of each cell
        assert os.path.getsize(notebook) < 500_000
