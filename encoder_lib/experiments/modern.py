"""Lesson 09: the encoder since 2017. RMSNorm against layer norm, rotary positions in two layouts, gated FFNs at
the plain FFN's parameter count, the three placements of the norm, attention's memory and local windows, and two
real encoders' choices side by side.

Each experiment is seeded and small; the widgets of ``encoder_lib.widgets.modern`` draw what these return.
"""

import functools
import json
from importlib import resources

import numpy as np

import encoder_lib as el

from ..threads import single_blas_thread
from ..training import gradient_norms_by_depth

# --- RMSNorm against layer norm ------------------------------------------------------------------------------------

N_ROWS, D_NORM = 6, 16
#: The offsets added to every entry of the norms' rows: their mean, in units of their spread (1).
OFFSETS = (0.0, 0.5, 1.0, 2.0, 4.0)


def unit_rows(seed=0, n=N_ROWS, d=D_NORM):
    """(n, d) float64 rows of mean exactly 0 and variance exactly 1 (to rounding): the offset is added on top."""
    x = np.random.default_rng(seed).standard_normal((n, d))
    x -= x.mean(axis=-1, keepdims=True)
    return x / x.std(axis=-1, keepdims=True)


def norms_of(x):
    """``{"layer": layer_norm(x), "rms": rms_norm(x)}``, neither with gamma (or beta)."""
    return {"layer": el.layer_norm(x), "rms": el.rms_norm(x)}


def row_stats(out):
    """Each row's mean and root mean square, (rows,) each."""
    return out.mean(axis=-1), np.sqrt(np.mean(out ** 2, axis=-1))


# --- rotary positions --------------------------------------------------------------------------------------------

D_HEAD, SEQ = 8, 16
LAYOUTS = ("half", "interleaved")
#: How far both the queries and the keys are moved on (positions shift ... shift + SEQ - 1).
SHIFTS = (0, 8, 16, 24, 32)


def rope_contents(seed=1, d_head=D_HEAD):
    """One query vector and one key vector (d_head,): the same content at every position."""
    rng = np.random.default_rng(seed)
    return rng.standard_normal(d_head), rng.standard_normal(d_head)


def rope_scores(layout, shift=0, seq=SEQ, seed=1):
    """(seq, seq) scores ``q_i . k_j / sqrt(d_head)`` of one query and one key vector, each turned by
    ``el.rope`` to positions ``shift`` to ``shift + seq - 1`` (base 10,000)."""
    q, k = rope_contents(seed)
    positions = np.arange(shift, shift + seq)
    turned_q = el.rope(np.tile(q, (seq, 1)), layout=layout, positions=positions)  # (seq, d_head): row i at i + shift
    turned_k = el.rope(np.tile(k, (seq, 1)), layout=layout, positions=positions)
    return turned_q @ turned_k.T / np.sqrt(len(q))


def by_offset(scores):
    """``(offsets, score, spread)``: for each ``i - j`` from ``-(seq - 1)`` to ``seq - 1``, the mean of the scores on
    that diagonal and how far apart its scores are (0, to rounding, when a score depends on i - j alone)."""
    seq = len(scores)
    offsets = np.arange(-(seq - 1), seq)
    diagonals = [np.diagonal(scores, offset=-d) for d in offsets]  # diagonal -d holds the pairs with i - j = d
    return offsets, np.array([d.mean() for d in diagonals]), np.array([np.ptp(d) for d in diagonals])


# --- gated FFNs at the plain one's parameter count -------------------------------------------------------------------

D_FFN, PLAIN_D_FF = 16, 48
#: The four FFNs: (activation, gated). The gated ones are as wide as ``el.gated_d_ff(PLAIN_D_FF)``.
FFN_KINDS = {"relu": ("relu", False), "gelu": ("gelu", False), "geglu": ("gelu", True), "swiglu": ("silu", True)}
ACTIVATIONS = {"relu": el.relu, "gelu": el.gelu, "silu": el.silu}


@functools.lru_cache(maxsize=1)
def ffn_hidden(seed=2, positions=12):
    """``{kind: (hidden, params)}``: each FFN's hidden layer for the same ``positions`` layer-normed rows, bias-free
    and freshly initialised (``init_block_params``), the gated ones ``el.gated_d_ff(PLAIN_D_FF)`` wide."""
    rng = np.random.default_rng(seed)
    x = el.layer_norm(rng.standard_normal((positions, D_FFN)))
    found = {}
    for kind, (activation, gated) in FFN_KINDS.items():
        config = el.BlockConfig(2, norm="pre", bias=False, ffn="gated" if gated else "plain", activation=activation)
        width = el.gated_d_ff(PLAIN_D_FF) if gated else PLAIN_D_FF
        params = el.init_block_params(D_FFN, width, np.random.default_rng(seed), np.float64, config=config)["ffn"]
        act = ACTIVATIONS[activation]
        hidden = act(x @ params["w_in"]) * (x @ params["w_gate"]) if gated else act(x @ params["w1"])
        found[kind] = (hidden, params)
    return found


# --- attention's memory, blockwise attention and local windows -------------------------------------------------------

#: Sequence lengths, from BERT's 512 to ModernBERT's 8,192 and beyond; heads as BERT-base's and ModernBERT-base's.
MEMORY_SEQS = (128, 256, 512, 1024, 2048, 4096, 8192, 16384)
MEMORY_HEADS = 12
BLOCKS = (64, 128, 256)


def memory_table(seqs=MEMORY_SEQS, heads=MEMORY_HEADS, blocks=BLOCKS):
    """``{"full": bytes by seq, block: bytes by seq}``: the float32 (1, heads, seq, seq) weights, and the (1, heads,
    seq, block) scores blockwise attention holds at a time, from ``el.attention_weights_bytes``."""
    table = {"full": np.array([el.attention_weights_bytes(s, heads=heads) for s in seqs], dtype=float)}
    for block in blocks:
        table[block] = np.array([el.attention_weights_bytes(s, heads=heads, block=block) for s in seqs], dtype=float)
    return table


@functools.lru_cache(maxsize=8)
def blockwise_gap(block, seq=256, d_head=16, seed=3):
    """The largest difference between ``el.blockwise_attention`` (blocks of ``block`` keys) and the full attention's
    output on random float64 queries, keys and values of ``seq`` positions: rounding alone."""
    rng = np.random.default_rng(seed)
    q, k, v = rng.standard_normal((3, seq, d_head))
    full = el.scaled_dot_product_attention(q, k, v)[0]
    return float(np.abs(el.blockwise_attention(q, k, v, block=block) - full).max())


WINDOWS = (2, 4, 8)  # local windows: window // 2 positions either side
WINDOW_SEQ, WINDOW_LAYERS = 24, 6


def reach(window, layers, seq=WINDOW_SEQ, global_every=None):
    """(seq, seq) boolean: True where position j's input can change position i's output after ``layers`` layers,
    each attending within ``window // 2`` positions (``el.local_window_mask``); with ``global_every``, layers 0,
    ``global_every``, ... attend to every position, as ModernBERT's."""
    local = ~el.local_window_mask(seq, window)  # (seq, seq): one local layer's reach
    found = np.eye(seq, dtype=bool)
    for layer in range(layers):
        step = np.ones((seq, seq), dtype=bool) if global_every and layer % global_every == 0 else local
        found = (step.astype(int) @ found.astype(int)) > 0  # through this layer, then what reached its keys
    return found


def layers_to_reach(window, distance, seq=WINDOW_SEQ, global_every=None, most=WINDOW_LAYERS):
    """The fewest layers after which position 0's output can depend on position ``distance``, or None."""
    return next((n for n in range(1, most + 1) if reach(window, n, seq, global_every)[0, distance]), None)


# --- two real encoders' choices ------------------------------------------------------------------------------------

CHOICE_ROWS = ("placement", "norm", "activation", "positions", "biases", "span", "sizes")


def encoder_choices():
    """all-MiniLM-L6-v2's and ModernBERT-base's choices, as ``tools/make_encoder_choices.py`` read them from their
    configuration classes in Hugging Face transformers (``encoder_choices.json``, beside this module)."""
    with resources.files(__package__).joinpath("encoder_choices.json").open() as file:
        return json.load(file)


def choices_table(models=("all-MiniLM-L6-v2", "ModernBERT-base")):
    """The choices as lines of text: one block per choice, each model's value on a line of its own."""
    found = encoder_choices()["models"]
    lines = []
    for row in CHOICE_ROWS:
        lines.append(row)
        lines += [f"    {model:18s} {found[model][row]['value']}" for model in models]
    return "\n".join(lines)


# --- the three placements: lesson 07's experiments on the third ------------------------------------------------------

PLACEMENTS = ("post", "pre", "peri")
MAX_DEPTH = 24


@functools.lru_cache(maxsize=2)
@single_blas_thread
def placement_gradients(max_depth=MAX_DEPTH, seeds=3):
    """``{norm: (max_depth, max_depth) array}``: row ``depth - 1`` holds the gradient norm of each block's parameters
    in a stack of ``depth`` blocks (zeros past it), the mean over ``seeds`` seeds, with residuals, at initialisation;
    lesson 07's setting (``training.gradient_norms_by_depth``: the loss ``sum(out * g)``, pre- and peri-norm through
    a final norm)."""
    table = {}
    for norm in PLACEMENTS:
        runs = [gradient_norms_by_depth(max_depth, norm, True, seed=seed) for seed in range(seeds)]
        rows = np.zeros((max_depth, max_depth))
        for depth in range(max_depth):
            rows[depth, : depth + 1] = np.mean([run[depth]["params"] for run in runs], axis=0)
        table[norm] = rows
    return table
