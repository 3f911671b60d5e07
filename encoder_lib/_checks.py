"""Argument checks shared by the public functions.

Each check raises a ``TypeError`` (wrong kind of object or dtype) or a
``ValueError`` (right kind, wrong shape or value) whose message names the
argument and says what was expected, so a learner can fix the call without
reading the library's code.
"""

import numpy as np

FLOAT_DTYPES = (np.float32, np.float64)


def _shape_text(shape):
    return "(" + ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"


def float_array(x, name, min_ndim=1, finite=True):
    """``x`` as a float32 or float64 array with at least ``min_ndim`` axes, none empty."""
    if x is None:
        raise TypeError(f"{name} must be an array of floats, got None")
    try:
        arr = np.asarray(x)
    except Exception as exc:  # ragged lists and other objects numpy cannot read
        raise TypeError(f"{name} must be an array of floats, got {type(x).__name__} ({exc})") from None
    if arr.dtype not in FLOAT_DTYPES:
        hint = ""
        if arr.dtype.kind in "biu":
            hint = f"; convert it first, e.g. np.asarray({name}, dtype=np.float32)"
        raise TypeError(f"{name} must hold float32 or float64 numbers, got dtype {arr.dtype}{hint}")
    if arr.ndim < min_ndim:
        raise ValueError(
            f"{name} must have at least {min_ndim} axes, got shape {_shape_text(arr.shape)}"
        )
    if 0 in arr.shape:
        raise ValueError(f"{name} must not have an empty axis, got shape {_shape_text(arr.shape)}")
    if finite and not np.isfinite(arr).all():
        where = tuple(int(i) for i in np.argwhere(~np.isfinite(arr))[0])
        raise ValueError(f"{name} must be finite, but {name}{list(where)} is {arr[where]}")
    return arr


def sequence(x, name="x"):
    """A ``(..., seq, d_model)`` float array."""
    arr = float_array(x, name, min_ndim=2)
    return arr


def positive_int(value, name, minimum=1):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__} {value!r}")
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
    """float32 or float64, given as a numpy dtype, type or name."""
    try:
        dtype = np.dtype(dtype) if dtype is not None else None
    except TypeError:
        dtype = None
    if dtype not in FLOAT_DTYPES:
        raise TypeError(f"{name} must be np.float32 or np.float64, got {dtype!r}")
    return dtype.type


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
        raise ValueError(f"{where} is missing the key {key!r}; it has {sorted(params)}")
    return exact_array(params[key], f"{where}[{key!r}]", shape, dtype)


def exact_array(value, name, shape, dtype):
    """``value`` as a float array of exactly ``shape`` and ``dtype``."""
    arr = float_array(value, name, min_ndim=1, finite=False)
    if arr.shape != tuple(shape):
        hint = ""
        if arr.ndim == 2 and arr.shape == tuple(shape)[::-1]:
            hint = (
                "; it looks transposed: weights here are (in, out) and used as x @ w "
                "(PyTorch stores (out, in); convert with from_torch_state_dict)"
            )
        raise ValueError(f"{name} must have shape {_shape_text(shape)}, got {_shape_text(arr.shape)}{hint}")
    if arr.dtype != dtype:
        raise TypeError(
            f"{name} is {arr.dtype} but the input is {np.dtype(dtype)}; "
            f"use one dtype for inputs and parameters (e.g. params made with dtype=np.{np.dtype(dtype)})"
        )
    return arr
