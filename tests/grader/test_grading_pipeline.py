"""The classroom pipeline: `make student` writes the student versions without ever overwriting a
learner's work, and `make grade` gives each exercise its points and nothing else, whatever a learner tries.

The fast tests check tools/student.py's copying on small files. The tests
marked ``grading`` run the real pipeline, `make student` then `make grade`,
in a temporary copy of the course, on one class holding:

- the source notebooks (with the solutions), which must score full marks,
  and the untouched student versions, which must score 0;
- one learner per catalogued mistake (tests/mistakes/): the solutions with
  only that exercise's answer replaced, which must lose exactly its points;
- answers that raise, print a megabyte, or loop forever, and a correct answer
  that prints a RuntimeWarning;
- one learner per attack (tests/grader/attacks.py), each of whom must get 0 on the
  attacked exercise and keep every other point, while the course's files, the
  other learners' scores, the processes and the network stay untouched, and
  the teacher's environment and secret reach no file a learner is sent;
- honest learners sorted before and after all of them, who keep full marks;
- a learner who handed in one lesson only: the others are `missing`.

`make grade` runs under a sampler of its process tree (``TreeSampler``):
the tree's peak RSS is held to ``PEAK_RSS_BOUND`` and every process it ever
held must be gone at the end, with the scratch folders and cgroups of its
grader. tests/grader/test_grader_resilience.py grades small courses: malformed
submissions drawn by Hypothesis, a worker or a sandbox that fails, Ctrl+C,
two graders at once.
"""

import copy
import csv
import hashlib
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import uuid
from pathlib import Path

import nbformat
import numpy as np
import pytest

import encoder_lib
import encoder_lib.grading
from attacks import ATTACKS, ISSUE_23
from grading_helpers import leftovers_of, make_measured
from course_grader.cases import hidden_cases, visible_cases
from course_grader import ids
from course_grader.sections import file_name as section_file
from course_grader.files import csv_field
from conftest import load_tool, need_bubblewrap
from mistakes import MISTAKES

ROOT = Path(__file__).resolve().parents[2]
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


def changed_by_the_learner_then_updated(tmp_path):
    """Lesson version a1 delivered, changed by the learner, then version a2 delivered (beside it, as .new)."""
    release(tmp_path, {"01_a/01_a.ipynb": "a1"})
    sync(tmp_path, [])
    (tmp_path / "student/01_a/01_a.ipynb").write_text("mine")
    release(tmp_path, {"01_a/01_a.ipynb": "a2"})
    sync(tmp_path, [])


def test_an_update_never_overwrites_a_changed_new_file_either(tmp_path):
    changed_by_the_learner_then_updated(tmp_path)
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
    changed_by_the_learner_then_updated(tmp_path)
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

TIME_LIMIT = 5  # seconds per exercise in the copy, so that the endless loops cost little
#: a word no other process on the machine holds: each run's own, so that a test that looks for the attackers' leftover
#: processes by it finds only this run's (a fixed number was found in a CI machine's unrelated command lines)
MARKER = f"ZZ-attack-marker-{uuid.uuid4().hex}"
LIBRARY = Path(encoder_lib.__file__).resolve().parent
#: The course's sections in this class: a few learners each; the others in none.
SECTIONS = {"Section A": ["solutions", "untouched"], "Section B": ["one-lesson-only"]}
OUTPUTS = {"autograded", "feedback", "grades.csv", "grades_by_exercise.csv", "grades_lms.csv", "report", "gradebook.db",
           ".grading-secret", ".grading.lock", "student", "release", ".grades.csv.made-from",
           *(section_file(section) for section in SECTIONS)}
#: The course's secret in the copy: the test knows it, to draw hidden cases as the grader does.
SECRET = 0x5EC2E7 * 2**200 + 23
#: A secret in the teacher's environment while `make grade` runs: it must reach no file a learner can be sent.
TEACHER_TOKEN = "ZZ-teacher-token-8c1f"
#: What the grader's whole process tree (main, workers, sandboxes) may hold at once: two sandboxes at their
#: memory limit (1 GiB and the runner), two workers, the main process, make and nbgrader.
PEAK_RSS_BOUND = 4 * 2**30
#: What the grader's own processes (main and workers, outside the sandboxes) may hold at once (issue 30).
GRADER_BOUND = 1.5 * 2**30
HONEST_BEFORE, HONEST_AFTER = "0-honest-first", "zzzz-honest-last"  # sorted before and after every other learner


def make(target, root, timeout, **variables):
    """Run `make <target>` in the course copy; setup is taken as done (.venv is this one)."""
    return subprocess.run(["make", "-o", ".venv/.installed", target, *(f"{k}={v}" for k, v in variables.items())],
                          cwd=root, timeout=timeout, capture_output=True, text=True)


def cells_by_id(nb):
    return {c.metadata.get("nbgrader", {}).get("grade_id"): c for c in nb.cells if c.metadata.get("nbgrader")}


def with_answer(nb, exercise, source):
    """A copy of ``nb`` with only ``exercise``'s answer cell replaced by ``source``."""
    nb = copy.deepcopy(nb)
    cells_by_id(nb)[f"{exercise}_answer"].source = source.strip() + "\n"
    return nb


def _import_cell(nb):
    return next(c for c in nb.cells if c.cell_type == "code" and "import grading" in c.source)


def _edit(name, nb, exercise):
    cells = cells_by_id(nb)
    tests = cells.get(f"{exercise}_tests")
    if name == "grading_replaced_in_the_import_cell":
        _import_cell(nb).source += ("\nclass grading:\n    self_check = visible_tests = staticmethod(lambda fn: None)\n"
                                    "    friendly_not_implemented = staticmethod(lambda: None)\n")
    elif name == "a_cell_with_empty_nbgrader_metadata":
        cell = nbformat.v4.new_code_cell("print('mine')")
        cell.metadata["nbgrader"] = {}
        nb.cells.insert(nb.cells.index(tests) + 1, cell)
    elif name == "the_test_cell_duplicated":
        twin = copy.deepcopy(tests)
        twin.id = "twin-of-" + tests.id
        nb.cells.insert(nb.cells.index(tests) + 1, twin)
    elif name == "the_test_cell_deleted":
        nb.cells.remove(tests)
    elif name == "the_test_cell_edited":
        tests.source = "pass"
    elif name == "the_answer_cell_s_grade_id_renamed":
        cells[f"{exercise}_answer"].metadata["nbgrader"]["grade_id"] = "mine"
    elif name == "the_answer_cell_s_grade_id_made_a_list":
        cells[f"{exercise}_answer"].metadata["nbgrader"]["grade_id"] = [f"{exercise}_answer"]
    elif name == "the_answer_cell_s_source_made_numbers":
        cells[f"{exercise}_answer"]["source"] = [1, 2, 3]
    elif name == "the_test_cell_s_points_raised":
        tests.metadata["nbgrader"]["points"] = 100
    else:
        raise ValueError(name)
    return nb


def _write_notebook(course, folder, nb):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{folder.name}.ipynb").write_text(json.dumps(nb))


def _submission(name, course, attack, folder):
    """Hand in ``attack``'s lesson in ``folder`` (submitted/<student>/<lesson>) in the way ``name`` says."""
    solutions = json.loads(nbformat.writes(course.source(attack.lesson)))
    notebook = folder / f"{attack.lesson}.ipynb"
    if name in ("the_solutions", "timestamp_is_not_a_date", "notebook_of_100_mb", "notebook_of_millions_of_lists"):
        if name == "notebook_of_100_mb":
            solutions["cells"].append({"cell_type": "markdown", "metadata": {}, "source": "x" * 100 * 2**20})
        if name == "notebook_of_millions_of_lists":
            solutions["metadata"]["mine"] = [[] for _ in range(2 * 10**6)]
        _write_notebook(course, folder, solutions)
        if name == "timestamp_is_not_a_date":
            (folder / "timestamp.txt").write_text("handed in on time, promise")
    elif name == "json_nested_50000_deep":
        folder.mkdir(parents=True)
        notebook.write_text("[" * 50000 + "]" * 50000)
    elif name == "notebook_is_a_fifo":
        folder.mkdir(parents=True)
        os.mkfifo(notebook)
    elif name == "notebook_is_a_folder":
        (notebook / "cells").mkdir(parents=True)
    elif name == "a_learner_folder_linked_to_another":
        folder.parent.symlink_to(course.root / "submitted" / HONEST_BEFORE)
    elif name == "a_lesson_folder_linked_to_another":
        folder.parent.mkdir(parents=True)
        folder.symlink_to(course.root / "submitted" / HONEST_BEFORE / attack.lesson)
    elif name in ("a_notebook_linked_to_the_secret", "a_notebook_linked_to_etc_shadow"):
        folder.mkdir(parents=True)
        notebook.symlink_to(course.root / ".grading-secret" if "secret" in name else "/etc/shadow")
    else:
        raise ValueError(name)


def _digest(*arrays_and_texts):
    """The key an attack's table uses: the SHA-256 of its input's float64 bytes (and any text after them)."""
    return hashlib.sha256(b"".join(a if isinstance(a, bytes) else np.ascontiguousarray(a, dtype=float).tobytes()
                                   for a in arrays_and_texts)).hexdigest()


def _lesson_cases(name):
    """The visible cases a learner reads in the lesson: not the contract checks derived from them (issue 49)."""
    return [case for case in visible_cases(name) if case.how is None]


def _visible_digests(name):
    return {_digest(case.args[0]) for case in visible_cases(name) if case.args}  # a contract check's too


def _earlier_round_table(name, secret):
    """Right results by input digest for the visible cases and an earlier round's hidden ones (another version
    of the submission), as a learner who kept the feedback of that round could have them."""
    earlier = hidden_cases(name, secret, hashlib.sha256(b"an earlier version").hexdigest())
    table = {}
    for case in _lesson_cases(name) + earlier:
        axis = case.kwargs.get("axis", case.args[1] if len(case.args) > 1 else -1)
        table[_digest(case.args[0], str(axis).encode())] = case.expected.tolist()
    return repr(table)


def _bert_table():
    import base64

    table = {_digest(c.args[0]): (list(c.expected.shape), base64.b64encode(c.expected.tobytes()).decode())
             for c in _lesson_cases("bert_block")}
    return repr(table)


TABLES = {
    "lookup_table_of_earlier_hidden_inputs": lambda: _earlier_round_table("softmax", SECRET),
    "bert_table_without_a_block": _bert_table,
    "exfiltrates_the_hidden_inputs": lambda: repr(_visible_digests("scaled_dot_product_attention")),
    "raises_the_hidden_inputs": lambda: repr(_visible_digests("softmax")),
}

ROBUSTNESS_EXERCISE = "feed_forward"
ROBUSTNESS = {  # answers that go wrong in ways that must cost only their own exercise
    "raises": 'def feed_forward(*args, **kwargs):\n    raise ValueError("not today")\n',
    "prints_a_megabyte_line": 'def feed_forward(x, *args, **kwargs):\n    print("x" * 10**6)\n    return x\n',
    "prints_a_megabyte_in_lines": 'def feed_forward(x, *args, **kwargs):\n'
                                  '    print(("x" * 99 + "\\n") * 10**4)\n    return x\n',
    "loops_forever": "def feed_forward(*args, **kwargs):\n    while True:\n        pass\n",
}
ROBUSTNESS_STATUS = {"raises": "failed", "prints_a_megabyte_line": "failed", "prints_a_megabyte_in_lines": "failed",
                     "loops_forever": "timeout"}
# A correct answer whose 0 / 0 prints a RuntimeWarning: it must score full marks.
WARNING_ANSWER = """
def mean_pool(hidden, padding_mask=None):
    if padding_mask is None:
        return hidden.mean(axis=-2)
    keep = (~padding_mask)[..., None]
    total = (hidden * keep).sum(axis=-2)
    count = keep.sum(axis=-2).astype(hidden.dtype)  # an integer count would make a float32 result float64
    return np.where(count > 0, total / count, 0)
"""


def tree_hashes(*folders, skip=()):
    """{path: sha256} of every regular file under ``folders`` (links not followed), outputs and caches left out."""
    found = {}
    for folder in folders:
        for path in sorted(Path(folder).rglob("*")):
            parts = path.relative_to(folder).parts
            if path.is_file() and not path.is_symlink() and not (set(parts) & {"__pycache__", ".ipynb_checkpoints"}) \
                    and parts[0] not in skip:
                found[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


def processes_mentioning(word):
    """The pids (as text) of the processes whose command line holds ``word``."""
    pids = [entry.name for entry in Path("/proc").iterdir() if entry.name.isdigit()]
    return [pid for pid in pids if word in _command_line(pid)]


def _command_line(pid):
    """A process's command line, its arguments joined by spaces ("" once it is gone)."""
    try:
        return (Path("/proc") / pid / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


class Listener:
    """A TCP server on 127.0.0.1 that counts the connections it gets."""

    def __init__(self):
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.connections = 0
        self.server.settimeout(0.2)
        self.running = True
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self):
        while self.running:
            try:
                connection, _ = self.server.accept()
            except OSError:
                continue
            self.connections += 1
            connection.close()

    def close(self):
        self.running = False
        self.thread.join()
        self.server.close()


def read_results(root):
    with open(root / "grades_by_exercise.csv", newline="") as f:
        return {(r["student_id"], r["lesson"], r["exercise"]): r for r in csv.DictReader(f)}


class Course:
    """A copy of the course with a class's submissions, graded."""

    def __init__(self, root):
        self.root = root
        self.lessons = {}  # lesson -> [exercise]
        for name, exercise in encoder_lib.grading.EXERCISES.items():
            self.lessons.setdefault(exercise.lesson, []).append(name)
        self.submitted = {}  # student -> [lesson]

    def source(self, lesson):
        return nbformat.read(self.root / "notebooks" / lesson / f"{lesson}.ipynb", as_version=4)

    def submit(self, student, lesson, nb):
        folder = self.root / "submitted" / student / lesson
        folder.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, folder / f"{lesson}.ipynb")
        self.submitted.setdefault(student, []).append(lesson)

    def attack(self, attack):
        """Hand in ``attack``'s lesson as its learner would."""
        folder = self.root / "submitted" / attack.folder / attack.lesson
        self.submitted.setdefault(attack.folder, []).append(attack.lesson)
        if attack.submission:
            return _submission(attack.submission, self, attack, folder)
        nb = self.source(attack.lesson)
        if attack.answer:
            source = attack.answer.replace("{root}", str(self.root)).replace("{port}", str(self.listener.port))
            source = source.replace("{marker}", MARKER).replace("{library}", str(LIBRARY))
            source = source.replace("{table}", TABLES[attack.id]()) if "{table}" in source else source
            nb = with_answer(nb, attack.exercise, source)
        if attack.edit:
            nb = _edit(attack.edit, nb, attack.exercise)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{attack.lesson}.ipynb").write_text(json.dumps(nb))  # as it is: nbformat would refuse some edits

    def expect(self, student, lesson, lost, status=None, results=None):
        """``student``'s exercises of ``lesson`` score 0 for those in ``lost`` and full marks otherwise."""
        results = results or self.results
        for exercise in self.lessons[lesson]:
            row = results[student, lesson, exercise]
            full = float(row["max_points"])
            assert float(row["points"]) == (0 if exercise in lost else full), (student, row)
            if exercise in lost and status:
                assert row["status"] in status.split("|"), (student, row)
            if exercise not in lost:
                assert row["status"] in ("passed", "tampered"), (student, row)

    def lost_by(self, attack):
        if attack.status == "passed":
            return set()
        return set(self.lessons[attack.lesson]) if attack.exercise == "*" else {attack.exercise}


def _course_copy(root):
    shutil.copytree(ROOT / "notebooks", root / "notebooks",
                    ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
    for name in ("Makefile", "nbgrader_config.py", "requirements.txt", "pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, root / name)
    with open(root / "nbgrader_config.py", "a") as config:  # two sections, graded in the one run (issue 42)
        config.write(f"\nc.EncoderCourse.sections = {SECTIONS!r}\n")
    shutil.copytree(ROOT / "tools", root / "tools", ignore=shutil.ignore_patterns("__pycache__"))
    (root / ".venv").symlink_to(BIN.parent)
    (root / ".grading-secret").write_text(f"{SECRET:x}\n")


def _hand_in_the_class(course):
    root = course.root
    for student in (HONEST_BEFORE, "solutions", HONEST_AFTER):
        for lesson in course.lessons:
            course.submit(student, lesson, course.source(lesson))
    for lesson in course.lessons:
        course.submit("untouched", lesson, nbformat.read(root / "release" / lesson / f"{lesson}.ipynb", as_version=4))
    course.submit("one-lesson-only", "01_attention", course.source("01_attention"))
    for mistake in MISTAKES:
        course.submit(f"mistake-{mistake.id}", mistake.lesson,
                      with_answer(course.source(mistake.lesson), mistake.exercise, mistake.source))
    course.robustness_lesson = encoder_lib.grading.EXERCISES[ROBUSTNESS_EXERCISE].lesson
    for case, source in ROBUSTNESS.items():
        course.submit(case, course.robustness_lesson,
                      with_answer(course.source(course.robustness_lesson), ROBUSTNESS_EXERCISE, source))
    course.submit("warning-but-right", "08_inside_a_real_encoder",
                  with_answer(course.source("08_inside_a_real_encoder"), "mean_pool", WARNING_ANSWER))
    for attack in ATTACKS:
        course.attack(attack)


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    need_bubblewrap("make grade runs every answer in its sandbox")
    root = tmp_path_factory.mktemp("course")
    _course_copy(root)
    course = Course(root)
    made = make("student", root, timeout=300)
    assert made.returncode == 0, made.stdout + made.stderr
    course.student_output = made.stdout
    course.listener = Listener()
    _hand_in_the_class(course)
    course.before = tree_hashes(root, LIBRARY, skip=OUTPUTS)
    try:
        course.graded, course.sampler, course.seconds = make_measured(
            "grade", root, 1500, dict(os.environ, ENCODER_TEACHER_TOKEN=TEACHER_TOKEN), TIME_LIMIT=TIME_LIMIT)
    finally:
        course.listener.close()
    print(f"\nthe attack class: {len(course.submitted)} learners graded in {course.seconds:.0f} s; the grader's "
          f"process tree at most {course.sampler.peak / 2**20:.0f} MiB RSS, its own processes (outside the "
          f"sandboxes) {course.sampler.grader_peak / 2**20:.0f} MiB")
    course.after = tree_hashes(root, LIBRARY, skip=OUTPUTS)
    course.results = read_results(root)
    course.files = {name: (root / name).read_bytes() for name in ("grades.csv", "grades_by_exercise.csv")}
    course.feedback = tree_hashes(root / "feedback")
    return course


def _graded_as(attack):
    """The learner's id as grades_by_exercise.csv writes it: their folder's name (``ids.of_folder``), neutralised."""
    return csv_field(ids.of_folder(attack.folder))


def test_every_attack_of_issue_23_is_a_learner_of_the_attack_class():
    ids = [attack.id for attack in ATTACKS]
    assert len(ids) == len(set(ids))
    assert all(learners and set(learners) <= set(ids) for learners in ISSUE_23.values())


@pytest.mark.grading
@pytest.mark.timeout(1800)
def test_make_student_and_make_grade_run_and_summarise(course):
    assert f"{len(list((course.root / 'notebooks').glob('*/*.ipynb')))} written, 0 updated, 0 kept" \
        in course.student_output
    assert course.graded.returncode == 0, course.graded.stdout[-5000:] + course.graded.stderr[-5000:]
    out = course.graded.stdout
    assert f"graded {len(course.submitted)} learners" in out
    for attack in ATTACKS:  # every error, timeout, memory and tampering is named by learner, lesson and exercise
        if set(attack.status.split("|")) & {"error", "timeout", "memory", "tampered"}:
            exercise = course.lessons[attack.lesson][0] if attack.exercise == "*" else attack.exercise
            assert f"{_graded_as(attack)} {attack.lesson} {exercise}:" in out, attack.id


@pytest.mark.grading
@pytest.mark.timeout(1800)
def test_the_solutions_score_full_marks_and_the_untouched_versions_nothing(course):
    for lesson in course.lessons:
        course.expect("solutions", lesson, set())
        course.expect("untouched", lesson, set(course.lessons[lesson]), status="not answered")
        assert "not answered" in course.results["untouched", lesson, course.lessons[lesson][0]]["note"]


@pytest.mark.grading
@pytest.mark.timeout(1800)
@pytest.mark.parametrize("student", [HONEST_BEFORE, HONEST_AFTER])
def test_honest_learners_sorted_around_the_attackers_keep_full_marks(course, student):
    for lesson in course.lessons:
        course.expect(student, lesson, set())
        assert all(course.results[student, lesson, e]["status"] == "passed" for e in course.lessons[lesson])


@pytest.mark.grading
@pytest.mark.timeout(1800)
def test_a_lesson_not_handed_in_is_missing_not_zero(course):
    course.expect("one-lesson-only", "01_attention", set())
    for lesson in course.lessons:
        if lesson != "01_attention":
            for exercise in course.lessons[lesson]:
                row = course.results["one-lesson-only", lesson, exercise]
                assert row["status"] == "missing" and row["points"] == "0", row
    rows = list(csv.DictReader((course.root / "grades.csv").read_text().splitlines()))
    [handed_in] = [r for r in rows if r["student_id"] == "one-lesson-only" and r["assignment"] == "01_attention"]
    assert handed_in["timestamp"] and float(handed_in["score"]) == float(handed_in["max_score"]) > 0
    missing = [r for r in rows if r["student_id"] == "one-lesson-only" and r["assignment"] == "02_multi_head_attention"]
    assert missing[0]["timestamp"] == "", "nbgrader export marks a lesson not handed in by its empty timestamp"


@pytest.mark.grading
@pytest.mark.timeout(1800)
@pytest.mark.parametrize("mistake", MISTAKES, ids=[m.id for m in MISTAKES])
def test_a_mistake_loses_its_exercise_s_points_and_no_others(course, mistake):
    course.expect(f"mistake-{mistake.id}", mistake.lesson, {mistake.exercise}, status="failed")
    row = course.results[f"mistake-{mistake.id}", mistake.lesson, mistake.exercise]
    assert mistake.explanation in row["note"], row["note"]
    named = {m.name: m.explanation for m in encoder_lib.grading.EXERCISES[mistake.exercise].mistakes}
    assert mistake.explanation in [named[n] for n in row["mistake"].split(" + ")], row  # for make report


@pytest.mark.grading
@pytest.mark.timeout(1800)
@pytest.mark.parametrize("case", list(ROBUSTNESS))
def test_a_broken_answer_loses_only_its_own_points(course, case):
    course.expect(case, course.robustness_lesson, {ROBUSTNESS_EXERCISE}, status=ROBUSTNESS_STATUS[case])


@pytest.mark.grading
@pytest.mark.timeout(1800)
def test_a_correct_answer_that_prints_a_warning_scores_full_marks(course):
    course.expect("warning-but-right", "08_inside_a_real_encoder", set())


@pytest.mark.grading
@pytest.mark.timeout(1800)
@pytest.mark.parametrize("attack", ATTACKS, ids=[a.id for a in ATTACKS])
def test_an_attack_scores_nothing_and_costs_nothing_else(course, attack):
    student = _graded_as(attack)
    course.expect(student, attack.lesson, course.lost_by(attack), status=attack.status)
    if attack.says:
        exercise = course.lessons[attack.lesson][0] if attack.exercise in ("*", "") else attack.exercise
        note = course.results[student, attack.lesson, exercise]["note"]
        assert attack.says in note or attack.says in course.graded.stdout, (note, attack.says)


@pytest.mark.grading
@pytest.mark.timeout(1800)
def test_empty_nbgrader_metadata_is_reported_as_tampering_with_the_notebook(course):
    row = course.results["attack-empty_nbgrader_metadata", "02_multi_head_attention", "(notebook)"]
    assert row["status"] == "tampered" and "nbgrader metadata" in row["note"]


@pytest.mark.grading
@pytest.mark.timeout(1800)
def test_an_answer_that_changes_its_input_is_told_which_one(course):
    note = course.results["attack-changes_its_input_in_place", "05_encoder_block", "masked_softmax"]["note"]
    assert "it changed its input `scores` in place" in note and "np.where(...)" in note, note
    assert note.count("changed its input") == 1, note


@pytest.mark.grading
@pytest.mark.timeout(1800)
def test_no_file_of_the_course_or_the_library_changed(course):
    changed = sorted(path for path in course.before.keys() | course.after.keys()
                     if course.before.get(path) != course.after.get(path))
    assert not changed, changed
    assert MARKER.encode() not in (course.root / "gradebook.db").read_bytes()


@pytest.mark.grading
@pytest.mark.timeout(1800)
def test_make_grade_writes_the_class_report_with_every_mistake_it_named(course):
    assert "what the class got wrong and what to re-teach:" in course.graded.stdout
    assert (course.root / "report" / "index.html").is_file()
    groups = {}
    for row in csv.DictReader((course.root / "report" / "mistakes.csv").read_text().splitlines()):
        groups[row["exercise"], row["mistake"]] = int(row["learners"])
    for mistake in MISTAKES:
        named = course.results[f"mistake-{mistake.id}", mistake.lesson, mistake.exercise]["mistake"]
        for name in named.split(" + "):
            assert groups.get((mistake.exercise, name), 0) >= 1, (mistake.id, name)


@pytest.mark.grading
@pytest.mark.timeout(1800)
def test_every_output_file_is_written_with_a_row_for_every_learner(course):
    rows = list(csv.reader((course.root / "grades_by_exercise.csv").read_text().splitlines()))
    assert rows[0] == ["student_id", "lesson", "exercise", "points", "max_points", "status", "note", "mistake",
                       "diagnosis", "grader_points", "late"]
    assert all(len(row) == 11 for row in rows)
    expected = {csv_field(ids.of_folder(student)) for student in course.submitted}
    assert {row[0] for row in rows[1:]} == expected
    assert {p.name for p in (course.root / "feedback").iterdir()} == {ids.folder(ids.of_folder(student))
                                                                      for student in course.submitted}
    exported = list(csv.reader((course.root / "grades.csv").read_text().splitlines()))
    assert all(len(row) == 11 for row in exported) and {row[3] for row in exported[1:]} >= expected
    lms = list(csv.DictReader((course.root / "grades_lms.csv").read_text().splitlines()))
    possible = [row for row in lms if row["Student"].strip() == "Points Possible"]
    assert len(possible) == 1 and lms[0] == possible[0], "make grade writes Canvas's Points Possible row by default"
    lms = lms[1:]
    assert sorted(row["SIS User ID"] for row in lms) == sorted(expected), "one row per learner"
    solutions = next(row for row in lms if row["SIS User ID"] == "solutions")
    assert float(solutions["Final Points"]) == sum(e.points for e in encoder_lib.grading.EXERCISES.values())
    in_sections = {student: section for section, students in SECTIONS.items() for student in students}
    assert {row["SIS User ID"]: row["Section"] for row in lms} == {s: in_sections.get(s, "") for s in expected}
    for section, students in SECTIONS.items():  # each section's own file: its learners' rows, as the whole's
        own = list(csv.DictReader((course.root / section_file(section)).read_text()
                                  .splitlines()))
        assert own[0] == possible[0] and own[1:] == [row for row in lms if row["SIS User ID"] in students]


@pytest.mark.grading
@pytest.mark.timeout(1800)
def test_nothing_written_holds_a_formula_a_control_character_or_an_unsafe_name(course):
    for name in ("grades.csv", "grades_by_exercise.csv", "grades_lms.csv"):
        for row in csv.reader((course.root / name).read_text().splitlines()):
            for value in row:
                assert not value.startswith(("=", "+", "-", "@", "\t", "\r")), (name, value)
                assert value.isprintable(), (name, value)
    out = course.graded.stdout + course.graded.stderr
    assert "\x1b" not in out and "\r" not in out
    for folder in ("feedback", "autograded"):
        assert all(ids.FOLDER_NAME.fullmatch(p.name) for p in (course.root / folder).iterdir()), folder
    for attack in ATTACKS:
        if attack.student:
            assert f"are named {ids.folder(ids.of_folder(attack.student))}" in out, attack.id


@pytest.mark.grading
@pytest.mark.timeout(1800)
def test_the_teacher_s_environment_secret_and_files_reach_nothing_a_learner_is_sent(course):
    secret = (course.root / ".grading-secret").read_text().strip()
    shadow = Path("/etc/shadow").read_bytes().split(b"\n")[0] if Path("/etc/shadow").is_file() else None
    for path in [course.root / "grades_by_exercise.csv", course.root / "grades.csv", course.root / "grades_lms.csv",
                 *(course.root / "feedback").rglob("*"), *(course.root / "autograded").rglob("*")]:
        if path.is_file():
            data = path.read_bytes()
            assert TEACHER_TOKEN.encode() not in data and secret.encode() not in data, path
            assert shadow is None or not shadow or shadow not in data, path
    note = course.results["attack-reads_the_teacher_s_environment", "01_attention", "softmax"]["note"]
    assert "PermissionError" in note or "FileNotFoundError" in note, note


@pytest.mark.grading
@pytest.mark.timeout(1800)
def test_hidden_inputs_are_never_echoed(course):
    for attack in ("exfiltrates_the_hidden_inputs", "raises_the_hidden_inputs"):
        folder = course.root / "feedback" / f"attack-{attack}"
        assert "LEAK" not in (folder / "index.html").read_text(), attack
        assert "LEAK" not in "".join(r["note"] for k, r in course.results.items() if k[0] == f"attack-{attack}")


@pytest.mark.grading
@pytest.mark.timeout(1800)
def test_what_the_grader_writes_is_readable_by_the_teacher_only(course):
    written = [course.root / "grades.csv", course.root / "grades_by_exercise.csv", course.root / "grades_lms.csv",
               *(course.root / "feedback").rglob("*"), *(course.root / "autograded").rglob("*")]
    loose = [str(p) for p in written if p.stat().st_mode & 0o077]
    assert not loose, loose[:5]


@pytest.mark.grading
@pytest.mark.timeout(1800)
def test_no_process_cgroup_or_scratch_folder_is_left_and_no_connection_was_made(course):
    graders, left = leftovers_of(course.sampler)
    assert graders and not left, left
    assert processes_mentioning(MARKER) == []
    assert course.listener.connections == 0


@pytest.mark.grading
@pytest.mark.timeout(1800)
def test_the_grader_s_memory_stays_bounded(course):
    assert 0 < course.sampler.peak < PEAK_RSS_BOUND, f"{course.sampler.peak / 2**20:.0f} MiB"
    assert course.sampler.grader_peak < GRADER_BOUND, f"the grader's own {course.sampler.grader_peak / 2**20:.0f} MiB"


@pytest.mark.grading
@pytest.mark.timeout(1800)
def test_the_gradebook_agrees_with_grades_csv(course):
    exported = course.root / "exported.csv"
    result = subprocess.run([str(BIN / "nbgrader"), "export", "--to", str(exported), "--log-level=ERROR"],
                            cwd=course.root, capture_output=True, text=True,
                            env=dict(os.environ, PATH=f"{BIN}:{os.environ['PATH']}"))
    assert result.returncode == 0, result.stderr
    # what nbgrader export writes, every field neutralised as in every CSV the grader writes (an id is kept as it
    # is, and a spreadsheet reads `=cmd|...` as text); nbgrader joins its fields with commas unquoted, so an id
    # with a comma or a line break breaks its line: those are ours alone, quoted
    ours = list(csv.reader((course.root / "grades.csv").read_text().splitlines()))
    counted = {r[0] for r in ours[1:]}  # grades.csv holds the lessons counted only (issue 32); nbgrader's, all
    theirs = [[csv_field(v) for v in row] for row in csv.reader(exported.read_text().splitlines())]
    theirs = theirs[:1] + [r for r in theirs[1:] if r[0] in counted]
    broken = {csv_field(ids.of_folder(s)) for s in course.submitted if "," in s or "\n" in s}
    assert broken and [r for r in ours if r[3] not in broken] == [r for r in theirs if len(r) == len(ours[0])
                                                                   and r[3] not in broken]
    assert all(len(r) == len(ours[0]) for r in ours) and {r[3] for r in ours} >= broken
    # as nbgrader's autograder leaves them: scored, nothing waiting for manual grading in formgrader
    import warnings

    from nbgrader.api import Gradebook

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with Gradebook(f"sqlite:///{course.root / 'gradebook.db'}", "encoder-course") as gradebook:
            submission = gradebook.find_submission("05_encoder_block", "solutions")
            grades = [g for nb in submission.notebooks for g in nb.grades]
            assert grades and all(g.auto_score == g.max_score and not g.needs_manual_grade for g in grades)
            assert submission.score == submission.max_score > 0


@pytest.mark.grading
@pytest.mark.timeout(1800)
def test_feedback_pages_name_the_mistake_and_load_nothing(course):
    page = (course.root / "feedback" / "mistake-softmax_without_max" / "index.html").read_text()
    assert "subtract each row&#x27;s maximum" in page and "<math" in page
    # nothing fetched: no scripts, no external pictures, style sheets or fonts (MathML's xmlns is a name, not a fetch)
    for fetch in ('src="http', "href=\"http", "@import", "url(", "<script", "<link"):
        assert fetch not in page, fetch


@pytest.mark.grading
@pytest.mark.timeout(1800)
def test_grading_again_reuses_every_result_and_writes_the_same_files(course):
    again = make("grade", course.root, timeout=600, TIME_LIMIT=TIME_LIMIT)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "0 graded now" in again.stdout
    for name, content in course.files.items():
        assert (course.root / name).read_bytes() == content, name
    assert tree_hashes(course.root / "feedback") == course.feedback


@pytest.mark.grading
@pytest.mark.timeout(1800)
def test_a_changed_resubmission_is_graded_again_and_an_unchanged_one_is_not(course):
    student, mistake = "mistake-softmax_without_max", next(m for m in MISTAKES if m.id == "softmax_without_max")
    course.submit(student, mistake.lesson, course.source(mistake.lesson))  # corrected, over the old one
    again = make("grade", course.root, timeout=600, TIME_LIMIT=TIME_LIMIT)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "1 graded now" in again.stdout
    assert "1 earlier result of changed submissions kept" in again.stdout
    kept = list((course.root / "autograded" / student / mistake.lesson / "history").iterdir())
    assert len(kept) == 1 and (kept[0] / "grading.json").is_file() and (kept[0] / f"{mistake.lesson}.ipynb").is_file()
    assert any(r["status"] == "failed" for r in json.loads((kept[0] / "grading.json").read_text())["results"])
    results = read_results(course.root)
    course.expect(student, mistake.lesson, set(), results=results)
    unchanged = {key: row for key, row in results.items() if key[0] != student}
    assert unchanged == {key: row for key, row in course.results.items() if key[0] != student}
