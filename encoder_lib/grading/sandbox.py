"""A sandbox for one learner's answers: bubblewrap around ``runner.py``, and the grader's end of the channel.

The sandbox (``bwrap``, from the bubblewrap package) gets

- a read-only view of the system's programs and libraries, of the Python
  installation and of its site-packages, and of nothing else: not the course
  folder, not the submissions, not the gradebook, not anyone's home folder;
  ``encoder_lib`` itself is hidden wherever it is installed;
- its own scratch ``/tmp`` of ``SCRATCH_BYTES``, its own process tree with
  the runner as its pid 1 (every process in it ends with it), no network
  (its own empty network namespace), no capabilities, and an empty
  environment but for one BLAS thread: bubblewrap itself is started with
  none, so nothing of the teacher's environment is anywhere inside;
- where the machine has them (cgroup v1's ``memory`` and ``pids``
  controllers, or cgroup v2 with both delegated), a cgroup of its own that
  bounds the memory and the number of tasks of the whole sandbox (``Cgroups``);
  elsewhere the limits per process below hold, and where the teacher is
  root and there are no cgroups the answers may start no threads (the
  kernel does not count root's tasks; see the README).

Inside, ``runner.py`` runs each exercise in a child process of its own with
a memory limit, a time limit, a system-call allow-list and no way to start
processes. The grader process outside (this module) sends the answer cell,
then the cases' inputs, computes the library functions the answer calls
(``serve``), and receives what the answer returned. Right answers never
cross into the sandbox. Every read and write on the channel has a deadline.

Everything a grading run makes here (the folder the runner is copied into,
the unsafe mode's scratch folders, the cgroups) belongs to one ``Session``,
which the grader's main process opens and closes: ``close`` kills what is
left and removes it all, whatever happened to the workers; a session left
by a grader that was killed outright is removed by the next one.

Without bubblewrap, ``Sandbox(unsafe=True)`` runs the same runner as a plain
process: the limits per exercise still apply, but the answer can read and
write whatever the teacher's account can. ``make grade`` refuses that
unless asked (``UNSAFE=1``).
"""

import atexit
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from . import syscalls, wire

SCRATCH_BYTES = 64 * 2**20
#: How long an ending sandbox is given to go by itself (its runner exits at once; bwrap reaps it and follows).
CLOSE_SECONDS = 2.0
#: How long a sandbox may take to start on a loaded machine before the grader gives up (and tries again later).
START_SECONDS = 60.0
#: How long a sandbox may stay silent beyond an exercise's own time limit before it is killed.
GRACE_SECONDS = 20.0
#: Memory a sandbox may hold beyond one exercise's limit: the runner, its copies of the messages, the scratch /tmp.
SANDBOX_EXTRA_BYTES = 512 * 2**20
#: Tasks (processes and threads) a whole sandbox may hold, where cgroups count them.
SANDBOX_TASKS = 272
PREFIX = "encoder-grader-"
FILES = ("runner.py", "wire.py", "numeric.py")
INSTALL_HINT = ("install bubblewrap: `sudo apt-get install bubblewrap` (Debian, Ubuntu), "
                "`sudo dnf install bubblewrap` (Fedora), `sudo pacman -S bubblewrap` (Arch)")


@dataclass(frozen=True)
class Limits:
    """What one exercise's run may take: wall-clock seconds (for its visible cases; see ``grader.time_allowed``)
    and address space."""

    seconds: float = 10.0
    memory_bytes: int = 2**30


class SandboxUnavailable(RuntimeError):
    """bubblewrap is missing or cannot make a sandbox on this machine."""


class SandboxFailed(RuntimeError):
    """The machine could not start or keep a sandbox: the grader's failure, never the learner's."""


class SandboxDied(RuntimeError):
    """The sandbox stopped answering or broke its protocol while an answer ran; it has been killed."""


# ---------------------------------------------------------------- cgroups


def _read(path):
    try:
        return path.read_text()
    except OSError:
        return ""


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _children(pid):
    """The processes whose parent is ``pid`` (from /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if int(_read(entry / "stat").rsplit(")", 1)[1].split()[1]) == pid:
                    found.append(int(entry.name))
            except (IndexError, ValueError):
                pass
    return found


def _own_pid_of(name):
    """The grader's pid in a name this module made (``encoder-grader-<pid>-...``), or None."""
    rest = name[len(PREFIX):] if name.startswith(PREFIX) else ""
    digits = rest.split("-", 1)[0]
    return int(digits) if digits.isdigit() else None


def _cgroup_mounts():
    """{controller or "cgroup2": mount point} from /proc/self/mountinfo."""
    mounts = {}
    for line in _read(Path("/proc/self/mountinfo")).splitlines():
        left, _, right = line.partition(" - ")
        fields, kind = left.split(), right.split()
        if len(fields) < 5 or not kind:
            continue
        if kind[0] == "cgroup2":
            mounts.setdefault("cgroup2", fields[4])
        elif kind[0] == "cgroup" and len(kind) >= 3:
            for option in kind[2].split(","):
                if option in ("memory", "pids"):
                    mounts.setdefault(option, fields[4])
    return mounts


def _own_cgroups():
    """{controller or "cgroup2": this process's cgroup path} from /proc/self/cgroup."""
    own = {}
    for line in _read(Path("/proc/self/cgroup")).splitlines():
        _, controllers, path = line.split(":", 2)
        for controller in controllers.split(",") if controllers else ["cgroup2"]:
            own[controller] = path
    return own


def _kill_and_remove(folder, attempts=12):
    """Kill every process of a cgroup, then remove it (a cgroup goes once its last task has exited: tried again
    after 1, 2, 4 ... ms, two seconds in all)."""
    for attempt in range(attempts):
        try:
            pids = [int(p) for p in (folder / "cgroup.procs").read_text().split()]
        except (OSError, ValueError):
            pids = []
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        for child in sorted((p for p in folder.iterdir() if p.is_dir()), reverse=True) if folder.is_dir() else []:
            _kill_and_remove(child, attempts)
        try:
            folder.rmdir()
            return True
        except FileNotFoundError:
            return True
        except OSError:
            time.sleep(0.001 * 2**attempt)
    return False


class Cgroups:
    """One parent cgroup per grading run under the grader's own (in each controller's hierarchy), and in it one
    cgroup per sandbox that bounds the memory and the tasks of everything in that sandbox.

    ``Cgroups.find(name)`` returns None where the machine has no usable
    controllers (no cgroup v1 ``memory`` and ``pids`` we may write, no cgroup v2
    with both delegated): the grader then relies on the limits per process.
    """

    def __init__(self, parents, version):
        self.parents, self.version, self.count = parents, version, 0

    @classmethod
    def find(cls, name):
        mounts, own = _cgroup_mounts(), _own_cgroups()
        for version, controllers in ((1, ("memory", "pids")), (2, ("cgroup2",))):
            if not all(c in mounts and c in own for c in controllers):
                continue
            parents = [Path(mounts[c] + own[c].rstrip("/")) / name for c in controllers]
            if version == 2 and not {"memory", "pids"} <= set(_read(parents[0].parent / "cgroup.subtree_control").split()):
                continue
            made = cls(parents, version)
            if made._make_parents():
                return made
        return None

    def _make_parents(self):
        made = []
        try:
            for parent in self.parents:
                parent.mkdir()
                made.append(parent)
            if self.version == 2:
                (self.parents[0] / "cgroup.subtree_control").write_text("+memory +pids")
            return True
        except OSError:
            for parent in made:
                _kill_and_remove(parent)
            return False

    def box(self, memory_bytes, tasks):
        """A new cgroup with these bounds: the files a process writes its pid into to join it; None if it fails."""
        self.count += 1
        folders = [parent / f"box-{os.getpid()}-{self.count}" for parent in self.parents]
        settings = ({"memory.max": memory_bytes, "memory.swap.max": 0, "pids.max": tasks} if self.version == 2 else
                    {"memory.limit_in_bytes": memory_bytes, "memory.memsw.limit_in_bytes": memory_bytes,
                     "pids.max": tasks})
        try:
            for folder in folders:
                folder.mkdir()
                for setting, value in settings.items():
                    if (folder / setting).exists():
                        (folder / setting).write_text(str(value))
        except OSError:
            for folder in folders:
                _kill_and_remove(folder)
            return None
        return [folder / "cgroup.procs" for folder in folders]

    @staticmethod
    def remove_box(procs):
        for path in procs or ():
            _kill_and_remove(path.parent)

    def remove_all(self):
        for parent in self.parents:
            if parent.exists():
                _kill_and_remove(parent)


# ---------------------------------------------------------------- a grading run's session


class Session:
    """What one grading run makes outside the sandboxes: a folder with the runner's files (readable by the
    sandbox), the unsafe mode's scratch folders in it, and the cgroups. ``close`` removes them all."""

    def __init__(self):
        self.owner = os.getpid()
        self.folder = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{self.owner}-"))  # encoder-grader-<pid>-<random>
        for name in FILES:
            shutil.copyfile(Path(__file__).with_name(name), self.folder / name)
            (self.folder / name).chmod(0o644)
        self.folder.chmod(0o755)
        self.cgroups = Cgroups.find(self.folder.name)
        self.count = 0

    def scratch(self):
        """A fresh folder for one unsafe sandbox's answers."""
        self.count += 1
        folder = self.folder / f"unsafe-{os.getpid()}-{self.count}"
        folder.mkdir(mode=0o700)
        return folder

    def close(self):
        if os.getpid() != self.owner:
            return  # a worker's copy: the grader's main process cleans up
        if self.cgroups is not None:
            self.cgroups.remove_all()
        shutil.rmtree(self.folder, ignore_errors=True)


_session = None


def open_session():
    """The grading run's ``Session`` (made once per process tree; workers forked after it share it)."""
    global _session
    if _session is None or not _session.folder.is_dir():
        remove_stale()
        _session = Session()
        atexit.register(_session.close)
    return _session


def close_session():
    global _session
    if _session is not None:
        _session.close()
        _session = None


def remove_stale():
    """Remove the folders and cgroups of grading runs whose process is gone (killed before they could)."""
    for folder in Path(tempfile.gettempdir()).glob(f"{PREFIX}*"):
        pid = _own_pid_of(folder.name)
        if pid is not None and not _alive(pid) and folder.is_dir() and not folder.is_symlink():
            shutil.rmtree(folder, ignore_errors=True)
    mounts, own = _cgroup_mounts(), _own_cgroups()
    for controller, mount in mounts.items():
        base = Path(mount + own.get(controller, "/").rstrip("/"))
        for folder in base.glob(f"{PREFIX}*") if base.is_dir() else ():
            pid = _own_pid_of(folder.name)
            if pid is not None and not _alive(pid):
                _kill_and_remove(folder)


# ---------------------------------------------------------------- the command


def _library_locations():
    """Where ``encoder_lib`` lives on disk (to hide it): its package folder, wherever it was installed from."""
    import encoder_lib

    return [Path(encoder_lib.__file__).resolve().parent]


def sandbox_python():
    """This Python, by a path that holds inside the sandbox: through its environment's real folder
    (a venv reached through a symbolic link must still find its pyvenv.cfg)."""
    executable, prefix = Path(sys.executable), Path(sys.prefix)
    if executable.is_relative_to(prefix):
        return str(prefix.resolve() / executable.relative_to(prefix))
    return str(executable.resolve())


SANDBOX_ENV = {"PATH": "/usr/bin:/bin", "HOME": "/tmp", "LANG": "C.UTF-8", "OPENBLAS_NUM_THREADS": "1",
               "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "PYTHONDONTWRITEBYTECODE": "1", "PYTHONHASHSEED": "0"}


def bwrap_command(python=None, runner=None):
    """The bubblewrap command that runs ``runner.py`` with ``python`` (this one) as the sandbox's pid 1."""
    python = python or sandbox_python()
    runner = runner or open_session().folder
    command = [shutil.which("bwrap") or "bwrap", "--unshare-all", "--unshare-user", "--uid", "65534", "--gid",
               "65534", "--die-with-parent", "--new-session", "--as-pid-1", "--clearenv"]
    if os.geteuid() == 0:
        command += ["--cap-drop", "ALL"]
    for key, value in SANDBOX_ENV.items():
        command += ["--setenv", key, value]
    # the scratch folder first: the Python below may live under /tmp (a clone in /tmp), mounted on top of it
    command += ["--size", str(SCRATCH_BYTES), "--tmpfs", "/tmp"]
    # the system's programs and libraries
    command += ["--ro-bind", "/usr", "/usr"]
    for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        path = Path("/") / name
        if path.is_symlink():
            command += ["--symlink", os.readlink(path), str(path)]
        elif path.is_dir():
            command += ["--ro-bind", str(path), str(path)]
    for name in ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/localtime"):
        command += ["--ro-bind-try", name, name]
    # the Python installation and its packages, without encoder_lib
    roots = {Path(sys.base_prefix).resolve(), Path(sys.prefix).resolve(), Path(python).resolve().parent.parent}
    for root in sorted(roots):
        if not root.is_relative_to("/usr"):
            command += ["--ro-bind", str(root), str(root)]
    for location in _library_locations():
        if any(location.is_relative_to(root) for root in roots | {Path("/usr")}):
            command += ["--tmpfs", str(location), "--remount-ro", str(location)]
    command += ["--proc", "/proc", "--dev", "/dev", "--remount-ro", "/dev",
                "--ro-bind", str(runner), "/tmp/grader",
                "--remount-ro", "/",  # the sandbox's own root folder too: nothing but /tmp is writable
                "--chdir", "/tmp", python, "-I", "/tmp/grader/runner.py"]
    return command


def sandbox_problem():
    """None when a sandbox works here, else a sentence saying why not and how to fix it."""
    if shutil.which("bwrap") is None:
        return f"bubblewrap (bwrap) is not installed; {INSTALL_HINT}"
    seccomp = syscalls.problem()
    if seccomp:
        return ("the sandbox's system-call allow-list needs libseccomp (`sudo apt-get install libseccomp2`, "
                f"`sudo dnf install libseccomp`) and the pyseccomp package of requirements.txt ({seccomp})")
    command = bwrap_command()[:-2] + ["-I", "-c", "import numpy; print('sandbox ok')"]
    try:
        result = subprocess.run(command, capture_output=True, text=True, timeout=START_SECONDS, env={})
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bubblewrap could not start a sandbox: {exc}"
    if "sandbox ok" in result.stdout:
        return None
    return (f"bubblewrap could not start a sandbox here ({result.stderr.strip()[:300]}); on some systems "
            f"unprivileged user namespaces must be allowed (sysctl kernel.unprivileged_userns_clone=1)")


#: Joins the cgroups whose cgroup.procs files are its first arguments, then becomes the command after them.
_JOIN = 'n=$1; shift; while [ "$n" -gt 0 ]; do echo $$ > "$1" || exit 125; shift; n=$((n - 1)); done; exec "$@"'


# ---------------------------------------------------------------- the sandbox


class Sandbox:
    """One running sandbox, for one learner; ``run`` grades one exercise in it at a time.

    It belongs to ``session`` (default: the grading run's, ``open_session()``).
    Raises ``SandboxFailed`` when it cannot start (the machine's failure).
    """

    def __init__(self, unsafe=False, limits=Limits(), session=None):
        self.unsafe, self.session = unsafe, session or open_session()
        self.procs = self.session.cgroups.box(limits.memory_bytes + SANDBOX_EXTRA_BYTES, SANDBOX_TASKS) \
            if self.session.cgroups else None
        self.threads = self.procs is not None or os.geteuid() != 0  # where the kernel counts them
        if unsafe:
            scratch = self.session.scratch()
            command = [sys.executable, "-I", str(self.session.folder / "runner.py")]
            env = {**SANDBOX_ENV, "HOME": str(scratch), "ENCODER_GRADER_SCRATCH": str(scratch)}
            self._scratch = scratch
        else:
            command, env, scratch, self._scratch = bwrap_command(runner=self.session.folder), {}, "/", None
        if self.procs:
            command = ["/bin/sh", "-c", _JOIN, "sh", str(len(self.procs)), *map(str, self.procs), *command]
        try:
            self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                            stderr=subprocess.DEVNULL, env=env, cwd=scratch, start_new_session=True)
        except OSError as exc:  # no more processes on this machine, for one
            Cgroups.remove_box(self.procs)
            raise SandboxFailed(f"the sandbox could not start ({exc})") from None
        self.to_runner, self.from_runner = wire.channel(self.process.stdin.fileno()), \
            wire.channel(self.process.stdout.fileno())
        try:
            ready = self._receive(time.monotonic() + START_SECONDS)
        except SandboxDied as exc:
            self.kill()
            raise SandboxFailed(f"the sandbox did not start ({exc})") from None
        if not (isinstance(ready, dict) and ready.get("kind") == "ready"):
            self.kill()
            raise SandboxFailed("the sandbox did not start")

    # --- the channel --------------------------------------------------
    def _send(self, value, seconds=GRACE_SECONDS, data=None):
        try:
            wire.send_message(self.to_runner, data or wire.encode(value), time.monotonic() + seconds)
        except (OSError, TimeoutError) as exc:
            raise SandboxDied(f"the sandbox stopped reading ({type(exc).__name__})") from None

    def _reply(self, reply):
        """Answer a library call with ``reply``, or with an error where its value cannot cross."""
        try:
            data = wire.encode(reply)
        except wire.WireError as exc:
            data = wire.encode({"kind": "error", "type": "TypeError", "message": f"its result cannot cross ({exc})"})
        self._send(None, data=data)

    def _receive(self, deadline):
        try:
            return wire.decode(wire.receive_message(self.from_runner, deadline))
        except TimeoutError:
            raise SandboxDied("the sandbox stopped answering") from None
        except (EOFError, OSError):
            raise SandboxDied("the sandbox ended") from None
        except wire.WireError as exc:
            raise SandboxDied(f"the sandbox sent something that is not a message ({exc})") from None

    # --- one exercise -------------------------------------------------
    def run(self, name, source, cases, uses, may_call, limits, *, serve, calls=(), seconds=None):
        """Run the answer ``source`` on ``cases`` (``[(args, kwargs)]``); ``serve(message)`` answers its calls to
        the library functions named in ``calls`` (and ``may_call``); ``seconds`` the time it may take (default
        ``limits.seconds``), not counting the time ``serve`` takes.

        Returns ``(events, ending)``: the runner's messages about the cases
        (``result``, ``raised``, ``cell_failed``) and how the run ended
        (``{"status": "done" | "timeout" | "died", "detail": ...}``).
        Raises ``SandboxDied`` (after killing it) if the sandbox itself fails
        while the answer runs, ``SandboxFailed`` if the machine would not let
        the runner start the answer's process.
        """
        seconds = float(limits.seconds if seconds is None else seconds)
        try:
            self._send({"kind": "exercise", "name": name, "source": np.frombuffer(source.encode(), np.uint8),
                        "uses": list(uses), "may_call": sorted(may_call), "calls": sorted(calls),
                        "time_limit": seconds, "memory_bytes": int(limits.memory_bytes),
                        "seccomp": np.frombuffer(syscalls.program(self.threads), np.uint8),
                        "signatures": [[len(args), sorted(kwargs)] for args, kwargs in cases]})
            self._send({"kind": "cases", "cases": [{"args": list(a), "kwargs": dict(k)} for a, k in cases]})
            events, ending = self._events(time.monotonic() + seconds + GRACE_SECONDS, serve)
        except SandboxDied:
            self.kill()
            raise
        if ending.get("status") == "machine":
            self.kill()
            raise SandboxFailed(ending.get("detail") or "the runner could not start the answer's process")
        return events, ending

    def _events(self, deadline, serve):
        events = []
        while True:
            message = self._receive(deadline)
            kind = message.get("kind") if isinstance(message, dict) else None
            if kind == "call":
                started = time.monotonic()
                self._reply(serve(message))
                deadline += time.monotonic() - started  # the grader's time is not the answer's
            elif kind in ("result", "raised", "cell_failed"):
                events.append(message)
            elif kind == "ended":
                return events, message
            else:
                raise SandboxDied("the sandbox sent an unexpected message")

    # --- the end ------------------------------------------------------
    def close(self):
        """End the sandbox: told to go (the runner exits at once, and bwrap after it), else killed."""
        if self.process.poll() is None:
            try:
                self._send({"kind": "bye"}, seconds=0.5)
                self.process.wait(timeout=CLOSE_SECONDS)
            except (SandboxDied, OSError, subprocess.TimeoutExpired):
                pass  # busy with an answer, or gone: killed
        self.kill()

    def kill(self):
        """End the sandbox and everything in it, from the inside out: the runner (the sandbox's pid 1, whose end
        ends every process in it) first, so that bwrap is there to reap it and no process is left to the
        machine's init; then bwrap, its process group and its cgroup."""
        if self.process.poll() is None:
            for pid in _children(self.process.pid):
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            try:
                self.process.wait(timeout=CLOSE_SECONDS)
            except subprocess.TimeoutExpired:
                pass
        if self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except OSError:
                pass
            self.process.kill()
        self.process.wait()
        for stream in (self.process.stdin, self.process.stdout):
            try:
                stream.close()
            except OSError:
                pass
        Cgroups.remove_box(self.procs)
        self.procs = None
        if self._scratch:
            shutil.rmtree(self._scratch, ignore_errors=True)
            self._scratch = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
