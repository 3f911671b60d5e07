"""What the grader's tests share: the course as `make student` leaves it, the grader's command, a sampler of a
process tree, and what a grader left behind."""

import atexit
import os
import threading
import time
from pathlib import Path


def _stat(pid):
    """``(parent pid, start time)`` of a process, or None if it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return int(fields[1]), int(fields[19])


def in_a_sandbox(command):
    """Is this command line a sandbox's (bubblewrap, scratch.py that becomes it, the runner and its children)?"""
    first = command.split(" ", 1)[0]
    return first.endswith("bwrap") or "import runner; runner.main()" in command or "sandbox/scratch.py" in command


class TreeSampler:
    """Samples, every ``every`` seconds, the process tree under one process: its summed RSS (``peak`` is the
    largest sum seen; ``grader_peak`` the largest of the processes outside the sandboxes: the grader's own, whose
    memory no sandbox bounds), and every process it held (``seen``: pid -> (start time, command line))."""

    def __init__(self, pid, every=0.2):
        self.root, self.every, self.peak, self.seen = pid, every, 0, {}
        self.grader_peak = 0
        self.running = True
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _tree(self):
        parents = {}
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit() and (stat := _stat(entry.name)) is not None:
                parents[int(entry.name)] = stat
        tree, frontier = {self.root}, [self.root]
        while frontier:
            frontier = [pid for pid, (parent, _) in parents.items() if parent in frontier and pid not in tree]
            tree.update(frontier)
        return {pid: parents[pid][1] for pid in tree if pid in parents}

    def _run(self):
        page = os.sysconf("SC_PAGE_SIZE")
        while self.running:
            total = grader = 0
            for pid, start in self._tree().items():
                try:
                    rss = int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * page
                    if pid not in self.seen or self.seen[pid][0] != start:
                        self.seen[pid] = (start, Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode())
                except (OSError, IndexError, ValueError):
                    continue
                total += rss
                grader += 0 if in_a_sandbox(self.seen[pid][1]) else rss
            self.peak, self.grader_peak = max(self.peak, total), max(self.grader_peak, grader)
            time.sleep(self.every)

    def stop(self):
        self.running = False
        self.thread.join()

    def alive(self):
        """The processes seen that are still running (the same pid with the same start time)."""
        return {pid: cmd for pid, (start, cmd) in self.seen.items() if (_stat(pid) or (0, None))[1] == start}


def leftovers_of(sampler):
    """What the graders among the processes ``sampler`` saw left behind: processes still running, scratch
    folders in /tmp, cgroups (each named ``encoder-grader-<pid>-...`` after its grader's process)."""
    found = [f"process {pid}: {cmd}" for pid, cmd in sampler.alive().items()]
    graders = [pid for pid, (_, cmd) in sampler.seen.items() if "course_grader.grade" in cmd]
    for pid in graders:
        found += [str(p) for p in Path("/tmp").glob(f"encoder-grader-{pid}-*")]
        for controller in Path("/sys/fs/cgroup").iterdir() if Path("/sys/fs/cgroup").is_dir() else ():
            if controller.is_dir():
                found += [str(p) for p in controller.rglob(f"encoder-grader-{pid}-*")]
    return graders, found


#: The session's one run of tools.student (per pytest-xdist worker): the folder it wrote, copied for every caller.
_MADE = []


def made_student(folder):
    """``folder`` holding the course's lessons and settings as `make student` leaves them (notebooks/,
    nbgrader_config.py, release/, student/, gradebook.db); returns it. tools.student runs once a session, in a
    folder of its own, and each caller gets a copy of what it wrote, its files' times kept."""
    import shutil
    import subprocess
    import sys
    import tempfile

    from tools.course import ROOT

    if not _MADE:
        first = Path(tempfile.mkdtemp(prefix="encoder-course-student-")) / "course"
        shutil.copytree(ROOT / "notebooks", first / "notebooks",
                        ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
        shutil.copy2(ROOT / "nbgrader_config.py", first / "nbgrader_config.py")
        atexit.register(shutil.rmtree, first.parent, True)
        made = subprocess.run([sys.executable, "-m", "tools.student", "--root", str(first)],
                              capture_output=True, text=True, cwd=ROOT, timeout=600)
        if made.returncode != 0:
            raise RuntimeError(f"tools.student failed:\n{made.stdout}{made.stderr}")
        _MADE.append(first)
    shutil.copytree(_MADE[0], folder, symlinks=True, dirs_exist_ok=True)
    return Path(folder)


def course_after_make_student(tmp_path_factory, name):
    """A copy of the course's lessons and settings in a new folder, as `make student` leaves it (release/,
    gradebook.db); skipped where there is no bubblewrap to grade in, except in CI, where that fails."""
    from conftest import need_bubblewrap

    need_bubblewrap("make grade runs every answer in its sandbox")
    return made_student(tmp_path_factory.mktemp(name))


def run_grader(root, *args, timeout=600):
    """The grader's command, as `make grade` runs it but without make, on the course at ``root`` (five seconds an
    exercise), from the course's folder: its ``CompletedProcess``."""
    import subprocess
    import sys

    from tools.course import ROOT

    return subprocess.run([sys.executable, "-m", "course_grader.grade", "--root", str(root),
                           "--seconds", "5", *args], capture_output=True, text=True, timeout=timeout, cwd=ROOT)


def graded_once(root, *args):
    """A module's course graded once by ``run_grader``, which must succeed: ``(root, its CompletedProcess)``."""
    first = run_grader(root, *args)
    assert first.returncode == 0, first.stdout + first.stderr
    return root, first


def make_measured(target, root, timeout, env=None, **variables):
    """`make <target>` in the course copy ``root`` (setup taken as done) under a ``TreeSampler``:
    ``(CompletedProcess, sampler, seconds)``."""
    import subprocess

    started = time.perf_counter()
    process = subprocess.Popen(["make", "-o", ".venv/.installed", target, *(f"{k}={v}" for k, v in variables.items())],
                               cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    sampler = TreeSampler(process.pid)
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    finally:
        sampler.stop()
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr), sampler, \
        time.perf_counter() - started
