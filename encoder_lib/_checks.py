"""Argument checks shared by the public functions, and what every public function promises.

Each check raises a ``TypeError`` (wrong kind of object or dtype) or a
``ValueError`` (right kind, wrong shape or value) whose message names the
argument and says what was expected, so a learner can fix the call without
reading the library's code.

``public`` wraps every public function with the library's three promises:

- float16 in, float16 out (computed in float32, which float16 has too few
  digits for); float32 and float64 are computed as given. Integer and boolean
  arrays are refused (``float_array`` says how to convert them), never
  computed in integer arithmetic;
- finite in, finite out: a result with NaN or infinity from finite inputs is
  refused with an ``Overflow`` error that says how large the inputs were and
  what to do, instead of being returned;
- results never share memory with inputs (no function returns a view of its
  input unless its docstring says so).
"""

import functools
import inspect
import textwrap

import numpy as np

FLOAT_DTYPES = (np.float16, np.float32, np.float64)


#: Whether NaN and infinity pass through (``non_finite_allowed``): only while the grading code computes what a
#: wrong answer computes, where a NaN is what it must reproduce. Never for a learner's or a notebook's call.
_LENIENT = [False]


class non_finite_allowed:
    """Within this, the library's functions take and give NaN and infinity instead of refusing them."""

    def __enter__(self):
        self.before = _LENIENT[0]
        _LENIENT[0] = True

    def __exit__(self, *_):
        _LENIENT[0] = self.before


class Overflow(ValueError):
    """A result that does not fit the dtype it is computed in (NaN or infinity from finite inputs)."""


def _shape_text(shape):
    return "(" + ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"


def float_array(x, name, min_ndim=1, finite=True):
    """``x`` as a float16, float32 or float64 array with at least ``min_ndim`` axes, none empty."""
    if x is None:
        raise TypeError(f"{name} must be an array of floats, got None")
    if isinstance(x, np.ma.MaskedArray):
        raise TypeError(f"{name} is a masked array, whose mask would be ignored here: fill it first "
                        f"({name}.filled(0.0)); to leave positions out of attention, pass padding_mask")
    if isinstance(x, (str, bytes)):
        raise TypeError(f"{name} must be an array of floats, got a string {x!r}")
    try:
        arr = np.asarray(x)
    except Exception as exc:  # ragged lists and other objects numpy cannot read
        raise TypeError(f"{name} must be an array of floats, got {type(x).__name__} ({exc})") from None
    if arr.dtype not in FLOAT_DTYPES:
        hint = ""
        if arr.dtype.kind in "biu":
            hint = f"; convert it first, e.g. np.asarray({name}, dtype=np.float64)"
        elif arr.dtype.kind == "c":
            hint = "; complex numbers have no place in this course's functions"
        raise TypeError(f"{name} must hold float16, float32 or float64 numbers, got dtype {arr.dtype}{hint}")
    if arr.ndim < min_ndim:
        raise ValueError(
            f"{name} must have at least {min_ndim} axes, got shape {_shape_text(arr.shape)}"
        )
    if 0 in arr.shape:
        raise ValueError(f"{name} must not have an empty axis, got shape {_shape_text(arr.shape)}")
    if finite and not _LENIENT[0] and not np.isfinite(arr).all():
        where = tuple(int(i) for i in np.argwhere(~np.isfinite(arr))[0])
        raise ValueError(f"{name} must be finite, but {name}{list(where)} is {arr[where]}")
    return arr


def sequence(x, name="x"):
    """A ``(..., seq, d_model)`` float array."""
    return float_array(x, name, min_ndim=2)


def integer(value, name):
    """An integer (numpy's too); booleans are not integers here."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__} {value!r}")
    return int(value)


def positive_int(value, name, minimum=1):
    integer(value, name)
    if value < minimum:
        raise ValueError(f"{name} must be at least {minimum}, got {value}")
    return int(value)


def positive_number(value, name):
    """A finite number above 0 (``eps``): floats and integers, numpy's too; booleans are not numbers here."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a positive number, got {type(value).__name__} {value!r}")
    if not (np.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be a positive, finite number, got {value!r}")
    return float(value)


def probability(value, name):
    """A number in [0, 1) (``dropout``)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a probability in [0, 1), got {type(value).__name__} {value!r}")
    if not 0 <= value < 1:
        raise ValueError(f"{name} must be a probability in [0, 1), got {value!r}")
    return float(value)


def boolean(value, name):
    """True or False (numpy's booleans too): ``"no"`` or ``None`` is not a boolean."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {type(value).__name__} {value!r}")
    return bool(value)


def generator(rng, name="rng", why=""):
    """A ``np.random.Generator``."""
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"{name} must be a np.random.Generator (e.g. np.random.default_rng(0)){why}, "
                        f"got {type(rng).__name__}")
    return rng


def float_dtype(dtype, name="dtype"):
    """float16, float32 or float64, given as a numpy dtype, type or name."""
    try:
        dtype = np.dtype(dtype) if dtype is not None else None
    except TypeError:
        dtype = None
    if dtype not in FLOAT_DTYPES:
        raise TypeError(f"{name} must be np.float16, np.float32 or np.float64, got {dtype!r}")
    return dtype.type


def axis(value, ndim, name="axis"):
    """An axis of an array with ``ndim`` axes, as a non-negative integer."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__} {value!r}")
    if not -ndim <= value < ndim:
        raise ValueError(f"{name} must be an integer in [{-ndim}, {ndim - 1}] for an array of {ndim} axes, "
                         f"got {value}")
    return int(value) % ndim


def choice(value, name, options):
    if not isinstance(value, str) or value not in options:
        wanted = " or ".join(repr(o) for o in options)
        raise ValueError(f"{name} must be {wanted}, got {value!r}")
    return value


def heads(d_model, n_heads):
    n_heads = positive_int(n_heads, "n_heads")
    if d_model % n_heads:
        raise ValueError(
            f"d_model ({d_model}) must be divisible by n_heads ({n_heads}): "
            f"each head takes d_model / n_heads columns"
        )
    return n_heads


def padding_mask(mask, x_shape, name="padding_mask"):
    """A boolean ``(..., seq)`` mask whose leading axes broadcast against ``x_shape[:-2]``."""
    if mask is None:
        return None
    arr = np.asarray(mask)
    if arr.dtype != np.bool_:
        raise TypeError(
            f"{name} must be a boolean array (True marks a padding position), got dtype {arr.dtype}"
        )
    seq = x_shape[-2]
    lead = x_shape[:-2]
    if arr.ndim < 1 or arr.shape[-1] != seq:
        raise ValueError(
            f"{name} must have shape (..., seq) = {_shape_text(lead + (seq,))}, "
            f"got {_shape_text(arr.shape)}"
        )
    try:
        np.broadcast_shapes(arr.shape[:-1], lead)
    except ValueError:
        raise ValueError(
            f"{name} must have shape (..., seq) = {_shape_text(lead + (seq,))}, "
            f"got {_shape_text(arr.shape)}: its leading axes do not match the batch axes"
        ) from None
    if len(arr.shape[:-1]) > len(lead):
        raise ValueError(
            f"{name} has more batch axes than the input: expected {_shape_text(lead + (seq,))}, "
            f"got {_shape_text(arr.shape)}"
        )
    return arr


def param_array(params, key, shape, dtype, where):
    """``params[key]`` as an array of exactly ``shape`` and ``dtype``."""
    if not isinstance(params, dict):
        raise TypeError(f"{where} must be a dict of arrays, got {type(params).__name__}")
    if key not in params:
        raise ValueError(f"{where} is missing the key {key!r}; it has {sorted(map(str, params))}")
    return exact_array(params[key], f"{where}[{key!r}]", shape, dtype)


def exact_params(params, shapes, dtype, where, why=""):
    """``params``, a dict holding exactly the keys of ``shapes``, each an array of its shape and ``dtype``; ``why``
    says in the error why a key it holds beyond them is not used."""
    if not isinstance(params, dict):
        raise TypeError(f"{where} must be a dict with keys {list(shapes)}, got {type(params).__name__}")
    extra = sorted(set(map(str, params)) - set(shapes))
    if extra:
        raise ValueError(f"{where} has {extra}, which it does not use: it takes {list(shapes)}{why}")
    return {key: param_array(params, key, shape, dtype, where) for key, shape in shapes.items()}


TRANSPOSED = ("; it looks transposed: weights here are (in, out) and used as x @ w "
              "(PyTorch stores (out, in); convert with from_torch_state_dict)")


def exact_array(value, name, shape, dtype, finite=True):
    """``value`` as a finite float array of exactly ``shape`` and ``dtype``."""
    arr = float_array(value, name, min_ndim=0, finite=finite)
    if arr.shape != tuple(shape):
        hint = TRANSPOSED if arr.ndim == 2 and arr.shape == tuple(shape)[::-1] else ""
        raise ValueError(f"{name} must have shape {_shape_text(shape)}, got {_shape_text(arr.shape)}{hint}")
    if arr.dtype != dtype:
        raise TypeError(
            f"{name} is {arr.dtype} but the input is {np.dtype(dtype)}; "
            f"use one dtype for inputs and parameters (e.g. params made with dtype=np.{np.dtype(dtype)})"
        )
    return arr


# ---------------------------------------------------------------- the promises of every public function


def _map_arrays(value, convert, depth=0):
    """``value`` with ``convert`` applied to every numpy array in nested dicts, lists and tuples."""
    if isinstance(value, np.ndarray):
        return convert(value)
    if depth > 50:  # a structure that refers to itself: leave it to the function's own checks
        return value
    if isinstance(value, dict):
        return {k: _map_arrays(v, convert, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        return type(value)(_map_arrays(v, convert, depth + 1) for v in value)
    return value


def arrays_of(value, depth=0):
    if isinstance(value, np.ndarray):
        yield value
    elif depth <= 50 and isinstance(value, dict):
        for v in value.values():
            yield from arrays_of(v, depth + 1)
    elif depth <= 50 and isinstance(value, (list, tuple)):
        for v in value:
            yield from arrays_of(v, depth + 1)


def _largest(arrays):
    sizes = [float(np.max(np.abs(a[np.isfinite(a)]), initial=0.0)) for a in arrays
             if a.dtype.kind == "f" and a.size]
    return max(sizes, default=0.0)


EXTREMES = (
    "Extremes: float16, float32 or float64 in, the same dtype out (float16 is computed in float32). "
    "Arguments must be finite; a result that would not fit its dtype raises ``Overflow`` (a "
    "``ValueError``) instead of holding NaN or infinity. The result never shares memory with an input."
)


ATTENTION_EXTREMES = (
    "Attention scores q k^T / sqrt(d_k) too large for the dtype (query and key entries of 1e20 in "
    "float32) raise ``Overflow``: scale the inputs down or compute in float64."
)
BLOCK_EXTREMES = ATTENTION_EXTREMES + " Layer norm is right for rows of any finite size."
NORM_EXTREMES = ("``x`` is normalised right at any finite size; the sub-layer's result must be finite, "
                 "with ``x``'s shape and dtype, or a ``ValueError``/``TypeError`` says what came back.")


def _promised(name, out, inputs, half):
    """A public function's result ``out`` as promised: finite (else ``Overflow``), back in float16 where the call
    was (``half``), and sharing no memory with the ``inputs``."""
    outputs = list(arrays_of(out))
    if not _LENIENT[0] and any(not np.isfinite(a).all() for a in outputs if a.dtype.kind == "f"):
        raise Overflow(f"{name}: the result overflows its dtype (the inputs' entries are as large as "
                       f"{_largest(inputs):.3g}); scale the inputs down, or compute in float64")
    if half:
        with np.errstate(over="ignore", under="ignore"):  # too large for float16: refused just below
            out = _map_arrays(out, lambda a: a.astype(np.float16) if a.dtype == np.float32 else a)
        if any(not np.isfinite(a).all() for a in arrays_of(out) if a.dtype.kind == "f"):
            raise Overflow(f"{name}: the result does not fit in float16 (whose largest number is 65504); "
                           f"compute in float32 instead")
    elif inputs and outputs:
        out = _map_arrays(out, lambda a: a.copy() if any(np.may_share_memory(a, i) for i in inputs) else a)
    return out


def public(fn=None, *, float16_in_float32=True, extremes=""):
    """Wrap a public function with the library's promises (this module's docstring).

    ``float16_in_float32=False``: the function handles float16 itself (one that
    calls a function of the caller's, which must see the caller's dtype).
    ``extremes``: what this function in particular does with extreme inputs,
    added to the shared ``EXTREMES`` paragraph of its docstring.
    """
    if fn is None:
        return functools.partial(public, float16_in_float32=float16_in_float32, extremes=extremes)
    name = fn.__name__

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        inputs = list(arrays_of((args, kwargs)))
        floats = [a for a in inputs if a.dtype.kind == "f"]
        # only a call in float16 throughout (mixed dtypes are refused by the function's own checks)
        half = float16_in_float32 and floats and all(a.dtype == np.float16 for a in floats)
        if half:  # float16 has too few digits to compute with: float32 inside, float16 out
            args, kwargs = _map_arrays((args, kwargs), lambda a: a.astype(np.float32) if a.dtype == np.float16 else a)
        with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
            out = fn(*args, **kwargs)
        return _promised(name, out, inputs, half)

    own = inspect.cleandoc(fn.__doc__ or "")
    said = textwrap.fill(EXTREMES + (" " + extremes if extremes else ""), width=76)
    wrapper.__doc__ = (own + "\n\n" if own else "") + said
    return wrapper
