"""A sandbox for one learner's answers: bubblewrap around ``runner.py``, and the grader's end of the channel.

The sandbox (``bwrap``, from the bubblewrap package) gets

- a read-only view of the system's programs and libraries, of the Python
  installation and of its site-packages, and of nothing else: not the course
  folder, not the submissions, not the gradebook, not anyone's home folder;
  ``encoder_lib`` itself is hidden wherever it is installed;
- its own scratch ``/tmp`` of ``SCRATCH_BYTES`` and ``SCRATCH_FILES`` files (where the machine lets
  ``scratch.py`` mount it; elsewhere of ``SCRATCH_BYTES``), its own process tree with
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

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass

import numpy as np

from encoder_lib.grading import wire

from ..profile import MAX_REPORTED, PROFILE, timed
from . import syscalls
from .cgroups import Cgroups, children_of
from .session import SANDBOX_ENV, START_SECONDS, bwrap_command, open_session, runner_arguments

#: How long an ending sandbox is given to go by itself (its runner exits at once; bwrap reaps it and follows).
CLOSE_SECONDS = 2.0
#: How long a sandbox may stay silent beyond an exercise's own time limit before it is killed.
GRACE_SECONDS = 20.0
#: Memory a sandbox may hold beyond one exercise's limit: the runner, its copies of the messages, the scratch /tmp.
SANDBOX_EXTRA_BYTES = 512 * 2**20
#: Tasks (processes and threads) a whole sandbox may hold, where cgroups count them.
SANDBOX_TASKS = 272
#: Joins the cgroups whose cgroup.procs files are its first arguments, then becomes the command after them.
_JOIN = 'n=$1; shift; while [ "$n" -gt 0 ]; do echo $$ > "$1" || exit 125; shift; n=$((n - 1)); done; exec "$@"'


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


# ---------------------------------------------------------------- the profile


def _profile_start(opened, ready):
    """A sandbox's start in the profile: bubblewrap and Python up to the runner's first line (``started``), then its
    imports (to ``imported``), as the runner's clock said (the machine's monotonic clock: the sandbox shares it)."""
    now, started, imported = time.monotonic(), ready.get("started"), ready.get("imported")
    if all(isinstance(t, float) for t in (started, imported)) and opened <= started <= imported <= now:
        PROFILE.add("start", started - opened + now - imported)
        PROFILE.add("imports", imported - started)
    else:
        PROFILE.add("start", now - opened)


def _profile_run(name, ending, waited):
    """One answer's run in the profile: the seconds the worker ``waited`` for the sandbox, divided among the steps
    the runner timed (``runner.ExerciseRun.lap``) in their proportions (part of the runner's time overlaps the
    worker's own sending, receiving and library calls, which it counts itself)."""
    timings = ending.get("timings") if isinstance(ending.get("timings"), dict) else {}
    step = {key: float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0
            for key, value in [*timings.items(), ("calls", ending.get("call_seconds"))]}
    get = lambda key: step.get(key, 0.0)  # noqa: E731
    steps = {"seccomp": get("seccomp"), "child": get("fork") + get("isolated") - get("seccomp"),
             "answer": get("cell") - get("isolated") + get("cases") - get("calls"), "end": get("finish")}
    steps = {stage: min(max(seconds, 0.0), MAX_REPORTED) for stage, seconds in steps.items()}
    total = sum(steps.values())
    for stage, seconds in steps.items() if total > 0 else [("answer", 1.0)]:
        PROFILE.add(stage, max(waited, 0.0) * seconds / (total or 1.0), name)


# ---------------------------------------------------------------- the sandbox


class Sandbox:
    """One running sandbox, for one learner; ``run`` grades one exercise in it at a time.

    It belongs to ``session`` (default: the grading run's, ``open_session()``).
    Raises ``SandboxFailed`` when it cannot start (the machine's failure).
    """

    def __init__(self, unsafe=False, limits=Limits(), session=None):
        self.unsafe, self.session, self.exercise, self.spent = unsafe, session or open_session(), "", 0.0
        with timed("cgroup"):
            self.procs = self.session.cgroups.box(limits.memory_bytes + SANDBOX_EXTRA_BYTES, SANDBOX_TASKS) \
                if self.session.cgroups else None
        self.threads = self.procs is not None or os.geteuid() != 0  # where the kernel counts them
        command, env, scratch = self._command()
        if self.procs:
            command = ["/bin/sh", "-c", _JOIN, "sh", str(len(self.procs)), *map(str, self.procs), *command]
        opened = time.monotonic()
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
        _profile_start(opened, ready)

    def _command(self):
        """``(command, environment, folder)`` that start the runner: in bubblewrap, or (unsafe) as a plain
        process in a scratch folder of its own."""
        if not self.unsafe:
            self._scratch = None
            return bwrap_command(runner=self.session.folder, scratch=self.session.bounded_scratch), {}, "/"
        self._scratch = self.session.scratch()
        env = {**SANDBOX_ENV, "HOME": str(self._scratch), "ENCODER_GRADER_SCRATCH": str(self._scratch)}
        return [sys.executable, *runner_arguments(self.session.folder)], env, self._scratch

    # --- the channel --------------------------------------------------
    @contextlib.contextmanager
    def _own(self, stage):
        """Time a block of the worker's own work during a run as ``stage`` (``spent``: the run's sum of them)."""
        started = time.perf_counter()
        try:
            yield
        finally:
            seconds = time.perf_counter() - started
            self.spent += seconds
            PROFILE.add(stage, seconds, self.exercise)

    def _send(self, value, seconds=GRACE_SECONDS, data=None, stage="send"):
        try:
            with self._own(stage) if stage else contextlib.nullcontext():
                wire.send_message(self.to_runner, data or wire.pack(value), time.monotonic() + seconds)
        except (OSError, TimeoutError) as exc:
            raise SandboxDied(f"the sandbox stopped reading ({type(exc).__name__})") from None

    def _reply(self, reply):
        """Answer a library call with ``reply``, or with an error where its value cannot cross; its bytes, or None
        where the value could not cross."""
        try:
            data = wire.pack(reply)
        except wire.WireError as exc:
            data = None
            self._send(None, stage=None, data=wire.pack(
                {"kind": "error", "type": "TypeError", "message": f"its result cannot cross ({exc})"}))
        else:
            self._send(None, data=data, stage=None)  # the call's time, counted as such
        return data

    def _call(self, data, message, serve, case):
        """Answer the library call ``data`` (``message`` decoded) made on case ``case``: from what ``serve``
        (a ``library_calls.Calls``, or a plain function) computes, or knew already."""
        reply = serve(message)
        sent = self._reply(reply)
        if sent is not None and hasattr(serve, "keep"):
            serve.keep(data, case, message, reply, sent)

    def _receive_data(self, deadline):
        try:
            return wire.receive_message(self.from_runner, deadline)
        except TimeoutError:
            raise SandboxDied("the sandbox stopped answering") from None
        except (EOFError, OSError):
            raise SandboxDied("the sandbox ended") from None

    def _decoded(self, data):
        try:
            with self._own("receive"):
                return wire.unpack(data)
        except wire.WireError as exc:
            raise SandboxDied(f"the sandbox sent something that is not a message ({exc})") from None

    def _receive(self, deadline):
        return self._decoded(self._receive_data(deadline))

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
        seconds, self.exercise = float(limits.seconds if seconds is None else seconds), name
        with timed("seccomp"):
            program = syscalls.program(self.threads)  # compiled once a worker
        began, self.spent = time.perf_counter(), 0.0
        try:
            self._send({"kind": "exercise", "name": name, "source": np.frombuffer(source.encode(), np.uint8),
                        "uses": list(uses), "may_call": sorted(may_call), "calls": sorted(calls),
                        "time_limit": seconds, "memory_bytes": int(limits.memory_bytes),
                        "seccomp": np.frombuffer(program, np.uint8), "seccomp_pid": syscalls.PID,
                        "signatures": [[len(args), sorted(kwargs)] for args, kwargs in cases]})
            shared = self.session.shared.marked  # the large public arrays the sandbox reads from their files
            self._send({"kind": "cases", "cases": [{"args": shared(list(a)), "kwargs": shared(dict(k))}
                                                   for a, k in cases]})
            events, ending = self._events(time.monotonic() + seconds + GRACE_SECONDS, serve)
        except SandboxDied:
            self.kill()
            raise
        if ending.get("status") == "machine":
            self.kill()
            raise SandboxFailed(ending.get("detail") or "the runner could not start the answer's process")
        _profile_run(name, ending, time.perf_counter() - began - self.spent)
        return events, ending

    def _events(self, deadline, serve):
        events, known = [], getattr(serve, "known", None)
        while True:
            data = self._receive_data(deadline)
            reply = known(data, len(events)) if known else None  # a call on a visible case made before
            if reply is not None:
                started = time.monotonic()
                with self._own("calls"):
                    self._send(None, data=reply, stage=None)
                deadline += time.monotonic() - started
                continue
            message = self._decoded(data)
            kind = message.get("kind") if isinstance(message, dict) else None
            if kind == "call":
                started = time.monotonic()
                with self._own("calls"):
                    self._call(data, message, serve, len(events))
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
        with timed("close"):
            if self.process.poll() is None:
                try:
                    self._send({"kind": "bye"}, seconds=0.5, stage=None)
                    self.process.wait(timeout=CLOSE_SECONDS)
                except (SandboxDied, OSError, subprocess.TimeoutExpired):
                    pass  # busy with an answer, or gone: killed
            self.kill()

    def kill(self):
        """End the sandbox and everything in it, from the inside out: the runner (the sandbox's pid 1, whose end
        ends every process in it) first, so that bwrap is there to reap it and no process is left to the
        machine's init; then bwrap, its process group and its cgroup."""
        if self.process.poll() is None:
            for pid in children_of(self.process.pid):
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
        with timed("cgroup"):
            Cgroups.remove_box(self.procs)
        self.procs = None
        if self._scratch:
            shutil.rmtree(self._scratch, ignore_errors=True)
            self._scratch = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
