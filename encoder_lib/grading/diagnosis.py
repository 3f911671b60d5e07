"""What a wrong answer's outputs say about its mistake, measured, when no catalogued mistake explains it.

Two kinds of evidence, both computed from a case's inputs, the answer's
output on them and the right output, never from the answer's source:

- **properties of the exercise**, declared beside it (``Exercise.properties``):
  facts every right answer satisfies, such as "each row of the weights sums to
  1 along ``axis``". A property is a function of one failing case's
  ``Evidence`` that returns a ``Finding`` when the answer breaks it, else None.
- **general probes**, which apply to any exercise (``PROBES``): the answer
  against the right answer with one thing changed (an argument left at its
  default, another axis, a transpose, a shift by one, a sign, a fitted scale
  factor, one parameter added or left out), and the shape of the difference
  (constant, per row, per column, only at padded positions).

Across cases, ``pattern`` compares the cases that pass with those that fail
("right on the 2-D cases, wrong on the batched ones").

Every sentence says what was measured; where it suggests a cause, it asks.
A right answer is never diagnosed: diagnosis runs on failing cases only, and
no property fires on the right output (tests/test_diagnosis.py).
"""

import inspect
import re
import warnings
from dataclasses import dataclass

import numpy as np

from .compare import close, callable_inputs

#: How strongly a finding explains a failure: a variant of the right answer reproduces the answer exactly,
#: a property of every right answer is broken, or a pattern of where the differences are.
EXACT, PROPERTY, PATTERN = 3, 2, 1


@dataclass(frozen=True)
class Finding:
    """One measured fact about a failing case. ``key`` says which fact (the same on every case it holds on)."""

    key: str
    strength: int
    sentence: str


# ---------------------------------------------------------------- numbers in words


def number(v, digits=4):
    """A number as a learner reads it: 0.3333, 1e-05, -2, inf."""
    v = float(v)
    if v != v:
        return "NaN"
    if v in (float("inf"), float("-inf")):
        return "inf" if v > 0 else "-inf"
    if v == int(v) and abs(v) < 1e6:
        return str(int(v))
    return f"{v:.{digits}g}"


def numbers(values, digits=4, most=6):
    """``(0.09, 0.2447, 0.6652)``: a short vector, cut after ``most`` entries."""
    values = list(np.ravel(values))
    text = ", ".join(number(v, digits) for v in values[:most])
    return f"({text}{', ...' if len(values) > most else ''})"


def index(ix):
    return "[" + ", ".join(str(int(i)) for i in ix) + "]"


def span(values, digits=3):
    """``0.148`` or ``0.148 to 0.185``: the range of some measured values."""
    lo, hi = float(np.min(values)), float(np.max(values))
    if np.isclose(lo, hi, rtol=1e-3, atol=1e-9):
        return number(lo, digits)
    return f"{number(lo, digits)} to {number(hi, digits)}"


def shape_text(shape):
    return "(" + ", ".join(str(int(s)) for s in shape) + ("," if len(shape) == 1 else "") + ")"


def softmax_row_off(weights, scores, keep=None):
    """The first row (an index into the leading axes) whose weights are not a softmax of its scores up to a
    constant shift: log(w) - s must be one number across the row's kept entries. None if every row is."""
    for i in np.ndindex(weights.shape[:-1]):
        on = np.ones(weights.shape[-1], dtype=bool) if keep is None else keep[i]
        w, sc = weights[i][on], scores[i][on]
        if len(w) < 2 or (w <= 0).any():
            continue
        gaps = np.log(w) - sc
        if np.ptp(gaps) > 1e-6:
            return i
    return None


# ---------------------------------------------------------------- one failing case


class Evidence:
    """One failing case of one exercise: its inputs by parameter name, what the answer gave, what is right."""

    def __init__(self, exercise, case, outcome):
        self.exercise, self.case, self.outcome = exercise, case, outcome
        signature = inspect.signature(exercise.reference)
        self.parameters = signature.parameters
        self.inputs = dict(signature.bind(*case.args, **case.kwargs).arguments)  # as the case holds them
        self.got, self.expected = outcome.value, case.expected
        self.cheap = True  # may the probes compute many variants of the right answer on it? (diagnose decides)

    @property
    def description(self):
        return self.case.description

    def quote(self, values, digits=3):
        """`` (0.13, -1.2, 0.5)``: some of the inputs, in a sentence; nothing for a hidden case, whose inputs the
        grader never shows."""
        return "" if getattr(self.case, "hidden", False) else " " + numbers(values, digits)

    @property
    def raised(self):
        return self.outcome.raised

    def value(self, name):
        """The input ``name`` as the answer got it (a sub-layer as a function); its default where not passed."""
        if name in self.inputs:
            return callable_inputs(self.inputs[name])
        default = self.parameters[name].default
        return None if default is inspect.Parameter.empty else default

    def given(self, name):
        """Was the input ``name`` passed, with a value other than its default?"""
        if name not in self.inputs:
            return False
        default = self.parameters[name].default
        value = self.inputs[name]
        if default is inspect.Parameter.empty:
            return True
        return not (value is default or (isinstance(value, (str, int, float)) and value == default))

    def reference(self, **changes):
        """The right answer on these inputs with some of them changed; None if it cannot be computed."""
        inputs = {name: callable_inputs(v) for name, v in {**self.inputs, **changes}.items()}
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                return self.exercise.reference(**inputs)
        except Exception:  # the change makes the inputs invalid: no variant to compare with
            return None

    def got_array(self, item=None):
        """The answer's output (or item ``item`` of its tuple) as a float array, or None."""
        got = self.got
        if item is not None:
            if not isinstance(got, tuple) or len(got) <= item:
                return None
            got = got[item]
        try:
            return np.asarray(got, dtype=np.float64)
        except (TypeError, ValueError):
            return None

    def expected_array(self, item=None):
        expected = self.expected if item is None else self.expected[item]
        return np.asarray(expected, dtype=np.float64)

    def outputs(self):
        """``[(name, got, expected)]`` for each array output with the right shape: one, or each item of a tuple."""
        if isinstance(self.expected, tuple):
            names = output_names(self.exercise)
            pairs = [(names[i], self.got_array(i), self.expected_array(i)) for i in range(len(self.expected))]
        else:
            pairs = [("result", self.got_array(), self.expected_array())]
        return [(n, g, e) for n, g, e in pairs if g is not None and g.shape == e.shape]

    def where(self):
        return f"On the check \u201c{self.description}\u201d,"


def output_names(exercise):
    """What an exercise's outputs are called in its sentences: ``("out", "weights")``, ``("result",)``."""
    return getattr(exercise, "outputs", None) or ("result",)


def named_arrays(value, prefix):
    """``{"params['ffn']['b2']": array, ...}``: every array inside an input, by the path a learner writes."""
    found = {}
    if isinstance(value, np.ndarray):
        found[prefix] = value
    elif isinstance(value, dict):
        for key, sub in value.items():
            found.update(named_arrays(sub, f"{prefix}[{key!r}]"))
    elif isinstance(value, (list, tuple)):
        for i, sub in enumerate(value):
            found.update(named_arrays(sub, f"{prefix}[{i}]"))
    return found


# ---------------------------------------------------------------- general probes: the answer's error


_BROADCAST = re.compile(r"operands could not be broadcast together with shapes? ((?:\([\d, ]*\)\s*)+)")
_ASSIGN = re.compile(r"could not broadcast input array from shape \([\d, ]*\) into shape \([\d, ]*\)")
_MATMUL = re.compile(r"matmul: .*\(size (\d+) is different from (\d+)\)")
#: A refusal worded as the course's library words them: an argument, "must", what it expected.
_GUIDANCE = re.compile(r"^\S[\w\[\]'\(\)\.]* must ")
_UNPACK = re.compile(r"(not enough|too many) values to unpack \(expected (\d+)(?:, got (\d+))?\)")


def _shapes(text):
    return [tuple(int(n) for n in group.split(",") if n.strip()) for group in re.findall(r"\(([\d, ]*)\)", text)]


def probe_error(ev):
    """What the answer's error says, with the shapes and axes it names read against the case's inputs."""
    if ev.raised is None:
        return None
    kind, message = ev.raised.kind, ev.raised.message
    where = ev.where()
    broadcast = _BROADCAST.search(message)
    if broadcast:
        shapes = _shapes(broadcast.group(1))
        for a in shapes:
            for b in shapes:
                if len(b) == len(a) - 1 and any(a[:i] + a[i + 1:] == b for i in range(len(a))):
                    axis = next(i for i in range(len(a)) if a[:i] + a[i + 1:] == b)
                    return Finding("error:keepdims", PROPERTY,
                                   f"{where} numpy could not line up shapes {shape_text(a)} and {shape_text(b)}: the "
                                   f"second is the first without its axis {axis - len(a)}, which is what a sum, mean "
                                   f"or max over that axis gives without keepdims=True. Which reduction drops it?")
        return Finding("error:broadcast", PROPERTY,
                       f"{where} it raised {kind}: numpy could not line up the shapes "
                       f"{' and '.join(shape_text(s) for s in shapes)} in one operation. Print the shapes of the "
                       f"arrays in each line to find the one that does not match.")
    unpack = _UNPACK.search(message)
    if unpack:
        arrays = {n: np.shape(v) for n, v in ev.inputs.items() if isinstance(v, np.ndarray)}
        first = next(iter(arrays.items()), None)
        have = f" (here {first[0]} has shape {shape_text(first[1])}, {len(first[1])} axes)" if first else ""
        return Finding("error:unpack", PROPERTY,
                       f"{where} it raised {kind}: a shape was unpacked into {unpack.group(2)} names, but the array "
                       f"has {'fewer' if unpack.group(1) == 'not enough' else 'more'} axes{have}. Batch axes in front "
                       f"are optional: unpack as *lead, seq, d = x.shape and keep `lead` in front.")
    assigned = _ASSIGN.search(message)
    if assigned:
        a, b = _shapes(assigned.group(0))[:2]
        return Finding("error:assign", PROPERTY,
                       f"{where} it assigned an array of shape {shape_text(a)} to a slice of shape {shape_text(b)} "
                       f"(it raised {kind}): the values and the slots they go into must have the same shape. Count "
                       f"what each side gets.")
    core = _MATMUL.search(message)
    if core:
        return Finding("error:matmul", PROPERTY,
                       f"{where} a matrix product failed (it raised {kind}): a @ b needs a's last axis to match b's "
                       f"second-to-last, and here they are {core.group(2)} and {core.group(1)}. Is one operand "
                       f"transposed (np.swapaxes(b, -1, -2)), or the wrong array?")
    if "cannot be interpreted as an integer" in message:
        return Finding("error:float-size", PROPERTY,
                       f"{where} it raised {kind} ({message[:80]}): a size or an index was computed as a float. "
                       f"Sizes come from //, not / (d_model // n_heads is 2, d_model / n_heads is 2.0).")
    if kind == "IndexError" and "too many indices" in message:
        return Finding("error:indices", PROPERTY,
                       f"{where} it raised {kind} ({message[:100]}): it indexes an array with more axes than the "
                       f"array has. Index from the end (x[..., i]) so that the batch axes in front do not matter.")
    if kind == "KeyError":
        keys = sorted({k for v in ev.inputs.values() if isinstance(v, dict) for k in v})
        return Finding("error:key", PROPERTY,
                       f"{where} it looked up the key {message[:60]}, which the inputs do not have"
                       + (f" (the dicts here have {', '.join(map(repr, keys[:10]))})" if keys else "") + ".")
    if _GUIDANCE.search(message):
        return Finding("error:refused", PROPERTY,
                       f"{where} a library function it calls refused its arguments ({kind}): {message[:240]}.")
    if "NoneType" in message:
        nones = [n for n in ev.parameters if n in ev.inputs and ev.inputs[n] is None or
                 (n not in ev.inputs and ev.parameters[n].default is None)]
        if nones:
            return Finding("error:none", PROPERTY,
                           f"{where} it raised {kind} ({message[:80]}): in this check "
                           f"{', '.join('`' + n + '`' for n in nones)} {'is' if len(nones) == 1 else 'are'} None, "
                           f"which the exercise allows. What should happen when it is None?")
    if "axis" in message and ("out of bounds" in message or "AxisError" in kind):
        dims = {n: np.ndim(v) for n, v in ev.inputs.items() if isinstance(v, np.ndarray)}
        return Finding("error:axis", PROPERTY,
                       f"{where} it raised {kind}: {message[:100]}. The inputs here have "
                       f"{', '.join(f'{n} {d} axes' for n, d in dims.items())}: count axes from the end "
                       f"(-1, -2) so that any number of batch axes in front works.")
    if "cannot reshape" in message:
        return Finding("error:reshape", PROPERTY,
                       f"{where} it raised {kind}: {message[:120]}. A reshape must keep the number of entries: "
                       f"print the shape before it and the one you ask for.")
    return None


# ---------------------------------------------------------------- general probes: shapes


def probe_shape(ev):
    """The answer's output has another shape, or is not a tuple where one is expected: how it differs."""
    if ev.raised is not None:
        return None
    where = ev.where()
    if isinstance(ev.expected, tuple):
        names = output_names(ev.exercise)
        if not isinstance(ev.got, tuple):
            return Finding("shape:not-a-tuple", PROPERTY,
                           f"{where} it returned one {type(ev.got).__name__}; the exercise returns "
                           f"{len(ev.expected)} values, ({', '.join(names)}), as a tuple.")
        if len(ev.got) != len(ev.expected):
            return Finding("shape:tuple-length", PROPERTY,
                           f"{where} it returned {len(ev.got)} values; the exercise returns {len(ev.expected)}, "
                           f"({', '.join(names)}).")
        pairs = [(names[i], ev.got_array(i), ev.expected_array(i)) for i in range(len(ev.expected))]
    else:
        pairs = [("result", ev.got_array(), ev.expected_array())]
    for name, got, expected in pairs:
        if got is None:
            return Finding("shape:not-numbers", PROPERTY,
                           f"{where} its {name} is not an array of numbers ({type(ev.got).__name__}).")
        if got.shape == expected.shape:
            continue
        what = f"{where} its {name} has shape {shape_text(got.shape)}; the right one has {shape_text(expected.shape)}"
        if sorted(got.shape) == sorted(expected.shape):
            return Finding("shape:axes-order", PROPERTY, what + ": the same axes in another order. Which swap or "
                                                                "transpose puts them in the order asked for?")
        if got.ndim == expected.ndim - 1:
            return Finding("shape:axis-lost", PROPERTY, what + ": one axis fewer. Which step drops an axis (a sum or "
                                                               "mean without keepdims, an index)?")
        if got.ndim == expected.ndim + 1:
            return Finding("shape:axis-extra", PROPERTY, what + ": one axis more. Which step adds one (keepdims "
                                                                "where none is wanted, a missing reduction)?")
        if got.ndim == expected.ndim and got.size == expected.size:
            return Finding("shape:same-size", PROPERTY, what + ": the same number of entries, split into axes "
                                                               "another way. Check each reshape's target shape.")
        return Finding("shape:other", PROPERTY, what + ".")
    return None


# ---------------------------------------------------------------- general probes: variants of the right answer


def _shown(value):
    """An argument's value as a learner writes it: 1e-05, -1, 'post', None."""
    if isinstance(value, bool) or value is None:
        return repr(value)
    if isinstance(value, (int, float)):
        return number(value)
    return repr(value)


def _variants(ev):
    """``[(key, sentence, ask, variant output)]``: the right answer with one argument at its default."""
    variants = []
    for name, parameter in ev.parameters.items():
        if parameter.default is inspect.Parameter.empty or not ev.given(name):
            continue
        passed = ev.inputs[name]
        passed_text = f"{name}={_shown(passed)}" if isinstance(passed, (int, float, str)) else f"the {name} it passes"
        variants.append((f"default:{name}", f"your result equals the right one for {name}={_shown(parameter.default)}",
                         f"not for {passed_text}: is `{name}` used (and passed on to what you call)?",
                         ev.reference(**{name: parameter.default})))
    return variants


def probe_variants(ev):
    """Is the answer's output the right answer with one thing changed? Each such match is exact, so it is said."""
    if ev.raised is not None:
        return None
    got = ev.got
    where = ev.where()
    for key, said, ask, variant in _variants(ev):
        if variant is not None and close(got, variant, equal_nan=True) and not close(variant, ev.expected):
            return Finding(key, EXACT, f"{where} {said}, {ask}")
    for name, g, e in ev.outputs():
        finding = _probe_array_variants(ev, name, g, e, where)
        if finding:
            return finding
    if isinstance(ev.expected, tuple) and isinstance(got, tuple) and len(got) == len(ev.expected) == 2:
        if close(got[::-1], ev.expected):
            names = output_names(ev.exercise)
            return Finding("swap:tuple", EXACT, f"{where} it returned ({names[1]}, {names[0]}): the right values in "
                                                f"the other order. Return ({names[0]}, {names[1]}).")
    return None


def _probe_array_variants(ev, name, got, expected, where):
    if not np.isfinite(expected).all() or not np.isfinite(got).all():
        return None
    of = f" {name}"
    if got.ndim >= 2 and got.shape[-1] == got.shape[-2] and np.allclose(got, np.swapaxes(expected, -1, -2), atol=1e-6) \
            and not np.allclose(expected, np.swapaxes(expected, -1, -2), atol=1e-6):
        return Finding("transpose", EXACT, f"{where} your{of} is the right one with its last two axes swapped "
                                           f"(transposed). Which product or transpose has its order reversed?")
    for axis in range(-got.ndim, 0):
        n = got.shape[axis]
        if n < 3:
            continue
        if np.allclose(np.take(expected, range(1, n), axis=axis), np.take(expected, range(n - 1), axis=axis)):
            continue  # the right answer repeats along this axis: a shift would show nothing
        for shift in (1, -1):
            mine = np.take(got, range(n - 1) if shift == 1 else range(1, n), axis=axis)
            right = np.take(expected, range(1, n) if shift == 1 else range(n - 1), axis=axis)
            if np.allclose(mine, right, atol=1e-6) and not np.allclose(got, expected, atol=1e-6):
                what = "row" if axis == -2 else "entry" if got.ndim == 1 else f"entry along axis {axis}"
                if shift == 1:
                    return Finding(f"shift:{axis}:1", EXACT,
                                   f"{where} each {what} of your{of} equals the next {what} of the right one (your "
                                   f"{what} 0 is the right {what} 1): is something counted from 1 instead of 0?")
                return Finding(f"shift:{axis}:-1", EXACT,
                               f"{where} each {what} of your{of} equals the previous {what} of the right one (your "
                               f"{what} 1 is the right {what} 0): is an index or a range one off?")
    if np.allclose(got, -expected, atol=1e-6) and np.abs(expected).max() > 1e-6:
        return Finding("negated", EXACT, f"{where} your{of} is the right one with its sign flipped everywhere. "
                                         f"Which subtraction is the wrong way round?")
    scale = _fitted_scale(got, expected)
    if scale is not None:
        return Finding(f"scale:{number(scale, 3)}", EXACT,
                       f"{where} your{of} is the right one times {number(scale, 4)}{_named_factor(ev, scale)}, "
                       f"everywhere. Which factor is missing or extra?")
    return None


def _fitted_scale(got, expected):
    """c with got = c * expected to 1e-6 (c not 1), or None."""
    denominator = float((expected * expected).sum())
    if denominator < 1e-12:
        return None
    c = float((got * expected).sum()) / denominator
    if abs(c - 1) < 1e-6 or abs(c) < 1e-9:
        return None
    return c if np.allclose(got, c * expected, rtol=1e-6, atol=1e-8) else None


def _named_factor(ev, c):
    """`` (= sqrt(4), with 4 the last axis of q)`` where a scale factor is a simple function of a size."""
    sizes = {}
    for name, value in ev.inputs.items():
        if isinstance(value, np.ndarray) and value.ndim:
            sizes.setdefault(int(value.shape[-1]), f"the last axis of {name}")
        elif isinstance(value, int) and not isinstance(value, bool) and value > 1:
            sizes.setdefault(int(value), name)
    for size, what in sizes.items():
        for form, f in ((f"sqrt({size})", np.sqrt(size)), (f"1/sqrt({size})", 1 / np.sqrt(size)),
                        (str(size), size), (f"1/{size}", 1 / size)):
            if size > 1 and abs(c - f) < 1e-6 * max(1, abs(f)):
                return f" (= {form}, with {size} {what})"
    for form, f in (("2", 2.0), ("1/2", 0.5)):
        if abs(c - f) < 1e-9:
            return ""
    return ""


# ---------------------------------------------------------------- general probes: the shape of the difference


def probe_difference(ev):
    """Where and how the answer's output differs: by a parameter, by a constant, only at some positions."""
    if ev.raised is not None:
        return None
    where = ev.where()
    for name, got, expected in ev.outputs():
        if not (np.isfinite(got).all() and np.isfinite(expected).all()) or close(got, expected):
            continue
        of = f" {name}"
        diff = got - expected
        finding = _difference_is_a_parameter(ev, diff, of, where) or _difference_is_constant(diff, of, where) \
            or _difference_only_at_padding(ev, diff, of, where) or _difference_in_some_rows(diff, of, where)
        if finding:
            return finding
    return None


def _difference_is_a_parameter(ev, diff, of, where):
    if diff.ndim == 0:
        return None
    for name, value in ev.inputs.items():
        for path, array in named_arrays(value, name).items():
            if array.ndim != 1 or array.shape[-1] != diff.shape[-1] or np.abs(array).max() < 1e-6:
                continue
            for factor, words in ((-1, "less"), (1, "more")):
                if np.allclose(diff, factor * array, atol=1e-6):
                    return Finding(f"param:{path}:{factor}", EXACT,
                                   f"{where} your{of} is the right one {words} exactly {path} in every row: "
                                   f"is {path} {'left out' if factor < 0 else 'added twice'}?")
    return None


def _difference_is_constant(diff, of, where):
    if diff.size > 1 and np.allclose(diff, diff.flat[0], atol=1e-6):
        return Finding("constant", PATTERN, f"{where} your{of} differs from the right one by the same "
                                            f"{number(diff.flat[0])} everywhere.")
    rows = diff.reshape(-1, diff.shape[-1]) if diff.ndim >= 2 else None
    if rows is not None and len(rows) > 1 and np.allclose(rows, rows[:1], atol=1e-6):
        return Finding("constant-vector", PROPERTY,
                       f"{where} your{of} differs from the right one by the same vector in every row, "
                       f"{numbers(rows[0], 3)}: is a bias (a vector added to every row) left out or added "
                       f"where it does not belong?")
    if diff.ndim >= 2 and diff.shape[-1] > 1 and np.allclose(diff, diff[..., :1], atol=1e-6):
        return Finding("constant-per-row", PATTERN,
                       f"{where} your{of} differs from the right one by one constant per row (along the last axis): "
                       f"by {span(diff[..., 0])}. Something is added to (or missing from) each row as a whole.")
    return None


def _padding(ev):
    for name in ("padding_mask",):
        mask = ev.inputs.get(name)
        if isinstance(mask, np.ndarray) and mask.dtype == bool and mask.any():
            return mask
    return None


def _difference_only_at_padding(ev, diff, of, where):
    mask = _padding(ev)
    if mask is None or diff.ndim < 1:
        return None
    bad = np.abs(diff) > 1e-6
    if diff.shape[-1] == mask.shape[-1]:  # the last axis is the keys: a weight per key
        keys = np.broadcast_to(mask[..., None, :], bad.shape) if bad.ndim > mask.ndim else \
            np.broadcast_to(mask, bad.shape)
        if bad.any() and not (bad & ~keys).any():
            return Finding("padding:keys", PROPERTY, f"{where} your{of} differs only in the columns of padded keys "
                                                     f"(where padding_mask is True): padded keys must get weight 0.")
    seq_axis = diff.ndim - 2
    if diff.ndim >= 2 and diff.shape[seq_axis] == mask.shape[-1]:
        rows = bad.any(axis=-1)
        real = ~np.broadcast_to(mask, rows.shape) if rows.shape[-mask.ndim:] == mask.shape else None
        if real is not None and rows.any():
            padded_sequences = np.broadcast_to(mask.any(axis=-1)[..., None], rows.shape)
            if not (rows & ~padded_sequences).any():
                return Finding("padding:sequences", PROPERTY,
                               f"{where} your{of} is right for the sequences without padding and differs only in "
                               f"those that have some: is the padding mask used where it should be?")
    return None


def _difference_in_some_rows(diff, of, where):
    if diff.ndim < 2:
        return None
    bad = (np.abs(diff) > 1e-6).any(axis=-1)
    rows = np.argwhere(bad)
    total = bad.size
    if 0 < len(rows) <= max(1, total // 4):
        listed = ", ".join(index(r) for r in rows[:4]) + (", ..." if len(rows) > 4 else "")
        return Finding("some-rows", PATTERN, f"{where} only {len(rows)} of the {total} rows of your{of} differ from "
                                             f"the right ones: {listed}.")
    return None


#: At most this many variants of the right answer are computed for one failing case, each at most this large.
MAX_VARIANTS, MAX_SWAP_SIZE = 48, 100_000


def _parameter_variants(ev):
    """``[(key, words, changed inputs)]``: one parameter array of the inputs left out (zeros), negated,
    transposed, or used in place of another of its shape (in the same dict)."""
    found = []
    for name, value in ev.inputs.items():
        arrays = named_arrays(value, name)
        if len(arrays) < 2 and not isinstance(value, dict):
            continue  # a plain input (x, scores): changing it is not a parameter's mistake
        for path, array in arrays.items():
            if array.dtype.kind != "f" or np.abs(array).max() < 1e-9:
                continue
            if array.ndim == 1:
                found.append((f"zero:{path}", f"{path} left out (as zeros)", path, np.zeros_like(array)))
                found.append((f"neg:{path}", f"{path} subtracted where it is added (negated)", path, -array))
            elif array.ndim == 2 and array.shape[0] == array.shape[1] and array.size <= MAX_SWAP_SIZE:
                found.append((f"T:{path}", f"{path} transposed", path, array.T))
        by_shape = {}
        for path, array in arrays.items():
            parent = path.rsplit("[", 1)[0]
            by_shape.setdefault((parent, array.shape), []).append(path)
        for (_, shape), paths in by_shape.items():
            if len(shape) == 1 and len(paths) > 2:  # biases that are added together: all, or all but one of them
                for group in [paths] + [[p for p in paths if p != left] for left in paths]:
                    listed = ", ".join(group)
                    found.append((f"zero:{listed}", f"{listed} all left out (as zeros)", group, None))
                    found.append((f"neg:{listed}", f"{listed} all subtracted where they are added", group, -1))
            if len(paths) < 2 or np.prod(shape) > MAX_SWAP_SIZE:
                continue
            for a in paths:
                for b in paths:
                    if a != b:
                        found.append((f"swap:{a}:{b}", f"{b} used in place of {a}", a, arrays[b]))
    return found[:MAX_VARIANTS]


def _replace(value, prefix, path, new):
    """A copy of the input ``value`` (named ``prefix``) with the array at ``path`` replaced by ``new``."""
    if prefix == path:
        return new
    if isinstance(value, dict):
        return {k: _replace(v, f"{prefix}[{k!r}]", path, new) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_replace(v, f"{prefix}[{i}]", path, new) for i, v in enumerate(value))
    return value


def probe_parameters(ev):
    """Is the answer's output the right one with one parameter left out, negated, transposed or swapped?"""
    if ev.raised is not None or not ev.cheap:
        return None
    for key, words, path, new in _parameter_variants(ev):
        paths = path if isinstance(path, list) else [path]
        name = paths[0].split("[", 1)[0]
        changed = ev.inputs[name]
        for one in paths:
            array = named_arrays(ev.inputs[name], name)[one]
            value = new if not isinstance(path, list) else (np.zeros_like(array) if new is None else -array)
            changed = _replace(changed, name, one, value)
        variant = ev.reference(**{name: changed})
        if variant is not None and close(ev.got, variant, equal_nan=True) and not close(variant, ev.expected):
            return Finding(key, EXACT, f"{ev.where()} your output equals the right one with {words}.")
    return None


def probe_rearranged(ev):
    """The output holds the input's numbers in another order: where the first misplaced number came from."""
    if ev.raised is not None:
        return None
    sources = [(n, v) for n, v in ev.inputs.items() if isinstance(v, np.ndarray) and v.dtype.kind == "f" and v.size > 1]
    for name, got, expected in ev.outputs():
        for source_name, source in sources:
            if got.size != source.size or np.allclose(got, expected):
                continue
            flat = source.ravel()
            if len(np.unique(flat)) != flat.size or not np.allclose(np.sort(got.ravel()), np.sort(flat)):
                continue
            order = np.argsort(flat)
            def origin(values):
                return order[np.clip(np.searchsorted(flat[order], values.ravel()), 0, flat.size - 1)]
            mine, right = origin(got), origin(expected)
            wrong = np.flatnonzero(mine != right)
            if not len(wrong):
                continue
            at = np.unravel_index(wrong[0], got.shape)
            came, should = np.unravel_index(mine[wrong[0]], source.shape), np.unravel_index(right[wrong[0]], source.shape)
            return Finding("rearranged", EXACT,
                           f"{ev.where()} your {name} holds exactly the numbers of {source_name}, in another order: "
                           f"your {name}{index(at)} is {source_name}{index(came)}, where the right one has "
                           f"{source_name}{index(should)} ({len(wrong)} of {got.size} entries are misplaced). Which "
                           f"reshape or transpose moves them there?")
    return None


def probe_nonfinite(ev):
    """NaN or infinity in the output: where, and what the inputs hold there."""
    if ev.raised is not None:
        return None
    for name, got, expected in ev.outputs():
        bad = ~np.isfinite(got)
        if not bad.any() or (~np.isfinite(expected) == bad).all():
            continue
        of = f" {name}"
        first = np.argwhere(bad)[0]
        where = ev.where()
        mask = _padding(ev)
        if mask is not None and got.ndim >= 2:
            rows_bad = bad.any(axis=-1)
            all_padding = mask.all(axis=-1)
            lead = rows_bad.reshape(rows_bad.shape[:all_padding.ndim] + (-1,)).any(axis=-1) \
                if rows_bad.ndim > all_padding.ndim else rows_bad
            if lead.shape == all_padding.shape and lead.any() and not (lead & ~all_padding).any():
                return Finding("nan:all-padding", PROPERTY,
                               f"{where} your{of} has NaN or infinity only for the sequences that are all padding "
                               f"(first at {index(first)}): with every entry left out, a mean or softmax is 0 / 0. "
                               f"Such rows need zeros.")
        inputs = [v for v in ev.inputs.values() if isinstance(v, np.ndarray) and v.dtype.kind == "f"]
        large = max((float(np.abs(v).max()) for v in inputs if v.size), default=0.0)
        if large > 100:
            return Finding("nan:large", PROPERTY,
                           f"{where} your{of} has NaN or infinity in {int(bad.sum())} of its {got.size} entries "
                           f"(first at {index(first)}), on inputs as large as {number(large)}: exp(1000) is inf "
                           f"in float64. Is something subtracted first to keep exp small?")
        return Finding("nan", PROPERTY, f"{where} your{of} has NaN or infinity in {int(bad.sum())} of its "
                                        f"{got.size} entries, first at {index(first)}, where the right one is finite.")
    return None


#: The probes that apply to every exercise, most telling first.
PROBES = (probe_error, probe_shape, probe_variants, probe_parameters, probe_rearranged, probe_nonfinite,
          probe_difference)


# ---------------------------------------------------------------- across cases


def features(exercise, case):
    """What tells one case from another: ``{"batched": True, "padding_mask": "given", "norm": "pre", ...}``."""
    signature = inspect.signature(exercise.reference)
    bound = signature.bind(*case.args, **case.kwargs).arguments
    found = {}
    arrays = [v for v in bound.values() if isinstance(v, np.ndarray) and v.dtype.kind == "f"]
    if arrays:
        found["axes"] = arrays[0].ndim
    for name, parameter in signature.parameters.items():
        if parameter.default is inspect.Parameter.empty:
            continue  # the inputs every case has: told apart by their number of axes above
        value = bound.get(name, parameter.default)
        if isinstance(value, (str, bool, int, float)) or value is None and parameter.default is not None:
            found[name] = value
        else:
            found[name] = "not given" if value is None else "given"
    return found


def _feature_words(name, value):
    if name == "axes":
        return f"inputs of {value} axes"
    if value in ("given", "not given"):
        return f"{name} {value}"
    return f"{name}={value!r}" if isinstance(value, str) else f"{name}={number(value)}"


def pattern(exercise, results):
    """A sentence when the failing checks share features no passing check has; ``results`` are ``(case, ok)``."""
    passing = [features(exercise, c) for c, ok in results if ok]
    failing = [features(exercise, c) for c, ok in results if not ok]
    if not passing or not failing:
        return None
    shared = []
    for name in failing[0]:
        fail_values = {f.get(name) for f in failing}
        pass_values = {p.get(name) for p in passing}
        if len(fail_values) == 1 and not fail_values & pass_values:
            shared.append(_feature_words(name, next(iter(fail_values))))
    if not shared:
        return None
    listed = shared[0] if len(shared) == 1 else ", ".join(shared[:-1]) + " and " + shared[-1]
    return Finding("pattern:" + "+".join(shared), PATTERN,
                   f"Every failing check has {listed}, and no passing check has {'it' if len(shared) == 1 else 'any of them'}.")


# ---------------------------------------------------------------- putting it together


def findings_for(exercise, evidence):
    """The findings on one failing case: its exercise's properties first where they are as telling, then the probes."""
    found = []
    for probe in tuple(getattr(exercise, "properties", ())) + PROBES:
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                finding = probe(evidence)
        except Exception:  # a probe that cannot read this output says nothing about it
            finding = None
        if finding is not None:
            found.append(finding)
    return found


_DECIMAL = re.compile(r"-?\d+\.\d+(?:e-?\d+)?|-?\d+e-?\d+")


def safe_for_hidden(sentence, case):
    """May a finding on a hidden case be shown? Not if it quotes a number its description does not already say:
    a decimal number could be one of the hidden inputs, or an output an answer made of them."""
    return set(_DECIMAL.findall(sentence)) <= set(_DECIMAL.findall(case.description))


#: The variant probes run on at most this many failing cases, the smallest, each of at most this many input numbers.
CHEAP_CASES, CHEAP_SIZE = 2, 200_000


def diagnose(exercise, failing, results, probed=None, most=2):
    """Up to ``most`` findings on what the failing checks measured, then the pattern across checks, if any.

    ``failing`` is ``[Evidence]`` for the failing cases, ``results`` ``[(case, ok)]`` for all of them, and
    ``probed`` ``{probe name: right?}`` for the exercise's probes (``Exercise.locate`` reads them). The finding
    that holds on the most failing checks comes first (the stronger one, where two hold on as many); a second
    is said only if it covers failing checks the first does not.
    """
    found, order = {}, []  # key -> (finding, {indices of the failing checks it holds on})
    sizes = [sum(np.size(v) for v in named_arrays(ev.inputs, "").values()) for ev in failing]
    cheapest = sorted(range(len(failing)), key=lambda i: sizes[i])[:CHEAP_CASES]
    for i, ev in enumerate(failing):
        ev.cheap = i in cheapest and sizes[i] <= CHEAP_SIZE
        for finding in findings_for(exercise, ev):
            if ev.case.hidden and not safe_for_hidden(finding.sentence, ev.case):
                continue  # it would quote numbers of a hidden case (its inputs, or an output made of them)
            if finding.key not in found:
                found[finding.key] = (finding, set())
                order.append(finding.key)
            found[finding.key][1].add(i)
    ranked = sorted(order, key=lambda k: (-len(found[k][1]), -found[k][0].strength, order.index(k)))
    sentences, covered = [], set()
    for key in ranked:
        finding, holds = found[key]
        if len(sentences) == most or (sentences and not holds - covered):
            continue
        others = len(holds) - 1
        said = finding.sentence + (f" The same holds on {others} other failing check{'s' * (others > 1)}."
                                   if others else "")
        sentences.append(Finding(finding.key, finding.strength, said))
        covered |= holds
    located = exercise.locate(probed) if probed and exercise.locate is not None else None
    if located is not None and len(sentences) < most:
        sentences.append(located)
    across = pattern(exercise, results)
    if across:
        sentences.append(across)
    return sentences
