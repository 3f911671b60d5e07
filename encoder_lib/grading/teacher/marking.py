"""One answer marked: run in a sandbox on its cases, then judged here by the self-check's own judge.

``grade_answer`` sends an answer cell and its cases' inputs into a started
sandbox, serves the library calls it makes (``library_calls``), and turns
what the sandbox reported into a ``Marked``: how the run ended (a timeout,
an error, memory), else ``verdict.judge``'s verdict on the outcomes, the
same sentences the notebook's self-check gives on those cases.
"""

import hashlib
import inspect
from functools import partial
from typing import NamedTuple

from ..compare import Raised, allowed_names
from ..exercises import EXERCISES
from ..verdict import Outcome, judge
from .cases import hidden_cases, time_allowed, visible_cases
from .library_calls import CallBudget, serve
from .outputs import DIAGNOSIS_JOIN, MISTAKE_JOIN

NOT_ANSWERED = "not answered: the answer cell still raises NotImplementedError"

def _ending(exercise, cases, events, ending, limits):
    """``(status, points, note)`` when the run ended before its cases can be judged, else None."""
    refused = next((e for e in events if e.get("kind") == "refused"), None)
    if refused:
        return "error", 0, refused["why"]
    if ending.get("status") == "timeout":
        done = {e.get("case") for e in events if e.get("kind") in ("result", "raised")}
        pending = next((c.description for i, c in enumerate(cases) if i not in done), None)
        seconds = time_allowed(exercise.name, len(cases), limits)
        return "timeout", 0, (f"stopped after {seconds:g} s, the time limit of this exercise's checks (an endless "
                              f"loop?)" + (f", while checking: {pending}" if pending else ""))
    failed = next((e for e in events if e.get("kind") == "cell_failed"), None)
    if failed:
        if failed.get("memory"):
            return "memory", 0, f"the answer cell ran out of memory (the limit is {limits.memory_bytes // 2**20} MiB)"
        return "error", 0, f"the answer cell itself failed: {failed.get('error')}"
    return None


def parameter_names(exercise, changed):
    """The names of the inputs ``changed`` (the runner's positions and keyword names) in the exercise's signature."""
    parameters = list(inspect.signature(exercise.reference).parameters)
    return tuple(parameters[c] if isinstance(c, int) and 0 <= c < len(parameters) else str(c) for c in changed)


def outcome_of(exercise, event):
    """A sandbox's event of one case as the ``verdict.Outcome`` the self-check would have seen."""
    changed = parameter_names(exercise, event.get("changed") or ())
    if event["kind"] == "raised":
        return Outcome(raised=Raised.from_text(event.get("error", "")), changed=changed)
    return Outcome(value=event.get("value"), changed=changed)


class Marked(NamedTuple):
    """How one answer was marked: its status, points and note, and what the feedback named (for the class
    report): the catalogued mistakes (their names joined by `` + ``) or the diagnosis's keys (by `` | ``)."""

    status: str
    points: float
    note: str
    mistake: str = ""
    diagnosis: str = ""


def marked(verdict):
    """The ``Marked`` of a ``verdict.Verdict``: the note is the self-check's paragraph, word for word."""
    if verdict.passed:
        return Marked("passed", verdict.exercise.points, "")
    keys = ([f"changed:{','.join(verdict.changed)}"] if verdict.changed else []) + \
        [key for key in verdict.keys() if not key.startswith("mistake:")]
    return Marked("failed", 0, verdict.note(), MISTAKE_JOIN.join(m.name for m in verdict.mistakes),
                  DIAGNOSIS_JOIN.join(keys))


def mark(exercise, cases, events, ending, limits):
    """The ``Marked`` of an answer from what the sandbox reported on ``cases``: how the run ended, else the
    feedback's verdict (``verdict.judge``), the same as the notebook's self-check gives on those cases."""
    ended = _ending(exercise, cases, events, ending, limits)
    if ended:
        return Marked(*ended)
    by_case = {e.get("case"): e for e in events if e.get("kind") in ("result", "raised")}
    for i, case in enumerate(cases):
        event = by_case.get(i)
        if event is None:
            detail = ending.get("detail") or "it stopped"
            return Marked("error", 0, f"the answer's process ended early ({detail}), while checking: "
                                      f"{case.description}")
        if event["kind"] == "raised" and event.get("not_done"):
            return Marked("not answered", 0, NOT_ANSWERED)
        if event["kind"] == "raised" and event.get("memory"):
            return Marked("memory", 0, f"{case.description}: it ran out of memory "
                                       f"(the limit is {limits.memory_bytes // 2**20} MiB)")
    verdict = judge(exercise, cases, [outcome_of(exercise, by_case[i]) for i in range(len(cases))])
    return marked(verdict)


def grade_answer(box, name, source, secret, limits):
    """Run one answer cell's ``source`` in ``box`` (a started Sandbox) on the visible cases, the diagnosis's probes
    and the hidden cases drawn for this very cell, and judge it: a ``Marked``."""
    exercise = EXERCISES[name]
    cases = visible_cases(name) + hidden_cases(name, secret, hashlib.sha256(source.encode()).hexdigest())
    allowed = allowed_names(exercise, cases)
    budget = CallBudget.of(cases, limits)
    events, ending = box.run(name, source, [(c.args, c.kwargs) for c in cases], exercise.uses, exercise.may_call,
                             limits, serve=partial(serve, allowed=allowed, budget=budget), calls=allowed,
                             seconds=time_allowed(name, len(cases), limits))
    events = events + [{"kind": "refused", "why": why} for why in budget.refused[:1]]
    return mark(exercise, cases, events, ending, limits)
