"""The encoder since 2017: attention with rotary positions, QK-norm and a local window, and the block's parameters
without biases, with RMSNorm or a gated FFN; ModernBERT's layers as configs.

Public: ``modern_attention(x, params, config, padding_mask=None)`` (multi-head
self-attention with the config's options) and ``local_global_configs`` (one
config per layer of a stack that alternates global and local attention).

The options are ``BlockConfig``'s (``encoder_lib.block``); a block's params
follow them:

- ``attn``: ``w_q``, ``w_k``, ``w_v``, ``w_o`` (d_model, d_model), their biases
  ``b_q`` ... ``b_o`` only with ``bias=True``, and with ``qk_norm=True``
  ``q_norm`` and ``k_norm``, one norm's params each over a head's d_head
  columns (as Gemma 3's ``q_norm``/``k_norm``);
- ``ffn``: ``w1``, ``w2`` (and ``b1``, ``b2`` with a bias) for ``ffn="plain"``,
  ``w_in``, ``w_gate``, ``w_out`` (and ``b_in``, ``b_gate``, ``b_out``) for
  ``ffn="gated"``;
- ``norm1``, ``norm2`` (and ``norm1_out``, ``norm2_out`` with ``norm="peri"``):
  ``{"gamma", "beta"}`` for a layer norm with a bias, ``{"gamma"}`` for a
  bias-free layer norm or an RMSNorm, or None for no norm at all (ModernBERT's
  first layer has none in front of its attention).
"""

import dataclasses

import numpy as np

from . import _checks
from .attention import ATTENTION_KEYS, _attend_masked, _merge_heads, _split_heads, _window_mask, check_attention_params
from .ffn import check_ffn_params, check_gated_params
from .norm import _norm, check_norm_params_of, norm_keys
from .config import BlockConfig
from .positional import _rope, rope_tables

PROJECTIONS = ("w_q", "w_k", "w_v", "w_o")


def classic_attention(config):
    """Whether the config's attention is the original one (biases, no rotary positions, QK-norm or window)."""
    return config.bias and config.rope is None and not config.qk_norm and config.window is None


def classic(config):
    """Whether a block with this config is the original block (``multi_head_attention``, the plain FFN, post- or
    pre-norm with layer norms with a bias): its params are checked and run as before the modern options came."""
    return (classic_attention(config) and config.norm in ("post", "pre") and config.norm_kind == "layer"
            and config.ffn == "plain")


# ---------------------------------------------------------------- checks


def exact_keys(params, shapes, dtype, where):
    """``params`` holding exactly the keys of ``shapes``, each array of its shape and ``dtype``."""
    return _checks.exact_params(params, shapes, dtype, where, " (a config with bias=False takes no biases)")


def check_modern_attention_params(params, d_model, dtype, config, where="params"):
    """The attention's params for ``config``: projections, biases with ``bias``, head norms with ``qk_norm``."""
    if classic_attention(config):
        return None if params is None else check_attention_params(params, d_model, dtype, where)
    if not isinstance(params, dict):
        raise TypeError(f"{where} must be a dict of the attention's arrays, got {type(params).__name__}")
    keys = ATTENTION_KEYS if config.bias else PROJECTIONS
    shapes = {key: (d_model, d_model) if key.startswith("w") else (d_model,) for key in keys}
    norms = ("q_norm", "k_norm") if config.qk_norm else ()
    out = exact_keys({key: value for key, value in params.items() if key not in norms},
                     shapes, dtype, where)
    d_head, kinds = d_model // config.n_heads, norm_keys(config.norm_kind, config.bias)
    for key in norms:
        if key not in params:
            raise ValueError(f"{where} is missing {key!r}: a config with qk_norm=True normalises each head's queries "
                             f"and keys, with params {{{', '.join(repr(k) for k in kinds)}}} of shape ({d_head},)")
        out[key] = check_norm_params_of(params[key], d_head, dtype, f"{where}[{key!r}]", kinds)
    return out


def check_modern_ffn_params(params, d_model, dtype, config, where="params"):
    """The FFN's params for ``config``: plain or gated, with or without biases."""
    if config.ffn == "gated":
        return check_gated_params(params, d_model, dtype, where, bias=config.bias)
    if config.bias:
        return check_ffn_params(params, d_model, dtype, where)
    w1 = params.get("w1") if isinstance(params, dict) else None
    d_ff = w1.shape[1] if isinstance(w1, np.ndarray) and w1.ndim == 2 and w1.shape[1] else "d_ff"
    return exact_keys(params, {"w1": (d_model, d_ff), "w2": (d_ff, d_model)}, dtype, where)


def norm_names(config):
    """The block's norms: ``norm1``, ``norm2``, and with ``norm="peri"`` the ones after each sub-layer."""
    return ("norm1", "norm2") + (("norm1_out", "norm2_out") if config.norm == "peri" else ())


def check_modern_block_params(params, d_model, dtype, config, where="params"):
    """One block's params for a modern ``config`` (see the module's docstring); returns a checked copy."""
    names = ("attn", "ffn") + norm_names(config)
    if not isinstance(params, dict):
        raise TypeError(f"{where} must be a dict with keys {list(names)}, got {type(params).__name__}")
    missing = [key for key in names if key not in params]
    if missing:
        raise ValueError(f"{where} is missing {missing}; a block with this config has params {list(names)}")
    kinds = norm_keys(config.norm_kind, config.bias)
    return {"attn": check_modern_attention_params(params["attn"], d_model, dtype, config, f"{where}['attn']"),
            "ffn": check_modern_ffn_params(params["ffn"], d_model, dtype, config, f"{where}['ffn']"),
            **{key: check_norm_params_of(params[key], d_model, dtype, f"{where}[{key!r}]", kinds)
               for key in norm_names(config)}}


# ---------------------------------------------------------------- attention


def _project(x, w, b):
    """``x @ w (+ b)`` over every position, (..., d_in) -> (..., d_out)."""
    y = x.reshape(-1, x.shape[-1]) @ w
    if b is not None:
        y += b
    return y.reshape(*x.shape[:-1], w.shape[1])


def attention_mask(padding_mask, seq, window):
    """The keys each query leaves out, broadcastable to (..., n_heads, seq, seq), or None: the padded keys and,
    with a ``window``, the keys outside it."""
    mask = None if padding_mask is None else padding_mask[..., None, None, :]  # (..., 1, 1, seq)
    if window is not None:
        mask = _window_mask(seq, window) if mask is None else mask | _window_mask(seq, window)
    return mask


def _modern_mha(x, params, config, mask, tape=None):
    """The unchecked core of modern_attention. ``tape`` (a dict), when given, keeps what the backward pass needs:
    ``x``, the heads' queries and keys before and after the rotation, ``v``, the ``weights``, the merged
    ``heads`` and the QK-norms' own tapes (``q_norm``, ``k_norm``)."""
    n_heads, seq = config.n_heads, x.shape[-2]
    q, k, v = (_split_heads(_project(x, params[f"w_{n}"], params.get(f"b_{n}")), n_heads) for n in "qkv")
    kept = {} if tape is None else tape  # (..., n_heads, seq, d_head) each
    if config.qk_norm:  # each head's queries and keys normalised over its d_head columns
        q = _norm(q, params["q_norm"], config.norm_kind, config.eps, kept.setdefault("q_norm", {}))
        k = _norm(k, params["k_norm"], config.norm_kind, config.eps, kept.setdefault("k_norm", {}))
    if config.rope is not None:  # turned by position: a score depends on i - j only
        kept["cos"], kept["sin"] = rope_tables(seq, q.shape[-1], config.rope_base, x.dtype)
        q, k = _rope(q, kept["cos"], kept["sin"], config.rope), _rope(k, kept["cos"], kept["sin"], config.rope)
    out, weights = _attend_masked(q, k, v, attention_mask(mask, seq, config.window))
    heads = _merge_heads(out)  # (..., seq, d_model)
    kept.update(x=x, q=q, k=k, v=v, weights=weights, heads=heads)
    return _project(heads, params["w_o"], params.get("b_o")), weights


def check_heads(d_model, config):
    """``d_model`` splits into the config's heads, and into pairs of columns where rotary positions turn them."""
    _checks.heads(d_model, config.n_heads)
    if config.rope is not None and (d_model // config.n_heads) % 2:
        raise ValueError(f"rotary positions turn a head's columns in pairs: d_model / n_heads = "
                         f"{d_model} / {config.n_heads} must be even")


def _block_config(config):
    if not isinstance(config, BlockConfig):
        raise TypeError(f"config must be a BlockConfig, e.g. el.BlockConfig(4, rope='half', bias=False), "
                        f"got {type(config).__name__} {config!r}")
    return config


@_checks.public(extremes=_checks.ATTENTION_EXTREMES)
def modern_attention(x, params, config, padding_mask=None):
    """Multi-head self-attention over ``x`` (..., seq, d_model) with the options of ``config`` (a BlockConfig).

    ``q, k, v = x w_q (+ b_q), ...`` split into ``config.n_heads`` heads; with
    ``qk_norm`` each head's queries and keys are normalised (the config's
    ``norm_kind``); with ``rope`` they are turned by position (``rope``, base
    ``rope_base``); with ``window`` each query sees the keys within
    ``window // 2`` positions (``local_window_mask``); the padded keys are
    left out. Returns ``out`` (..., seq, d_model) and ``weights`` (...,
    n_heads, seq, seq). ``params`` as the module's docstring says.

    >>> from encoder_lib import BlockConfig, init_block_params
    >>> config = BlockConfig(2, norm="pre", bias=False, rope="half", window=2)
    >>> p = init_block_params(8, 16, np.random.default_rng(0), config=config)
    >>> out, weights = modern_attention(np.ones((5, 8), np.float32), p["attn"], config)
    >>> out.shape, int((weights[0] > 0).sum(axis=-1)[2])  # position 2 sees positions 1, 2 and 3
    ((5, 8), 3)
    """
    return _modern_mha(*modern_attention_arguments(x, params, config, padding_mask))


def modern_attention_arguments(x, params, config, padding_mask):
    """``modern_attention``'s arguments, checked: ``(x, params, config, mask)``, for it and its gradient."""
    config = _block_config(config)
    x = _checks.sequence(x)
    check_heads(x.shape[-1], config)
    if params is None:
        raise TypeError("params must be a dict of the attention's arrays (w_q, w_k, w_v, w_o, ...), got None")
    params = check_modern_attention_params(params, x.shape[-1], x.dtype, config)
    return x, params, config, _checks.padding_mask(padding_mask, x.shape)


# ---------------------------------------------------------------- stacks: which layers are global, which local


@_checks.public
def local_global_configs(config, n_layers, *, global_every, window, local_rope_base=None):
    """One BlockConfig per layer: layers 0, ``global_every``, 2 ``global_every``, ... are ``config`` (global),
    the others see a local ``window`` (and turn by ``local_rope_base``, if given).

    ModernBERT's pattern: ``global_attn_every_n_layers`` 3, ``local_attention``
    128, and ``rope_theta`` 160,000 in global layers and 10,000 in local
    ones (``ModernBertConfig``: a layer ``i`` is local where ``i % 3`` is not 0).

    >>> from encoder_lib import BlockConfig
    >>> configs = local_global_configs(BlockConfig(4, rope="half"), 4, global_every=3, window=128)
    >>> [c.window for c in configs]
    [None, 128, 128, None]
    """
    config = _block_config(config)
    n_layers = _checks.positive_int(n_layers, "n_layers")
    global_every = _checks.positive_int(global_every, "global_every")
    window = _checks.positive_int(window, "window")
    local = dataclasses.replace(config, window=window, rope_base=config.rope_base if local_rope_base is None
                                else _checks.positive_number(local_rope_base, "local_rope_base"))
    return [local if i % global_every else config for i in range(n_layers)]
