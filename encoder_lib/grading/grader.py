"""`make grade`: every learner's lessons, graded in parallel sandboxes, judged outside them.

    python -m encoder_lib.grading.grader [--root .] [--jobs N] [--force] [--unsafe]

Reads ``submitted/<student_id>/<lesson>/<lesson>.ipynb`` (the layout
``nbgrader collect`` writes) against ``release/<lesson>/`` (what ``make
student`` wrote) and, for every exercise, runs its answer cell alone in a
sandbox (``sandbox``) on the exercise's visible cases and on hidden ones
drawn from the course's secret seed (``.grading-secret`` beside
``gradebook.db``, created on first use, never released). The results come
back as plain arrays and are compared here, where no learner code runs.

A submission is graded again only when its content changed (a SHA-256 of the
notebook) or the grader did; ``--force`` grades everything again. Learners
are graded in parallel, one worker per core unless ``--jobs`` says.

Writes: the scores into ``gradebook.db`` and ``grades.csv`` (as ``nbgrader
export`` writes it), ``grades_by_exercise.csv``, one feedback page per learner
(``feedback/<student_id>/index.html``), and, per graded submission,
``autograded/<student_id>/<lesson>/`` (the notebook and ``grading.json``).
The exit status is non-zero only when the grader itself could not run.
"""

import argparse
import fcntl
import hashlib
import json
import multiprocessing
import os
import secrets
import shutil
import sys
import time
import warnings
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from . import report, sandbox, wire
from .compare import Raised, allowed_names, build_cases, close, describe_difference, hidden_rngs, likely_mistake
from .exercises import EXERCISES
from .submissions import NOTEBOOK, ReleasedLesson, as_released, read_submission

SECRET_FILE = ".grading-secret"
STATUSES = ("passed", "failed", "missing", "error", "timeout", "memory", "tampered")


@dataclass
class Result:
    """One row of grades_by_exercise.csv."""

    student_id: str
    lesson: str
    exercise: str
    points: float
    max_points: float
    status: str
    note: str = ""


# ---------------------------------------------------------------- the course


def course_secret(root):
    """The course's secret seed (an int), created beside gradebook.db on first use."""
    path = Path(root) / SECRET_FILE
    if not path.exists():
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(secrets.token_hex(32) + "\n")
    return int(path.read_text().strip(), 16)


def lessons_with_exercises():
    """{lesson: [exercise names in course order]}."""
    lessons = {}
    for name, exercise in EXERCISES.items():
        lessons.setdefault(exercise.lesson, []).append(name)
    return lessons


def grader_version(secret, limits):
    """A digest of everything a result depends on besides the submission: the library's code, the secret, the limits."""
    package = Path(__file__).resolve().parent.parent
    digest = hashlib.sha256()
    for path in sorted(package.rglob("*.py")):
        if "widgets" not in path.parts:
            digest.update(path.relative_to(package).as_posix().encode() + b"\0" + path.read_bytes())
    digest.update(hashlib.sha256(str(secret).encode()).digest())
    digest.update(json.dumps(asdict(limits), sort_keys=True).encode())
    return digest.hexdigest()[:16]


def find_notebook(folder, lesson):
    """``<lesson>.ipynb`` in a submission folder, or the only notebook there; None if there is none."""
    expected = folder / f"{lesson}.ipynb"
    if expected.is_file():
        return expected
    others = sorted(p for p in folder.glob("*.ipynb") if p.is_file())
    return others[0] if len(others) == 1 else None


# ---------------------------------------------------------------- one exercise


NOT_ANSWERED = "not answered: the answer cell still raises NotImplementedError"

_CASES = {}  # exercise -> [Case]: built once per process, the same for the whole class


def cases_for(name, secret):
    if name not in _CASES:
        exercise = EXERCISES[name]
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            _CASES[name] = build_cases(exercise, hidden_rngs(secret, name))
    return _CASES[name]


def _erf(x):
    """SciPy's erf, which every answer cell may use (the notebooks import it): on numbers only."""
    from scipy.special import erf

    x = np.asarray(x)
    if x.dtype.kind not in "biuf":
        raise TypeError(f"erf takes numbers, got an array of {x.dtype}")
    return erf(x)


def serve(message, allowed):
    """Compute a library function the answer called through its stand-in, if its exercise may call it."""
    import encoder_lib

    name, args, kwargs = message.get("name"), message.get("args"), message.get("kwargs")
    if name not in allowed or not isinstance(args, list) or not isinstance(kwargs, dict):
        return {"kind": "error", "type": "TypeError", "message": f"el.{name} is not available to this exercise"}
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            value = _erf(*args, **kwargs) if name == "erf" else getattr(encoder_lib, name)(*args, **kwargs)
        wire.encode(value)
    except (ValueError, TypeError, IndexError, KeyError) as exc:
        return {"kind": "error", "type": type(exc).__name__, "message": str(exc)[:2000]}
    except Exception as exc:  # the library refused in another way: the answer's call was wrong
        return {"kind": "error", "type": "RuntimeError", "message": f"{type(exc).__name__}: {exc}"[:2000]}
    return {"kind": "value", "value": value}


def judge(exercise, cases, events, ending, limits):
    """``(status, points, note)`` from what the sandbox reported."""
    if ending.get("status") == "timeout":
        done = {e.get("case") for e in events if e.get("kind") in ("result", "raised")}
        pending = next((c.description for i, c in enumerate(cases) if i not in done), None)
        return "timeout", 0, (f"stopped after {limits.seconds:g} s, the time limit of one exercise (an endless "
                              f"loop?)" + (f", while checking: {pending}" if pending else ""))
    failed = next((e for e in events if e.get("kind") == "cell_failed"), None)
    if failed:
        if failed.get("memory"):
            return "memory", 0, f"the answer cell ran out of memory (the limit is {limits.memory_bytes // 2**20} MiB)"
        return "error", 0, f"the answer cell itself failed: {failed.get('error')}"
    by_case = {e.get("case"): e for e in events if e.get("kind") in ("result", "raised")}
    first_problem, mistake = None, None
    for i, case in enumerate(cases):
        event = by_case.get(i)
        if event is None:
            detail = ending.get("detail") or "it stopped"
            return "error", 0, f"the answer's process ended early ({detail}), while checking: {case.description}"
        if event["kind"] == "raised":
            if event.get("not_done"):
                return "failed", 0, NOT_ANSWERED
            if event.get("memory"):
                return "memory", 0, (f"{case.description}: it ran out of memory "
                                     f"(the limit is {limits.memory_bytes // 2**20} MiB)")
            problem = f"{case.description}: it raised {event.get('error')}"
            mistake = mistake or likely_mistake(Raised.from_text(event.get("error", "")), case)
        else:
            got = event.get("value")
            if isinstance(got, wire.Unsupported):
                problem = f"{case.description}: it returned {got!r}, not an array of numbers"
            elif close(got, case.expected):
                continue
            else:
                problem = f"{case.description}: {describe_difference(got, case.expected)}"
                mistake = mistake or likely_mistake(got, case)
        first_problem = first_problem or problem
    if first_problem is None:
        return "passed", exercise.points, ""
    return "failed", 0, first_problem + (f". Likely mistake: {mistake}" if mistake else "")


def grade_answer(box, name, source, secret, limits):
    """Run one answer in ``box`` (a started Sandbox) and judge it: ``(status, points, note)``."""
    exercise = EXERCISES[name]
    cases = cases_for(name, secret)
    allowed = allowed_names(exercise, cases) | {"erf"}
    events, ending = box.run(name, source, [(c.args, c.kwargs) for c in cases], exercise.uses,
                             exercise.may_call, limits, lambda message: serve(message, allowed))
    return judge(exercise, cases, events, ending, limits)


# ---------------------------------------------------------------- one learner


@dataclass(frozen=True)
class Task:
    """One learner's submissions to grade: ``[(lesson, notebook path or None)]``."""

    student_id: str
    lessons: tuple
    root: str
    secret: int
    limits: sandbox.Limits
    unsafe: bool


def grade_learner(task):
    """Grade one learner's lessons (in one sandbox, restarted if an answer breaks it); ``{lesson: [Result]}``."""
    from threadpoolctl import threadpool_limits

    threadpool_limits(1, user_api="blas")  # the stand-ins' computations are small; workers share the cores
    root = Path(task.root)
    lessons = lessons_with_exercises()
    box = None
    graded = {}
    try:
        for lesson, path in task.lessons:
            names = lessons[lesson]
            released = ReleasedLesson.from_text((root / "release" / lesson / f"{lesson}.ipynb").read_text())
            reading = read_submission(Path(path).read_text(errors="replace"), released, names)
            results = []
            for name in names:
                points = EXERCISES[name].points
                source = reading.answers.get(name)
                if reading.unreadable:
                    status, score, note = "error", 0, reading.unreadable
                elif source is None:
                    status, score, note = "failed", 0, "no answer cell"
                elif as_released(source, released, name):
                    # the stub as released raises NotImplementedError: known without a sandbox, or the cases
                    # (lesson 08's hold 14 MB of a model's weights) crossing into it for nothing
                    status, score, note = "failed", 0, NOT_ANSWERED
                else:
                    try:
                        if box is None:
                            box = sandbox.Sandbox(unsafe=task.unsafe)
                        status, score, note = grade_answer(box, name, source, task.secret, task.limits)
                    except sandbox.SandboxDied as exc:
                        box = None
                        status, score, note = "error", 0, f"the sandbox ended while running this answer ({exc})"
                tampered = reading.tampering.get(name)
                if tampered:
                    note = "; ".join(tampered) + (f". Graded from the answer cell alone: {status}"
                                                   + (f" ({note})" if note else ""))
                    status = "tampered"
                results.append(Result(task.student_id, lesson, name, float(score), float(points), status, note))
            if reading.tampering.get(NOTEBOOK):
                results.append(Result(task.student_id, lesson, NOTEBOOK, 0.0, 0.0, "tampered",
                                      "; ".join(reading.tampering[NOTEBOOK])))
            graded[lesson] = results
    finally:
        if box is not None:
            box.close()
    return task.student_id, graded


# ---------------------------------------------------------------- the class


def missing_results(student_id, lesson):
    return [Result(student_id, lesson, name, 0.0, float(EXERCISES[name].points), "missing", "not handed in")
            for name in lessons_with_exercises()[lesson]]


def cached(folder, digest, version):
    """The results stored for this exact submission by this exact grader, or None."""
    try:
        stored = json.loads((folder / "grading.json").read_text())
    except (OSError, ValueError):
        return None
    if stored.get("submission_sha256") != digest or stored.get("grader") != version:
        return None
    return [Result(**row) for row in stored["results"]]


def store(folder, notebook, digest, version, results):
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(notebook, folder / notebook.name)
    payload = {"submission_sha256": digest, "grader": version, "results": [asdict(r) for r in results]}
    (folder / "grading.json").write_text(json.dumps(payload, indent=1, sort_keys=True) + "\n")


def grade_class(root, jobs=None, force=False, unsafe=False, limits=sandbox.Limits(), out=print):
    """Grade every submission in ``root``/submitted; returns ``(results, summary dict)``."""
    root = Path(root).resolve()
    started = time.perf_counter()
    secret = course_secret(root)
    version = grader_version(secret, limits)
    lessons = lessons_with_exercises()
    for lesson in lessons:
        if not (root / "release" / lesson / f"{lesson}.ipynb").is_file():
            raise SystemExit(f"release/{lesson}/{lesson}.ipynb is missing: run `make student` first")
    submitted = root / "submitted"
    students = sorted(p.name for p in submitted.iterdir() if p.is_dir() and not p.name.startswith(".")) \
        if submitted.is_dir() else []
    students = sorted(set(students) | set(report.gradebook_students(root)))

    results, tasks, reused, regraded = {}, [], 0, 0
    digests = {}
    for student in students:
        to_grade = []
        for lesson in lessons:
            folder = submitted / student / lesson
            notebook = find_notebook(folder, lesson) if folder.is_dir() else None
            if notebook is None:
                results[student, lesson] = missing_results(student, lesson)
                continue
            digest = hashlib.sha256(notebook.read_bytes()).hexdigest()
            digests[student, lesson] = (notebook, digest)
            previous = None if force else cached(root / "autograded" / student / lesson, digest, version)
            if previous is not None:
                results[student, lesson] = previous
                reused += 1
            else:
                to_grade.append((lesson, str(notebook)))
        if to_grade:
            tasks.append(Task(student, tuple(to_grade), str(root), secret, limits, unsafe))

    for name in EXERCISES:  # built once here; the workers inherit them
        cases_for(name, secret)
    jobs = max(1, min(jobs or os.cpu_count() or 1, len(tasks))) if tasks else 0
    if tasks:
        out(f"grading {sum(len(t.lessons) for t in tasks)} submissions of {len(tasks)} learners "
            f"with {jobs} worker{'s' * (jobs > 1)}" + (" WITHOUT a sandbox (--unsafe)" if unsafe else ""))
    with ProcessPoolExecutor(max_workers=max(jobs, 1), mp_context=multiprocessing.get_context("fork")) as pool:
        graded_learners = pool.map(grade_learner, tasks, chunksize=1)  # the workers start here, before the gradebook opens
        gradebook = report.GradebookWriter(root, students)
        try:
            for (student, lesson), rows in sorted(results.items()):
                if (student, lesson) in digests:  # unchanged since the last run: make sure the gradebook has it
                    gradebook.record(student, lesson, digests[student, lesson][0], rows)
            done, step = 0, max(1, len(tasks) // 10)
            for student, graded in graded_learners:  # recorded while the other learners are graded
                for lesson, rows in graded.items():
                    notebook, digest = digests[student, lesson]
                    store(root / "autograded" / student / lesson, notebook, digest, version, rows)
                    gradebook.record(student, lesson, notebook, rows)
                    results[student, lesson] = rows
                    regraded += 1
                done += 1
                if done % step == 0 or done == len(tasks):
                    out(f"  {done} of {len(tasks)} learners graded ({time.perf_counter() - started:.0f} s)")
        finally:
            gradebook.close()

    ordered = [r for student in students for lesson in lessons for r in results[student, lesson]]
    report.write_csvs(root, ordered)
    report.write_feedback(root, ordered)
    summary = {"learners": len(students), "lessons": len(lessons), "handed_in": len(digests),
               "missing": len(students) * len(lessons) - len(digests), "regraded": regraded, "reused": reused,
               "seconds": time.perf_counter() - started, "jobs": jobs, "unsafe": unsafe}
    return ordered, summary


def main(argv=None):
    parser = argparse.ArgumentParser(prog="make grade", description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path.cwd(), help="the course folder (default: here)")
    parser.add_argument("--jobs", type=int, default=None, help="learners graded at once (default: one per core)")
    parser.add_argument("--force", action="store_true", help="grade every submission again")
    parser.add_argument("--unsafe", action="store_true",
                        help="grade without a sandbox: the answers run with your account's rights")
    parser.add_argument("--seconds", type=float, default=sandbox.Limits.seconds, help="time limit per exercise")
    parser.add_argument("--memory-mib", type=int, default=sandbox.Limits.memory_bytes // 2**20,
                        help="memory limit per exercise, MiB")
    args = parser.parse_args(argv)
    root = args.root.resolve()
    if args.jobs is not None and args.jobs < 1:
        parser.error(f"--jobs must be at least 1, got {args.jobs}")
    if not (root / "gradebook.db").is_file():
        print(f"{root / 'gradebook.db'} is missing: run `make student` first", file=sys.stderr)
        return 2
    if not (root / "submitted").is_dir() or not any((root / "submitted").iterdir()):
        print("nothing to grade: put submissions in submitted/<student_id>/<lesson>/<lesson>.ipynb "
              "(nbgrader collect does)", file=sys.stderr)
        return 2
    if not args.unsafe:
        problem = sandbox.sandbox_problem()
        if problem:
            print(f"make grade runs learners' code in a sandbox, and cannot make one here: {problem}.\n"
                  f"To grade anyway, with the learners' code running under your account and able to read and "
                  f"change your files: make grade UNSAFE=1", file=sys.stderr)
            return 2
    lock = open(root / ".grading.lock", "w")
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        print("another `make grade` is running in this course; wait for it to finish", file=sys.stderr)
        return 2
    try:
        limits = sandbox.Limits(seconds=args.seconds, memory_bytes=args.memory_mib * 2**20)
        results, summary = grade_class(root, args.jobs, args.force, args.unsafe, limits)
        print(report.summary_text(results, summary))
    finally:
        fcntl.flock(lock, fcntl.LOCK_UN)
        lock.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
