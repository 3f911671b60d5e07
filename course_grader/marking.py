"""One answer marked: run in a sandbox on its cases, then judged here by the self-check's own judge.

``grade_answer`` sends an answer cell and its cases' inputs into a started
sandbox, serves the library calls it makes (``library_calls``), and turns
what the sandbox reported into a ``Marked``: how the run ended (a timeout,
an error, memory), else ``verdict.judge``'s verdict on the outcomes, the
same sentences the notebook's self-check gives on those cases.

Whatever an answer returns, judging it is bounded: a result's arrays over
``answer.MAX_RESULT_BYTES`` never leave the sandbox (they come back as
arrays of their dtype and shape that hold no memory, ``outcome_of``), and
the judge runs under a budget (``Budget``) of the exercise's own time
limit and ``JUDGE_BYTES`` of memory; an answer whose verdict exceeds it is
"judged as far as time (or memory) allowed": its checks, without the
search for a cause. Never a stall, never a worker of gigabytes.
"""

import contextlib
import functools
import hashlib
import inspect
import operator
import re
import resource
import signal
import threading
from typing import NamedTuple

import numpy as np

from encoder_lib.grading import wire
from encoder_lib.grading.compare import Raised, allowed_names, plain
from encoder_lib.grading.contract import EARLIER
from encoder_lib.grading.exercises import EXERCISES
from encoder_lib.grading.verdict import Outcome, Verdict, check_case, judge

from .cases import hidden_cases, public_cases, time_allowed, visible_cases
from .library_calls import CallBudget, Calls
from .outputs import DIAGNOSIS_JOIN, MISTAKE_JOIN
from .profile import timed

NOT_ANSWERED = "not answered: the answer cell still raises NotImplementedError"
#: The memory the judge of one answer may take beyond what its worker holds: judging a wrong answer of the course
#: takes a few megabytes; converting an attacker's result of 60 MB of uint8 to floats took 480 MB each time.
JUDGE_BYTES = 256 * 2**20
_DESCRIPTION = operator.attrgetter("description")

def _ending(exercise, cases, events, ending, limits, describe):
    """``(status, points, note)`` when the run ended before its cases can be judged, else None; ``describe(case)``
    words a case."""
    refused = next((e for e in events if e.get("kind") == "refused"), None)
    if refused:
        return "error", 0, refused["why"]
    done = {e.get("case") for e in events if e.get("kind") in ("result", "raised")}
    pending = next((describe(c) for i, c in enumerate(cases) if i not in done), None)
    if ending.get("status") == "timeout" and pending:  # past ``cases``, the preview's own checks: not this verdict's
        seconds = time_allowed(exercise.name, len(cases), limits)
        return "timeout", 0, (f"stopped after {seconds:g} s, the time limit of this exercise's checks (an endless "
                              f"loop?), while checking: {pending}")
    failed = next((e for e in events if e.get("kind") == "cell_failed"), None)
    if failed:
        if failed.get("memory"):
            return "memory", 0, f"the answer cell ran out of memory (the limit is {limits.memory_bytes // 2**20} MiB)"
        return "error", 0, f"the answer cell itself failed: {failed.get('error')}"
    return None


@functools.lru_cache(maxsize=None)
def _parameters(reference):
    """The parameters' names of an exercise's reference function (read once: a quarter of judging was this)."""
    return tuple(inspect.signature(reference).parameters)


def parameter_names(exercise, changed):
    """The names of the inputs ``changed`` (the runner's positions and keyword names) in the exercise's signature."""
    if not changed:
        return ()
    parameters = _parameters(exercise.reference)
    return tuple(parameters[c] if isinstance(c, int) and 0 <= c < len(parameters) else str(c) for c in changed)


def _put_back(value, path, array):
    """``value`` with ``array`` at ``path`` (indices and keys into its tuples, lists and dicts)."""
    if not path:
        return array
    key, rest = path[0], path[1:]
    if isinstance(value, (tuple, list)) and isinstance(key, int) and 0 <= key < len(value):
        items = list(value)
        items[key] = _put_back(items[key], rest, array)
        return tuple(items) if isinstance(value, tuple) else items
    if isinstance(value, dict) and key in value:
        return {**value, key: _put_back(value[key], rest, array)}
    return value


def with_stand_ins(value, large):
    """A result whose arrays the sandbox described instead of sending (``large``: ``[path, dtype, shape]``, see
    ``answer.bounded_result``), with arrays of that dtype and shape put back that hold one number's memory
    (read-only, every entry 0): what the verdict says of their type and shape is what it would have said."""
    for path, dtype, shape in large or ():
        value = _put_back(value, path, np.broadcast_to(np.zeros((), dtype=dtype), tuple(shape)))
    return value


def outcome_of(exercise, event):
    """A sandbox's event of one case as the ``verdict.Outcome`` the self-check would have seen."""
    changed, random = parameter_names(exercise, event.get("changed") or ()), event.get("random") is True
    if event["kind"] == "raised":
        return Outcome(raised=Raised.from_text(event.get("error", "")), changed=changed, random=random)
    shares = tuple(EARLIER if s == "earlier" else s for s in parameter_names(exercise, event.get("shares") or ()))
    return Outcome(value=plain(with_stand_ins(event.get("value"), event.get("large"))), changed=changed,
                   shares=shares, random=random)


class Marked(NamedTuple):
    """How one answer was marked: its status, points and note, and what the feedback named (for the class
    report): the catalogued mistakes (their names joined by `` + ``) or the diagnosis's keys (by `` | ``)."""

    status: str
    points: float
    note: str
    mistake: str = ""
    diagnosis: str = ""
    preview: dict = None  # what a learner may see before the due date (``preview``), where it was asked for


def marked(verdict):
    """The ``Marked`` of a ``verdict.Verdict``: the note is the self-check's paragraph, word for word."""
    if verdict.passed:
        return Marked("passed", verdict.exercise.points, "")
    keys = ([f"changed:{','.join(verdict.changed)}"] if verdict.changed else []) + \
        [key for key in verdict.keys() if not key.startswith("mistake:")]
    return Marked("failed", 0, verdict.note(), MISTAKE_JOIN.join(m.name for m in verdict.mistakes),
                  DIAGNOSIS_JOIN.join(keys))


class OutOfTime(BaseException):
    """The judge's time budget ran out (a BaseException, as KeyboardInterrupt: no ``except Exception`` in the judge
    takes it for a failed variant and goes on)."""


def _out_of_time(*_):
    raise OutOfTime


def _data_bytes():
    """This process's data (its heap and anonymous mappings, what RLIMIT_DATA counts), or None where unknown."""
    try:
        with open("/proc/self/status") as f:
            return int(re.search(r"VmData:\s+(\d+) kB", f.read()).group(1)) * 1024
    except (OSError, AttributeError, ValueError):
        return None


@contextlib.contextmanager
def budget(seconds, memory_bytes=JUDGE_BYTES):
    """Run the block within ``seconds`` (SIGALRM, in the main thread: ``OutOfTime``) and ``memory_bytes`` beyond
    what the process holds (RLIMIT_DATA: ``MemoryError``); both put back as they were afterwards."""
    timed = threading.current_thread() is threading.main_thread()
    handler = signal.signal(signal.SIGALRM, _out_of_time) if timed else None
    if timed:
        signal.setitimer(signal.ITIMER_REAL, max(seconds, 0.01))
    limits, used = resource.getrlimit(resource.RLIMIT_DATA), _data_bytes()
    bounded = used is not None and (limits[1] == resource.RLIM_INFINITY or used + memory_bytes <= limits[1])
    if bounded:
        resource.setrlimit(resource.RLIMIT_DATA, (used + memory_bytes, limits[1]))
    try:
        yield
    finally:
        if bounded:
            resource.setrlimit(resource.RLIMIT_DATA, limits)
        if timed:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, handler)


def judged(exercise, cases, outcomes, seconds):
    """The ``Marked`` of ``verdict.judge``'s verdict, judged within ``budget(seconds)``; past it, the answer's checks
    alone (each says what is wrong with its result, bounded by the right result's size), "judged as far as time
    (or memory) allowed"."""
    try:
        with budget(seconds):
            return marked(judge(exercise, cases, outcomes))
    except (OutOfTime, MemoryError) as exc:
        what = f"time allowed ({seconds:g} s)" if isinstance(exc, OutOfTime) else \
            f"memory allowed ({JUDGE_BYTES // 2**20} MiB)"
    checks = [check_case(case, outcome) for case, outcome in zip(cases, outcomes) if case.graded]
    verdict = Verdict(exercise, checks)
    if verdict.passed:
        return marked(verdict)
    return Marked("failed", 0, f"{verdict.note()}. Judged as far as {what}: the search for the mistake behind it "
                               f"was stopped", diagnosis="judged as far as " + what.split(" (")[0])


def _unfinished(cases, by_case, ending, limits, describe):
    """The ``Marked`` of a run whose cases did not all come back as results (``by_case``), else None."""
    for i, case in enumerate(cases):
        event = by_case.get(i)
        if event is None:
            detail = ending.get("detail") or "it stopped"
            return Marked("error", 0, f"the answer's process ended early ({detail}), while checking: "
                                      f"{describe(case)}")
        if event["kind"] == "raised" and event.get("not_done"):
            return Marked("not answered", 0, NOT_ANSWERED)
        if event["kind"] == "raised" and event.get("memory"):
            return Marked("memory", 0, f"{describe(case)}: it ran out of memory "
                                       f"(the limit is {limits.memory_bytes // 2**20} MiB)")
    return None


def _outcomes(exercise, cases, events, ending, limits, describe):
    """``(ended, outcomes)``: how the run ended before ``cases`` could be judged (a ``Marked``'s status, points and
    note; ``describe`` words a case), else None and the ``verdict.Outcome`` of each case."""
    by_case = {e.get("case"): e for e in events if e.get("kind") in ("result", "raised")}
    ended = _ending(exercise, cases, events, ending, limits, describe) or \
        _unfinished(cases, by_case, ending, limits, describe)
    return ended, None if ended else [outcome_of(exercise, by_case[i]) for i in range(len(cases))]


def mark(exercise, cases, events, ending, limits, *, seconds=None):
    """The ``Marked`` of an answer from what the sandbox reported on ``cases``: how the run ended, else the
    feedback's verdict (``verdict.judge``), the same as the notebook's self-check gives on those cases, judged
    within ``seconds`` (default: the time its cases were allowed in the sandbox)."""
    ended, outcomes = _outcomes(exercise, cases, events, ending, limits, _DESCRIPTION)
    if ended:
        return Marked(*ended)
    return judged(exercise, cases, outcomes, seconds or time_allowed(exercise.name, len(cases), limits))


def _hidden_unnamed(case):
    return "one of the hidden checks" if getattr(case, "hidden", False) else case.description


def preview(exercise, cases, events, ending, limits):
    """What a learner may be shown of an answer before the due date (the hand-in service's view, ``handin``): how
    the run ended, or the self-check's own verdict on the visible cases (its paragraph and the hint ladder's first
    rung), and how many of the visible and of the hidden checks passed. Never a hidden case's input or result: an
    ending names a hidden case only as one, and the verdict is judged on the visible cases alone."""
    from encoder_lib.grading.ladder import rungs

    ended, outcomes = _outcomes(exercise, cases, events, ending, limits, _hidden_unnamed)
    if ended:
        return {"status": ended[0], "note": ended[2]}
    counts = {"visible": [0, 0], "hidden": [0, 0]}
    for case, outcome in zip(cases, outcomes):
        if case.graded:
            count = counts["hidden" if getattr(case, "hidden", False) else "visible"]
            count[0] += check_case(case, outcome).ok
            count[1] += 1
    shown = [i for i, case in enumerate(cases) if not getattr(case, "hidden", False)]
    with budget(time_allowed(exercise.name, len(shown), limits)):
        verdict = judge(exercise, [cases[i] for i in shown], [outcomes[i] for i in shown])
    return {"status": "passed" if verdict.passed else "failed", "note": verdict.note(),
            "hint": "" if verdict.passed else rungs(verdict)[0], **counts}


def grade_answer(box, name, source, secret, limits, *, previewed=False):
    """Run one answer cell's ``source`` in ``box`` (a started Sandbox) on the visible cases, the diagnosis's probes,
    the contract checks and the hidden cases drawn for this very cell, and judge it: a ``Marked``; ``previewed``: with
    its ``preview`` too, judged on what the self-check runs (the visible cases, the contract checks and the checks
    drawn with the public seed, which the answer then runs on last)."""
    exercise = EXERCISES[name]
    with timed("hidden", name):
        shown = visible_cases(name)
        cases = shown + hidden_cases(name, secret, hashlib.sha256(source.encode()).hexdigest())
    run = cases + (public_cases(name) if previewed else [])
    allowed = allowed_names(exercise, run)
    budget = CallBudget.of(run, limits)
    sent = [(c.args, c.kwargs if c.how is None else {**c.kwargs, wire.HOW: c.how.wire()}) for c in run]
    events, ending = box.run(name, source, sent, exercise.uses, exercise.may_call,
                             limits, serve=Calls(name, allowed, budget, shared=len(shown)), calls=allowed,
                             seconds=time_allowed(name, len(run), limits))
    events = events + [{"kind": "refused", "why": why} for why in budget.refused[:1]]
    with timed("judge", name):
        marked_answer = mark(exercise, cases, events, ending, limits)
    if not previewed:
        return marked_answer
    try:
        shown = preview(exercise, run, events, ending, limits)
    except (OutOfTime, MemoryError):
        shown = {"status": marked_answer.status, "note": "judged as far as the time or memory allowed: the checks "
                                                         "on your answer are in the feedback after the due date"}
    return marked_answer._replace(preview=shown)
