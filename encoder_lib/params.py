"""Making block parameters, counting them, and converting them to and from PyTorch's and ModernBERT's layouts.

Parameters are plain nested dicts of numpy arrays, so they print, save with
``np.savez`` and compare easily. Weights are stored (in, out) and used as
``x @ w + b``; PyTorch stores them (out, in) and computes ``x @ W.T + b``.
ModernBERT (Hugging Face ``transformers``) keeps q, k and v in one ``Wqkv``
and the gated FFN's two input halves in one ``Wi``: ``from_modernbert_state_dict``
splits them, ``modernbert_configs`` reads each layer's BlockConfig.
"""

from dataclasses import replace

import numpy as np

from . import _checks
from .block import check_block_params
from .config import BlockConfig
from .modern import _block_config, classic, norm_names
from .norm import norm_keys


@_checks.public
def init_block_params(d_model, d_ff, rng, dtype=np.float32, *, config=None):
    """Fresh parameters for one block, initialised as PyTorch's ``nn.TransformerEncoderLayer`` except ``w_o``.

    - attention projections: Glorot (Xavier) uniform, ``U(-a, a)`` with ``a = sqrt(6 / (fan_in + fan_out))``, over
      the stacked (3 d_model, d_model) q/k/v matrix as PyTorch does, and over (d_model, d_model) for ``w_o``, where
      PyTorch's ``out_proj`` keeps ``nn.Linear``'s ``U(+-1/sqrt(d_model))`` (``MultiheadAttention._reset_parameters``
      re-draws only ``in_proj_weight``); all attention biases zero, as PyTorch's;
    - FFN linear layers: PyTorch's ``nn.Linear`` default, weights and biases
      ``U(-1/sqrt(fan_in), 1/sqrt(fan_in))``;
    - layer norms: gamma 1, beta 0.

    ``rng`` is a ``np.random.Generator``, so the same seed gives the same block.
    With a ``config`` (a BlockConfig) whose modern options are set, the
    params it needs (``encoder_lib.modern``): no biases with ``bias=False``;
    ``w_in``, ``w_gate`` drawn as ``w1`` and ``w_out`` as ``w2`` for a gated
    FFN; each head's ``q_norm``, ``k_norm``; ``norm1_out``, ``norm2_out`` for
    peri-norm; norms with gamma 1 (and beta 0 with a bias). The arrays both
    kinds share are drawn in the same order, so a peri-norm block from a
    seed has the post- and pre-norm blocks' weights.

    >>> p = init_block_params(8, 32, np.random.default_rng(0))
    >>> p["attn"]["w_q"].shape, p["ffn"]["w1"].shape, p["ffn"]["w2"].dtype
    ((8, 8), (8, 32), dtype('float32'))
    >>> modern = BlockConfig(2, norm="pre", norm_kind="rms", bias=False, ffn="gated", activation="silu")
    >>> sorted(init_block_params(8, 32, np.random.default_rng(0), config=modern)["ffn"])
    ['w_gate', 'w_in', 'w_out']
    """
    d_model = _checks.positive_int(d_model, "d_model")
    d_ff = _checks.positive_int(d_ff, "d_ff")
    _checks.generator(rng)
    dtype = _checks.float_dtype(dtype)
    if config is not None and not classic(_block_config(config)):
        return _init_modern(d_model, d_ff, rng, dtype, config)

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


def _init_modern(d_model, d_ff, rng, dtype, config):
    """init_block_params for a modern config: the arrays it needs, drawn in the original block's order."""
    def uniform(bound, shape):
        return rng.uniform(-bound, bound, size=shape).astype(dtype)

    def norm(width):
        return {key: (np.ones if key == "gamma" else np.zeros)(width, dtype) for key in kinds}

    _checks.heads(d_model, config.n_heads)
    kinds, bias = norm_keys(config.norm_kind, config.bias), config.bias
    attn = {}
    for name, bound in (("q", np.sqrt(6.0 / (4 * d_model))), ("k", np.sqrt(6.0 / (4 * d_model))),
                        ("v", np.sqrt(6.0 / (4 * d_model))), ("o", np.sqrt(6.0 / (2 * d_model)))):
        attn[f"w_{name}"] = uniform(bound, (d_model, d_model))
        attn.update({f"b_{name}": np.zeros(d_model, dtype)} if bias else {})
    attn.update({"q_norm": norm(d_model // config.n_heads), "k_norm": norm(d_model // config.n_heads)}
                if config.qk_norm else {})
    into, out = (("w1", "b1"),), ("w2", "b2")
    if config.ffn == "gated":
        into, out = (("w_in", "b_in"), ("w_gate", "b_gate")), ("w_out", "b_out")
    ffn = {}
    for w, b in into:
        ffn[w] = uniform(1 / np.sqrt(d_model), (d_model, d_ff))
        ffn.update({b: uniform(1 / np.sqrt(d_model), (d_ff,))} if bias else {})
    ffn[out[0]] = uniform(1 / np.sqrt(d_ff), (d_ff, d_model))
    ffn.update({out[1]: uniform(1 / np.sqrt(d_ff), (d_model,))} if bias else {})
    return {"attn": attn, "ffn": ffn, **{name: norm(d_model) for name in norm_names(config)}}


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
    """The number of scalars in nested dicts, lists and tuples of arrays (None counts 0).

    >>> count_params(init_block_params(512, 2048, np.random.default_rng(0)))
    3152384
    >>> count_params([{"w": np.zeros((3, 4))}, None, np.ones(2)])
    14

    Extremes: an array of any dtype counts its size; anything that is not a
    dict, list, tuple, array or None raises ``TypeError``, and a structure
    that holds itself raises ``ValueError``.
    """
    path = []  # the containers on the way down: a structure that holds itself has no count

    def count(node, where):
        if node is None:
            return 0
        if isinstance(node, np.ndarray):
            return int(node.size)
        if isinstance(node, (dict, list, tuple)):
            if any(node is outer for outer in path):
                raise ValueError(f"params{where} contains itself: a structure of parameters cannot hold itself")
            path.append(node)
            items = node.items() if isinstance(node, dict) else enumerate(node)
            total = sum(count(sub, f"{where}[{key!r}]") for key, sub in items)
            path.pop()
            return total
        raise TypeError(f"params must be nested dicts, lists and tuples of numpy arrays, but params{where} is "
                        f"a {type(node).__name__}")

    return count(params, "")


TORCH_KEYS = (
    "self_attn.in_proj_weight", "self_attn.in_proj_bias",
    "self_attn.out_proj.weight", "self_attn.out_proj.bias",
    "linear1.weight", "linear1.bias", "linear2.weight", "linear2.bias",
    "norm1.weight", "norm1.bias", "norm2.weight", "norm2.bias",
)


def _torch_shapes(d_model, d_ff):
    """The shape of each array of ``nn.TransformerEncoderLayer.state_dict()``: weights (out, in)."""
    return {"self_attn.in_proj_weight": (3 * d_model, d_model), "self_attn.in_proj_bias": (3 * d_model,),
            "self_attn.out_proj.weight": (d_model, d_model), "self_attn.out_proj.bias": (d_model,),
            "linear1.weight": (d_ff, d_model), "linear1.bias": (d_ff,), "linear2.weight": (d_model, d_ff),
            "linear2.bias": (d_model,), "norm1.weight": (d_model,), "norm1.bias": (d_model,),
            "norm2.weight": (d_model,), "norm2.bias": (d_model,)}


def _torch_arrays(state_dict, prefix):
    """``({key: float array}, d_model)``: one layer's arrays of a PyTorch state dict, each checked for its shape
    (a transposed one said so), every error naming the state dict's own key."""
    if not hasattr(state_dict, "keys") or not hasattr(state_dict, "__getitem__"):
        raise TypeError(f"state_dict must be a mapping of names to arrays, got {type(state_dict).__name__}")
    if not isinstance(prefix, str):
        raise TypeError(f"prefix must be a string such as '' or 'layers.3.', got {type(prefix).__name__} {prefix!r}")
    missing = [prefix + key for key in TORCH_KEYS if prefix + key not in state_dict]
    if missing:
        raise ValueError(f"state_dict is missing {missing} (prefix={prefix!r})")
    arrays = {key: _checks.float_array(state_dict[prefix + key], f"state_dict[{prefix + key!r}]", min_ndim=0)
              for key in TORCH_KEYS}
    in_w, w1 = arrays["self_attn.in_proj_weight"], arrays["linear1.weight"]
    if in_w.ndim != 2 or in_w.shape[0] != 3 * in_w.shape[1]:
        raise ValueError(f"state_dict[{prefix + 'self_attn.in_proj_weight'!r}] must have shape (3 d_model, d_model), "
                         f"got {in_w.shape}")
    d_model = in_w.shape[1]
    if w1.ndim != 2 or d_model not in w1.shape:
        raise ValueError(f"state_dict[{prefix + 'linear1.weight'!r}] must have shape (d_ff, d_model) = "
                         f"(d_ff, {d_model}), got {w1.shape}")
    d_ff = w1.shape[0] if w1.shape[1] == d_model else w1.shape[1]  # (d_model, d_ff): reported as transposed below
    for key, shape in _torch_shapes(d_model, d_ff).items():
        name = f"state_dict[{prefix + key!r}]"
        if arrays[key].ndim == 2 and arrays[key].shape == shape[::-1] and shape[0] != shape[1]:
            raise ValueError(f"{name} must have shape {shape}, got {arrays[key].shape}; it looks transposed: "
                             f"a PyTorch state dict holds each nn.Linear weight as (out, in)")
        _checks.exact_array(arrays[key], name, shape, in_w.dtype)
    return arrays, d_model


@_checks.public
def from_torch_state_dict(state_dict, prefix=""):
    """Block params from ``nn.TransformerEncoderLayer.state_dict()`` (values as numpy arrays).

    ``prefix`` selects one layer of a larger model, e.g. ``"layers.3."`` in a
    ``nn.TransformerEncoder``'s state dict. Tensors are accepted too if they
    convert with ``np.asarray`` (on the CPU, without gradients); no torch
    import is needed. The arrays are copied into (in, out) orientation.
    Errors name the state dict's own keys.
    """
    arrays, d_model = _torch_arrays(state_dict, prefix)
    in_w = arrays["self_attn.in_proj_weight"]

    def linear(key):
        return np.ascontiguousarray(arrays[key].T)

    attn = {}
    for i, name in enumerate("qkv"):
        attn[f"w_{name}"] = np.ascontiguousarray(in_w[i * d_model : (i + 1) * d_model].T)
        attn[f"b_{name}"] = arrays["self_attn.in_proj_bias"][i * d_model : (i + 1) * d_model].copy()
    attn["w_o"] = linear("self_attn.out_proj.weight")
    attn["b_o"] = arrays["self_attn.out_proj.bias"].copy()
    params = {
        "attn": attn,
        "ffn": {"w1": linear("linear1.weight"), "b1": arrays["linear1.bias"].copy(),
                "w2": linear("linear2.weight"), "b2": arrays["linear2.bias"].copy()},
        "norm1": {"gamma": arrays["norm1.weight"].copy(), "beta": arrays["norm1.bias"].copy()},
        "norm2": {"gamma": arrays["norm2.weight"].copy(), "beta": arrays["norm2.bias"].copy()},
    }
    return check_block_params(params, d_model, in_w.dtype, "the converted state_dict")


def _d_model_of(params):
    """The width of one block's params, read from the first array that says it."""
    for part, key in (("attn", "w_q"), ("norm1", "gamma"), ("ffn", "w1")):
        sub = params.get(part)
        value = sub.get(key) if isinstance(sub, dict) else None
        if isinstance(value, np.ndarray) and value.ndim >= 1 and value.size:
            return value.shape[0]
    raise ValueError("params must be one block's params ({'attn', 'ffn', 'norm1', 'norm2'}, as init_block_params "
                     "makes them); no array in them says what d_model is")


@_checks.public
def to_torch_state_dict(params, prefix=""):
    """The inverse of ``from_torch_state_dict``: numpy arrays under PyTorch's names and (out, in) layout.

    Load it with ``layer.load_state_dict({k: torch.from_numpy(v) for k, v in sd.items()})``.
    """
    if not isinstance(params, dict):
        raise TypeError(f"params must be one block's params (a dict), got {type(params).__name__}")
    if not isinstance(prefix, str):
        raise TypeError(f"prefix must be a string such as '' or 'layers.3.', got {type(prefix).__name__} {prefix!r}")
    if params.get("attn", {}) is None:
        raise ValueError("params['attn'] is None (identity attention), which has no PyTorch form: "
                         "give the projections as arrays (fixtures.lesson_block_params(identity_attention=True))")
    d_model = _d_model_of(params)
    first = params["attn"]["w_q"] if isinstance(params.get("attn"), dict) and "w_q" in params["attn"] else None
    dtype = np.asarray(first).dtype if isinstance(first, np.ndarray) else np.float32
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


# ---------------------------------------------------------------- ModernBERT (Hugging Face transformers)


def _theta(settings, layer_type, old_key):
    """A layer type's rope_theta: transformers 5's ``rope_parameters``, or the older ``global_rope_theta`` keys."""
    params = settings.get("rope_parameters") or {}
    if isinstance(params.get(layer_type), dict) and "rope_theta" in params[layer_type]:
        return params[layer_type]["rope_theta"]
    if old_key in settings:
        return settings[old_key]
    raise ValueError(f"config has no rope_theta for its {layer_type} layers (rope_parameters[{layer_type!r}]) "
                     f"nor {old_key!r}")


@_checks.public
def modernbert_configs(config):
    """The BlockConfig of each layer of a ModernBERT, from its configuration as a dict (``ModernBertConfig.to_dict()``
    or a ``config.json``).

    Pre-norm, layer norms with ``norm_bias``, rotary positions in the
    ``"half"`` layout, a gated FFN with ``hidden_activation`` (GELU: GeGLU),
    biases as ``attention_bias`` (which must equal ``mlp_bias`` and
    ``norm_bias``: one ``bias`` here), and each layer global or local by its
    ``layer_types`` (or ``global_attn_every_n_layers``), a local one with
    window ``local_attention`` and the local rope_theta.

    >>> configs = modernbert_configs({"num_attention_heads": 12, "num_hidden_layers": 4, "local_attention": 128,
    ...     "global_rope_theta": 160000.0, "local_rope_theta": 10000.0, "global_attn_every_n_layers": 3})
    >>> [(c.window, c.rope_base) for c in configs]
    [(None, 160000.0), (128, 10000.0), (128, 10000.0), (None, 160000.0)]
    """
    if not isinstance(config, dict):
        raise TypeError(f"config must be a ModernBERT configuration as a dict (ModernBertConfig(...).to_dict()), "
                        f"got {type(config).__name__}")
    biases = {config.get(key, False) for key in ("attention_bias", "mlp_bias", "norm_bias")}
    if len(biases) > 1:
        raise ValueError("config's attention_bias, mlp_bias and norm_bias differ; this library has one bias option")
    n_layers = config.get("num_hidden_layers", 22)
    every = config.get("global_attn_every_n_layers", 3)
    types = config.get("layer_types") or ["sliding_attention" if i % every else "full_attention" for i in range(n_layers)]
    activation = {"gelu": "gelu", "silu": "silu", "relu": "relu"}.get(config.get("hidden_activation", "gelu"))
    if activation is None:
        raise ValueError(f"config's hidden_activation must be 'gelu', 'silu' or 'relu', got "
                         f"{config.get('hidden_activation')!r}")
    base = BlockConfig(config.get("num_attention_heads", 12), norm="pre", activation=activation, ffn="gated",
                       eps=config.get("norm_eps", 1e-5), bias=biases.pop(), rope="half",
                       rope_base=float(_theta(config, "full_attention", "global_rope_theta")))
    local = replace(base, window=config.get("local_attention", 128),
                                rope_base=float(_theta(config, "sliding_attention", "local_rope_theta")))
    return [local if kind == "sliding_attention" else base for kind in types]


#: One ModernBERT layer's arrays (``ModernBertEncoderLayer.state_dict()``): weights (out, in). Layer 0 has no
#: ``attn_norm`` (an ``nn.Identity``); the biases are there only with ``attention_bias``, ``mlp_bias``, ``norm_bias``.
MODERNBERT_KEYS = ("attn_norm.weight", "attn.Wqkv.weight", "attn.Wo.weight", "mlp_norm.weight", "mlp.Wi.weight",
                   "mlp.Wo.weight")


def _modernbert_array(state_dict, key, prefix, required=True):
    if prefix + key not in state_dict:
        if required:
            raise ValueError(f"state_dict is missing {prefix + key!r} (prefix={prefix!r}); a ModernBERT layer has "
                             f"{[prefix + k for k in MODERNBERT_KEYS]}")
        return None
    return _checks.float_array(state_dict[prefix + key], f"state_dict[{prefix + key!r}]", min_ndim=1)


@_checks.public
def from_modernbert_state_dict(state_dict, prefix=""):
    """One block's params from a Hugging Face ModernBERT layer's state dict (numpy arrays, or CPU tensors).

    ``prefix`` selects the layer: ``"layers.3."`` in ``ModernBertModel``'s
    state dict, ``"model.layers.3."`` in ``ModernBertForMaskedLM``'s.
    ``attn.Wqkv`` (3 d_model, d_model) splits into ``w_q``, ``w_k``, ``w_v``
    (its rows are q, then k, then v, each head's columns together);
    ``mlp.Wi`` (2 d_ff, d_model) into ``w_in`` (its first half, the one
    activated) and ``w_gate``; ``attn_norm`` becomes ``norm1`` (None in layer
    0, which has none) and ``mlp_norm`` ``norm2``. Run it with that layer's
    ``modernbert_configs(...)[i]``.
    """
    if not hasattr(state_dict, "keys") or not hasattr(state_dict, "__getitem__"):
        raise TypeError(f"state_dict must be a mapping of names to arrays, got {type(state_dict).__name__}")
    if not isinstance(prefix, str):
        raise TypeError(f"prefix must be a string such as '' or 'layers.3.', got {type(prefix).__name__} {prefix!r}")
    wqkv, wi = (_modernbert_array(state_dict, key, prefix) for key in ("attn.Wqkv.weight", "mlp.Wi.weight"))
    d_model, d_ff = wqkv.shape[-1], wi.shape[0] // 2
    bias = prefix + "attn.Wqkv.bias" in state_dict

    def part(key, start, stop, transpose=True):  # rows start:stop of a weight (or entries of a bias), as (in, out)
        array = _modernbert_array(state_dict, key, prefix)[start:stop]
        return np.ascontiguousarray(array.T if transpose else array)

    attn = {f"w_{n}": part("attn.Wqkv.weight", i * d_model, (i + 1) * d_model) for i, n in enumerate("qkv")}
    attn["w_o"] = part("attn.Wo.weight", 0, d_model)
    ffn = {"w_in": part("mlp.Wi.weight", 0, d_ff), "w_gate": part("mlp.Wi.weight", d_ff, 2 * d_ff),
           "w_out": part("mlp.Wo.weight", 0, d_model)}
    if bias:
        attn.update({f"b_{n}": part("attn.Wqkv.bias", i * d_model, (i + 1) * d_model, False)
                     for i, n in enumerate("qkv")}, b_o=part("attn.Wo.bias", 0, d_model, False))
        ffn.update(b_in=part("mlp.Wi.bias", 0, d_ff, False), b_gate=part("mlp.Wi.bias", d_ff, 2 * d_ff, False),
                   b_out=part("mlp.Wo.bias", 0, d_model, False))
    norms = {name: None if _modernbert_array(state_dict, f"{key}.weight", prefix, name == "norm2") is None
             else {"gamma": part(f"{key}.weight", 0, d_model, False),
                   **({"beta": part(f"{key}.bias", 0, d_model, False)} if bias else {})}
             for name, key in (("norm1", "attn_norm"), ("norm2", "mlp_norm"))}
    config = BlockConfig(1, norm="pre", ffn="gated", activation="gelu", bias=bias, rope="half")
    return check_block_params({"attn": attn, "ffn": ffn, **norms}, d_model, wqkv.dtype, "the converted state_dict",
                              config)


@_checks.public
def to_modernbert_state_dict(params, prefix=""):
    """The inverse of ``from_modernbert_state_dict``: numpy arrays under ModernBERT's names, weights (out, in).

    Load it into a ``ModernBertEncoderLayer`` with ``layer.load_state_dict({k:
    torch.from_numpy(v) for k, v in sd.items()})``; a block whose ``norm1`` is
    None gives no ``attn_norm`` (ModernBERT's layer 0).
    """
    if not isinstance(params, dict) or not isinstance(params.get("attn"), dict) or "w_q" not in params["attn"]:
        raise TypeError("params must be one block's params with a gated FFN, as from_modernbert_state_dict makes them")
    if not isinstance(prefix, str):
        raise TypeError(f"prefix must be a string such as '' or 'layers.3.', got {type(prefix).__name__} {prefix!r}")
    w_q = _checks.float_array(params["attn"]["w_q"], "params['attn']['w_q']", min_ndim=2)
    bias = "b_q" in params["attn"]
    config = BlockConfig(1, norm="pre", ffn="gated", activation="gelu", bias=bias, rope="half")
    p = check_block_params(params, w_q.shape[0], w_q.dtype, "params", config)
    a, f = p["attn"], p["ffn"]
    sd = {"attn.Wqkv.weight": np.concatenate([a["w_q"].T, a["w_k"].T, a["w_v"].T]), "attn.Wo.weight": a["w_o"].T,
          "mlp.Wi.weight": np.concatenate([f["w_in"].T, f["w_gate"].T]), "mlp.Wo.weight": f["w_out"].T}
    if bias:
        sd.update({"attn.Wqkv.bias": np.concatenate([a["b_q"], a["b_k"], a["b_v"]]), "attn.Wo.bias": a["b_o"],
                   "mlp.Wi.bias": np.concatenate([f["b_in"], f["b_gate"]]), "mlp.Wo.bias": f["b_out"]})
    for name, key in (("norm1", "attn_norm"), ("norm2", "mlp_norm")):
        for field, array in (p[name] or {}).items():
            sd[f"{key}.{'weight' if field == 'gamma' else 'bias'}"] = array
    return {prefix + key: np.ascontiguousarray(value) for key, value in sd.items()}
