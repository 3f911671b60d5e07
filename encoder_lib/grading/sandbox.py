"""A sandbox for one learner's answers: bubblewrap around ``runner.py``, and the grader's end of the channel.

The sandbox (``bwrap``, from the bubblewrap package) gets

- a read-only view of the system's programs and libraries, of the Python
  installation and of its site-packages, and of nothing else: not the course
  folder, not the submissions, not the gradebook, not anyone's home folder;
  ``encoder_lib`` itself is hidden wherever it is installed;
- its own scratch ``/tmp`` of ``SCRATCH_BYTES``, its own process tree (every
  process in it ends with it), no network (its own empty network
  namespace), no capabilities, a clean environment with one BLAS thread;

and inside, ``runner.py`` runs each exercise in a child process of its own
with a memory limit, a time limit and no way to start processes. The grader
process outside (this module) sends the answer cell and the cases' inputs,
computes the library functions the answer calls (``serve``), and receives
what the answer returned. Right answers never cross into the sandbox.

Without bubblewrap, ``Sandbox(unsafe=True)`` runs the same runner as a plain
process: the limits per exercise still apply, but the answer can read and
write whatever the teacher's account can. ``make grade`` refuses that
unless asked (``UNSAFE=1``).
"""

import os
import select
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from . import wire

SCRATCH_BYTES = 64 * 2**20
#: How long a sandbox may stay silent beyond an exercise's own time limit before it is killed.
GRACE_SECONDS = 20.0
INSTALL_HINT = ("install bubblewrap: `sudo apt-get install bubblewrap` (Debian, Ubuntu), "
                "`sudo dnf install bubblewrap` (Fedora), `sudo pacman -S bubblewrap` (Arch)")


@dataclass(frozen=True)
class Limits:
    """What one exercise's run may take: wall-clock seconds and address space."""

    seconds: float = 10.0
    memory_bytes: int = 2**30


class SandboxUnavailable(RuntimeError):
    """bubblewrap is missing or cannot make a sandbox on this machine."""


_runner_dir = None


def runner_dir():
    """A folder holding copies of runner.py and wire.py, readable by the sandbox (one per process)."""
    global _runner_dir
    if _runner_dir is None or not (_runner_dir / "runner.py").exists():
        folder = Path(tempfile.mkdtemp(prefix="encoder-grader-"))
        for name in ("runner.py", "wire.py"):
            shutil.copyfile(Path(__file__).with_name(name), folder / name)
            (folder / name).chmod(0o644)
        folder.chmod(0o755)
        _runner_dir = folder
    return _runner_dir


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


def bwrap_command(python=None, runner=None):
    """The bubblewrap command that runs ``runner.py`` with ``python`` (this one) in a sandbox."""
    python = python or sandbox_python()
    runner = runner or runner_dir()
    command = ["bwrap", "--unshare-all", "--unshare-user", "--uid", "65534", "--gid", "65534",
               "--die-with-parent", "--new-session", "--clearenv"]
    if os.geteuid() == 0:
        command += ["--cap-drop", "ALL"]
    env = {"PATH": "/usr/bin:/bin", "HOME": "/tmp", "LANG": "C.UTF-8", "OPENBLAS_NUM_THREADS": "1",
           "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "PYTHONDONTWRITEBYTECODE": "1", "PYTHONHASHSEED": "0",
           "ENCODER_GRADER_OWN_PIDS": "1"}  # runner.py may clear out its process namespace
    for key, value in env.items():
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
    command = bwrap_command()[:-2] + ["-I", "-c", "import numpy; print('sandbox ok')"]
    try:
        result = subprocess.run(command, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bubblewrap could not start a sandbox: {exc}"
    if "sandbox ok" not in result.stdout:
        return (f"bubblewrap could not start a sandbox here ({result.stderr.strip()[:300]}); on some systems "
                f"unprivileged user namespaces must be allowed (sysctl kernel.unprivileged_userns_clone=1)")
    return None


class SandboxDied(RuntimeError):
    """The sandbox stopped answering or broke its protocol; it has been killed."""


class Sandbox:
    """One running sandbox, for one learner; ``run`` grades one exercise in it at a time."""

    def __init__(self, unsafe=False):
        self.unsafe = unsafe
        if unsafe:
            self._scratch = tempfile.mkdtemp(prefix="encoder-grader-unsafe-")
            command = [sys.executable, "-I", str(runner_dir() / "runner.py")]
            env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": self._scratch,
                   "ENCODER_GRADER_SCRATCH": self._scratch,
                   "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "PYTHONDONTWRITEBYTECODE": "1"}
            cwd = self._scratch
        else:
            self._scratch = None
            command, env, cwd = bwrap_command(), None, "/"
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL, env=env, cwd=cwd, start_new_session=True)
        self._buffer = b""
        ready = self._receive(time.monotonic() + 60)
        if not (isinstance(ready, dict) and ready.get("kind") == "ready"):
            self.kill()
            raise SandboxDied("the sandbox did not start")

    # --- the channel --------------------------------------------------
    def _send(self, value):
        data = wire.encode(value)
        try:
            self.process.stdin.write(struct.pack("<Q", len(data)) + data)
            self.process.stdin.flush()
        except (BrokenPipeError, OSError):
            raise SandboxDied("the sandbox closed its channel") from None

    def _read(self, size, deadline):
        fd = self.process.stdout.fileno()
        while len(self._buffer) < size:
            left = deadline - time.monotonic()
            if left <= 0:
                raise SandboxDied("the sandbox stopped answering")
            ready, _, _ = select.select([fd], [], [], left)
            if ready:
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    raise SandboxDied("the sandbox ended")
                self._buffer += chunk
        data, self._buffer = self._buffer[:size], self._buffer[size:]
        return data

    def _receive(self, deadline):
        (size,) = struct.unpack("<Q", self._read(8, deadline))
        if size > wire.MAX_BYTES:
            raise SandboxDied(f"the sandbox sent a message of {size} bytes")
        try:
            return wire.decode(self._read(size, deadline))
        except wire.WireError as exc:
            raise SandboxDied(f"the sandbox sent something that is not a message ({exc})") from None

    # --- one exercise -------------------------------------------------
    def run(self, name, source, cases, uses, may_call, limits, serve):
        """Run the answer ``source`` on ``cases`` (``[(args, kwargs)]``); ``serve(message)`` answers its calls.

        Returns ``(events, ending)``: the runner's messages about the cases
        (``result``, ``raised``, ``cell_failed``) and how the run ended
        (``{"status": "done" | "timeout" | "died", "detail": ...}``).
        Raises ``SandboxDied`` (after killing it) if the sandbox itself fails.
        """
        self._send({"kind": "exercise", "name": name, "source": source, "uses": list(uses),
                    "may_call": sorted(may_call), "time_limit": float(limits.seconds),
                    "memory_bytes": int(limits.memory_bytes),
                    "cases": [{"args": list(args), "kwargs": dict(kwargs)} for args, kwargs in cases]})
        deadline = time.monotonic() + limits.seconds + GRACE_SECONDS
        events = []
        try:
            while True:
                message = self._receive(deadline)
                kind = message.get("kind") if isinstance(message, dict) else None
                if kind == "call":
                    self._send(serve(message))
                elif kind in ("result", "raised", "cell_failed"):
                    events.append(message)
                elif kind == "ended":
                    return events, message
                else:
                    raise SandboxDied("the sandbox sent an unexpected message")
        except SandboxDied:
            self.kill()
            raise

    # --- the end ------------------------------------------------------
    def close(self):
        if self.process.poll() is None:
            try:
                self._send({"kind": "bye"})
                self.process.stdin.close()
                self.process.wait(timeout=10)
            except (SandboxDied, OSError, subprocess.TimeoutExpired):
                pass
        self.kill()

    def kill(self):
        """End the sandbox and everything in it (its process group; bwrap's namespace takes the rest)."""
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
        if self._scratch:
            shutil.rmtree(self._scratch, ignore_errors=True)
            self._scratch = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
