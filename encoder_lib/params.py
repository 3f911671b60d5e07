"""Making block parameters, counting them, and converting them to and from PyTorch's layout.

Parameters are plain nested dicts of numpy arrays, so they print, save with
``np.savez`` and compare easily. Weights are stored (in, out) and used as
``x @ w + b``; PyTorch stores them (out, in) and computes ``x @ W.T + b``.
"""

import numpy as np

from . import _checks
from .block import check_block_params


def init_block_params(d_model, d_ff, rng, dtype=np.float32):
    """Fresh parameters for one block, initialised as PyTorch's ``nn.TransformerEncoderLayer``.

    - attention projections: Glorot (Xavier) uniform, ``U(-a, a)`` with
      ``a = sqrt(6 / (fan_in + fan_out))`` taken over the stacked (3 d_model, d_model)
      q/k/v matrix as PyTorch does; the output projection over (d_model, d_model);
      all attention biases zero;
    - FFN linear layers: PyTorch's ``nn.Linear`` default, weights and biases
      ``U(-1/sqrt(fan_in), 1/sqrt(fan_in))``;
    - layer norms: gamma 1, beta 0.

    ``rng`` is a ``np.random.Generator``, so the same seed gives the same block.

    >>> p = init_block_params(8, 32, np.random.default_rng(0))
    >>> p["attn"]["w_q"].shape, p["ffn"]["w1"].shape, p["ffn"]["w2"].dtype
    ((8, 8), (8, 32), dtype('float32'))
    """
    d_model = _checks.positive_int(d_model, "d_model")
    d_ff = _checks.positive_int(d_ff, "d_ff")
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a np.random.Generator (e.g. np.random.default_rng(0)), got {type(rng).__name__}")
    if np.dtype(dtype) not in _checks.FLOAT_DTYPES:
        raise TypeError(f"dtype must be np.float32 or np.float64, got {dtype!r}")

    def uniform(bound, shape):
        return rng.uniform(-bound, bound, size=shape).astype(dtype)

    qkv_bound = np.sqrt(6.0 / (3 * d_model + d_model))
    out_bound = np.sqrt(6.0 / (2 * d_model))
    zeros = np.zeros(d_model, dtype=dtype)
    attn = {}
    for name in "qkv":
        attn[f"w_{name}"] = uniform(qkv_bound, (d_model, d_model))
        attn[f"b_{name}"] = zeros.copy()
    attn["w_o"] = uniform(out_bound, (d_model, d_model))
    attn["b_o"] = zeros.copy()
    ffn = {
        "w1": uniform(1 / np.sqrt(d_model), (d_model, d_ff)),
        "b1": uniform(1 / np.sqrt(d_model), (d_ff,)),
        "w2": uniform(1 / np.sqrt(d_ff), (d_ff, d_model)),
        "b2": uniform(1 / np.sqrt(d_ff), (d_model,)),
    }
    norm = {"gamma": np.ones(d_model, dtype=dtype), "beta": zeros.copy()}
    return {"attn": attn, "ffn": ffn, "norm1": norm, "norm2": {k: v.copy() for k, v in norm.items()}}


def flat_arrays(tree):
    """The arrays of nested dicts and lists, as a flat ``{name: array}`` dict (names like ``layers/0/attn/w_q``).

    >>> sorted(flat_arrays({"norm1": {"gamma": np.ones(2), "beta": np.zeros(2)}, "n": 3}))
    ['norm1/beta', 'norm1/gamma']
    """
    flat = {}

    def walk(node, prefix):
        if isinstance(node, dict):
            for key, sub in node.items():
                walk(sub, f"{prefix}{key}/")
        elif isinstance(node, (list, tuple)):
            for i, sub in enumerate(node):
                walk(sub, f"{prefix}{i}/")
        elif isinstance(node, np.ndarray):
            flat[prefix.rstrip("/")] = node

    walk(tree, "")
    return flat


def off_defaults(params, rng):
    """Move every ``gamma``, ``beta`` and bias of nested params off its initial value, in place; returns ``params``.

    Fresh params have gamma 1, beta 0 and zero attention biases, so code that
    forgets one of them still gives the right numbers on them. Tests and the
    exercises' cases use params like these to tell.
    """
    for name, array in flat_arrays(params).items():
        last = name.rsplit("/", 1)[-1]
        if last == "gamma":
            array[...] = rng.uniform(0.6, 1.4, array.shape)
        elif last == "beta" or last.startswith("b_") or last in ("b1", "b2"):
            array[...] = rng.uniform(-0.3, 0.3, array.shape)
    return params


def count_params(params):
    """The number of scalars in a nested structure of dicts, lists and arrays.

    >>> count_params(init_block_params(512, 2048, np.random.default_rng(0)))
    3152384
    """
    if params is None:
        return 0
    if isinstance(params, dict):
        return sum(count_params(v) for v in params.values())
    if isinstance(params, (list, tuple)):
        return sum(count_params(v) for v in params)
    return int(np.size(params))


TORCH_KEYS = (
    "self_attn.in_proj_weight", "self_attn.in_proj_bias",
    "self_attn.out_proj.weight", "self_attn.out_proj.bias",
    "linear1.weight", "linear1.bias", "linear2.weight", "linear2.bias",
    "norm1.weight", "norm1.bias", "norm2.weight", "norm2.bias",
)


def from_torch_state_dict(state_dict, prefix=""):
    """Block params from ``nn.TransformerEncoderLayer.state_dict()`` (values as numpy arrays).

    ``prefix`` selects one layer of a larger model, e.g. ``"layers.3."`` in a
    ``nn.TransformerEncoder``'s state dict. Tensors are accepted too if they
    convert with ``np.asarray`` (on the CPU, without gradients); no torch
    import is needed. The arrays are copied into (in, out) orientation.
    """
    if not hasattr(state_dict, "keys"):
        raise TypeError(f"state_dict must be a mapping of names to arrays, got {type(state_dict).__name__}")
    missing = [prefix + key for key in TORCH_KEYS if prefix + key not in state_dict]
    if missing:
        raise ValueError(f"state_dict is missing {missing} (prefix={prefix!r})")

    def get(key):
        return _checks.float_array(state_dict[prefix + key], f"state_dict[{prefix + key!r}]", finite=False)

    in_w, in_b = get("self_attn.in_proj_weight"), get("self_attn.in_proj_bias")
    d_model = in_w.shape[1]
    if in_w.shape != (3 * d_model, d_model) or in_b.shape != (3 * d_model,):
        raise ValueError(
            f"state_dict[{prefix + 'self_attn.in_proj_weight'!r}] must be (3 d_model, d_model) with a "
            f"(3 d_model,) bias, got {in_w.shape} and {in_b.shape}"
        )
    attn = {}
    for i, name in enumerate("qkv"):
        attn[f"w_{name}"] = np.ascontiguousarray(in_w[i * d_model : (i + 1) * d_model].T)
        attn[f"b_{name}"] = in_b[i * d_model : (i + 1) * d_model].copy()
    attn["w_o"] = np.ascontiguousarray(get("self_attn.out_proj.weight").T)
    attn["b_o"] = get("self_attn.out_proj.bias").copy()
    params = {
        "attn": attn,
        "ffn": {
            "w1": np.ascontiguousarray(get("linear1.weight").T),
            "b1": get("linear1.bias").copy(),
            "w2": np.ascontiguousarray(get("linear2.weight").T),
            "b2": get("linear2.bias").copy(),
        },
        "norm1": {"gamma": get("norm1.weight").copy(), "beta": get("norm1.bias").copy()},
        "norm2": {"gamma": get("norm2.weight").copy(), "beta": get("norm2.bias").copy()},
    }
    return check_block_params(params, d_model, in_w.dtype, "the converted state_dict")


def to_torch_state_dict(params, prefix=""):
    """The inverse of ``from_torch_state_dict``: numpy arrays under PyTorch's names and (out, in) layout.

    Load it with ``layer.load_state_dict({k: torch.from_numpy(v) for k, v in sd.items()})``.
    """
    if not isinstance(params, dict) or params.get("attn") is None:
        raise ValueError("params must be one block's params with an 'attn' dict (identity attention has no PyTorch form)")
    w_q = np.asarray(params["attn"]["w_q"])
    d_model, dtype = w_q.shape[0], w_q.dtype
    p = check_block_params(params, d_model, dtype)
    a, f = p["attn"], p["ffn"]
    sd = {
        "self_attn.in_proj_weight": np.concatenate([a["w_q"].T, a["w_k"].T, a["w_v"].T]),
        "self_attn.in_proj_bias": np.concatenate([a["b_q"], a["b_k"], a["b_v"]]),
        "self_attn.out_proj.weight": np.ascontiguousarray(a["w_o"].T),
        "self_attn.out_proj.bias": a["b_o"].copy(),
        "linear1.weight": np.ascontiguousarray(f["w1"].T),
        "linear1.bias": f["b1"].copy(),
        "linear2.weight": np.ascontiguousarray(f["w2"].T),
        "linear2.bias": f["b2"].copy(),
        "norm1.weight": p["norm1"]["gamma"].copy(),
        "norm1.bias": p["norm1"]["beta"].copy(),
        "norm2.weight": p["norm2"]["gamma"].copy(),
        "norm2.bias": p["norm2"]["beta"].copy(),
    }
    return {prefix + k: v for k, v in sd.items()}
