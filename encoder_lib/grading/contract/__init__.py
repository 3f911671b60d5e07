"""What every exercise promises beyond the values of one call, checked the same way for all of them, with the
library's own function as the oracle.

Each library function of the course gives the same result for the same input on every call, whatever was called
before and without random numbers; reads its inputs' values in any memory layout, read-only ones included; returns
a new array, in its inputs' dtype (float16, float32 or float64); takes its arguments by position or by name, and a
string argument by its text; refuses, with an error that names the argument, what its space says it refuses
(``[<exercise>.space] refuse``); and takes the smallest inputs it accepts. Every lesson's statement says so.

``derive(exercise, cases)`` makes, from an exercise's lesson cases, one set of checks that asks for each promise,
whatever the exercise: the same cases again, rolled, refilled, in other layouts and dtypes, with strings built at
run time, by name and by position, with an argument the library refuses, cut to their smallest. Their right results
(or the library's refusal) come from the library's function; ``How`` says how each check's inputs are given, here and
in the grader's sandbox alike (``wire.given``). ``findings(checks)`` says which promise an answer breaks, each
sentence verified by the checks themselves: a check derived from another in one way only, failing where that one
passes, or what a call was measured to do (draw random numbers, return a view).
"""

import inspect
from dataclasses import dataclass

import numpy as np

from ..compare import (CHECK, ROUNDING_FACTOR, Case, Raised, callable_inputs, close, plain, quietly, relative_gap,
                       rounding_tolerance)
from ..wire import Call
from .said import EARLIER, LAYOUTS, NOT_A_FUNCTION, findings, problem, refusal_problem

#: The most numbers a lesson case cast to another dtype holds (all-MiniLM-L6-v2's block, 14 MB, is not cast).
MOST_CAST = 100_000


@dataclass(frozen=True, eq=False, kw_only=True)


class How:
    """How a contract check's inputs are given and what it checks: ``kind`` (``SAID``'s keys), the check it is
    derived from (``base``), its inputs' ``layout``, its strings built at run time, its inputs kept for the next
    check (``keep``) or the previous check's objects refilled with its own values (``refill``), and ``words``: what it
    varies, as its finding says it."""

    kind: str
    base: object = None
    layout: str = ""
    strings: bool = False
    keep: bool = False
    refill: bool = False
    words: str = ""

    def wire(self):
        """What the grader's sandbox needs to give the inputs as this check does (``wire.given``)."""
        return {"layout": self.layout, "strings": self.strings, "keep": self.keep, "refill": self.refill}


def build(exercise, hidden_rngs=(), probes=False, generated=False):
    """``compare.build_cases``' cases, then the contract checks derived from the lesson's (``derive``)."""
    from ..compare import build_cases

    cases = build_cases(exercise, hidden_rngs, probes=probes, generated=generated)
    return cases + derive(exercise, cases)


def derive(exercise, cases):
    """The contract checks of ``exercise``, derived from its lesson cases among ``cases`` (see the module)."""
    lesson = [c for c in cases if c.graded and c.point is None and not c.hidden and c.how is None]
    if not lesson:
        return []
    first = max(lesson, key=_layout_score)
    found = [_derived(first, "again, after other calls", How(kind="again", base=first))]
    found += _rolled(exercise, lesson, first)
    found += [_derived(first, f"with every array {words}", How(kind="layout", base=first, layout=layout))
              for layout, words in LAYOUTS.items() if _changes_layout(first, layout)]
    others = [c for c in lesson if c is not first]  # two cases in float32, with their two paths (a mask, none)
    found += _in_dtype(exercise, [first] + others, np.float32)[:2] + _in_dtype(exercise, [first] + others, np.float16)[:1]
    found += _strings(exercise, lesson)
    found += _by_name_and_position(exercise, first)
    found += [c for name in exercise.space.refuse for c in _refused(exercise, lesson, name)[:1]]
    return found + _smallest(exercise, lesson)


def _derived(case, words, how, args=None, kwargs=None, expected=None, tolerance=None):
    return Case(f"\u201c{case.description}\u201d {words}", case.args if args is None else tuple(args),
                case.kwargs if kwargs is None else dict(kwargs), case.expected if expected is None else expected,
                how=how, tolerance=case.tolerance if tolerance is None else tolerance)


def _top_arrays(case):
    return [v for v in (*case.args, *case.kwargs.values()) if isinstance(v, np.ndarray)]


def _all_arrays(value):
    if isinstance(value, np.ndarray):
        yield value
    elif isinstance(value, (list, tuple, dict)):
        for item in value.values() if isinstance(value, dict) else value:
            yield from _all_arrays(item)


def _layout_score(case):
    """The case most telling of what an answer does with its inputs: the most inputs of two axes or more (each of 2 or
    more), the most axes, a result of a dozen different numbers or more (a result that does not move with its
    inputs' values shows nothing), then the fewest numbers in (all-MiniLM-L6-v2's weights are 14 MB)."""
    arrays, results = _top_arrays(case), case.expected if isinstance(case.expected, tuple) else (case.expected,)
    distinct = sum(len(np.unique(r)) for r in results if isinstance(r, np.ndarray))
    return (sum(a.ndim >= 2 and min(a.shape[-2:]) >= 2 for a in arrays), max((a.ndim for a in arrays), default=0),
            min(distinct, 12), -sum(a.size for a in _all_arrays([case.args, case.kwargs])))


def _changes_layout(case, layout):
    arrays = list(_all_arrays([case.args, case.kwargs]))
    if layout == "fortran":
        return any(a.ndim >= 2 and min(a.shape[-2:]) >= 2 for a in arrays)
    return any(a.ndim >= 1 for a in arrays) if layout == "strided" else bool(arrays)


def _reference(exercise, args, kwargs):
    """The library's result on these inputs (numpy scalars as 0-d arrays), or the ``Raised`` it refused them with."""
    try:
        with quietly():
            return plain(exercise.reference(*callable_inputs(args), **callable_inputs(kwargs)))
    except Exception as exc:  # the library refuses them
        return Raised.of(exc)


def _rolled(exercise, lesson, first):
    """Inputs of the same shapes with other values: a lesson case with every input array's first axis rolled by one,
    its inputs kept; then those very arrays refilled in place with the lesson case's own values."""
    for case in [first] + [c for c in lesson if c is not first]:
        rolled = [[np.roll(v, 1, axis=0) if isinstance(v, np.ndarray) and v.ndim and v.shape[0] > 1 else v
                   for v in values] for values in (case.args, case.kwargs.values())]
        expected = _reference(exercise, rolled[0], dict(zip(case.kwargs, rolled[1])))
        if isinstance(expected, Raised) or close(expected, case.expected, tolerance=CHECK):
            continue  # nothing to roll, or the rolled inputs have the same result
        kept = _derived(case, "with every input's first axis rolled by one (the same shapes, other values)",
                        How(kind="rolled", base=case, keep=True), rolled[0], dict(zip(case.kwargs, rolled[1])),
                        expected)
        return [kept, Case(f"the arrays of the check before, their values set back in place to \u201c"
                           f"{case.description}\u201d's", case.args, case.kwargs, case.expected,
                           how=How(kind="refilled", base=kept, refill=True), tolerance=case.tolerance)]
    return []


def _cast(value, dtype):
    if isinstance(value, np.ndarray):
        return value.astype(dtype) if value.dtype.kind == "f" else value
    if isinstance(value, Call):
        return Call(value.name, *_cast(list(value.args), dtype))
    if isinstance(value, (list, tuple)):
        return type(value)(_cast(v, dtype) for v in value)
    if isinstance(value, dict):
        return {k: _cast(v, dtype) for k, v in value.items()}
    return value


def _in_dtype(exercise, lesson, dtype):
    """Each lesson case the library takes in ``dtype`` (of at most ``MOST_CAST`` numbers), in that dtype, as a check:
    its right result the library's in
    that dtype, to what ``dtype`` keeps (``ROUNDING_FACTOR`` times its epsilon, the library's own rounding, or what
    rounding the inputs to ``dtype`` moves the exact result by, whichever is largest)."""
    name, found = np.dtype(dtype).name, []
    for case in [c for c in lesson if sum(a.size for a in _all_arrays([c.args, c.kwargs])) <= MOST_CAST]:
        args, kwargs = _cast(case.args, dtype), _cast(case.kwargs, dtype)
        if not any(a.dtype == dtype for a in _all_arrays([args, kwargs])):
            return []  # no float input: nothing to cast
        expected = _reference(exercise, args, kwargs)
        exact = _reference(exercise, _cast(args, np.float64), _cast(kwargs, np.float64))
        if isinstance(expected, Raised) or isinstance(exact, Raised):
            continue  # the library refuses these inputs in this dtype (an overflow of float16)
        tolerance = max(ROUNDING_FACTOR * float(np.finfo(dtype).eps), ROUNDING_FACTOR * relative_gap(expected, exact),
                        rounding_tolerance(exercise.reference, _cast(args, np.float64), _cast(kwargs, np.float64),
                                           exact, dtype=dtype))
        found.append(_derived(case, f"in {name}", How(kind="dtype", base=case, words=name), args, kwargs, expected,
                              tolerance))
    return found


def _signature(exercise):
    return inspect.signature(exercise.reference)


def _own(exercise, lesson):
    """The exercise's own parameters: the library function's, up to the last one a lesson case passes (the library's
    may take more, such as the block's ``activation``)."""
    parameters = list(_signature(exercise).parameters)
    used = max(len(c.args) for c in lesson)
    return parameters[:max([used] + [parameters.index(k) + 1 for c in lesson for k in c.kwargs])]


def _bound(exercise, case, defaults=True):
    bound = _signature(exercise).bind(*case.args, **case.kwargs)
    if defaults:
        bound.apply_defaults()
    return bound.arguments


def _with(exercise, case, name, value):
    """``case``'s ``(args, kwargs)`` with argument ``name`` set to ``value`` (in its place if it came by position)."""
    names = list(_signature(exercise).parameters)
    args, kwargs = list(case.args), dict(case.kwargs)
    if names.index(name) < len(args):
        args[names.index(name)] = value
    else:
        kwargs[name] = value
    return args, kwargs


def _strings(exercise, lesson):
    """For each string argument's each value a lesson case has (or its default), that case with the same text built
    at run time (equal to the literal, another object)."""
    found = []
    for name in _own(exercise, lesson):
        values = {v for c in lesson for v in [_bound(exercise, c).get(name)] if isinstance(v, str)}
        for value in sorted(values):
            twin = next(c for c in lesson if _bound(exercise, c).get(name) == value)
            args, kwargs = _with(exercise, twin, name, value)
            how = How(kind="strings", base=twin, strings=True, words=f"{name}={value!r}")
            found.append(_derived(twin, f"with {name}={value!r} made at run time", how, args, kwargs))
    return found


def _by_name_and_position(exercise, case):
    """``case`` with every argument passed by name, then every one the library takes by position so (its defaults
    filled in up to the last one given): where the case does not already pass them so."""
    named = _bound(exercise, case, defaults=False)
    found = []
    if case.args:
        found.append(_derived(case, "with every argument passed by name",
                              How(kind="names", base=case, words=", ".join(named)), (), named))
    every = _bound(exercise, case)
    ordered = [n for n, p in _signature(exercise).parameters.items() if p.kind == p.POSITIONAL_OR_KEYWORD]
    last = max(ordered.index(n) + 1 if n in ordered else 0 for n in named)
    args, kwargs = [every[n] for n in ordered[:last]], {n: v for n, v in named.items() if n not in ordered[:last]}
    if len(args) > len(case.args):
        found.append(_derived(case, "with every argument passed by position", How(kind="positions", base=case), args,
                              kwargs))
    return found


def _refused(exercise, lesson, name):
    """A lesson case with ``name`` set to a value the library refuses with an error that names it (an integer one to
    three above its own, or 0; for a string, "unknown")."""
    for case in lesson:
        value = _bound(exercise, case).get(name)
        tries = [value + k for k in (1, 2, 3)] + [0] if isinstance(value, int) and not isinstance(value, bool) else \
            ["unknown"] if isinstance(value, str) else []
        for tried in tries:
            args, kwargs = _with(exercise, case, name, tried)
            raised = _reference(exercise, args, kwargs)
            if isinstance(raised, Raised) and name in raised.message:
                return [_derived(case, f"with {name}={tried!r}, which the library refuses",
                                 How(kind="refused", base=case, words=f"{name}={tried!r}"), args, kwargs, raised)]
    return []


def _smallest(exercise, lesson):
    """The smallest input the library takes: the lesson case of the fewest axes with every input array cut to its
    first entry along its first axis, as long as the library takes it; a check where that has fewer axes than every
    lesson case."""
    def rank(case):
        arrays = _top_arrays(case)
        return arrays[0].ndim if arrays else 0

    case = min(lesson, key=rank)
    args, kwargs, cut = case.args, case.kwargs, None
    while any(isinstance(v, np.ndarray) and v.ndim for v in (*args, *kwargs.values())):
        smaller = [[v[0, ...].copy() if isinstance(v, np.ndarray) and v.ndim else v for v in values]
                   for values in (args, kwargs.values())]
        expected = _reference(exercise, smaller[0], dict(zip(kwargs, smaller[1])))
        if isinstance(expected, Raised):
            break
        args, kwargs, cut = tuple(smaller[0]), dict(zip(kwargs, smaller[1])), expected
    first = next((a for a in (*args, *kwargs.values()) if isinstance(a, np.ndarray)), None)
    if cut is None or first is None or first.ndim >= min(rank(c) for c in lesson):
        return []
    shape = "(" + ", ".join(map(str, first.shape)) + ("," if first.ndim == 1 else "") + ")"
    return [_derived(case, f"cut to its first entry, an input of shape {shape}: the smallest the library takes",
                     How(kind="smallest", base=case, words=shape), args, kwargs, cut)]


__all__ = ["EARLIER", "How", "LAYOUTS", "NOT_A_FUNCTION", "build", "derive", "findings", "problem",
           "refusal_problem"]
