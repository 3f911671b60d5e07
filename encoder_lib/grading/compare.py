"""Is an answer right? The cases an exercise is checked on, and how a result is compared with the right one.

Shared by the self-check and the grader. The cases are built here once, with
the right answer; comparing an answer's result with them needs no more
library code. The grader builds them outside the sandbox and sends only the
inputs in. A result is checked for what it is before any value is compared
(``returned_problem``): a numpy array of floats of the right shape, or the
tuple the exercise returns; anything else fails at once, without converting
it (a list, complex or integer numbers, an object array, a larger array).
"""

import contextlib
import warnings
import zlib
from dataclasses import KW_ONLY, dataclass

import numpy as np

from .space import PUBLIC_SEED, drawn
from .wire import SUBCLASS, Call, given


@contextlib.contextmanager
def quietly():
    """No warning and no floating-point error shown while a reference, an answer, a variant or a rule runs: a
    warning never counts against an answer, and an extreme case's overflow is measured in the values."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        yield

#: How close a result must be to the right one to pass a check, relative and absolute: right answers in float64,
#: however they are written (einsum, loops, a log-sum-exp), agree with the library to 1e-12 on every input the spaces
#: draw, and float32 keeps about 7 digits, so that a float32 step anywhere shows.
CHECK = 1e-9
#: How close a variant's result must be to an answer's for the variant to reproduce it (``causes``).
ATOL = 1e-6
HIDDEN_SEEDS = 1
#: Inputs this large or larger: there, rounding the inputs' last digits can move a right result by more than ``CHECK``
#: (rows near 1e8), and a check allows what it moves the library's own result by (``rounding_tolerance``).
LARGE_INPUT = 1e3
#: How many times what rounding the inputs moves the library's result by a right answer may differ from it.
ROUNDING_FACTOR = 16


class NotApplicable(Exception):
    """Raised by a mistake's model for inputs it does not describe (its result is then not compared)."""


@dataclass(frozen=True)
class Raised:
    """What a call raised: its exception's type name and message. A mistake can show as an error."""

    kind: str
    message: str

    @classmethod
    def of(cls, exc):
        return cls(type(exc).__name__, str(exc))

    @classmethod
    def from_text(cls, text):
        """From ``"ValueError: message"``, as the grader's sandbox reports an exception."""
        kind, _, message = str(text).partition(": ")
        return cls(kind, message)

    def same_as(self, other):
        return isinstance(other, Raised) and self.kind == other.kind and \
            " ".join(self.message.split()) == " ".join(other.message.split())


@dataclass
class Case:
    """One check of an exercise: its inputs and the right result."""

    description: str
    args: tuple
    kwargs: dict
    expected: object
    _: KW_ONLY
    probe: str = ""  # the name of a diagnosis's probe (``Exercise.probes``): run, never graded; "" for a check
    hidden: bool = False  # one of the grader's hidden cases: its inputs are never quoted to the learner
    point: object = None  # the ``space.Point`` a generated or hidden check was drawn at; None for the lesson's
    how: object = None  # a contract check's ``contract.How`` (how its inputs are given, what it checks); else None
    tolerance: float = CHECK  # how close a right result is (``rounding_tolerance``)

    @property
    def graded(self):
        return not self.probe


def callable_inputs(value, copy=True, how=None):
    """Inputs for code running here (``wire.given``, as in the sandbox): a ``Call`` becomes the library function it
    names; each array a fresh copy (an answer may change its inputs in place), unless ``copy`` is False (the course's
    own code, which leaves them alone), in the layout a contract check's ``how`` names; each string a literal, or,
    for such a check, built at run time."""
    import encoder_lib

    def call(name, args):
        function = getattr(encoder_lib, name)
        return lambda h: function(h, *args)

    return given(value, how.wire() if how is not None else None, call, copy)


def _calls_in(value):
    """Names of the library functions that a case's inputs call (a sub-layer, and what its arguments call)."""
    if isinstance(value, Call):
        return {value.name}.union(*(_calls_in(a) for a in value.args))
    if isinstance(value, (list, tuple)):
        return set().union(*(_calls_in(v) for v in value))
    if isinstance(value, dict):
        return set().union(*(_calls_in(v) for v in value.values()))
    return set()


def allowed_names(exercise, cases):
    """The library functions an answer to ``exercise`` may call on ``cases``: its own, and what the cases call."""
    names = set(exercise.may_call) | set(exercise.uses)
    for case in cases:
        names |= _calls_in(case.args) | _calls_in(case.kwargs)
    return names


#: The start of the name of a probe that is evidence for a cause only, never a place an answer is located by
#: (``_base.SQUARE``).
EVIDENCE = "evidence"


def build_cases(exercise, hidden_rngs=(), probes=False, generated=False, visible=True):
    """The exercise's cases, with their right results: the lesson's (``visible``; seed 0) and, for each of
    ``hidden_rngs``, the hidden ones drawn from its input space (``space.drawn``).

    With ``generated``, the checks drawn from its input space with the public seed follow (the self-check's: every
    point of the space a seed draws, its shapes and sizes in the description). With ``probes``, the inputs of the
    exercise's diagnosis probes (``Case.probe`` names them): the answer runs on them too, and they tell where a
    failing answer goes wrong; they never count for points.
    """
    raw = [("", False, *case, None) for case in exercise.cases(np.random.default_rng(0))] if visible else []
    if generated:
        raw += [("", False, *case) for case in drawn(exercise, public_rng(exercise.name))]
    for rng in hidden_rngs:
        raw += [("", True, *case) for case in drawn(exercise, rng)]
    if probes and exercise.probes is not None:
        raw += [(probe, False, *rest, None) for probe, *rest in exercise.probes(np.random.default_rng(1))]
    built = []
    for probe, hidden, description, args, kwargs, point in raw:
        with quietly():
            expected = plain(exercise.reference(*callable_inputs(args), **callable_inputs(kwargs)))
        tolerance = rounding_tolerance(exercise.reference, args, kwargs, expected) \
            if _largest_input((args, kwargs)) >= LARGE_INPUT else CHECK
        built.append(Case(description, tuple(args), dict(kwargs), expected, probe=probe, hidden=hidden,
                          point=point, tolerance=tolerance))
    return built


def plain(value):
    """A result with its numpy scalars as 0-d arrays (the library's gelu of a 0-d input is a float64, as numpy's own
    functions give): a 0-d array and a scalar of one dtype are the same answer."""
    if isinstance(value, tuple):
        return tuple(plain(v) for v in value)
    return np.asarray(value) if isinstance(value, np.generic) and value.dtype.kind in "fc" else value


def _float_arrays(value):
    if isinstance(value, np.ndarray) and value.dtype.kind == "f":
        yield value
    elif isinstance(value, Call):
        yield from _float_arrays(value.args)
    elif isinstance(value, (list, tuple, dict)):
        for item in value.values() if isinstance(value, dict) else value:
            yield from _float_arrays(item)


def _largest_input(value):
    return max((float(np.max(np.abs(a), initial=0.0)) for a in _float_arrays(value)), default=0.0)


def nudged(value, relative, rng):
    """``value`` with every float array's entries times 1 plus or minus ``relative`` times 0.5 to 1 (at random), the
    signs alternating from one entry to the next: neighbours move apart, whatever the draw."""
    if isinstance(value, np.ndarray) and value.dtype.kind == "f":
        signs = np.where(np.arange(value.size) % 2, -1.0, 1.0).reshape(value.shape)
        return value * (1 + relative * signs * rng.uniform(0.5, 1.0, value.shape)).astype(value.dtype)
    if isinstance(value, Call):
        return Call(value.name, *nudged(list(value.args), relative, rng))
    if isinstance(value, (list, tuple)):
        return type(value)(nudged(v, relative, rng) for v in value)
    if isinstance(value, dict):
        return {k: nudged(v, relative, rng) for k, v in value.items()}
    return value


def relative_gap(got, expected):
    """The largest ``|got - expected| / (1 + |expected|)`` over the finite entries (of each item of a tuple)."""
    if isinstance(expected, tuple):
        return max((relative_gap(g, e) for g, e in zip(got, expected)), default=0.0)
    with np.errstate(all="ignore"):
        gap = np.abs(np.asarray(got, np.float64) - expected) / (1 + np.abs(expected))
    return float(np.max(np.where(np.isfinite(gap), gap, 0.0), initial=0.0))


def rounding_tolerance(reference, args, kwargs, expected, dtype=np.float64, floor=CHECK):
    """How close a right result is on these inputs: ``floor``, or ``ROUNDING_FACTOR`` times what rounding the inputs'
    last digits (each float input times 1 + 4 eps of ``dtype``, signs at random) moves the library's own result: a
    right answer computed another way rounds differently, by about as much."""
    moved_inputs = nudged((tuple(args), dict(kwargs)), 4 * float(np.finfo(dtype).eps), np.random.default_rng(0))
    try:
        with quietly():
            moved = plain(reference(*callable_inputs(moved_inputs[0]), **callable_inputs(moved_inputs[1])))
    except Exception:  # the library refuses the nudged inputs (an overflow): the floor
        return floor
    return max(floor, ROUNDING_FACTOR * relative_gap(moved, expected))


def public_rng(exercise_name):
    """The generator of an exercise's generated checks in the self-check: public, the same for every learner."""
    return np.random.default_rng([PUBLIC_SEED, zlib.crc32(exercise_name.encode())])


def hidden_rngs(secret, exercise_name, count=HIDDEN_SEEDS, submission=None):
    """Generators for an exercise's hidden cases, seeded by the course's secret (``secret`` an int) and, in the
    grader, by the graded submission's content (``submission``, its SHA-256 in hex): every submission gets
    inputs of its own, so inputs seen in one round never come back in the next."""
    drawn = [] if submission is None else [int(submission, 16)]
    return [np.random.default_rng([secret, zlib.crc32(exercise_name.encode()), k, *drawn]) for k in range(count)]


def close(got, expected, equal_nan=False, tolerance=ATOL):
    """Same structure, shapes and values (to ``tolerance``, relative above 1); a result that is not an array of real
    numbers of the right shape is never close, and is not converted to find out."""
    if isinstance(expected, tuple):
        return (isinstance(got, tuple) and len(got) == len(expected)
                and all(close(g, e, equal_nan, tolerance) for g, e in zip(got, expected)))
    if type(got) is not np.ndarray or got.dtype.kind not in "fiub" or got.shape != np.shape(expected):
        return False
    return bool(np.allclose(got, expected, rtol=tolerance, atol=tolerance, equal_nan=equal_nan))


def _type_name(value):
    if isinstance(value, np.ndarray):  # a subclass: numpy's masked array, matrix
        return SUBCLASS.format(type(value).__name__)
    return getattr(value, "type_name", type(value).__name__)  # the grader's sandbox sends other types by name


def returned_problem(got, expected, dtype=True):
    """Why ``got`` cannot be the answer, before any value is compared (None when it is a numpy array of floats of
    the right shape, or the tuple of them the exercise returns): said once, nothing converted. With ``dtype``, its
    precision too (``precision_problem``): the right result's dtype, computed at that precision."""
    if isinstance(expected, tuple):
        if not isinstance(got, tuple) or len(got) != len(expected):
            kind = f"tuple of {len(got)}" if isinstance(got, tuple) else _type_name(got)
            return f"it should return a tuple of {len(expected)} arrays, it returned a {kind}"
        for i, (g, e) in enumerate(zip(got, expected)):
            problem = returned_problem(g, e, dtype)
            if problem:
                return f"item {i} of the returned tuple: {problem}"
        return None
    if type(got) is not np.ndarray:
        return f"it returned a {_type_name(got)}, not a plain numpy array: the exercise returns an np.ndarray of floats"
    if got.dtype.kind == "c":
        return f"it returned complex numbers ({got.dtype}): the right result is real"
    if got.dtype.kind != "f":
        return f"it returned an array of {got.dtype}, not of floating-point numbers"
    if got.shape != expected.shape:
        return f"the result has shape {got.shape}, expected {expected.shape}"
    return precision_problem(got, expected) if dtype else None


#: The digits each floating-point type keeps, as a sentence says them.
_DIGITS = {2: "about 3", 4: "about 7", 8: "about 16"}


#: The agreement a result computed at a lower precision can keep (by its bytes per number): what a float32 cast
#: costs, up to rows near 1000 normalised.
_LOWER_PRECISION_TOLERANCE = {2: 1e-1, 4: 1e-3}


def close_but_for_precision(got, expected):
    """Does a result whose precision is wrong (``precision_problem``) have the right values up to that precision?
    Then its precision is all that is wrong with it."""
    if isinstance(expected, tuple):
        return all(close_but_for_precision(g, e) for g, e in zip(got, expected))
    if close(got, expected, tolerance=CHECK):
        return True
    if not precision_problem(got, expected):
        return False
    size = 4 if got.dtype.itemsize >= expected.dtype.itemsize else got.dtype.itemsize
    return bool(np.allclose(got, expected, rtol=_LOWER_PRECISION_TOLERANCE[size], atol=_LOWER_PRECISION_TOLERANCE[size]))


def _float32_numbers(values):
    """Is every entry of a float64 array a float32 number (what a float32 computation cast back gives)?"""
    with np.errstate(all="ignore"):
        return bool(np.array_equal(values.astype(np.float32).astype(np.float64), values, equal_nan=True))


def precision_problem(got, expected):
    """A result of floats of the right shape whose dtype is not the right result's, or whose numbers all are
    float32 numbers, right to float32's precision, where the right ones are not (computed in float32 and cast back):
    what was measured, and where precision goes; None otherwise."""
    if (got.dtype.kind, got.dtype.itemsize) != (expected.dtype.kind, expected.dtype.itemsize):
        digits = _DIGITS.get(got.dtype.itemsize)
        name = got.dtype.newbyteorder("=").name
        if digits is None or got.dtype.itemsize > expected.dtype.itemsize:
            return f"the result is {name}; the inputs are {expected.dtype} and so is the right result"
        return (f"the result is {name}, but the inputs are {expected.dtype} and so is the right result: somewhere "
                f"your code makes a {name} array (`astype(np.{name})`, `dtype=np.{name}`, `np.{name}(...)`), and "
                f"from there each number keeps {digits} digits instead of {_DIGITS[expected.dtype.itemsize]}")
    if expected.dtype == np.float64 and expected.size >= 4 and not _float32_numbers(expected) and \
            _float32_numbers(got) and np.allclose(got, expected, rtol=_LOWER_PRECISION_TOLERANCE[4],
                                                  atol=_LOWER_PRECISION_TOLERANCE[4]):
        return ("the result is float64, but every number in it is a float32 number: it was computed in float32 "
                "(an `astype(np.float32)`, a `dtype=np.float32`) and cast back, which keeps about 7 digits of the "
                "16 the inputs have")
    if not close(got, expected, tolerance=CHECK) and close(got, expected, tolerance=ATOL):
        return (f"the result agrees with the right one to about {_digits(got, expected)} significant digits only; a "
                f"right answer in float64 agrees to 12 or more")
    return None


def dtype_short(got, expected):
    """Where a result's dtype is not the right result's (through a tuple), a few words that say so; else ''."""
    if isinstance(expected, tuple):
        return next((f"item {i} of the returned tuple: {short}" for i, (g, e) in enumerate(zip(got, expected))
                     for short in [dtype_short(g, e)] if short), "")
    if (got.dtype.kind, got.dtype.itemsize) != (expected.dtype.kind, expected.dtype.itemsize):
        return f"the result is {got.dtype.newbyteorder('=').name}, not {expected.dtype}"
    return ""


def precision_short(got, expected):
    """What a check says of a result whose precision is wrong, in a few words (the verdict says the whole
    ``precision_problem`` once); '' where its precision is right."""
    if isinstance(expected, tuple):
        return next((f"item {i} of the returned tuple: {short}" for i, (g, e) in enumerate(zip(got, expected))
                     for short in [precision_short(g, e)] if short), "")
    problem = precision_problem(got, expected)
    if not problem:
        return ""
    if (got.dtype.kind, got.dtype.itemsize) != (expected.dtype.kind, expected.dtype.itemsize):
        return f"the result is {got.dtype.newbyteorder('=').name}, not {expected.dtype}"
    if "float32 number" in problem:
        return "every number in the result is a float32 number"
    return f"the result agrees with the right one to about {_digits(got, expected)} significant digits only"


def float32_shown(got, expected):
    """Does the result itself show float32: its dtype, or numbers that are all float32 numbers (never a few digits
    fewer alone, which an approximation gives too)?"""
    if isinstance(expected, tuple):
        return any(float32_shown(g, e) for g, e in zip(got, expected))
    problem = precision_problem(got, expected)
    return bool(problem) and ("float32 number" in problem or (got.dtype.kind, got.dtype.itemsize) !=
                              (expected.dtype.kind, expected.dtype.itemsize))


def near_at_lower_precision(got, expected):
    """Is ``got`` (of the right type and shape) within what float32 keeps of ``expected``?"""
    if isinstance(expected, tuple):
        return all(near_at_lower_precision(g, e) for g, e in zip(got, expected))
    tolerance = _LOWER_PRECISION_TOLERANCE[4]
    return bool(np.allclose(got.astype(np.float64), expected, rtol=tolerance, atol=tolerance))


def _digits(got, expected):
    """How many significant digits ``got`` shares with ``expected`` at its worst entry."""
    with np.errstate(all="ignore"):
        gap = float(np.max(np.abs(got - expected) / np.maximum(np.abs(expected), CHECK)))
    return max(1, int(round(-np.log10(gap)))) if gap > 0 else 16


def _index_text(index):
    return "[" + ", ".join(str(int(i)) for i in index) + "]"


def describe_difference(got, expected, hidden=False):
    """One sentence on how ``got`` differs from ``expected``: what was checked, what came out, and where.

    ``got`` is what ``returned_problem`` passes: an array of floats of ``expected``'s shape, or a tuple of them.
    ``hidden``: a hidden case's, which names where but no value (an answer's output could carry its inputs)."""
    if isinstance(expected, tuple):
        for i, (g, e) in enumerate(zip(got, expected)):
            if not close(g, e, tolerance=CHECK):
                return f"item {i} of the returned tuple: " + describe_difference(g, e, hidden)
    bad = ~np.isfinite(got)
    if bad.any():
        first = np.argwhere(bad)[0]
        where = f"at index {_index_text(first)}" if got.ndim else ""
        if 1 <= got.shape[-1] <= 8 and not hidden:
            row = first[:-1]
            right = np.round(expected[tuple(row)], 4).tolist()
            where += f" ({'row ' + _index_text(row) if len(row) else 'the result'} should be {right})"
        return f"the result has NaN or infinity in {int(bad.sum())} of its {got.size} entries, first {where}".rstrip()
    diff = np.abs(got.astype(np.float64) - expected)
    worst = np.unravel_index(np.argmax(diff), diff.shape)
    where = f" at index {_index_text(worst)}" if got.ndim else ""
    if hidden:
        return f"the values differ from the right ones, the most{where}"
    digits = 6
    while digits < 17 and f"{got[worst]:.{digits}g}" == f"{expected[worst]:.{digits}g}":
        digits += 1  # as many digits as it takes to tell them apart
    return (f"the values differ from the right ones by up to {diff[worst]:.3g}{where} "
            f"(got {got[worst]:.{digits}g}, expected {expected[worst]:.{digits}g})")
