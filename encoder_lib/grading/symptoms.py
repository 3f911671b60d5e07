"""What was measured on a wrong answer whose cause is not verified: its symptoms, each with the rule it breaks.

When no variant of the right answer reproduces what an answer computed
(``causes``), the feedback says only what was measured, from a failing
case's inputs, the answer's output on them and the right output, never from
the answer's source:

- **the rules of the exercise**, declared beside it (``Exercise.properties``):
  what every right answer satisfies, such as "each row of the weights sums to
  1 along ``axis``". A property is a function of one failing case's
  ``Evidence`` that returns a ``Finding`` when the answer breaks it, else
  None: the rule, and what the answer gives instead;
- **general facts**, which hold for any exercise (``GENERAL``): what its
  error names (shapes set against the case's inputs), the shape and type of
  what it returned, where it is not finite.

A sentence says what was measured and the rule it breaks, never a guess at
the cause: no question, no "is ... missing?". A rule an answer satisfies is
never reported (tests/test_symptoms.py runs every property on right answers).
"""

import inspect
import re
from dataclasses import dataclass

import numpy as np

from .compare import callable_inputs, quietly
from .in_words import index, number, numbers, shape_text

@dataclass(frozen=True)
class Finding:
    """One measured fact about a failing case. ``key`` says which fact (the same on every case it holds on)."""

    key: str
    sentence: str


# ---------------------------------------------------------------- one failing case


#: A result with more than this many times the right answer's numbers is not converted to measure it.
MOST_CONVERTED = 4


class Evidence:
    """One failing case of one exercise: its inputs by parameter name, what the answer gave, what is right."""

    def __init__(self, exercise, case, outcome):
        self.exercise, self.case, self.outcome = exercise, case, outcome
        signature = inspect.signature(exercise.reference)
        self.parameters = signature.parameters
        self.inputs = dict(signature.bind(*case.args, **case.kwargs).arguments)  # as the case holds them
        self.got, self.expected = outcome.value, case.expected
        self._arrays = {}  # item -> the answer's output as floats, converted once

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
            with quietly():
                return self.exercise.reference(**inputs)
        except Exception:  # the change makes the inputs invalid: no variant to compare with
            return None

    def got_array(self, item=None):
        """The answer's output (or item ``item`` of its tuple) as a float array, converted once; None where it is
        not numbers, or has many more of them than the right answer (a result of any size converted to float64
        could cost the grader gigabytes: its shape is said by the check instead)."""
        if item not in self._arrays:
            self._arrays[item] = self._as_floats(item)
        return self._arrays[item]

    def _as_floats(self, item):
        got, expected = self.got, self.expected
        if item is not None:
            if not isinstance(got, tuple) or len(got) <= item or not isinstance(expected, tuple):
                return None
            got, expected = got[item], expected[item]
        if isinstance(got, np.ndarray) and (got.dtype == object or
                                            got.size > MOST_CONVERTED * max(1, np.size(expected))):
            return None
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


# ---------------------------------------------------------------- general facts: the answer's error


_BROADCAST = re.compile(r"operands could not be broadcast together with shapes? ((?:\([\d, ]*\)\s*)+)")
_MATMUL = re.compile(r"matmul: .*\(size (\d+) is different from (\d+)\)")
_UNPACK = re.compile(r"(not enough|too many) values to unpack \(expected (\d+)(?:, got (\d+))?\)")


def _shapes(text):
    return [tuple(int(n) for n in group.split(",") if n.strip()) for group in re.findall(r"\(([\d, ]*)\)", text)]


def _input_shapes(ev):
    """``x (2, 3, 5)``: the case's array inputs by name and shape (none for a hidden case: its shapes are said
    in its description)."""
    arrays = [(n, np.shape(v)) for n, v in ev.inputs.items() if isinstance(v, np.ndarray)]
    return ", ".join(f"{n} {shape_text(s)}" for n, s in arrays)


def _dropped_axis(a, b):
    """The axis (counted from the end) ``b`` is ``a`` without, or None."""
    if len(b) != len(a) - 1:
        return None
    return next((i - len(a) for i in range(len(a)) if a[:i] + a[i + 1:] == b), None)


def error_broadcast(ev, message):
    found = _BROADCAST.search(message)
    if not found:
        return None
    shapes = _shapes(found.group(1))
    said = " and ".join(shape_text(s) for s in shapes)
    for a in shapes:
        for b in shapes:
            axis = _dropped_axis(a, b)
            if axis is not None:
                return Finding("error:broadcast-axis", f"{ev.where()} numpy could not line up arrays of shapes {said} "
                                                       f"in one operation: {shape_text(b)} is {shape_text(a)} without "
                                                       f"its axis {axis}. Arrays combined in one step must match "
                                                       f"axis by axis from the right (or be 1 there).")
    return Finding("error:broadcast", f"{ev.where()} numpy could not line up arrays of shapes {said} in one "
                                      f"operation (the inputs here: {_input_shapes(ev)}). Arrays combined in one "
                                      f"step must match axis by axis from the right (or be 1 there).")


def _matched(pattern, key, said):
    """A fact of the errors whose message ``pattern`` matches: ``Finding(key, said(ev, match))``."""
    def fact(ev, message):
        found = pattern.search(message)
        return Finding(key, said(ev, found)) if found else None
    return fact


def _unpacked(ev, found):
    return (f"{ev.where()} a shape was unpacked into {found.group(2)} names, and the array has "
            f"{'fewer' if found.group(1) == 'not enough' else 'more'} axes (the inputs here: {_input_shapes(ev)}). "
            f"This exercise's arrays may have any number of batch axes in front.")


def _multiplied(ev, found):
    return (f"{ev.where()} a matrix product a @ b failed: a's last axis has {found.group(2)} entries and b's "
            f"second-to-last {found.group(1)}; they must be equal (the inputs here: {_input_shapes(ev)}).")


error_unpack = _matched(_UNPACK, "error:unpack", _unpacked)
error_matmul = _matched(_MATMUL, "error:matmul", _multiplied)


def error_axis(ev, message):
    if "axis" not in message or not ("out of bounds" in message or "AxisError" in ev.raised.kind):
        return None
    return Finding("error:axis", f"{ev.where()} it named an axis the array does not have ({message[:100]}); the "
                                 f"inputs here: {_input_shapes(ev)}. Axes counted from the end (-1, -2) work for "
                                 f"any number of batch axes in front.")


def error_float_size(ev, message):
    if "cannot be interpreted as an integer" not in message:
        return None
    return Finding("error:float-size", f"{ev.where()} a size or an index was a float ({message[:80]}): numpy "
                                       f"takes whole numbers there (d_model // n_heads is 2, d_model / n_heads is "
                                       f"2.0).")


def error_none(ev, message):
    nones = [n for n in ev.parameters if (n in ev.inputs and ev.inputs[n] is None) or
             (n not in ev.inputs and ev.parameters[n].default is None)]
    if "NoneType" not in message or not nones:
        return None
    listed = ", ".join(f"`{n}`" for n in nones)
    return Finding("error:none", f"{ev.where()} it raised {ev.raised.kind} ({message[:80]}); in this check {listed} "
                                 f"{'is' if len(nones) == 1 else 'are'} None, which the exercise allows.")


def error_key(ev, message):
    if ev.raised.kind != "KeyError":
        return None
    keys = sorted({str(k) for v in ev.inputs.values() if isinstance(v, dict) for k in v})
    return Finding("error:key", f"{ev.where()} it looked up the key {message[:60]}, which the inputs do not have"
                                + (f" (the dicts here have {', '.join(repr(k) for k in keys[:10])})" if keys else "")
                                + ".")


ERROR_FACTS = (error_broadcast, error_unpack, error_matmul, error_axis, error_float_size, error_none, error_key)


def fact_error(ev):
    """What the answer's error says, with the shapes it names set against the case's inputs."""
    if ev.raised is None:
        return None
    return next((found for fact in ERROR_FACTS if (found := fact(ev, ev.raised.message)) is not None), None)


# ---------------------------------------------------------------- general facts: what it returned


def fact_returned(ev):
    """What the answer returned, where it is not what the exercise returns: its type, its number of values, its
    shape (the axes it has against the right ones), never a guess at the step that made it."""
    if ev.raised is not None:
        return None
    where = ev.where()
    names = output_names(ev.exercise)
    if isinstance(ev.expected, tuple):
        if not isinstance(ev.got, tuple):
            return Finding("returned:not-a-tuple", f"{where} it returned one {type(ev.got).__name__}; the exercise "
                                                   f"returns {len(ev.expected)} values, ({', '.join(names)}), as a "
                                                   f"tuple.")
        if len(ev.got) != len(ev.expected):
            return Finding("returned:tuple-length", f"{where} it returned {len(ev.got)} values; the exercise returns "
                                                    f"{len(ev.expected)}, ({', '.join(names)}).")
        pairs = [(names[i], ev.got[i], ev.expected[i]) for i in range(len(ev.expected))]
    else:
        pairs = [("result", ev.got, ev.expected)]
    for name, got, expected in pairs:
        found = _returned_array(where, name, got, expected)
        if found:
            return found
    return None


def _returned_array(where, name, got, expected):
    if not isinstance(got, np.ndarray):
        said = f"{where} its {name} is a {getattr(got, 'type_name', type(got).__name__)}; the exercise returns a numpy " \
               f"array (np.ndarray) of floats"
        return Finding("returned:type", said + (": the numbers in it are the right ones." if _right_numbers(got, expected)
                                                else "."))
    if got.dtype.kind != "f":
        return Finding("returned:dtype", f"{where} its {name} is an array of {got.dtype}; the exercise returns "
                                         f"floating-point numbers.")
    if got.shape == expected.shape:
        return None
    said = f"{where} its {name} has shape {shape_text(got.shape)}; the right one has {shape_text(expected.shape)}"
    if sorted(got.shape) == sorted(expected.shape):
        return Finding("returned:axes-order", said + ": the same sizes in another order.")
    axis = _dropped_axis(expected.shape, got.shape)
    if axis is not None:
        return Finding("returned:axis-fewer", said + f": the right shape without its axis {axis}.")
    extra = _dropped_axis(got.shape, expected.shape)
    if extra is not None:
        return Finding("returned:axis-more", said + f": one axis more, at {extra}.")
    if got.size == expected.size:
        return Finding("returned:same-size", said + ": as many entries, in axes of other sizes.")
    return Finding("returned:shape", said + ".")


def _right_numbers(got, expected):
    """Are the numbers in ``got`` (a list, say) the right ones? Only for a value of at most the right size."""
    if not isinstance(got, (list, tuple)) or not expected.ndim or len(got) != expected.shape[0] or \
            expected.size > 100_000:
        return False
    try:
        array = np.asarray(got, dtype=np.float64)
    except (TypeError, ValueError):
        return False
    return array.shape == expected.shape and bool(np.allclose(array, expected, rtol=1e-6, atol=1e-6))


def fact_not_finite(ev):
    """NaN or infinity in the output where the right one is finite: how many, where, and, with a padding mask,
    whether only in the sequences that are all padding."""
    if ev.raised is not None:
        return None
    for name, got, expected in ev.outputs():
        bad = ~np.isfinite(got)
        if not bad.any() or (~np.isfinite(expected) == bad).all():
            continue
        first = np.argwhere(bad)[0]
        where, of = ev.where(), f" {name}"
        mask = _padding(ev)
        if mask is not None and got.ndim >= 2 and _only_all_padding(bad, mask):
            return Finding("nan:all-padding", f"{where} your{of} has NaN or infinity only in the sequences that are "
                                              f"all padding (first at {index(first)}); the right one has zeros "
                                              f"there.")
        large = max((float(np.abs(v).max()) for v in ev.inputs.values() if isinstance(v, np.ndarray) and
                     v.dtype.kind == "f" and v.size), default=0.0)
        said = f" on inputs as large as {number(large)}" if large > 100 else ""
        return Finding("nan:large" if said else "nan",
                       f"{where} your{of} has NaN or infinity in {int(bad.sum())} of its {got.size} entries "
                       f"(first at {index(first)}){said}; the right one is finite everywhere.")
    return None


def _padding(ev):
    mask = ev.inputs.get("padding_mask")
    return mask if isinstance(mask, np.ndarray) and mask.dtype == bool and mask.any() else None


def _only_all_padding(bad, mask):
    rows_bad = bad.any(axis=-1)
    all_padding = mask.all(axis=-1)
    lead = rows_bad.reshape(rows_bad.shape[:all_padding.ndim] + (-1,)).any(axis=-1) \
        if rows_bad.ndim > all_padding.ndim else rows_bad
    return lead.shape == all_padding.shape and lead.any() and not (lead & ~all_padding).any()


#: The facts that hold for every exercise, in the order they are tried.
GENERAL = (fact_error, fact_returned, fact_not_finite)


# ---------------------------------------------------------------- putting it together


def findings_for(exercise, evidence):
    """The facts measured on one failing case: its exercise's rules first, then the general facts."""
    found = []
    for probe in tuple(getattr(exercise, "properties", ())) + GENERAL:
        try:
            with quietly():
                finding = probe(evidence)
        except Exception:  # a rule that cannot read this output says nothing about it
            finding = None
        if finding is not None:
            found.append(finding)
    return found


_DECIMAL = re.compile(r"-?\d+\.\d+(?:e-?\d+)?|-?\d+e-?\d+")


def safe_for_hidden(sentence, case):
    """May a finding on a hidden case be shown? Not if it quotes a number its description does not already say:
    a decimal number could be one of the hidden inputs, or an output an answer made of them."""
    return set(_DECIMAL.findall(sentence)) <= set(_DECIMAL.findall(case.description))


def measure(exercise, failing, probed=None, most=2):
    """Up to ``most`` findings on what the failing checks measured (``failing``: ``[Evidence]``), the one that
    holds on the most failing checks first; a second only where it covers checks the first does not. Then, from
    ``probed`` (``{probe name: right?}``), where the exercise's probes locate the failure (``Exercise.locate``)."""
    found, order = {}, []  # key -> (finding, {indices of the failing checks it holds on})
    for i, ev in enumerate(failing):
        for finding in findings_for(exercise, ev):
            if ev.case.hidden and not safe_for_hidden(finding.sentence, ev.case):
                continue  # it would quote numbers of a hidden case (its inputs, or an output made of them)
            if finding.key not in found:
                found[finding.key] = (finding, set())
                order.append(finding.key)
            found[finding.key][1].add(i)
    ranked = sorted(order, key=lambda k: (-len(found[k][1]), order.index(k)))
    sentences, covered = [], set()
    for key in ranked:
        finding, holds = found[key]
        if len(sentences) == most or (sentences and not holds - covered):
            continue
        others = len(holds) - 1
        said = finding.sentence + (f" The same holds on {others} other failing check{'s' * (others > 1)}."
                                   if others else "")
        sentences.append(Finding(finding.key, said))
        covered |= holds
    located = exercise.locate(probed) if probed and exercise.locate is not None else None
    if located is not None and len(sentences) < most:
        sentences.append(located)
    return sentences


def ruled_out(exercise, complete=True, ambiguous=False, pairs=True):
    """The sentence that says which causes the search tried, none of which gives the answer's outputs exactly (all
    it knows, or as many as its budget allowed); or that several unrelated ones each give the answer's outputs, so
    that none is named. Without ``pairs`` (no failing check returned a result of the right shape), two slips
    together were not tried."""
    if ambiguous:
        return ("Several unrelated slips each give exactly what your answer gives, so the checks cannot tell which "
                "one is yours: compare your steps with the rule above, one at a time.")
    # what was verified, and no more: none of these gives the answer's outputs exactly (an answer near one of them, a
    # known mistake with a constant mistyped, is not told that its mistake is ruled out)
    tried = "Tried, and none gives exactly what your answer gives" if complete else \
        "Tried as far as the checker's budget went, and none gives exactly what your answer gives"
    kinds = ["every single slip the checker knows (another axis, a dropped keepdims or transpose, an operator, term, "
             "call, argument or constant changed, a parameter ignored or swapped)"]
    kinds += ["two of them together"] if pairs else []
    kinds += ["the known mistakes of this exercise"] if exercise.mistakes else []
    said = f"{tried}: {', '.join(kinds[:-1])}{' and ' if len(kinds) > 1 else ''}{kinds[-1]}."
    if not pairs:
        said += (" Two slips together are not tried where no failing check returned a result of the right shape: "
                 "an error says too little.")
    return said
