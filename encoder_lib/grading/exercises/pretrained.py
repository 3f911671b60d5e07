"""Lesson 08's exercises: mean pooling, and your own block running all-MiniLM-L6-v2."""

import functools
from functools import partial

import numpy as np

from ...attention import masked_softmax, merge_heads, multi_head_attention, split_heads
from ...block import encoder_block
from ...ffn import gelu
from ...norm import layer_norm
from ...pooling import mean_pool
from ._base import Exercise, Mistake, cases, normal, random_block
from .feed_forward import gelu_tanh_approximation

# --- mean pooling --------------------------------------------------------------------


def mean_pool_cases(rng, hidden):
    if hidden:
        lead = tuple(int(n) for n in rng.integers(2, 4, size=rng.integers(1, 3)))
        seq, d = int(rng.integers(2, 8)), int(rng.integers(2, 7))
        mask = rng.random(lead + (seq,)) < 0.4
        rows = mask.reshape(-1, seq)  # a view: one row per sequence
        rows[0] = True  # one sequence all padding
        rows[1] = False
        rows[1, -1] = True  # one with only its last position padded
        return cases((f"random hidden {lead + (seq, d)} with padding, one sequence all padding",
                      [normal(rng, *lead, seq, d), mask], {}),
                     (f"random hidden ({seq}, {d}), no mask", [normal(rng, seq, d)], {}))
    return cases(
        ("4 tokens of 2 features, no mask", [np.arange(8.0).reshape(4, 2)], {}),
        ("(2, 4, 3), the last two positions of sequence 0 and the last one of sequence 1 padded",
         [normal(rng, 2, 4, 3), np.array([[False, False, True, True], [False, False, False, True]])], {}),
        ("(2, 3, 5), sequence 1 all padding (its mean is 0)",
         [normal(rng, 2, 3, 5), np.array([[False, False, True], [True, True, True]])], {}),
    )


def mean_pool_model(hidden, padding_mask=None, *, use_mask=True, invert=False, divide_by_seq=False, axis=-2,
                    guard=True):
    """Mean pooling, and the ways of getting it wrong: ignore the mask, flip it, divide by seq, wrong axis, NaN."""
    keep = np.ones(hidden.shape[:-1], dtype=bool) if padding_mask is None or not use_mask else ~padding_mask
    if invert and padding_mask is not None:
        keep = ~keep
    zeroed = hidden * keep[..., None]  # padding set to 0
    if axis != -2:
        return zeroed.mean(axis=axis)
    if divide_by_seq:
        return zeroed.sum(axis=-2) / hidden.shape[-2]
    count = keep.sum(axis=-1)[..., None]
    return zeroed.sum(axis=-2) / (np.maximum(count, 1) if guard else count)


MEAN_POOL = Exercise(
    name="mean_pool", lesson="08_inside_a_real_encoder", points=1,
    formula=r"\mathrm{pool}(h) = \frac{\sum_{t \text{ real}} h_t}{\max(1,\ \#\{t \text{ real}\})}",
    cases=mean_pool_cases, reference=mean_pool,
    mistakes=(
        Mistake("mean_pool_averages_the_padding",
                "the padding is averaged in too: leave out the positions where padding_mask is True, and divide by "
                "the number of real tokens", partial(mean_pool_model, use_mask=False)),
        Mistake("mean_pool_divides_by_the_full_length",
                "divided by the full length: after zeroing the padding, divide each sequence's sum by its number of "
                "real tokens (the False entries of its mask row), not by seq", partial(mean_pool_model, divide_by_seq=True)),
        Mistake("mean_pool_mask_with_the_wrong_polarity",
                "the mask has the wrong polarity: True marks padding, so average the positions where it is False",
                partial(mean_pool_model, invert=True)),
        Mistake("mean_pool_over_the_features",
                "averaged over the features, not the positions: take the mean over the seq axis (-2), "
                "so the result has shape (..., d_model)", partial(mean_pool_model, axis=-1)),
        Mistake("mean_pool_nan_for_an_all_padding_sequence",
                "a sequence that is all padding gives NaN (0 / 0): give it zeros, e.g. divide by max(count, 1)",
                partial(mean_pool_model, guard=False)),
    ),
)

# --- your own block runs the real model ---------------------------------------------

#: Lesson 08's sentence for the visible cases.
LESSON_SENTENCES = ("The cat sat on the mat because the cat was tired.", "Tokenisation splits unfamiliar words.")


#: The block the cases run: the first, whose input is the embedding layer's output. Its weights (14 MB in
#: float64) are the same objects in every case, so they cross to the grader's sandbox once (``wire.encode``),
#: and every learner's lesson 08 sends them (a second block would add 14 MB, and 0.15 s, to each learner).
MINILM_LAYERS = (1,)


@functools.lru_cache(maxsize=len(MINILM_LAYERS))
def minilm_params(layer):
    """All-MiniLM-L6-v2's block ``layer`` (1..6), its weights in float64: one object per block."""
    from ... import pretrained  # the model's files: only where this exercise's cases are built

    model = pretrained.load_minilm()
    return {part: {name: np.asarray(a, dtype=np.float64) for name, a in values.items()}
            for part, values in model.layers[layer - 1].items()}


def minilm_case(texts, layer):
    """``(x, params, n_heads, padding_mask)``: the library's input to all-MiniLM-L6-v2's block ``layer``, float64."""
    from ... import pretrained

    model = pretrained.load_minilm()
    enc = pretrained.encode(list(texts), model)
    return [enc.hidden_states[layer - 1].astype(np.float64), minilm_params(layer), model.block.n_heads], \
        {"padding_mask": enc.padding_mask}


#: The first token id of a word piece in the model's vocabulary (below it: [PAD], [unused], [CLS], [SEP], ...).
FIRST_WORD_ID = 1000


def random_tokens_case(rng, layer):
    """``(x, params, n_heads), {padding_mask}``: two random token sequences, [CLS] ... [SEP], the second one
    shorter and padded, through all-MiniLM-L6-v2's embedding layer, for its block ``layer``: real inputs at the
    model's scale that no table of outputs can hold (30,000 word pieces to a position)."""
    from ... import pretrained

    model = pretrained.load_minilm()
    special = {name: model.tokenizer.token_to_id(name) for name in ("[CLS]", "[SEP]", "[PAD]")}
    seq = int(rng.integers(6, 15))
    lengths = np.array([seq, int(rng.integers(3, seq))])
    ids = rng.integers(FIRST_WORD_ID, model.word_embeddings.shape[0], size=(2, seq))  # (2, seq)
    padding_mask = np.arange(seq) >= lengths[:, None]  # (2, seq), True at padding
    ids[padding_mask] = special["[PAD]"]
    ids[:, 0], ids[[0, 1], lengths - 1] = special["[CLS]"], special["[SEP]"]
    x = pretrained._embeddings(model, ids, np.zeros_like(ids)).astype(np.float64)  # (2, seq, 384)
    return [x, minilm_params(layer), model.block.n_heads], {"padding_mask": padding_mask}


def bert_cases(rng, hidden):
    if hidden:
        layer = int(rng.choice(MINILM_LAYERS))
        args, kwargs = random_tokens_case(rng, layer)
        shape, real = args[0].shape, int((~kwargs["padding_mask"][1]).sum())
        return cases((f"all-MiniLM-L6-v2's block {layer} on two random token sequences {shape}, the second one "
                      f"{real} tokens and padded", args, kwargs))
    small_mask = np.array([[False] * 5, [False] * 3 + [True] * 2])
    first, first_kwargs = minilm_case(LESSON_SENTENCES[:1], 1)
    both, both_kwargs = minilm_case(LESSON_SENTENCES, 1)
    return cases(
        ("a small random block: (2, 5, 8), 2 heads, d_ff 12, a padding mask",
         [normal(rng, 2, 5, 8), random_block(rng, 8, 12), 2], {"padding_mask": small_mask}),
        (f"all-MiniLM-L6-v2's block 1 on {LESSON_SENTENCES[0]!r}", first, first_kwargs),
        ("all-MiniLM-L6-v2's block 1 on the lesson's two sentences (the second one padded)", both, both_kwargs),
    )


def bert_reference(x, params, n_heads, padding_mask=None):
    return encoder_block(x, params, n_heads, norm="post", padding_mask=padding_mask, activation="gelu", eps=1e-12)


def _relu(h):
    return np.maximum(h, 0)


def bert_model(x, params, n_heads, padding_mask=None, *, act="gelu", eps=1e-12, placement="post", use_mask=True,
               scale_by_d_model=False):
    """BERT's block with one thing changed: what a learner's block computes when it gets that one thing wrong."""
    mask = padding_mask if use_mask else None
    a = params["attn"]

    def sublayer1(h):
        if not scale_by_d_model:
            return multi_head_attention(h, n_heads, a, padding_mask=mask)[0]
        q, k, v = (split_heads(h @ a[f"w_{n}"] + a[f"b_{n}"], n_heads) for n in "qkv")
        weights = masked_softmax(q @ np.swapaxes(k, -1, -2) / np.sqrt(h.shape[-1]),
                                 None if mask is None else mask[..., None, :])
        return merge_heads(weights @ v) @ a["w_o"] + a["b_o"]

    activation = {"gelu": gelu, "tanh": gelu_tanh_approximation, "relu": _relu}[act]
    p = params["ffn"]

    def sublayer2(h):
        return activation(h @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"]

    def ln(h, which):
        return layer_norm(h, params[which]["gamma"], params[which]["beta"], eps)

    if placement == "pre":
        x = x + sublayer1(ln(x, "norm1"))
        return x + sublayer2(ln(x, "norm2"))
    x = ln(x + sublayer1(x), "norm1")
    return ln(x + sublayer2(x), "norm2")


BERT_BLOCK = Exercise(
    name="bert_block", lesson="08_inside_a_real_encoder", points=3,
    formula=r"x \leftarrow \mathrm{LN}_{10^{-12}}(x + \mathrm{MHA}(x)),\quad"
            r" x \leftarrow \mathrm{LN}_{10^{-12}}(x + \mathrm{GELU}(x W_1 + b_1) W_2 + b_2)",
    cases=bert_cases, reference=bert_reference,
    mistakes=(
        Mistake("bert_block_tanh_gelu",
                "GELU's tanh approximation: BERT and all-MiniLM-L6-v2 use the exact GELU, "
                "0.5 x (1 + erf(x / sqrt(2)))", partial(bert_model, act="tanh")),
        Mistake("bert_block_eps_1e-5",
                "eps = 1e-5 (the course's default) in the layer norms: this model's are eps = 1e-12",
                partial(bert_model, eps=1e-5)),
        Mistake("bert_block_without_the_mask",
                "the padding mask is not used: padded keys must get weight 0 (score -inf before the softmax), or the "
                "padded sentence's real tokens read its [PAD]s", partial(bert_model, use_mask=False)),
        Mistake("bert_block_pre_norm",
                "pre-norm: BERT's blocks are post-norm, x = LN(x + MHA(x)), then x = LN(x + FFN(x))",
                partial(bert_model, placement="pre")),
        Mistake("bert_block_relu", "ReLU in the FFN: BERT's is the exact GELU", partial(bert_model, act="relu")),
        Mistake("bert_block_scaled_by_d_model",
                "scores scaled by sqrt(d_model): each head's scale is sqrt(d_head), d_head = d_model / n_heads",
                partial(bert_model, scale_by_d_model=True)),
    ),
)

EXERCISES = (MEAN_POOL, BERT_BLOCK)
