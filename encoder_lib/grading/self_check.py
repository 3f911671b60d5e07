"""The notebooks' side of the exercises: the self-check under each answer cell, the locked visible tests, and
what a learner asks after a failed self-check (``failing_case``, ``hint``).

Both checks run the learner's function on its own (``on_its_own``): the
earlier exercises it calls are the library's versions while it runs (so one
mistake costs one exercise), and the library functions this exercise may not
use are blocked. The last verdict of each exercise (``LAST``) is this
module's: the hint ladder is handed what it shows (``ladder.rungs``), and
its notebook area (``hint_area``) what to call when its button is pressed.
"""

import contextlib
import hashlib
import inspect
import sys
import types
from dataclasses import KW_ONLY, dataclass

import numpy as np


from ..threads import single_blas_thread
from . import contract, hint_area, ladder, opening, solution_step
from .compare import Raised, allowed_names, callable_inputs, hidden_rngs, plain, quietly
from .exercises import EXERCISES
from .verdict import Outcome, judge
from .wire import RandomWatch, arrays_in, refill, same_values, shares_memory

#: What the self-check says of an answer that still raises NotImplementedError.
NOT_DONE = "not done yet. Write it in the cell above, run that cell, then run this one."
#: Library functions any exercise may call: they build inputs, not answers.
HELPERS = ("init_block_params", "count_params", "from_torch_state_dict", "to_torch_state_dict", "BlockConfig")


class VisibleTestFailed(AssertionError):
    """A visible test failed: its message says which check, what came out, and what is wrong."""


class UsedTheLibrary(Exception):
    """The answer called a library function that its exercise may not use."""


def exercise_of(fn):
    name = getattr(fn, "__name__", None)
    if name not in EXERCISES:
        raise ValueError(f"{name!r} is not one of the course's exercises: {sorted(EXERCISES)}")
    return EXERCISES[name]


def _blocked(name):
    """What stands in for a library function that an exercise may not call, while its answer runs."""
    def blocked(*args, **kwargs):
        raise UsedTheLibrary(name)

    return blocked


@contextlib.contextmanager
def on_its_own(fn, also_allowed=()):
    """Run ``fn`` alone: the earlier exercises it calls are the library's, the library functions its
    exercise may not call are blocked (calling ``el.<name>`` raises ``UsedTheLibrary``), warnings are silent."""
    import encoder_lib

    exercise = exercise_of(fn)
    allowed = set(exercise.may_call) | set(exercise.uses) | set(also_allowed) | set(HELPERS)
    namespace = getattr(fn, "__globals__", {})
    saved = {name: namespace[name] for name in exercise.uses if name in namespace}
    blocked = {name: getattr(encoder_lib, name) for name in encoder_lib.__all__
               if name not in allowed and callable(getattr(encoder_lib, name))}
    try:
        for name in exercise.uses:  # provided even where the earlier answer is missing
            namespace[name] = getattr(encoder_lib, name)
        for name in blocked:
            setattr(encoder_lib, name, _blocked(name))
        try:
            with quietly():  # a warning never counts against an answer
                yield
        except UsedTheLibrary as exc:
            raise UsedTheLibrary(f"`{exercise.name}` calls encoder_lib's own `{exc.args[0]}`, which this exercise "
                                 f"may not use: write it yourself") from None
    finally:
        for name, function in blocked.items():
            setattr(encoder_lib, name, function)
        for name in exercise.uses:
            if name in saved:
                namespace[name] = saved[name]
            else:
                namespace.pop(name, None)


def _changed_inputs(exercise, case, given):
    """The parameter names of the inputs an answer changed in place (``given``: what it was called with)."""
    names = list(inspect.signature(exercise.reference).parameters)
    sent = list(zip(names, case.args)) + list(case.kwargs.items())
    got = list(zip(names, given[0])) + list(given[1].items())
    return tuple(name for (name, before), (_, after) in zip(sent, got) if not same_values(before, after))


def _given(case, kept):
    """A case's inputs as the answer gets them (``wire.given``: fresh copies, since it may change them, in a contract
    check's layout, strings made at run time), or ``kept`` (the previous check's) refilled with its values."""
    given = (callable_inputs(case.args, how=case.how), callable_inputs(case.kwargs, how=case.how))
    if case.how is not None and case.how.refill and kept is not None:
        try:
            return refill(kept, given)
        except ValueError:  # not the same arrays: fresh ones
            pass
    return given


def _shares(value, names, given, earlier):
    """The inputs (by name) a result shares memory with; else ``contract.EARLIER`` where it shares memory with an
    earlier call's result; else ()."""
    sent = list(zip(names, given[0])) + list(given[1].items())
    hit = tuple(name for name, v in sent if shares_memory(value, v))
    return hit or ((contract.EARLIER,) if any(shares_memory(value, e) for e in earlier) else ())


def _snapshot(value):
    """A result as it was when returned (what the grader's sandbox sends at once): its arrays copied, so that an answer
    that writes into a result it returned earlier changes no verdict."""
    if isinstance(value, np.ndarray):
        return value.copy()
    return type(value)(_snapshot(v) for v in value) if isinstance(value, (tuple, list)) else value


def run_cases(fn, cases):
    """``[Outcome]``: ``fn`` on each case, on its own, its inputs given as the case says (``_given``), and what it
    did besides returning measured (``Outcome``); NotImplementedError goes through."""
    exercise = exercise_of(fn)
    calls, names = allowed_names(exercise, cases), list(inspect.signature(exercise.reference).parameters)
    outcomes, kept, watch, returned = [], None, RandomWatch(), {}  # the results themselves, kept alive, by shapes
    undo = watch.install()
    try:
        for case in cases:
            given = _given(case, kept)
            kept = given if case.how is not None and case.how.keep else None
            try:
                with on_its_own(fn, calls), watch:
                    value = plain(fn(*given[0], **given[1]))
            except NotImplementedError:
                raise
            except UsedTheLibrary as exc:
                outcomes.append(Outcome(raised=Raised("UsedTheLibrary", str(exc))))
                continue
            except Exception as exc:  # the answer's own error: a known mistake may raise it too
                outcomes.append(Outcome(raised=Raised.of(exc), changed=_changed_inputs(exercise, case, given),
                                        random=watch.drew))
                continue
            earlier = returned.setdefault(tuple(a.shape for a in arrays_in(value)), [])  # what a kept array shares
            outcomes.append(Outcome(value=_snapshot(value), changed=_changed_inputs(exercise, case, given),
                                    shares=_shares(value, names, given, earlier), random=watch.drew))
            earlier.append(value)
    finally:
        undo()
    return outcomes


#: The last verdict of each exercise's self-check in this session: what ``failing_case`` and ``hint`` read; and the
#: function it judged, whose code the ladder's fourth step shows beside the course's solution.
LAST = {}
FUNCTIONS = {}


def verdict_for(fn, secret=None):
    """The ``Verdict`` on ``fn`` over the exercise's visible cases (and, with ``secret``, the hidden ones that
    seed gives); None when the answer is not written yet."""
    exercise = exercise_of(fn)
    hidden = () if secret is None else hidden_rngs(secret, exercise.name)
    cases = contract.build(exercise, hidden, probes=True, generated=not hidden)
    try:
        outcomes = run_cases(fn, cases)
    except NotImplementedError:
        return None
    verdict = judge(exercise, cases, outcomes)
    verdict.answer = code_digest(fn)
    return verdict


def code_digest(fn):
    """A short name of what a function's code does: its bytecode, constants and names, and those of the functions
    defined in it, not where it was defined (running the same cell again keeps it; editing the answer changes it)."""
    def parts(code):
        yield code.co_code
        yield repr(code.co_names).encode() + repr(code.co_varnames).encode()
        for const in code.co_consts:
            if isinstance(const, types.CodeType):
                yield from parts(const)
            else:
                yield repr(const).encode()

    code = getattr(fn, "__code__", None)
    if code is None:
        return ""
    digest = hashlib.sha256()
    for part in parts(code):
        digest.update(part + b"\0")
    return digest.hexdigest()[:12]


@single_blas_thread
def check(fn, secret=None):
    """``(passed, report)``: the exercise's visible cases on ``fn``; the report says what passed and, when a
    check fails, what is wrong: the likely mistake, or what the checks measured.

    With ``secret`` (an int), the hidden cases that seed would give the grader are checked too.
    """
    exercise = exercise_of(fn)
    verdict = verdict_for(fn, secret)
    if verdict is None:
        return False, f"`{exercise.name}`: {NOT_DONE}"
    if secret is None:
        LAST[exercise.name], FUNCTIONS[exercise.name] = verdict, fn
    return verdict.passed, verdict.report()


def self_check(fn):
    """Print which of the exercise's checks ``fn`` passes and, when one fails, what is wrong."""
    passed, report = check(fn)
    print(report)
    name = exercise_of(fn).name
    if not passed and name in LAST:
        verdict = LAST[name]
        failure = verdict.failure_key()
        opened = hint_area.opened(name, failure)
        parts, solution = steps(verdict, opened)
        hint_area.offer(name, failure, parts, lambda: hint(name), count=opened, solution=solution)


@single_blas_thread
def visible_tests(fn):
    """The exercise's visible tests: ``AssertionError`` naming the first failing check, what came out, and
    what is wrong."""
    exercise = exercise_of(fn)
    cases = contract.build(exercise, probes=True, generated=True)
    verdict = judge(exercise, cases, run_cases(fn, cases))
    if not verdict.passed:
        raise VisibleTestFailed(f"{exercise.name}, {verdict.note()}")
    print(f"`{exercise.name}`: all {len(verdict.checks)} visible tests pass. The grader also runs hidden ones.")


@dataclass(frozen=True)
class FailingCase:
    """The first check an answer failed: its inputs (fresh copies, to call the answer with), the right output and
    what the answer gave, for debugging in the notebook: ``fn(*case.args, **case.kwargs)``."""

    exercise: str
    description: str
    args: tuple
    kwargs: dict
    expected: object
    _: KW_ONLY
    got: object
    problem: str

    def __repr__(self):
        return (f"FailingCase({self.exercise}: {self.description!r}; call {self.exercise}(*case.args, **case.kwargs) "
                f"and compare with case.expected; {self.problem[:200]})")


def failing_case(name):
    """The failing check of ``name``'s last self-check that the hint ladder shows (the one of the smallest inputs,
    ``Verdict.shown``), as a ``FailingCase``: its inputs as the answer got them; None if it passed.

    >>> case = failing_case("softmax")          # doctest: +SKIP
    >>> softmax(*case.args, **case.kwargs) - case.expected   # doctest: +SKIP
    """
    name = getattr(name, "__name__", name)
    if name not in EXERCISES:
        raise ValueError(f"failing_case takes an exercise's name, one of {sorted(EXERCISES)}; got {name!r}")
    verdict = LAST.get(name)
    if verdict is None:
        raise LookupError(f"`{name}` has not been self-checked in this session: run its self-check cell first")
    if verdict.passed:
        return None
    shown = verdict.shown
    got = shown.outcome.raised if shown.outcome.raised is not None else shown.outcome.value
    how = shown.case.how
    return FailingCase(name, shown.description, callable_inputs(shown.case.args, how=how),
                       callable_inputs(shown.case.kwargs, how=how), shown.case.expected, got=got,
                       problem=shown.problem)


def defined_now(name):
    """The function ``name`` as it is defined now: in the notebook's namespace (IPython's), else the running script's
    (``__main__``), else the one last self-checked; None where there is none."""
    shell = hint_area.shell()
    for place in ([shell.user_ns] if shell is not None else []) + [vars(sys.modules.get("__main__", types))]:
        fn = place.get(name)
        if callable(fn) and getattr(fn, "__name__", None) == name:
            return fn
    return FUNCTIONS.get(name)


def hint(name):
    """Show the next rung of the hint ladder for ``name`` (an exercise's name or function), after a failed
    self-check: what is wrong, the idea it needs, then a worked step; then, where the teacher's setting opens it
    (``opening``), the course's solution beside your code. The function defined now is checked again first
    (``defined_now``), so that the ladder speaks of it: the rungs opened count for one failure only, and a new,
    different failure (or a changed answer) starts at rung 1 again."""
    fn = name if callable(name) else None
    name = getattr(name, "__name__", name)
    if name not in EXERCISES:
        raise ValueError(f"hint takes an exercise's name, one of {sorted(EXERCISES)}; got {name!r}")
    if name not in LAST:
        print(f"Run the self-check of `{name}` first: a hint starts from what it found.")
        return
    fn = fn or defined_now(name)
    if fn is not None and check(fn)[1].endswith(NOT_DONE):
        return hint_area.done(name, f"`{name}` is not written yet: write it, run its cell, then its self-check.")
    verdict = LAST[name]
    if verdict.passed:
        return hint_area.done(name, f"`{name}` as it is defined now passes its self-check: no hint needed.")
    failure = verdict.failure_key()
    opened = hint_area.opened(name, failure)
    most = ladder.STEPS if opening.opening(verdict.exercise.lesson).open else ladder.RUNGS
    count = opened + 1 if opened < most else opened  # a count the setting now closes is kept, not lowered
    hint_area.record(name, failure, count)
    parts, solution = steps(verdict, count)
    hint_area.show(name, failure, parts, count, solution=solution)


def steps(verdict, count, now=None):
    """``(parts, solution)``: what the hint area shows after ``count`` rungs of the failing ``verdict``'s ladder
    (the rungs; after the third, the course's solution beside the learner's code if the teacher's setting opens
    it at ``now``, else when it opens), and whether the solution is the next step. Never before rung 3."""
    parts = ladder.rungs(verdict)[:count]
    if count < ladder.RUNGS:
        return parts, False
    name = verdict.exercise.name
    gate = opening.opening(verdict.exercise.lesson, now=now)
    if not gate.open:
        return parts + [opening.closed_note(gate)], False
    if count > ladder.RUNGS:
        return parts + [solution_step.step(name, FUNCTIONS.get(name))], False
    return parts, solution_step.course_solution(name) is not None


def friendly_not_implemented():
    """In a notebook: show an unanswered exercise as one short line, and a failed visible test as its message,
    not a traceback through the grading code.

    A stub answer raises ``NotImplementedError``; Run All then stops at the
    first unanswered exercise with a sentence that names the function to write.
    A visible test that fails stops Run All the same way, with what it found.
    """
    try:
        shell = get_ipython()  # noqa: F821 - defined inside IPython only
    except NameError:
        return

    def handler(shell, etype, value, tb, tb_offset=None):
        name = None
        while tb is not None:  # the innermost frame is the stub's function
            name, tb = tb.tb_frame.f_code.co_name, tb.tb_next
        where = f"`{name}`" if name and name != "<module>" else "the function above"
        short = [f"NotImplementedError: {where} is not written yet. "
                 "Write it in its answer cell, run that cell, then run this one."]
        shell._showtraceback(etype, value, short)  # IPython's hook that shows an error (and stops Run All)
        return short

    def failed(shell, etype, value, tb, tb_offset=None):
        short = [f"AssertionError: {value}"]
        shell._showtraceback(etype, value, short)
        return short

    shell.set_custom_exc((NotImplementedError, VisibleTestFailed),
                         lambda shell, etype, value, tb, tb_offset=None: (
                             failed if issubclass(etype, VisibleTestFailed) else handler)(shell, etype, value, tb,
                                                                                         tb_offset))
