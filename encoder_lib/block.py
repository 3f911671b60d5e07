"""The encoder block: attention, then the FFN, each wrapped in Add & Norm; and a stack of blocks.

The block is two lines of its equations, one function per placement of the norm:

    post-norm (the original Transformer, BERT):     x = LN(x + MHA(x));  x = LN(x + FFN(x))
    pre-norm (GPT-2, wav2vec 2.0 large, Whisper):   x = x + MHA(LN(x));  x = x + FFN(LN(x))
    peri-norm (Gemma 2 and 3; Kim et al. 2025):     x = x + LN(MHA(LN(x)));  x = x + LN(FFN(LN(x)))

The modern options (``BlockConfig``: RMSNorm, no biases, rotary positions, a
gated FFN, a local window, QK-norm) change what the parts compute, never the
equations: ModernBERT's layer is ``pre_norm_block`` with ``modernbert_configs``.

``b``, the block's parts, holds its weights and options: ``b.attn`` is
multi-head attention with ``params["attn"]``, ``b.ffn`` the FFN,
``b.norm1``/``b.norm2`` the norms with ``params["norm1"]``/``["norm2"]`` (and
``b.norm1_out``/``b.norm2_out`` after each sub-layer in peri-norm), and ``b.sum1(x, a)``/``b.sum2`` the residual sums ``x + a``. The options that
travel together from block to block are one ``BlockConfig``: the public
functions take it whole (``config=``, or as their third argument), or
``n_heads`` and the options loose, by keyword (``block_config``): every
option is written out on the def line, as BlockConfig's defaults.
"""

import dataclasses

import numpy as np

from . import _checks
from .attention import _mha, check_attention_params
from .config import NORMS, BlockConfig  # noqa: F401  (NORMS: the placements, here as before)
from .ffn import _ffn, _gated_ffn, check_ffn_params
from .modern import _modern_mha, check_heads, check_modern_block_params, classic, classic_attention
from .norm import _norm, check_norm_params

BLOCK_KEYS = ("attn", "ffn", "norm1", "norm2")


class BlockParts:
    """One block's parts, bound to its weights, its config and the padding mask.

    With a ``tape`` (a dict), each part also records what the backward pass
    and the traces need, under the names the equations use: ``input``,
    ``attn``, ``sum1``, ``norm1``, ``ffn``, ``sum2``, ``norm2``, ``output``.
    Each name means the same in both placements: ``norm1`` is always the layer
    norm with ``params["norm1"]``, ``sum1`` the first residual sum.
    """

    def __init__(self, params, config, padding_mask=None, tape=None):
        self.params, self.config, self.mask, self.tape = params, config, padding_mask, tape

    def attn(self, x):  # MHA(x), with dropout on its output
        kept, config = self._kept("attn"), self.config
        if classic_attention(config):
            out, _ = _mha(x, config.n_heads, self.params["attn"], self.mask, kept)
        else:  # rotary positions, QK-norm, a window or no biases
            out, _ = _modern_mha(x, self.params["attn"], config, self.mask, kept)
        return self._out(kept, _dropout(out, config))

    def ffn(self, x):  # FFN(x), with dropout on its output
        kept, run = self._kept("ffn"), _ffn if self.config.ffn == "plain" else _gated_ffn
        return self._out(kept, _dropout(run(x, self.params["ffn"], self.config.activation, kept), self.config))

    def norm1(self, x):  # LN(x) with norm1's gamma and beta (RMSNorm with norm_kind="rms"; x where it is None)
        return self._norm("norm1", x)

    def norm2(self, x):
        return self._norm("norm2", x)

    def norm1_out(self, x):  # peri-norm: the norm after the attention
        return self._norm("norm1_out", x)

    def norm2_out(self, x):
        return self._norm("norm2_out", x)

    def _norm(self, name, x):
        kept = self._kept(name)
        return self._out(kept, _norm(x, self.params[name], self.config.norm_kind, self.config.eps, kept))

    def sum1(self, x, a):  # x + a: the skip connection around the first sub-layer
        return self._sum("sum1", x, a)

    def sum2(self, x, a):
        return self._sum("sum2", x, a)

    def _kept(self, name):  # where a part records what it computes: a dict on the tape, or None
        return None if self.tape is None else self.tape.setdefault(name, {})

    @staticmethod
    def _out(kept, out):
        if kept is not None:
            kept["out"] = out
        return out

    def _sum(self, name, x, a):
        out = x + a if self.config.residual else a  # without the skip connection, just the sub-layer
        if self.tape is not None:
            self.tape[name] = out
        return out


def post_norm_block(x, b):
    """x = LN(x + MHA(x)); x = LN(x + FFN(x))"""
    x = b.norm1(b.sum1(x, b.attn(x)))
    x = b.norm2(b.sum2(x, b.ffn(x)))
    return x


def pre_norm_block(x, b):
    """x = x + MHA(LN(x)); x = x + FFN(LN(x))"""
    x = b.sum1(x, b.attn(b.norm1(x)))
    x = b.sum2(x, b.ffn(b.norm2(x)))
    return x


def peri_norm_block(x, b):
    """x = x + LN(MHA(LN(x))); x = x + LN(FFN(LN(x)))"""
    x = b.sum1(x, b.norm1_out(b.attn(b.norm1(x))))
    x = b.sum2(x, b.norm2_out(b.ffn(b.norm2(x))))
    return x


BLOCKS = {"post": post_norm_block, "pre": pre_norm_block, "peri": peri_norm_block}


def _dropout(y, config):
    """Zero each entry with probability ``config.dropout`` and scale the rest by 1 / (1 - dropout)."""
    if config.dropout == 0:
        return y
    keep = config.rng.random(y.shape) >= config.dropout
    return y * keep / np.asarray(1 - config.dropout, dtype=y.dtype)


def run_block(x, params, config, padding_mask=None, tape=None):
    """One block, unchecked: ``params`` and ``padding_mask`` already checked, ``config`` a BlockConfig."""
    if tape is not None:
        tape["input"] = x
    out = BLOCKS[config.norm](x, BlockParts(params, config, padding_mask, tape))
    if tape is not None:
        tape["output"] = out
    return out


# ---------------------------------------------------------------- checks


def check_block_params(params, d_model, dtype, where="params", config=None):
    """Check one block's nested params against ``d_model``, ``dtype`` and the ``config`` (None: the original
    block's); returns a checked copy.

    ``params["attn"]`` may be None: identity projections, the lesson's variant.
    The modern options' params: ``encoder_lib.modern``'s docstring.
    """
    if config is not None and not classic(config):
        return check_modern_block_params(params, d_model, dtype, config, where)
    if not isinstance(params, dict):
        raise TypeError(f"{where} must be a dict with keys {list(BLOCK_KEYS)}, got {type(params).__name__}")
    missing = [key for key in BLOCK_KEYS if key not in params]
    if missing:
        raise ValueError(f"{where} is missing {missing}; a block's params have keys {list(BLOCK_KEYS)}")
    return {
        "attn": None if params["attn"] is None
        else check_attention_params(params["attn"], d_model, dtype, f"{where}['attn']"),
        "ffn": check_ffn_params(params["ffn"], d_model, dtype, f"{where}['ffn']"),
        **{key: check_norm_params(params[key], d_model, dtype, f"{where}[{key!r}]") for key in ("norm1", "norm2")},
    }


def check_layers(layers, d_model, dtype, configs=None):
    """Each block's params checked against its config (``configs``, one per block, or None)."""
    if not isinstance(layers, (list, tuple)):
        raise TypeError(f"layers must be a list of block params (one dict per block), got {type(layers).__name__}")
    if not layers:
        raise ValueError("layers must hold at least one block's params, got an empty list")
    if configs is not None and len(configs) != len(layers):
        raise ValueError(f"config holds {len(configs)} BlockConfigs but layers holds {len(layers)} blocks: give one "
                         f"config per block, or one for all")
    configs = configs or [None] * len(layers)
    return [check_block_params(p, d_model, dtype, f"layers[{i}]", c) for i, (p, c) in enumerate(zip(layers, configs))]


def prepare(x, config, padding_mask):
    """The checked input, and the padding mask against it; ``d_model`` must split into the config's heads (each
    config's, for a list), in pairs where rotary positions turn them."""
    x = _checks.sequence(x)
    for one in config if isinstance(config, list) else [config]:
        check_heads(x.shape[-1], one)
    return x, _checks.padding_mask(padding_mask, x.shape)


# ---------------------------------------------------------------- how the block functions are called

#: BlockConfig's options besides n_heads, with their defaults: each is a keyword of the block functions.
OPTIONS = {field.name: field.default for field in dataclasses.fields(BlockConfig) if field.name != "n_heads"}


def block_config(where, n_heads=None, config=None, **options):
    """The BlockConfig a block function runs with: ``config`` whole, or ``n_heads`` with the loose ``options``.

    ``n_heads`` may be the config itself (a block function's third argument).
    A config with ``n_heads`` or with a loose option other than its default
    is refused: the config already holds them. ``where`` names the function
    in the message.

    >>> block_config("encoder_block", 2, norm="pre").norm
    'pre'
    """
    if isinstance(n_heads, BlockConfig):
        if config is not None:
            raise TypeError(f"{where} got a BlockConfig twice, as its third argument and as config=: pass it once")
        n_heads, config = None, n_heads
    if config is None:
        if n_heads is None:
            raise TypeError(f"{where} needs n_heads (an integer, its third argument) or a BlockConfig "
                            f"(config=el.BlockConfig(n_heads, ...)), got neither")
        return BlockConfig(n_heads, **options)
    if not isinstance(config, BlockConfig):
        raise TypeError(f"config must be a BlockConfig, e.g. el.BlockConfig(2, norm='pre'), "
                        f"got {type(config).__name__} {config!r}")
    changed = {name: value for name, value in options.items() if not _is_default(name, value)}
    loose = {**({} if n_heads is None else {"n_heads": n_heads}), **changed}
    if loose:
        given = ", ".join(f"{name}={value!r}" for name, value in loose.items())
        raise TypeError(f"{where} got config= and {given}: the config already holds {', '.join(loose)}; pass the "
                        f"config alone, or a changed one: dataclasses.replace(config, {given})")
    return config


def stack_configs(where, layers, n_heads=None, config=None, **options):
    """One BlockConfig per block of ``layers``: a list of them given whole (the third argument, or ``config=``),
    or ``block_config``'s one config for every block.

    >>> from encoder_lib.modern import local_global_configs
    >>> [c.window for c in stack_configs("encoder", [{}] * 3, local_global_configs(BlockConfig(2), 3, global_every=2, window=4))]
    [None, 4, None]
    """
    given = [c for c in (n_heads, config) if isinstance(c, (list, tuple))]
    if not given:
        one = block_config(where, n_heads, config, **options)
        return [one] * len(layers) if isinstance(layers, (list, tuple)) and layers else [one]
    if n_heads is not None and config is not None:
        raise TypeError(f"{where} got its configs twice, as its third argument and as config=: pass them once")
    configs = list(given[0])
    if not configs:
        raise ValueError("config must hold one BlockConfig per block, got an empty list")
    for i, one in enumerate(configs):
        if not isinstance(one, BlockConfig):
            raise TypeError(f"config[{i}] must be a BlockConfig, got {type(one).__name__} {one!r}")
    block_config(where, None, configs[0], **options)  # refuses loose options beside the configs
    return configs


def _is_default(name, value):
    default = OPTIONS[name]
    return value is default or (type(value) is type(default) and value == default)


# ---------------------------------------------------------------- public


@_checks.public(extremes=_checks.BLOCK_EXTREMES)
def encoder_block(x, params, n_heads=None, *, norm="post", padding_mask=None, activation="relu", eps=1e-5,
                  residual=True, dropout=0.0, rng=None, config=None):
    """One Transformer encoder block over ``x`` (..., seq, d_model) -> (..., seq, d_model).

    ``params = {"attn": {...} or None, "ffn": {...}, "norm1": {"gamma", "beta"},
    "norm2": {...}}``. The third argument is ``n_heads``, or the whole
    ``BlockConfig`` (also as ``config=``); without a config the other
    options come by keyword, as BlockConfig's: ``norm="post"`` computes
    ``LN(x + f(x))`` around each sub-layer, ``norm="pre"`` ``x + f(LN(x))``,
    ``norm="peri"`` ``x + LN(f(LN(x)))`` (``*_norm_block``; the modern options'
    params: ``encoder_lib.modern``);
    ``residual=False`` drops the ``x +`` (to see what the skip connection
    does). Dropout is the identity unless ``dropout > 0``, which needs an
    explicit ``rng``.

    >>> from encoder_lib.fixtures import lesson_block_params, lesson_input
    >>> out = encoder_block(lesson_input(), lesson_block_params(), n_heads=2)
    >>> out.mean(axis=-1).round(6) + 0, out.var(axis=-1).round(3)
    (array([0., 0., 0.]), array([1., 1., 1.]))
    >>> bert = BlockConfig(2, activation="gelu", eps=1e-12)
    >>> encoder_block(lesson_input(), lesson_block_params(), bert).shape  # the same as config=bert
    (3, 4)
    """
    config = block_config("encoder_block", n_heads, config, norm=norm, activation=activation, eps=eps,
                          residual=residual, dropout=dropout, rng=rng)
    x, mask = prepare(x, config, padding_mask)
    return run_block(x, check_block_params(params, x.shape[-1], x.dtype, config=config), config, mask)


@_checks.public(extremes=_checks.BLOCK_EXTREMES)
def encoder(x, layers, n_heads=None, *, norm="post", padding_mask=None, activation="relu", eps=1e-5, residual=True,
            dropout=0.0, rng=None, config=None):
    """A stack of encoder blocks: the output of each is the input of the next.

    ``layers`` is a list of block params, one per block (see ``encoder_block``);
    ``n_heads`` or the ``BlockConfig``, and every option, are shared by all
    blocks, or ``config`` is a list of BlockConfigs, one per block (ModernBERT's
    global and local layers: ``local_global_configs``, ``modernbert_configs``).
    Shape-preserving: (..., seq, d_model) -> (..., seq, d_model). No final
    layer norm is added.

    >>> from encoder_lib import init_block_params
    >>> rng = np.random.default_rng(0)
    >>> layers = [init_block_params(8, 16, rng) for _ in range(3)]
    >>> encoder(rng.standard_normal((2, 5, 8), dtype=np.float32), layers, n_heads=2).shape
    (2, 5, 8)
    """
    configs = stack_configs("encoder", layers, n_heads, config, norm=norm, activation=activation, eps=eps,
                            residual=residual, dropout=dropout, rng=rng)
    x, mask = prepare(x, configs, padding_mask)
    for params, one in zip(check_layers(layers, x.shape[-1], x.dtype, configs), configs):
        x = run_block(x, params, one, mask)
    return x


#: How each entry of a block's tape shows in a trace: (trace key, what of the entry), in order.
TRACE_KEYS = {
    "input": [("input", None)], "attn": [("attn_weights", "weights"), ("attn_out", "out")], "sum1": [("sum1", None)],
    "norm1": [("norm1", "out")], "ffn": [("ffn_hidden", "hidden"), ("ffn_out", "out")], "sum2": [("sum2", None)],
    "norm2": [("norm2", "out")], "output": [("output", None)],
    "norm1_out": [("norm1_out", "out")], "norm2_out": [("norm2_out", "out")],  # peri-norm's norms after sub-layers
}


def trace_from_tape(tape):
    """The intermediates on a block's tape, by the names the lessons use, in the order they were computed."""
    return {name: value if part is None else value[part]
            for key, value in tape.items() for name, part in TRACE_KEYS[key]}


@_checks.public(extremes=_checks.BLOCK_EXTREMES)
def trace_encoder_block(x, params, n_heads=None, *, norm="post", padding_mask=None, activation="relu", eps=1e-5,
                        residual=True, config=None):
    """Run one block and return every intermediate, in the order they are computed.

    Called as ``encoder_block`` (``n_heads`` or a ``BlockConfig``; dropout
    only through a config's ``dropout`` and ``rng``). Keys: ``input``,
    ``attn_weights`` (..., n_heads, seq, seq), ``attn_out``, ``sum1`` (after
    the first residual), ``norm1`` (the output of the layer norm with
    ``params["norm1"]``), ``ffn_hidden`` (..., seq, d_ff), ``ffn_out``,
    ``sum2``, ``norm2``, ``output``. In pre-norm, ``norm1`` and ``norm2`` are
    the sub-layers' inputs and ``output`` is ``sum2``; in post-norm
    ``output`` is ``norm2``.

    >>> from encoder_lib.fixtures import lesson_block_params, lesson_input
    >>> list(trace_encoder_block(lesson_input(), lesson_block_params(), 2, norm="pre"))[:4]
    ['input', 'norm1', 'attn_weights', 'attn_out']
    """
    config = block_config("trace_encoder_block", n_heads, config, norm=norm, activation=activation, eps=eps,
                          residual=residual)
    x, mask = prepare(x, config, padding_mask)
    tape = {}
    run_block(x.copy(), check_block_params(params, x.shape[-1], x.dtype, config=config), config, mask, tape)
    return trace_from_tape(tape)


@_checks.public(extremes=_checks.BLOCK_EXTREMES)
def trace_encoder(x, layers, n_heads=None, *, norm="post", padding_mask=None, activation="relu", eps=1e-5,
                  residual=True, config=None):
    """Run a stack and return one ``trace_encoder_block`` dict per block.

    >>> from encoder_lib.fixtures import lesson_block_params, lesson_input
    >>> traces = trace_encoder(lesson_input(), [lesson_block_params()] * 2, 2)
    >>> len(traces), traces[1]["output"].shape
    (2, (3, 4))
    """
    configs = stack_configs("trace_encoder", layers, n_heads, config, norm=norm, activation=activation, eps=eps,
                            residual=residual)
    x, mask = prepare(x, configs, padding_mask)
    traces = []
    x = x.copy()
    for params, one in zip(check_layers(layers, x.shape[-1], x.dtype, configs), configs):
        tape = {}
        x = run_block(x, params, one, mask, tape)
        traces.append(trace_from_tape(tape))
    return traces
