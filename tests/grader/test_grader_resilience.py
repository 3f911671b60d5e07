"""`make grade` holds whatever is in submitted/ and whatever the machine does.

On small courses made from one run of `make student` (its release/ and
gradebook.db):

- a property-based fuzzer (Hypothesis) hands in lesson 01 mutated at random,
  in its JSON (types, nesting, sizes), its encoding, and its files and links,
  beside two honest learners sorted before and after: every run finishes,
  writes every output, and leaves the honest learners' scores intact;
- a worker that dies and a sandbox that cannot start are the machine's
  failures: said in the summary, never stored, graded on the next run;
- Ctrl+C ends the grader with every process, cgroup and scratch folder it
  made; two graders at once: the second says who holds the lock and changes
  nothing; without bubblewrap the grader refuses, unless told UNSAFE.
"""

import contextlib
import csv
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from course_grader import run, sandbox
from course_grader.sandbox import box
from course_grader.grade import Lock, main as grade_main
from course_grader.learner import grade_learner
from course_grader.plan import Choices, plan_run
from course_grader.run import grade_class
from course_grader import ids
from course_grader.files import csv_value
from grading_helpers import TreeSampler, course_after_make_student, leftovers_of
from report_class import write_roster

BIN = Path(sys.executable).parent
LESSON = "01_attention"
HONEST = ("0-honest-first", "zzzz-honest-last")
#: How many random classes the fuzzer grades (each a `make grade` of two honest learners and up to four
#: mutated ones: about two seconds each on a loaded 2-core machine).
FUZZ_EXAMPLES = 12


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    """A course folder with release/ and gradebook.db, as `make student` leaves them."""
    root = course_after_make_student(tmp_path_factory, "base")
    return root


def course_from(base, folder, students=HONEST):
    """A fresh course folder with ``students`` each handing in lesson 01's solutions."""
    root = folder / "course"
    root.mkdir()
    for name in ("nbgrader_config.py", "gradebook.db"):
        shutil.copy(base / name, root)
    shutil.copytree(base / "release", root / "release")
    for student in students:
        hand_in(root, student, solutions(base))
    return root


def solutions(base):
    return json.loads(nbformat.writes(nbformat.read(base / "notebooks" / LESSON / f"{LESSON}.ipynb", as_version=4)))


def hand_in(root, student, notebook, name=f"{LESSON}.ipynb"):
    folder = root / "submitted" / student / LESSON
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_bytes(notebook if isinstance(notebook, bytes) else json.dumps(notebook).encode())
    return folder


def results(root):
    with open(root / "grades_by_exercise.csv", newline="") as f:
        return list(csv.DictReader(f))


def assert_honest_full_marks(root, honest=HONEST):
    rows = [r for r in results(root) if r["student_id"] in honest and r["lesson"] == LESSON]
    assert len(rows) == 2 * len(honest) and all(r["status"] == "passed" and r["points"] == r["max_points"]
                                                for r in rows), rows


def run_grader(root, *args, env=None, timeout=600):
    return subprocess.run([sys.executable, "-m", "course_grader.grade", "--root", str(root), *args],
                          capture_output=True, text=True, env=env, timeout=timeout)


# ---------------------------------------------------------------- the fuzzer

JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
                    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children,
                                                                                     max_size=4), max_leaves=12)
PLACES = st.sampled_from(["notebook", "cells", "cell", "source", "metadata", "nbgrader", "grade_id", "cell_type",
                          "solution", "points"])
NAMES = st.text(st.characters(blacklist_characters="/\0", blacklist_categories=("Cs",)), min_size=1,
                max_size=30).filter(lambda name: name not in (".", ".."))

MUTATIONS = st.one_of(
    st.tuples(st.just("value"), PLACES, st.integers(0, 40), JSON),
    st.tuples(st.just("nesting"), PLACES, st.integers(0, 40), st.integers(10, 60_000)),
    st.tuples(st.just("size"), st.sampled_from([2**10, 2**20, 21 * 2**20]), st.integers(0, 40)),
    st.tuples(st.just("encoding"), st.sampled_from(["utf-16", "utf-32", "latin-1 bytes", "truncated", "bom", "empty",
                                                   "not json"])),
    st.tuples(st.just("file"), st.sampled_from(["link to an honest learner", "link to /etc/passwd", "dangling link",
                                                "fifo", "folder", "two notebooks", "timestamp", "learner folder link",
                                                "lesson folder link"])),
    st.tuples(st.just("name"), NAMES),
)


def _mutated(notebook, place, index, value):
    """``notebook`` with the thing at ``place`` (in its ``index``-th cell) replaced by ``value``."""
    if place == "notebook":
        return value
    if place == "cells":
        return {**notebook, "cells": value}
    cell = notebook["cells"][index % len(notebook["cells"])]
    if place == "cell":
        notebook["cells"][index % len(notebook["cells"])] = value
    elif place in ("source", "cell_type", "metadata"):
        cell[place] = value
    else:
        answer = next(c for c in notebook["cells"] if c.get("metadata", {}).get("nbgrader", {}).get("solution"))
        target = answer if index % 2 else cell
        target.setdefault("metadata", {})
        if place == "nbgrader":
            target["metadata"]["nbgrader"] = value
        else:
            target["metadata"].setdefault("nbgrader", {})[place] = value
    return notebook


def _nested(depth):
    return json.loads("[" * min(depth, 900) + "]" * min(depth, 900)) if depth <= 900 else None


def apply(mutation, base, root, student):
    """Hand in lesson 01 for ``student`` as ``mutation`` (drawn from ``MUTATIONS``) says."""
    kind, *params = mutation
    notebook = solutions(base)
    if kind in ("value", "nesting"):
        place, index, value = params
        if kind == "nesting" and params[2] > 900:  # deeper than json.dumps goes: written as text
            return hand_in(root, student, ("[" * params[2] + "]" * params[2]).encode())
        return hand_in(root, student, _mutated(notebook, place, index, _nested(value) if kind == "nesting" else value))
    if kind == "size":
        size, index = params
        notebook["cells"][index % len(notebook["cells"])]["source"] = "x" * size
        return hand_in(root, student, notebook)
    if kind == "encoding":
        return hand_in(root, student, _encoded(notebook, params[0]))
    if kind == "file":
        return _file(params[0], root, student, notebook)
    return hand_in(root, params[0], notebook)


def _encoded(notebook, how):
    text = json.dumps(notebook, ensure_ascii=False) + "é"
    return {"utf-16": text.encode("utf-16"), "utf-32": text.encode("utf-32"), "latin-1 bytes": text.encode("latin-1", "replace"),
            "truncated": text.encode()[: len(text) // 2], "bom": b"\xef\xbb\xbf" + text.encode(), "empty": b"",
            "not json": b"\x00\xff" * 100}[how]


def _file(how, root, student, notebook):
    folder = root / "submitted" / student / LESSON
    honest = root / "submitted" / HONEST[0]
    if how == "learner folder link":
        (root / "submitted" / student).symlink_to(honest)
        return folder
    folder.parent.mkdir(parents=True, exist_ok=True)
    if how == "lesson folder link":
        folder.symlink_to(honest / LESSON)
        return folder
    folder.mkdir(exist_ok=True)
    path = folder / f"{LESSON}.ipynb"
    if how.startswith("link") or how == "dangling link":
        target = {"link to an honest learner": honest / LESSON / f"{LESSON}.ipynb", "link to /etc/passwd":
                  Path("/etc/passwd"), "dangling link": folder / "nothing"}[how]
        path.symlink_to(target)
    elif how == "fifo":
        os.mkfifo(path)
    elif how == "folder":
        path.mkdir()
    else:
        hand_in(root, student, notebook)
        if how == "two notebooks":
            hand_in(root, student, notebook, name="copy.ipynb")
        else:
            (folder / "timestamp.txt").write_bytes(b"\xff not a time \x1b[2J")
    return folder


@settings(max_examples=FUZZ_EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.lists(MUTATIONS, min_size=1, max_size=4))
def test_make_grade_finishes_with_every_honest_learner_s_scores_intact(base, tmp_path_factory, mutations):
    root = course_from(base, tmp_path_factory.mktemp("fuzz"))
    students = [f"fuzz-{i}" for i in range(len(mutations))]
    for student, mutation in zip(students, mutations):
        apply(mutation, base, root, student)
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        status = grade_main(["--root", str(root), "--jobs", "2", "--seconds", "5"])
    assert status == 0, out.getvalue()[-3000:]
    assert_honest_full_marks(root)
    graded = {r["student_id"] for r in results(root)}
    assert set(HONEST) <= graded and all((root / "feedback" / ids.folder(csv_value(s)) / "index.html").is_file()
                                         for s in graded)
    assert (root / "grades.csv").is_file() and "\x1b" not in out.getvalue()
    shutil.rmtree(root)


# ---------------------------------------------------------------- the machine, not the learner


def _died_for_the_victim(task):
    if task.student_id == "victim":
        os._exit(9)  # as if the kernel's out-of-memory killer had taken the worker
    return _real_grade_learner(task)


_real_grade_learner = grade_learner


READ_BY_PEOPLE = ("grades_by_exercise.csv", "grades_lms.csv", "feedback", "report")


def read_by_people(root):
    """Every file a teacher or a learner reads, by path: what a failed run must leave as it was."""
    return {str(path.relative_to(root)): path.read_bytes() for name in READ_BY_PEOPLE for path in
            ([root / name] if (root / name).is_file() else sorted((root / name).rglob("*"))) if path.is_file()}


def test_a_worker_that_dies_is_the_machine_s_failure_never_stored_and_graded_next_run(base, tmp_path, monkeypatch):
    root = course_from(base, tmp_path, students=(*HONEST, "victim"))
    monkeypatch.setattr(run, "grade_learner", _died_for_the_victim)
    rows, summary = grade_class(plan_run(root), jobs=2, out=lambda line: None)
    victim = [r for r in rows if r.student_id == "victim" and r.lesson == LESSON]
    assert victim and all(r.status == "error" and "machine failed" in r.note for r in victim)
    assert [m[:2] for m in summary["machine"]] == [("victim", LESSON)] and not (root / "autograded" / "victim").exists()
    assert not summary["written"] and read_by_people(root) == {}  # no zeros for anyone to release
    assert all((root / "autograded" / h / LESSON / "grading.json").is_file() for h in HONEST)  # what was graded is kept
    monkeypatch.setattr(run, "grade_learner", _real_grade_learner)
    rows, summary = grade_class(plan_run(root), jobs=2, out=lambda line: None)
    assert summary["regraded"] == 1 and not summary["machine"] and summary["written"]
    assert all(r.status == "passed" for r in rows if r.student_id == "victim" and r.lesson == LESSON)
    assert_honest_full_marks(root)


_DIED_ONCE = []


def _died_once_for_the_victim(task):
    if task.student_id == "victim" and not _DIED_ONCE:
        _DIED_ONCE.append(1)  # in the forked worker only: the next worker forked from the teacher's process has none
        os._exit(9)
    return _real_grade_learner(task)


def test_a_worker_killed_once_is_not_graded_never_retried_silently_and_a_forced_run_s_results_are_not_reused(
        base, tmp_path, monkeypatch):
    """Issue 52: a worker killed once was tried again silently; and after a FORCE run whose worker died, the next
    run reused the learner's earlier results (their grading.json stayed, same notebook, same grader)."""
    root = course_from(base, tmp_path, students=(*HONEST, "victim"))
    grade_class(plan_run(root), jobs=2, out=lambda line: None)
    monkeypatch.setattr(run, "grade_learner", _died_once_for_the_victim)
    _, summary = grade_class(plan_run(root, choices=Choices(force=True)), jobs=2, out=lambda line: None)
    assert [m[:2] for m in summary["machine"]] == [("victim", LESSON)], "NOT GRADED, not tried again"
    assert not (root / "autograded" / "victim" / LESSON / "grading.json").exists()
    assert list((root / "autograded" / "victim" / LESSON / "history").glob("*/grading.json")), "kept, in history/"
    monkeypatch.setattr(run, "grade_learner", _real_grade_learner)
    _, summary = grade_class(plan_run(root), jobs=2, out=lambda line: None)
    assert summary["regraded"] == 1 and summary["reused"] == 2 and summary["written"]


def test_make_grade_whose_machine_fails_exits_3_and_rewrites_nothing_a_person_reads(base, tmp_path, monkeypatch):
    """A class graded whole, then regraded (FORCE) on a machine whose worker dies on one learner: every output
    keeps the complete run's content, byte for byte, and the command says so and exits 3."""
    from course_grader import grade

    root = course_from(base, tmp_path, students=(*HONEST, "victim"))
    assert run_grader(root).returncode == 0
    before = read_by_people(root)
    assert any(name.startswith("feedback") for name in before) and "grades_lms.csv" in before
    monkeypatch.setattr(run, "grade_learner", _died_for_the_victim)
    assert grade.main(["--root", str(root), "--force"]) == 3
    assert read_by_people(root) == before


def test_a_sandbox_that_cannot_start_is_the_machine_s_failure_never_stored(base, tmp_path, monkeypatch):
    root = course_from(base, tmp_path)
    monkeypatch.setattr(box, "bwrap_command", lambda **_: ["/bin/sh", "-c", "exit 1"])
    rows, summary = grade_class(plan_run(root), jobs=1, out=lambda line: None)
    assert {m[0] for m in summary["machine"]} == set(HONEST)
    assert all(r.status == "error" and "machine failed" in r.note for r in rows if r.lesson == LESSON)
    assert not (root / "autograded").exists() or not list((root / "autograded").rglob("grading.json"))
    assert read_by_people(root) == {}
    monkeypatch.undo()
    grade_class(plan_run(root), jobs=1, out=lambda line: None)
    assert_honest_full_marks(root)


# ---------------------------------------------------------------- Ctrl+C, two graders, no sandbox

LOOPS = "def softmax(x, axis=-1):\n    while True:\n        pass\n"


def test_ctrl_c_leaves_no_process_cgroup_or_folder_and_the_next_run_grades_everything(base, tmp_path):
    root = course_from(base, tmp_path)
    looping = solutions(base)
    next(c for c in looping["cells"] if c["metadata"].get("nbgrader", {}).get("grade_id") == "softmax_answer")[
        "source"] = LOOPS
    hand_in(root, "looping", looping)
    process = subprocess.Popen([sys.executable, "-m", "course_grader.grade", "--root", str(root), "--seconds",
                                "60", "--jobs", "2"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               start_new_session=True)
    sampler = TreeSampler(process.pid, every=0.1)
    try:
        assert any(process.stdout.readline().startswith("grading ") for _ in range(3))  # after the lessons counted
        time.sleep(3)  # the sandboxes are running, the looping answer among them
        os.killpg(process.pid, signal.SIGINT)  # what Ctrl+C in the teacher's terminal sends
        _, stderr = process.communicate(timeout=120)
    finally:
        sampler.stop()
    assert process.returncode == 130 and "interrupted" in stderr, (process.returncode, stderr[-3000:])
    graders, left = leftovers_of(sampler)
    assert graders and not left, left
    assert run_grader(root, "--seconds", "2").returncode == 0
    assert_honest_full_marks(root)


def test_a_second_grader_says_who_holds_the_lock_and_changes_nothing(base, tmp_path):
    root = course_from(base, tmp_path)
    holder = Lock(root)
    try:
        before = sorted(str(p) for p in root.rglob("*"))
        result = run_grader(root, "--release", f"{sys.executable} -c \"open('release/touched', 'w')\"")
    finally:
        holder.release()
    assert result.returncode == 2 and "another `make grade` is running" in result.stderr
    assert f"process {os.getpid()}" in result.stderr and "nothing was changed" in result.stderr
    assert sorted(str(p) for p in root.rglob("*")) == before


def test_without_bubblewrap_the_grader_refuses_and_says_how_to_go_on(base, tmp_path):
    root = course_from(base, tmp_path)
    result = run_grader(root, env=dict(os.environ, PATH=str(BIN)))  # no bwrap on this PATH
    assert result.returncode == 2
    assert "bubblewrap" in result.stderr and "apt-get install bubblewrap" in result.stderr
    assert "UNSAFE=1" in result.stderr and not (root / "grades.csv").exists()


def test_unsafe_grades_without_a_sandbox_and_says_so(base, tmp_path):
    root = course_from(base, tmp_path)
    result = run_grader(root, "--unsafe", "--jobs", "1")
    assert result.returncode == 0, result.stderr
    assert "WITHOUT a sandbox" in result.stdout
    assert_honest_full_marks(root)


def test_a_roster_id_is_kept_as_it_is_in_every_file_one_row_per_learner(base, tmp_path):
    """Issue 30: ``josé`` and ``ada+1@school.edu`` (on the roster) and ``=1+1`` and ``a b`` (folders only) are
    graded under their own ids: one row each in grades.csv and grades_lms.csv (with the roster's name and
    e-mail), their ids in grades_by_exercise.csv; only their folders in autograded/ and feedback/ take the safe
    form (``ids.folder``), which the summary names."""
    students = ("josé", "ada+1@school.edu", "=1+1", "a b")
    root = course_from(base, tmp_path, students=students)
    write_roster(root, students[:2])
    result = run_grader(root, "--lessons", LESSON)
    assert result.returncode == 0, result.stderr
    assert_honest_full_marks(root, honest=("josé", "ada+1@school.edu", "'=1+1", "a b"))
    exported = [r for r in csv.DictReader((root / "grades.csv").read_text().splitlines()) if r["assignment"] == LESSON]
    assert sorted(r["student_id"] for r in exported) == sorted(["josé", "ada+1@school.edu", "'=1+1", "a b"])
    lms = {r["SIS User ID"]: r for r in csv.DictReader((root / "grades_lms.csv").read_text().splitlines())}
    assert sorted(lms) == sorted(["josé", "ada+1@school.edu", "'=1+1", "a b"]), "one row per learner"
    assert lms["josé"]["Email address"] == "josé@school.example" and lms["josé"]["Student"] == "José, Ada"
    assert float(lms["ada+1@school.edu"]["Final Points"]) > 0
    for student in students:
        assert (root / "feedback" / ids.folder(student) / "index.html").is_file()
        assert (root / "autograded" / ids.folder(student) / LESSON / "grading.json").is_file()
    assert f"submitted/'=1+1' is not a safe folder name" in result.stdout and ids.folder("=1+1") in result.stdout


def test_look_alike_ids_are_held_never_graded_and_the_roster_s_learners_keep_their_rows(base, tmp_path):
    """Issue 39, item 3, through grading: with the roster in the gradebook, a hand-in under a look-alike of a
    learner's id (a trailing space) is held, named, never in a CSV; one under another id off the roster is graded
    and said; the learner in the other Unicode form of a roster id is graded as that learner."""
    import unicodedata

    from nbgrader.api import Gradebook

    accented = unicodedata.normalize("NFC", "jos\u00e9")
    root = course_from(base, tmp_path, students=(*HONEST, f"{HONEST[0]} ", "stranger",
                                                 unicodedata.normalize("NFD", accented)))
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}", "encoder-course") as gradebook:
        for student in (*HONEST, accented):
            gradebook.update_or_create_student(student)
    rows, summary = grade_class(plan_run(root), jobs=1, out=lambda line: None)
    ids = {r["student_id"] for r in results(root)}
    assert ids == {*HONEST, accented, "stranger"}, ids
    said = "\n".join(summary["notices"])
    assert f"held, not graded: submitted/'{HONEST[0]} ' looks like the roster's '{HONEST[0]}' (a space at an end)" \
        in said
    assert "submitted/'stranger' is not on the course's roster: graded" in said
    assert f"written in another Unicode form: graded as '{accented}'" in said
    assert all(r["status"] == "passed" for r in results(root) if r["student_id"] == accented and r["lesson"] == LESSON)
