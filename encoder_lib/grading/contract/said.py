"""What a contract check found, in words: a sentence for each promise an answer breaks (``findings``), verified by the
checks themselves, and the few words a check says of what a call did besides returning (``problem``)."""

import numpy as np

from ..compare import CHECK, close, relative_gap, returned_problem
from ..symptoms import Finding

#: How many of the promises broken a verdict says (the most telling first).
MOST = 3
#: The layouts a check gives its inputs in, with the words its finding says of them.
LAYOUTS = {"fortran": "in Fortran order (column-major: for two axes, a C-ordered array's transpose)",
           "strided": "each every second entry of a larger array (a slice with a step)",
           "read-only": "read-only"}
#: The findings that say an answer's values are not a function of its inputs alone: no cause is sought in them.
NOT_A_FUNCTION = {"contract:random", "contract:again", "contract:kept", "contract:identity"}


def problem(outcome):
    """What a call was measured to do besides its result, as a check says it (None where nothing): it drew random
    numbers, or its result shares memory with an input (by name) or with what an earlier call returned."""
    if outcome.random:
        return "it drew random numbers"
    if outcome.shares:
        first = outcome.shares[0]
        return f"its result shares memory with {'the input `' + first + '`' if first != EARLIER else first}"
    return None


#: What ``Outcome.shares`` holds for a result that shares memory with an earlier call's.
EARLIER = "what an earlier call returned"


def refusal_problem(case, outcome):
    """A check of an input the library refuses: None where the answer raised too, else what it did instead."""
    if outcome.raised is not None:
        return None
    shape = getattr(outcome.value, "shape", None)
    got = f"a {_shape(shape)} result" if shape is not None else f"a {type(outcome.value).__name__}"
    return f"it returned {got}; the library raises {case.expected.kind}: {case.expected.message}"[:600]


def _shape(shape):
    return "(" + ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"


def findings(checks):
    """The promises the answer judged in ``checks`` breaks, as ``Finding``s (at most ``MOST``): what a call was
    measured to do (random numbers, a view), then each failing contract check whose own base passes."""
    found = [f for f in (_random(checks), _view(checks)) if f is not None]
    by_case = {id(c.case): c for c in checks}
    for check in checks:
        how = check.case.how
        if how is None or check.ok or check.outcome.random or check.outcome.shares:
            continue
        finding = SAID[how.kind](check, by_case.get(id(how.base)), checks)
        if finding is not None and finding.key not in {f.key for f in found}:
            found.append(finding)
    return found[:MOST]


def _random(checks):
    if any(c.outcome.random for c in checks):
        return Finding("contract:random",
                       "Your function draws random numbers: numpy's or Python's random generator moved while it ran, "
                       "or it made a generator seeded by the system (np.random.default_rng()). The library's "
                       "function gives the same result for the same input on every call and leaves the caller's "
                       "random numbers alone: dropout and other training-time randomness have no place in it.")
    return None


def _view(checks):
    check = next((c for c in checks if c.outcome.shares), None)
    if check is None:
        return None
    first = check.outcome.shares[0]
    if first == EARLIER:
        return Finding("contract:kept-array",
                       f"On {named(check)}, your result shares memory with what an earlier call "
                       f"returned: your function hands out an array it keeps between calls, so a caller who changes "
                       f"one result changes the others. The library's function returns a new array on every call.")
    return Finding("contract:view",
                   f"On {named(check)}, your result shares memory with the input `{first}`: it is a "
                   f"view of it (numpy's reshape, swapaxes, .T and slices give views where they can), so a caller "
                   f"who writes into the result writes into `{first}`. The library's function returns a new array: "
                   f"end with .copy() where numpy gives a view.")


def named(check):
    """A check as a sentence names it: its description in quotes (a contract check's quotes its base already)."""
    return check.description if check.case.how is not None else f"\u201c{check.description}\u201d"


def _passes(base):
    return base is not None and base.ok


def _said_again(check, base, checks):
    if not _passes(base) or check.outcome.raised is not None or not _same_kind(check.outcome.value, base):
        return None
    return Finding("contract:again",
                   f"Called again on the same input ({named(base)}), your function returned other "
                   f"values than the first time (up to {relative_gap(check.outcome.value, base.outcome.value):.3g} "
                   f"apart): its result depends on something besides its inputs, kept between calls. The library's "
                   f"function returns the same result for the same input, whatever was called before.")


def _same_kind(value, base):
    """Is ``value`` of the structure and shapes of ``base``'s result (so that the two can be compared)?"""
    other = base.outcome.value
    if isinstance(other, tuple):
        return isinstance(value, tuple) and len(value) == len(other) and \
            all(np.shape(v) == np.shape(o) for v, o in zip(value, other))
    return isinstance(value, np.ndarray) and np.shape(value) == np.shape(other)


def _said_rolled(check, base, checks):
    """A result for other inputs that is exactly an earlier call's result (whose right result differs); else what was
    measured."""
    if not _passes(base):
        return None
    for earlier in checks:
        if earlier is check:
            return Finding("contract:other-values",
                           f"On {named(check)}, your result is wrong, where on {named(base)} itself it is right. "
                           f"The library's result follows the inputs' values on every call, whatever came before.")
        if earlier.outcome.raised is None and _same_kind(check.outcome.value, earlier) and \
                close(check.outcome.value, earlier.outcome.value, tolerance=CHECK) and \
                not close(check.case.expected, earlier.case.expected, tolerance=CHECK):
            return Finding("contract:kept",
                           f"For {named(check)} your function returned exactly what it returned for "
                           f"{named(earlier)}, an earlier call on other inputs of the same shapes: "
                           f"it keeps results between calls and gives one back for other inputs. The library's "
                           f"function computes every call from its own inputs.")
    return None


def _said_refilled(check, base, checks):
    """Called on the very arrays of the call before, their values changed in place: that call's result again."""
    if base is None or check.outcome.raised is not None or not _same_kind(check.outcome.value, base) or \
            not close(check.outcome.value, base.outcome.value, tolerance=CHECK) or \
            close(check.case.expected, base.case.expected, tolerance=CHECK):
        return None
    return Finding("contract:identity",
                   "Called on the same array objects as the call before, their values changed in place, your "
                   "function returned what it returned before: it knows its inputs by their identity (id(x), `is`), "
                   "not their values. The library's function reads the values on every call.")


def _said_layout(check, base, checks):
    if not _passes(base):
        return None
    layout = check.case.how.layout
    if layout == "read-only" and check.outcome.raised is not None:
        return Finding("contract:read-only",
                       f"With its inputs read-only ({named(check)}), your function raised "
                       f"{check.outcome.raised.kind}: it writes into an input, even if it puts the values back "
                       f"afterwards. The library's function takes read-only inputs (x.flags.writeable False): compute "
                       f"into new arrays.")
    did = f"raised {check.outcome.raised.kind}" if check.outcome.raised is not None else "gives other values"
    return Finding("contract:layout",
                   f"With every input array {LAYOUTS[layout]}, the same values in another memory layout "
                   f"({named(check)}), your function {did}, where it is right with C-ordered "
                   f"ones: it reads memory as if every input were C-ordered (np.frombuffer, as_strided, strides, a "
                   f"reshape that copies where a view was meant). The library's function reads values, in any layout.")


def _said_dtype(check, base, checks):
    name = check.case.how.words
    value = check.outcome.value
    if check.outcome.raised is not None or returned_problem(value, check.case.expected, False):
        return None
    got = [v.dtype.name for v in (value if isinstance(value, tuple) else (value,))]
    wrong = [d for d in got if d != name]
    if wrong:
        return Finding("contract:dtype",
                       f"For {name} inputs ({named(check)}) your result is {wrong[0]}, where the "
                       f"library's keeps the inputs' dtype, {name}. {_DTYPE_WHY.get(wrong[0], '')}".rstrip())
    if not _passes(base):
        return None
    return Finding("contract:precision",
                   f"For {name} inputs ({named(check)}) your result is {name} but off by up to "
                   f"{relative_gap(value, check.case.expected):.2g} (relative), more than {name}'s rounding explains: "
                   f"the library computes float16 in float32 and float32 as it is.")


#: Why a result comes back in a wider dtype than its inputs, by that dtype: what was measured says where to look.
_DTYPE_WHY = {
    "float64": "NumPy 2 computes in float64 once a float64 array or a numpy float64 number enters: np.zeros(shape) "
               "without a dtype, np.sqrt(d) or np.float64(...), an integer array such as a count. Python numbers "
               "(math.sqrt(d), 0.5) keep the inputs' dtype, and so do np.zeros(shape, x.dtype) and .astype(x.dtype).",
    "float32": "A step gives float32 for float16: SciPy's erf computes float16 in float32 and returns float32, as "
               "does a float32 array or number mixed in; cast the result back with .astype(x.dtype)."}


def _said_strings(check, base, checks):
    if not _passes(base):
        return None
    made = f"{check.case.how.words} given as a string made at run time ({named(check)}: the same text, another object)"
    return Finding("contract:strings", f"With {made}, your function gives another result than with the literal: it "
                                       f"compares strings with `is`, which asks whether two are the same object, not "
                                       f"`==`, which compares their text. The library's function compares the text: "
                                       f"use ==.")


def _said_names(check, base, checks):
    if not _passes(base) or check.outcome.raised is None:
        return None
    by = "by its name" if check.case.how.kind == "names" else "by position"
    return Finding(f"contract:{check.case.how.kind}",
                   f"Called with every argument {by} ({named(check)}), your function raised "
                   f"{check.outcome.raised.kind}: {check.outcome.raised.message[:200]}. The statement's arguments, "
                   f"their names and their order, are part of the exercise: keep them as its first line has them.")


def _said_refused(check, base, checks):
    if check.outcome.raised is not None:
        return None
    expected = check.case.expected
    return Finding("contract:refusal",
                   f"The library refuses {check.case.how.words} ({expected.kind}: {expected.message[:200]}), and "
                   f"your function returned a result instead ({check.problem.split(';')[0].removeprefix('it ')}): "
                   f"raise a ValueError that says which argument is wrong and why, as the statement asks.")


def _said_smallest(check, base, checks):
    return Finding("contract:smallest",
                   f"At the smallest input the library takes, of shape {check.case.how.words} "
                   f"({named(check)}), {check.problem}.")


#: What each kind of contract check says when it fails: a function of the check, the check it is derived from and
#: all the checks, returning a ``Finding`` where what was measured verifies it, else None.
SAID = {"again": _said_again, "rolled": _said_rolled, "refilled": _said_refilled, "layout": _said_layout,
        "dtype": _said_dtype, "strings": _said_strings, "names": _said_names, "positions": _said_names,
        "refused": _said_refused, "smallest": _said_smallest}
