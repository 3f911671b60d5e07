"""Lesson 08's exercises: mean pooling, and your own block running all-MiniLM-L6-v2.

The code of its exercises: pretrained.toml declares each one (its texts, points and mistakes) and names the functions
here.
"""

import functools
import numpy as np

from ...attention import masked_softmax, merge_heads, multi_head_attention, softmax, split_heads
from ...block import encoder_block
from ...ffn import gelu
from ...norm import layer_norm
from ...pooling import mean_pool  # pretrained.toml's reference
from ..compare import NotApplicable
from ..symptoms import Finding
from ._base import cases, load_exercises, normal, random_block, square_probe
from .block import padding_of, seq_of
from .block import block_probes, locate_in_block, post_norm_block_output  # the last two: named in pretrained.toml
from .feed_forward import _relu, gelu_tanh_approximation


# --- mean pooling --------------------------------------------------------------------


def mean_pool_cases(rng):
    return cases(
        ("4 tokens of 2 features, no mask", [np.arange(8.0).reshape(4, 2)], {}),
        ("(2, 4, 3), the last two positions of sequence 0 and the last one of sequence 1 padded",
         [normal(rng, 2, 4, 3), np.array([[False, False, True, True], [False, False, False, True]])], {}),
        ("(2, 3, 5), one real token in sequence 0, sequence 1 all padding (its mean is 0)",
         [normal(rng, 2, 3, 5), np.array([[False, True, True], [True, True, True]])], {}),
    )


def mean_pool_draw(rng, point):
    """Hidden vectors of the point's sizes and mask; "large": of about 100; "zeros": the first position's vector (a
    real position in every mask) all zeros."""
    hidden = normal(rng, *point.lead, seq_of(point), point["d"]) * (100.0 if point.regime == "large" else 1.0)
    if point.regime == "zeros":
        hidden[..., 0, :] = 0.0
    mask = padding_of(rng, point["mask"], hidden.shape[:-1])
    if mask is None:
        return f"hidden {hidden.shape}, no mask", [hidden], {}
    return f"hidden {hidden.shape}, mask {mask.shape} ({point['mask']} padding)", [hidden, mask], {}


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


def mean_pool_reference_model(hidden, padding_mask=None):
    keep = np.ones(hidden.shape[:-1]) if padding_mask is None else ~padding_mask  # step: keep
    total = (hidden * keep[..., None]).sum(axis=-2)  # step: total
    count = keep.sum(axis=-1)[..., None]  # step: count
    return total / np.maximum(count, 1)  # step: result


def mean_pool_by_sequence(ev):
    """Which sequences' vectors are right: those without padding, those with it, the all-padding ones."""
    got, mask = ev.got_array(), ev.value("padding_mask")
    if got is None or got.shape != ev.expected.shape or mask is None or not np.isfinite(got).all():
        return None
    right = np.isclose(got, ev.expected, atol=1e-6).all(axis=-1)
    kinds = {"without padding": ~mask.any(axis=-1), "with some padding": mask.any(axis=-1) & ~mask.all(axis=-1),
             "that are all padding": mask.all(axis=-1)}
    wrong_kinds = [k for k, where in kinds.items() if where.any() and not right[where].all()]
    right_kinds = [k for k, where in kinds.items() if where.any() and right[where].all()]
    if wrong_kinds and right_kinds:
        return Finding("pool:" + "+".join(wrong_kinds),
                       f"{ev.where()} your vectors are right for the sequences {' and '.join(right_kinds)} and wrong "
                       f"for those {' and '.join(wrong_kinds)}.")
    return None


# --- your own block runs the real model ---------------------------------------------

#: Lesson 08's sentence for the visible cases.
LESSON_SENTENCES = ("The cat sat on the mat because the cat was tired.", "Tokenisation splits unfamiliar words.")


#: The block the cases run: the first, whose input is the embedding layer's output. Its weights (14 MB in
#: float64) are the same objects in every case, so they cross to the grader's sandbox once (``wire.pack``),
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
    seq = int(rng.integers(5, 11))  # as the lesson's sentences: a few words each
    lengths = np.array([seq, int(rng.integers(3, seq))])
    ids = rng.integers(FIRST_WORD_ID, model.word_embeddings.shape[0], size=(2, seq))  # (2, seq)
    padding_mask = np.arange(seq) >= lengths[:, None]  # (2, seq), True at padding
    ids[padding_mask] = special["[PAD]"]
    ids[:, 0], ids[[0, 1], lengths - 1] = special["[CLS]"], special["[SEP]"]
    x = pretrained._embeddings(model, ids, np.zeros_like(ids)).astype(np.float64)  # (2, seq, 384)
    return [x, minilm_params(layer), model.block.n_heads], {"padding_mask": padding_mask}


def bert_probes(rng):
    """The block's probes (each sub-layer switched off), and a square one."""
    return block_probes(rng, norms=("post",)) + square_probe(
        "a small random block on x (8, 8): as many positions as features, 2 heads", normal(rng, 8, 8),
        random_block(rng, 8, 12), 2)


def bert_cases(rng):
    small_mask = np.array([[False] * 5, [False] * 3 + [True] * 2])
    first, first_kwargs = minilm_case(LESSON_SENTENCES[:1], 1)
    both, both_kwargs = minilm_case(LESSON_SENTENCES, 1)
    return cases(
        ("a small random block: (2, 5, 8), 2 heads, d_ff 12, a padding mask",
         [normal(rng, 2, 5, 8), random_block(rng, 8, 12), 2], {"padding_mask": small_mask}),
        ("a small random block without a mask: (4, 8), 2 heads, d_ff 12",
         [normal(rng, 4, 8), random_block(rng, 8, 12), 2], {}),
        ("a small random block: (2, 3, 8), 2 heads, the second sequence all padding (it reads nothing)",
         [normal(rng, 2, 3, 8), random_block(rng, 8, 12), 2], {"padding_mask": np.array([[False] * 3, [True] * 3])}),
        (f"all-MiniLM-L6-v2's block 1 on {LESSON_SENTENCES[0]!r}", first, first_kwargs),
        ("all-MiniLM-L6-v2's block 1 on the lesson's two sentences (the second one padded)", both, both_kwargs),
    )


def bert_draw(rng, point):
    """"minilm": all-MiniLM-L6-v2's block on two random token sequences (the second padded); else a small random
    block of the point's sizes and mask, "large": x of about 100 and norm2's gamma of about 10, "offset": x near 1e4
    and sub-layers whose outputs are 1e4 times smaller, so that the first layer norm sees rows near 1e4 of spread
    about 1 (a variance taken as E[x^2] - E[x]^2 loses 8 digits there)."""
    if point.regime == "minilm":
        layer = int(rng.choice(MINILM_LAYERS))
        args, kwargs = random_tokens_case(rng, layer)
        real = int((~kwargs["padding_mask"][1]).sum())
        return (f"all-MiniLM-L6-v2's block {layer} on two random token sequences {args[0].shape}, the second one "
                f"{real} tokens and padded", args, kwargs)
    n_heads, d_head = point["n_heads"], point["d_head"]
    d = n_heads * d_head
    x = normal(rng, *point.lead, seq_of(point), d) * (100.0 if point.regime == "large" else 1.0)
    x += 1e4 if point.regime == "offset" else 0.0
    mask = padding_of(rng, point["mask"], x.shape[:-1])
    said = f"a mask {mask.shape} ({point['mask']} padding)" if mask is not None else "no mask"
    kwargs = {} if mask is None else {"padding_mask": mask}
    params = random_block(rng, d, 3 * d_head)
    if point.regime == "offset":
        for part, key in (("attn", "w_o"), ("attn", "b_o"), ("ffn", "w2"), ("ffn", "b2")):
            params[part][key] = params[part][key] * 1e-4
    if point.regime == "large":  # outputs far larger than the lesson's, as a real model's last norm gives
        params["norm2"]["gamma"] = params["norm2"]["gamma"] * 10
    return (f"a small random block: x {x.shape}, {n_heads} heads, d_ff {3 * d_head}, {said}", [x, params, n_heads],
            kwargs)


def bert_reference(x, params, n_heads, padding_mask=None):
    return encoder_block(x, params, n_heads, norm="post", padding_mask=padding_mask, activation="gelu", eps=1e-12)


def _attention_model(h, a, n_heads, mask, scale, fill):
    """BERT's attention sub-layer, its scores multiplied by ``scale(d_head)`` and padded keys given ``fill``,
    where these are given; the library's where not."""
    if scale is None:
        return multi_head_attention(h, n_heads, a, padding_mask=mask)[0]
    q, k, v = (split_heads(h @ a[f"w_{n}"] + a[f"b_{n}"], n_heads) for n in "qkv")
    scores = q @ np.swapaxes(k, -1, -2) * scale(h.shape[-1] // n_heads)
    if fill is not None and mask is not None:
        weights = softmax(scores + np.where(mask[..., None, None, :], fill, 0.0))
    else:
        weights = masked_softmax(scores, None if mask is None else mask[..., None, :])
    return merge_heads(weights @ v) @ a["w_o"] + a["b_o"]


def bert_model(x, params, n_heads, padding_mask=None, *, act="gelu", eps=1e-12, placement="post", use_mask=True,
               scale_by_d_model=False, scale=None, fill=None):
    """BERT's block with one thing changed: what a learner's block computes when it gets that one thing wrong.

    ``scale``: what the scores are multiplied by, as a function of d_head (the right one is 1 / sqrt(d_head));
    ``fill``: a number added to padded keys' scores, in place of the library's mask (-inf, zeros for a sequence
    that is all padding)."""
    mask = padding_mask if use_mask else None
    if scale_by_d_model:
        scale = lambda d_head: 1 / np.sqrt(d_head * n_heads)  # noqa: E731 - sqrt(d_model)

    def sublayer1(h):
        return _attention_model(h, params["attn"], n_heads, mask, scale, fill)

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


def bert_block_model(x, params, n_heads, padding_mask=None):
    p, n1, n2 = params["attn"], params["norm1"], params["norm2"]  # step: params
    eps = 1e-12  # step: eps
    q = split_heads(x @ p["w_q"] + p["b_q"], n_heads)  # step: q
    k = split_heads(x @ p["w_k"] + p["b_k"], n_heads)  # step: k
    v = split_heads(x @ p["w_v"] + p["b_v"], n_heads)  # step: v
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])  # step: scores
    if padding_mask is not None:  # step: if_padding_mask
        scores = np.where(padding_mask[..., None, None, :], -np.inf, scores)  # step: masked
    top = scores.max(axis=-1, keepdims=True)  # step: top
    e = np.exp(scores - np.where(np.isfinite(top), top, 0.0))  # step: e
    total = e.sum(axis=-1, keepdims=True)  # step: total
    weights = e / np.where(total > 0, total, 1.0)  # step: weights
    a = merge_heads(weights @ v) @ p["w_o"] + p["b_o"]  # step: a
    h = layer_norm(x + a, n1["gamma"], n1["beta"], eps)  # step: h
    hidden = gelu(h @ params["ffn"]["w1"] + params["ffn"]["b1"])  # step: hidden
    f = hidden @ params["ffn"]["w2"] + params["ffn"]["b2"]  # step: f
    return layer_norm(h + f, n2["gamma"], n2["beta"], eps)  # step: result


def bert_block_additive_mask(x, params, n_heads, padding_mask=None, *, fill=-10000.0):
    """BERT's own code: ``fill`` added to padded keys' scores, no guard, so a sequence that is all padding attends
    to its padding as if there were no mask."""
    if padding_mask is None:
        raise NotApplicable
    return bert_model(x, params, n_heads, padding_mask, scale=lambda d: 1 / np.sqrt(d), fill=fill)


#: The lesson's exercises, as pretrained.toml declares them.
EXERCISES = load_exercises(globals())
