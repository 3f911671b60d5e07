"""The grader's side inside the sandbox: runs learners' answer cells, one exercise per process.

    python -I -S -c 'import runner; runner.main()' FOLDER NUMPY_FOLDER   # session.START_RUNNER, as the
                                                                         # sandbox's pid 1

This file, ``answer.py`` (the answer's process), ``wire.py`` and ``numeric.py`` are copied into the
sandbox and need only the standard library and numpy; ``encoder_lib`` is not there. The runner reads requests from its standard input and answers on
its standard output, both connected to a grader process outside.

The runner is the sandbox's pid 1 and not dumpable: no other process in the
sandbox can read its memory, its environment or its file descriptors, trace
it, or signal it. For each exercise it forks a child, which

1. limits itself: address space, CPU seconds, file size, open files and
   tasks; closes every descriptor but its own channel to the runner; and
   loads the seccomp allow-list the grader sent (``syscalls`` wrote it with
   libseccomp; ``load_program``): no process, no exec, no ptrace, no new
   namespaces, no io_uring, no reading other processes' memory, no signals
   but to itself, threads only where the sandbox bounds them;
2. runs the answer cell alone in a fresh namespace holding ``np``, ``math``,
   ``erf`` (``numeric.erf``, computed here at the notebook's speed), ``el``
   and the earlier exercises' functions the exercise may call. ``el`` is
   stand-ins: each call sends its arguments to the runner, which passes it
   on to the grader, which computes the library's function outside and
   sends back the result; no library code is in here to read, import or copy;
3. only then receives the cases' inputs (the cell never sees them), calls
   the answer's function on a fresh copy of each, and reports what it
   returned (plain arrays, see ``wire``) or raised, and which of its inputs
   it changed in place.

The runner checks every message of the child, passes on only what the
grader expects, with every text cut to ``ERROR_CHARS``, waits for the child
with a deadline (extended by the time the grader spent on its library
calls), kills it and everything else in the sandbox when the exercise ends,
and reports how it ended: done, timeout, died (with the exit status), or
machine (the runner could not start the child). Comparing the results with
the right answers happens outside, in the grader: the right answers never
come in here.
"""

import _socket  # socket.socketpair without socket.py (3 ms of imports in every sandbox)
import ctypes
import os
import shutil
import signal
import sys
import time

STARTED = time.monotonic()  # before numpy: what the runner's imports cost is reported with its "ready"
# its own folder first, then numpy's (its arguments: Python started it without site-packages, session.runner_arguments)
sys.path[:0] = [os.path.dirname(os.path.abspath(__file__))]
sys.path += [folder for folder in sys.argv[1:] if os.path.isabs(folder) and folder not in sys.path]
import answer  # noqa: E402
import wire  # noqa: E402
from answer import GRADER_SECONDS, PR_SET_DUMPABLE, PR_SET_PDEATHSIG, cut  # noqa: E402

IMPORTED = time.monotonic()

#: How long the runner waits for its next request before it concludes that the grader is gone.
IDLE_SECONDS = 900.0
#: The most library calls one exercise may make (each is a round trip to the grader).
MAX_CALLS = 200_000


# ---------------------------------------------------------------- checking what the answer's process says


def _inputs(message, key, signature):
    """An event's list ``key`` (``changed``, ``shares``), kept only where it names real inputs of its case (or, for
    ``shares``, "earlier": an earlier call's result)."""
    (n_args, kwargs), named = signature, message.get(key)
    return [c for c in (named[:64] if isinstance(named, list) else []) if (isinstance(c, int) and not isinstance(c, bool) and 0 <= c < n_args)
            or (isinstance(c, str) and (c in kwargs or (key == "shares" and c == "earlier")))]


def _large(message):
    """The arrays a result says it left out (``answer.bounded_result``), kept only where each is a description."""
    large = message.get("large")
    if not isinstance(large, list):
        return []
    return [item for item in large[:answer.MAX_DESCRIBED] if isinstance(item, list) and len(item) == 3
            and isinstance(item[0], list) and len(item[0]) <= answer.MAX_RESULT_DEPTH
            and all(isinstance(k, (int, str)) and not isinstance(k, bool) for k in item[0])
            and item[1] in wire.DTYPES and isinstance(item[2], list) and len(item[2]) <= 32
            and all(isinstance(n, int) and not isinstance(n, bool) and 0 <= n < 2**40 for n in item[2])]


def checked_event(message, expected_case, signatures):
    """The grader's copy of a ``result`` or ``raised`` event: only known fields, checked and cut, and a result's
    arrays over ``answer.MAX_RESULT_BYTES`` described, not sent; else None."""
    i = message.get("case")
    if not (isinstance(i, int) and not isinstance(i, bool) and i == expected_case < len(signatures)):
        return None
    event = {"kind": message["kind"], "case": i, "changed": _inputs(message, "changed", signatures[i]),
             "shares": _inputs(message, "shares", signatures[i]), "random": message.get("random") is True}
    if message["kind"] == "result":
        event["value"], large = answer.bounded_result(message.get("value"))
        large = (_large(message) + large)[:answer.MAX_DESCRIBED]
        if large:
            event["large"] = large
    else:
        event["error"] = cut(message.get("error"))
        event.update({flag: True for flag in ("not_done", "memory") if message.get(flag) is True})
    return event


def checked_cell_failure(message):
    return {"kind": "cell_failed", "error": cut(message.get("error")) or "the answer cell failed",
            **{flag: True for flag in ("memory", "missing") if message.get(flag) is True}}


# ---------------------------------------------------------------- the supervisor


class Grader:
    """The runner's channel to the grader: its own descriptors, read and written with deadlines."""

    def __init__(self, read_fd, write_fd):
        self.read_fd, self.write_fd = wire.channel(read_fd), wire.channel(write_fd)

    def send(self, value, lenient=False):
        wire.send_message(self.write_fd, wire.pack(value, lenient), time.monotonic() + GRADER_SECONDS)

    def send_raw(self, data):
        wire.send_message(self.write_fd, data, time.monotonic() + GRADER_SECONDS)

    def receive_raw(self, seconds=GRADER_SECONDS):
        return wire.receive_message(self.read_fd, time.monotonic() + seconds)


def kill_everything_else():
    """Kill every process of the sandbox but this runner: what an answer left behind. Only as the sandbox's
    pid 1, where /proc lists the sandbox's processes alone."""
    if os.getpid() != 1:
        return
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) != 1:
            try:
                os.kill(int(entry), signal.SIGKILL)
            except OSError:
                pass
    while True:  # reap them
        try:
            if os.waitpid(-1, os.WNOHANG) == (0, 0):
                break
        except ChildProcessError:
            break


class ExerciseRun:
    """One exercise's run: the child, its channel, its deadline (extended by the grader's time on its calls)."""

    def __init__(self, request, grader):
        self.request, self.grader = request, grader
        self.signatures = [(int(n), set(k)) for n, k in request["signatures"]]
        self.allowed = set(request["may_call"]) | set(request.get("calls", ()))
        self.deadline = time.monotonic() + float(request["time_limit"])
        self.ending = {"kind": "ended", "status": "died"}
        self.calls, self.call_seconds, self.next_case, self.cases_sent = 0, 0.0, 0, False
        self.timings, self.clock = {}, time.monotonic()  # seconds by step, reported with the ending (profile.py)

    def lap(self, step, raw=None):
        """The seconds since the last step, as ``step``'s; with ``raw`` (the child's cell_ok), the seconds it says
        its limits and its allow-list took (numbers only: the grader bounds them, and only ever shows them)."""
        now = time.monotonic()
        self.timings[step], self.clock = now - self.clock, now
        for key in ("isolated", "seccomp") if raw is not None else ():
            value = wire.peek(raw, key)
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                self.timings[key] = value

    def start(self):
        """Fork the child; False (with the ending said) when the machine would not let it start."""
        self.clock = time.monotonic()
        self.parent, child = _socket.socketpair(_socket.AF_UNIX, _socket.SOCK_STREAM)
        try:
            self.pid = os.fork()
        except OSError as exc:
            self.ending.update(status="machine", detail=f"the runner could not start the answer's process ({exc})")
            self.parent.close()
            child.close()
            return False
        if self.pid == 0:
            self.parent.close()
            answer.answer_process(child, self.request)
        child.close()
        self.fd = wire.channel(self.parent.fileno())
        self.lap("fork")
        return True

    def relay_call(self, raw):
        """Pass a call on to the grader as it came (its kind and name checked here, its size bounded by the
        frame, the rest by the grader's decoding); the reply back. False when it is not one to pass on."""
        if wire.peek(raw, "name") not in self.allowed or self.calls >= MAX_CALLS:
            return False
        self.calls += 1
        started = time.monotonic()
        self.grader.send_raw(raw)
        reply = self.grader.receive_raw()
        spent = time.monotonic() - started
        self.call_seconds += spent
        self.deadline += spent  # the grader's time is not the answer's
        wire.send_message(self.fd, reply, self.deadline)
        return True

    def handle(self, raw, cases):
        """Pass on one message of the child (its bytes); False when the exercise is over (its ending said)."""
        kind = wire.peek(raw, "kind")
        if kind == "call" and self.relay_call(raw):
            return True
        if kind == "cell_ok" and not self.cases_sent:
            self.lap("cell", raw)
            wire.send_message(self.fd, cases, self.deadline)
            self.cases_sent = True
            return True
        if kind in ("result", "raised"):
            event = checked_event(wire.unpack(raw), self.next_case, self.signatures)
            if event is not None:
                self.grader.send(event, lenient=True)
                self.next_case += 1
                return True
        if kind == "cell_failed" and not self.cases_sent:  # once the cases are in, their events alone
            self.grader.send(checked_cell_failure(wire.unpack(raw)))
            self.ending["status"] = "done"
            return False
        if kind == "done" and self.next_case == len(self.signatures):
            self.lap("cases")
            self.ending["status"] = "done"
            return False
        self.ending["detail"] = "the answer's process sent something the grader does not expect"
        return False

    def supervise(self, cases):
        try:
            while self.handle(wire.receive_message(self.fd, self.deadline), cases):
                pass
        except TimeoutError:
            self.ending["status"] = "timeout"
        except (EOFError, wire.WireError, OSError) as exc:
            self.ending["detail"] = f"{type(exc).__name__}"

    def finish(self):
        """Kill the child and what it left; say how it ended."""
        if "cases" not in self.timings:  # a timeout, a failed cell: the time until now is the step's it was in
            self.lap("cases" if "cell" in self.timings else "cell")
        for kill in (os.killpg, os.kill):
            try:
                kill(self.pid, signal.SIGKILL)
            except OSError:
                pass
        _, status = os.waitpid(self.pid, 0)
        if self.ending["status"] == "died" and "detail" not in self.ending:
            self.ending["detail"] = (f"killed by signal {os.WTERMSIG(status)} ({signal.Signals(os.WTERMSIG(status)).name})"
                                     if os.WIFSIGNALED(status) else
                                     f"the process exited with status {os.WEXITSTATUS(status)} before it finished")
        self.parent.close()
        kill_everything_else()
        shutil.rmtree(answer.scratch_folder(self.pid), ignore_errors=True)  # the next exercise starts from an empty folder
        self.lap("finish")
        self.ending.update(call_seconds=self.call_seconds, timings=self.timings)
        self.grader.send(self.ending)


def run_exercise(request, grader):
    """Run one exercise: fork the child (before the cases are read, so that it never holds them), relay."""
    exercise = ExerciseRun(request, grader)
    started = exercise.start()
    cases = grader.receive_raw()  # the grader sends them right after the request
    if not started:
        grader.send(exercise.ending)
        return
    exercise.supervise(cases)
    exercise.finish()


def become_pid_1():
    """What the runner does first: not dumpable (nothing in the sandbox can read or trace it), no signal handlers
    (as pid 1, it then gets no signal from inside the sandbox), killed if the grader's process goes."""
    libc = ctypes.CDLL(None)
    libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGUSR1, signal.SIGUSR2):
        signal.signal(sig, signal.SIG_DFL)
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)


def main():
    become_pid_1()
    grader = Grader(os.dup(0), os.dup(1))
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1):  # nothing else writes to the grader's channel by accident
        os.dup2(null, fd)
    grader.send({"kind": "ready", "pid": os.getpid(), "started": STARTED, "imported": IMPORTED})
    while True:
        try:
            request = wire.unpack(grader.receive_raw(IDLE_SECONDS))
        except (EOFError, TimeoutError):
            os._exit(0)
        if request.get("kind") == "exercise":
            run_exercise(request, grader)
        elif request.get("kind") == "bye":
            os._exit(0)  # nothing to save or flush: not Python's 30 ms of shutting down, for every learner


if __name__ == "__main__":
    main()
