"""The notebooks' side of the exercises: the self-check under each answer cell and the locked visible tests.

Both run the learner's function on its own (``on_its_own``): the earlier
exercises it calls are the library's versions while it runs (so one mistake
costs one exercise), and the library functions this exercise may not use are
blocked.
"""

import contextlib
import warnings

import numpy as np

from ..threads import single_blas_thread
from .compare import (Raised, allowed_names, build_cases, callable_inputs, close, describe_difference, hidden_rngs,
                      likely_mistake)
from .exercises import EXERCISES

#: Library functions any exercise may call: they build inputs, not answers.
HELPERS = ("init_block_params", "count_params", "from_torch_state_dict", "to_torch_state_dict", "BlockConfig")


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
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")  # a warning never counts against an answer
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


def _verdicts(fn, cases):
    """``(description, ok, problem, mistake)`` for each case; NotImplementedError goes through."""
    calls = allowed_names(exercise_of(fn), cases)
    results = []
    for case in cases:
        try:
            with on_its_own(fn, calls):
                got = fn(*callable_inputs(case.args), **callable_inputs(case.kwargs))
        except NotImplementedError:
            raise
        except UsedTheLibrary as exc:
            results.append((case.description, False, str(exc), None))
            continue
        except Exception as exc:  # the answer's own error: report it, name it if a known mistake raises it too
            results.append((case.description, False, f"it raised {type(exc).__name__}: {exc}",
                            likely_mistake(Raised.of(exc), case)))
            continue
        if close(got, case.expected):
            results.append((case.description, True, "", None))
        else:
            results.append((case.description, False, describe_difference(got, case.expected),
                            likely_mistake(got, case)))
    return results


@single_blas_thread
def check(fn, secret=None):
    """``(passed, report)``: the exercise's visible cases on ``fn``; the report says what passed and the likely mistake.

    With ``secret`` (an int), the hidden cases that seed would give the grader are checked too.
    """
    exercise = exercise_of(fn)
    try:
        results = _verdicts(fn, build_cases(exercise, () if secret is None else hidden_rngs(secret, exercise.name)))
    except NotImplementedError:
        return False, f"`{exercise.name}`: not done yet. Write it in the cell above, run that cell, then run this one."
    lines, mistakes, passed = [], [], 0
    for description, ok, problem, mistake in results:
        passed += ok
        lines.append(f"  {'✓' if ok else '✗'} {description}" + ("" if ok else f": {problem}"))
        if mistake and mistake not in mistakes:
            mistakes.append(mistake)
    report = [f"`{exercise.name}`: {passed} of {len(results)} checks passed", *lines]
    report += [f"Likely mistake: {mistake}" for mistake in mistakes]
    if passed == len(results):
        report.append("Well done.")
    return passed == len(results), "\n".join(report)


def self_check(fn):
    """Print which of the exercise's checks ``fn`` passes and, when one fails, the likely mistake."""
    print(check(fn)[1])


@single_blas_thread
def visible_tests(fn):
    """The exercise's visible tests: ``AssertionError`` naming the first failing check, what came out, and the likely mistake."""
    exercise = exercise_of(fn)
    results = _verdicts(fn, build_cases(exercise))
    failures = [(description, problem, mistake) for description, ok, problem, mistake in results if not ok]
    if failures:
        description, problem, _ = failures[0]
        mistake = next((m for _, _, m in failures if m), None)  # any failing check may show which mistake it is
        raise AssertionError(f"{exercise.name}, {description}: {problem}" + (f". Likely mistake: {mistake}" if mistake else ""))
    print(f"`{exercise.name}`: all {len(results)} visible tests pass. The grader also runs hidden ones.")


def friendly_not_implemented():
    """In a notebook: show an unanswered exercise as one short line, not a traceback.

    A stub answer raises ``NotImplementedError``; Run All then stops at the
    first unanswered exercise with a sentence that names the function to write.
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

    shell.set_custom_exc((NotImplementedError,), handler)
