"""`make grade`: every learner's lessons, graded in parallel sandboxes, judged outside them.

    python -m course_grader.grade [--root .] [--jobs N] [--force] [--unsafe] [--release COMMAND]
        [--lessons a,b] [--student id,...] [--lesson name,...]

Takes the course's lock (``.grading.lock``), runs ``--release`` (`make student`'s command, where what the student
versions are made of changed), plans the run (``plan``), grades it (``run``) and writes the class report. What it
reads, writes and keeps is docs/teaching/grading.md's step 3. Its exit status is non-zero only when the grader
itself could not run: 2 when it could not start, 3 when its machine failed on a learner (NOT GRADED: none of the
files a person reads is rewritten, and the next run grades them), 130 when interrupted; ``make grade`` then says
``Error 3`` (or 2, 130) and itself exits 2, as make does for any command that fails.
"""


import argparse
import fcntl
import os
import signal
import subprocess
import sys
import shlex
import time
from pathlib import Path

from . import cluster, sandbox
from . import student_versions
from .course_config import counted_lessons
from .outputs import summary_text
from .plan import Choices, plan_run
from .refused import Refused
from .run import grade_class

LOCK_FILE = ".grading.lock"


def names_list(text):
    """``"a, b"`` as ``["a", "b"]``; None for None or nothing."""
    names = [name.strip() for name in (text or "").split(",") if name.strip()]
    return names or None


class Lock:
    """The course's lock (``.grading.lock``), taken before anything is touched; ``holder`` names who has it."""

    def __init__(self, root):
        self.fd = os.open(Path(root) / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self.holder = os.pread(self.fd, 200, 0).decode(errors="replace").strip() or "another process"
            os.close(self.fd)
            self.fd = None
            return
        self.holder = None
        os.ftruncate(self.fd, 0)
        os.pwrite(self.fd, f"process {os.getpid()}, since {time.strftime('%Y-%m-%d %H:%M:%S')}\n".encode(), 0)

    def release(self):
        if self.fd is not None:
            os.ftruncate(self.fd, 0)
            fcntl.flock(self.fd, fcntl.LOCK_UN)
            os.close(self.fd)
            self.fd = None


def _arguments(argv):
    parser = argparse.ArgumentParser(prog="make grade", description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path.cwd(), help="the course folder (default: here)")
    parser.add_argument("--jobs", type=int, default=None, help="learners graded at once (default: one per core)")
    parser.add_argument("--force", action="store_true", help="grade every submission again")
    parser.add_argument("--unsafe", action="store_true",
                        help="grade without a sandbox: the answers run with your account's rights")
    parser.add_argument("--seconds", type=float, default=sandbox.Limits.seconds, help="time limit per exercise")
    parser.add_argument("--memory-mib", type=int, default=sandbox.Limits.memory_bytes // 2**20,
                        help="memory limit per exercise, MiB")
    parser.add_argument("--release", default=None,
                        help="a command that writes release/ (make student's), run once the lock is held")
    parser.add_argument("--group-readable", action="store_true",
                        help="make what the grader writes readable by your group too (default: by you only)")
    _choice_arguments(parser)
    args = parser.parse_args(argv)
    if args.jobs is not None and args.jobs < 1:
        parser.error(f"--jobs must be at least 1, got {args.jobs}")
    if args.seconds <= 0 or args.memory_mib < 64:
        parser.error(f"--seconds must be above 0 and --memory-mib at least 64, got {args.seconds} and {args.memory_mib}")
    return args


def _choice_arguments(parser):
    """What the teacher chooses of a run: the lessons set, the learners and lessons graded now, Canvas's row."""
    parser.add_argument("--lessons", type=names_list, default=None,
                        help="the lessons the class is set, separated by commas: the only ones graded and counted "
                             "(default: c.EncoderCourse.lessons, else the lessons released through the exchange)")
    parser.add_argument("--student", type=names_list, default=None,
                        help="grade just these learners (ids separated by commas); the others keep their stored "
                             "results")
    parser.add_argument("--lesson", type=names_list, default=None,
                        help="grade just these lessons (separated by commas); the others keep their stored results")
    parser.add_argument("--points-possible", action="store_true",
                        help="grades_lms.csv's second row: each lesson's points possible, as Canvas's export has it")


def _cannot_start(root, args):
    """Why grading cannot start (a sentence), or None."""
    if not (root / "gradebook.db").is_file():
        return f"{root / 'gradebook.db'} is missing: run `make student` first"
    if not (root / "submitted").is_dir() or not any((root / "submitted").iterdir()):
        return ("nothing to grade: put submissions in submitted/<student_id>/<lesson>/<lesson>.ipynb "
                "(nbgrader collect does)")
    problem = None if args.unsafe or args.scheduler else sandbox.sandbox_problem()  # a cluster's hosts sandbox
    if problem:
        return (f"make grade runs learners' code in a sandbox, and cannot make one here: {problem}.\n"
                f"To grade anyway, with the learners' code running under your account and able to read and "
                f"change your files: make grade UNSAFE=1")
    return None


def _release(root, command):
    """Run make student's ``command`` where what the student versions are made of changed (``student_versions``);
    an exit status when it failed, else None."""
    if student_versions.up_to_date(root, command):
        print("student versions: as make student last wrote them (nothing they are made of changed)")
        return None
    made = subprocess.run(shlex.split(command), cwd=root)
    if made.returncode != 0:
        print(f"{command} failed (exit status {made.returncode}): nothing graded", file=sys.stderr)
        return 2
    student_versions.record_inputs(root, command)
    return None


def _counted_lessons(root, given):
    """The lessons counted (None: all), said with why and how to change it."""
    lessons, why = counted_lessons(root, given)
    print(f"lessons counted: {', '.join(lessons) if lessons else 'all'}: {why}. To count others: make grade "
          f"LESSONS=01_attention,02_multi_head_attention, or c.EncoderCourse.lessons in nbgrader_config.py")
    return lessons


def _grade_locked(root, args):
    failed = _release(root, args.release) if args.release else None
    if failed:
        return failed
    try:
        args.scheduler = cluster.address(root)  # DASK_SCHEDULER, c.EncoderCourse.scheduler; None: this machine
    except Refused as refused:
        print(f"make grade: {refused}: nothing graded", file=sys.stderr)
        return 2
    problem = _cannot_start(root, args)
    if problem:
        print(problem, file=sys.stderr)
        return 2
    limits = sandbox.Limits(seconds=args.seconds, memory_bytes=args.memory_mib * 2**20)
    try:
        choices = Choices(_counted_lessons(root, args.lessons), args.student, args.lesson, args.force,
                          points_possible=args.points_possible)
        results, summary = grade_class(plan_run(root, limits=limits, unsafe=args.unsafe, choices=choices),
                                       jobs=args.jobs, scheduler=args.scheduler)
    except (Refused, ValueError) as refused:  # ValueError: a setting of nbgrader_config.py read wrong
        print(f"make grade: {refused}: nothing graded", file=sys.stderr)
        return 2
    print(summary_text(results, summary))
    if not summary["written"]:
        return _machine_failed(summary)
    write_class_report(root, summary["set_lessons"])
    _warn_unlinked(root)
    return 0


def _warn_unlinked(root):
    """Said last, loudly, where the feedback pages can link no lesson (``lesson_links.unlinked_warning``)."""
    from .lesson_links import unlinked_warning

    try:
        warning = unlinked_warning(root)
    except ValueError:  # a setting that is not an address: make grade said so while writing the pages
        return
    if warning:
        print(warning, file=sys.stderr)


def _machine_failed(summary):
    """What `make grade` says when its machine failed on a learner, and its exit status: 3."""
    print(f"make grade: the grader's machine failed on {len(summary['machine'])} learner's lesson(s) (above): no "
          f"file a person reads was rewritten (grades_by_exercise.csv, grades_lms.csv, the feedback pages and the "
          f"class report are as the last complete run left them). What was graded is kept; `make grade` again "
          f"grades only those.", file=sys.stderr)
    return 3


def write_class_report(root, lessons=None):
    """``report/index.html``, what the class got wrong (``class_report``), from what was just written; a report
    that fails costs no grade (``make report`` writes it again)."""
    from . import class_report  # matplotlib and the report's own parts, only once the grades are written

    started = time.perf_counter()
    try:
        written = class_report.build(root, lessons=lessons)
    except Exception as exc:  # the grades are written: say so, and how to try again
        print(f"the class report could not be written ({type(exc).__name__}: {exc}); the grades are; "
              f"`make report` writes it from them", file=sys.stderr)
        return None
    print(f"what the class got wrong and what to re-teach: {written} ({time.perf_counter() - started:.1f} s)")
    return written


def _interrupted(*_):
    raise KeyboardInterrupt


def main(argv=None):
    args = _arguments(argv)
    root = args.root.resolve()
    if not root.is_dir():
        print(f"{root} is not a folder: --root must be the course folder", file=sys.stderr)
        return 2
    lock = Lock(root)
    if lock.holder:
        print(f"another `make grade` is running in this course ({lock.holder}); wait for it to finish: "
              f"nothing was changed", file=sys.stderr)
        return 2
    mask = os.umask(0o027 if args.group_readable else 0o077)
    terminate = signal.signal(signal.SIGTERM, _interrupted)
    try:
        return _grade_locked(root, args)
    except KeyboardInterrupt:
        print("make grade was interrupted: what it graded so far is kept, the rest is graded on the next run; "
              "its sandboxes, workers and scratch folders are gone", file=sys.stderr)
        return 130
    finally:
        signal.signal(signal.SIGTERM, terminate)
        os.umask(mask)
        lock.release()


if __name__ == "__main__":
    sys.exit(main())
