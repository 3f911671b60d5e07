"""The facts that hold for every exercise: what its error names, what it returned, where it is not finite."""

import re

import numpy as np

from ..compare import SUBCLASS
from ..in_words import index, number, shape_text
from .evidence import Finding, output_names


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


_NOT_FINITE = re.compile(r"^(\w+) must be finite, but \w*(\[[\d, ]*\])? is (nan|inf|-inf)")


def error_not_finite_input(ev, message):
    """The library refused an array of NaN or infinity that the answer passed it: made by the answer's own code
    before that call, on inputs of this size."""
    found = _NOT_FINITE.search(message)
    if not found:
        return None
    large = _largest_input(ev)
    said = f" (its inputs here are as large as {number(large)})" if large > 100 else ""
    return Finding("error:not-finite", f"{ev.where()} your answer passed {found.group(3)} to a function of the "
                                       f"course's library (as its `{found.group(1)}`), which refused it: your code "
                                       f"made a value that is not finite before that call{said}.")


ERROR_FACTS = (error_not_finite_input, error_broadcast, error_unpack, error_matmul, error_axis, error_float_size, error_none, error_key)


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
    if type(got) is not np.ndarray:
        kind = SUBCLASS.format(type(got).__name__) if isinstance(got, np.ndarray) else \
            getattr(got, 'type_name', type(got).__name__)
        said = f"{where} its {name} is a {kind}; the exercise returns a plain numpy array (np.ndarray) of floats"
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
        large = _largest_input(ev)
        said = f" on inputs as large as {number(large)}" if large > 100 else ""
        return Finding("nan:large" if said else "nan",
                       f"{where} your{of} has NaN or infinity in {int(bad.sum())} of its {got.size} entries "
                       f"(first at {index(first)}){said}; the right one is finite everywhere.")
    return None


def _largest_input(ev):
    return max((float(np.abs(v).max()) for v in ev.inputs.values() if isinstance(v, np.ndarray) and
                v.dtype.kind == "f" and v.size), default=0.0)


def _padding(ev):
    mask = ev.inputs.get("padding_mask")
    return mask if isinstance(mask, np.ndarray) and mask.dtype == bool and mask.any() else None


def _only_all_padding(bad, mask):
    rows_bad = bad.any(axis=-1)
    all_padding = mask.all(axis=-1)
    lead = rows_bad.reshape(rows_bad.shape[:all_padding.ndim] + (-1,)).any(axis=-1) \
        if rows_bad.ndim > all_padding.ndim else rows_bad
    return lead.shape == all_padding.shape and lead.any() and not (lead & ~all_padding).any()
