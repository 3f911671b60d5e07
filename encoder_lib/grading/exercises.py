"""The course's exercises, each defined in one place: what it asks, its cases, its points, its mistakes.

Each exercise asks the learner for a function with the same name and
arguments as the library's (``softmax``, ``layer_norm``, ...). Its entry in
``EXERCISES`` holds everything about it:

- ``reference``: the right answer (the library's function);
- ``cases(rng, hidden)``: the inputs it is checked on. ``hidden=False`` gives
  the cases the notebook's self-check and visible tests show (always drawn
  from seed 0); ``hidden=True`` gives random shapes for the grader, drawn from
  the course's secret seed, so that no released file predicts them;
- ``points``, the lesson it belongs to, and a ``formula`` for the feedback page;
- ``mistakes``: ``(explanation, model)`` pairs, each model computing what a
  typical wrong answer computes, so that a wrong result can be named;
- ``uses``: earlier exercises' functions the answer may call by name (their
  answers are not trusted: the learner gets the library's versions), and
  ``may_call``: the library functions ``el.<name>`` it may use. Everything
  else of the library is out of its reach: blocked in the notebook's
  self-check, and simply absent in the grader's sandbox.

Adding an exercise touches this table, its notebook (answer, self-check and
test cells) and the catalogue of mistakes in ``tests/mistakes.py``.
"""

import functools
from dataclasses import dataclass

import numpy as np

from .. import attention, block, ffn, fixtures, grad, norm, pooling, positional
from ..params import init_block_params, off_defaults
from .compare import NotApplicable
from .wire import Call


@dataclass(frozen=True)
class Exercise:
    """One exercise: how to call it, what is right, what it may use, and what typical wrong answers compute."""

    name: str
    lesson: str
    points: int
    formula: str  # LaTeX, for the feedback page
    cases: object  # (rng, hidden) -> [(description, args, kwargs)]
    reference: object  # the right answer, a callable with the exercise's signature
    mistakes: tuple = ()  # ((explanation, model), ...): a model computes what the mistake computes
    uses: tuple = ()  # earlier exercises' functions the answer may call by name
    may_call: tuple = ()  # library functions the answer may call as el.<name>


def _cases(*items):
    return [(d, tuple(a), dict(k)) for d, a, k in items]


def _normal(rng, *shape):
    return rng.standard_normal(shape)


# --- 01: softmax and attention ---------------------------------------------


def _softmax_cases(rng, hidden):
    if hidden:
        shape = tuple(rng.integers(1, 6, size=rng.integers(1, 4)))
        axis = int(rng.integers(-len(shape), len(shape)))
        return _cases((f"random scores {shape}, axis={axis}", [_normal(rng, *shape) * 5], {"axis": axis}),
                      ("scores near 1000", [1000 + _normal(rng, 3, 4)], {}))
    return _cases(
        ("the row (1, 2, 3)", [np.array([1.0, 2.0, 3.0])], {}),
        ("batched scores (2, 3, 5), last axis", [_normal(rng, 2, 3, 5)], {}),
        ("large scores, rows (1000, 999, 0) and (0, 1, -1000)",
         [np.array([[1000.0, 999.0, 0.0], [0.0, 1.0, -1000.0]])], {}),
        ("axis=0 of a (4, 3) array", [_normal(rng, 4, 3)], {"axis": 0}),
    )


def _softmax_no_max(x, axis=-1):
    e = np.exp(x)
    return e / e.sum(axis=axis, keepdims=True)


def _softmax_global_max(x, axis=-1):
    e = np.exp(x - x.max())
    return e / e.sum(axis=axis, keepdims=True)


def _softmax_no_keepdims(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis)


def _softmax_wrong_axis(x, axis=-1):
    axis = axis % x.ndim
    other = 0 if axis == x.ndim - 1 else x.ndim - 1
    return attention.softmax(x, axis=other)


def _sdpa_cases(rng, hidden):
    if hidden:
        lead = tuple(rng.integers(1, 4, size=rng.integers(0, 3)))
        s_q, s_k, d_k, d_v = (int(n) for n in rng.integers(1, 7, size=4))
        d_k += 2
        return _cases((f"random q {lead + (s_q, d_k)}, k {lead + (s_k, d_k)}, v {lead + (s_k, d_v)}",
                       [_normal(rng, *lead, s_q, d_k) * 2, _normal(rng, *lead, s_k, d_k) * 2,
                        _normal(rng, *lead, s_k, d_v)], {}))
    return _cases(
        ("the lesson's tie case (output 7)", fixtures.lesson_tie_case(), {}),
        ("3 queries, 5 keys, d_k 4, d_v 2", [_normal(rng, 3, 4) * 2, _normal(rng, 5, 4) * 2, _normal(rng, 5, 2)], {}),
        ("a batch (2, 4, 6, 8)", [_normal(rng, 2, 4, 6, 8), _normal(rng, 2, 4, 6, 8), _normal(rng, 2, 4, 6, 8)], {}),
    )


def _sdpa_scaled(q, k, v, factor):
    return attention.scaled_dot_product_attention(q * factor(q.shape[-1]), k, v)


def _sdpa_plain_transpose(q, k, v):
    weights = attention.softmax(q @ k.T / np.sqrt(q.shape[-1]))
    return weights @ v, weights


def _sdpa_weights_over_queries(q, k, v):
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    weights = attention.softmax(scores, axis=-2)
    return weights @ v, weights


# --- 02: heads ----------------------------------------------------------------


def _split_cases(rng, hidden):
    if hidden:
        lead = tuple(rng.integers(1, 4, size=rng.integers(0, 3)))
        n_heads, d_head, seq = (int(n) for n in rng.integers(2, 5, size=3))
        return _cases((f"random {lead + (seq, n_heads * d_head)} into {n_heads} heads",
                       [_normal(rng, *lead, seq, n_heads * d_head)], {"n_heads": n_heads}))
    return _cases(
        ("the lesson's input (3, 4) into 2 heads", [fixtures.lesson_input()], {"n_heads": 2}),
        ("(2, 5, 12) into 3 heads", [_normal(rng, 2, 5, 12)], {"n_heads": 3}),
    )


def _split_no_transpose(x, n_heads):
    *lead, seq, d_model = x.shape
    return x.reshape(*lead, n_heads, seq, d_model // n_heads)


def _split_interleaved(x, n_heads):
    *lead, seq, d_model = x.shape
    return np.moveaxis(x.reshape(*lead, seq, d_model // n_heads, n_heads), -1, -3)


def _split_unpack_three(x, n_heads):
    batch, seq, d_model = x.shape
    return x.reshape(batch, seq, n_heads, d_model // n_heads).transpose(0, 2, 1, 3)


def _split_unpack_two(x, n_heads):
    seq, d_model = x.shape
    return x.reshape(seq, n_heads, d_model // n_heads).transpose(1, 0, 2)


def _merge_cases(rng, hidden):
    if hidden:
        lead = tuple(rng.integers(1, 4, size=rng.integers(0, 3)))
        n_heads, seq, d_head = (int(n) for n in rng.integers(2, 5, size=3))
        return _cases((f"random {lead + (n_heads, seq, d_head)}", [_normal(rng, *lead, n_heads, seq, d_head)], {}))
    return _cases(
        ("2 heads of (3, 2)", [_normal(rng, 2, 3, 2)], {}),
        ("a batch (2, 3, 5, 4)", [_normal(rng, 2, 3, 5, 4)], {}),
    )


def _merge_no_transpose(x):
    *lead, n_heads, seq, d_head = x.shape
    return x.reshape(*lead, seq, n_heads * d_head)


def _merge_wrong_order(x):
    *lead, n_heads, seq, d_head = x.shape
    return np.moveaxis(x, -3, -1).reshape(*lead, seq, n_heads * d_head)  # (..., seq, d_head, n_heads)


def _merge_swapped_last_two(x):
    *lead, n_heads, seq, d_head = x.shape
    return np.swapaxes(x, -1, -2).reshape(*lead, seq, n_heads * d_head)


def _merge_unpack_four(x):
    batch, n_heads, seq, d_head = x.shape
    return x.transpose(0, 2, 1, 3).reshape(batch, seq, n_heads * d_head)


def _random_attention_params(rng, d_model):
    return off_defaults(init_block_params(d_model, 2 * d_model, rng, dtype=np.float64)["attn"], rng)


def _mha_cases(rng, hidden):
    if hidden:
        lead = tuple(rng.integers(1, 3, size=rng.integers(0, 2)))
        n_heads, d_head, seq = (int(n) for n in rng.integers(2, 5, size=3))
        d = n_heads * d_head
        return _cases((f"random x {lead + (seq, d)}, {n_heads} heads, with projections",
                       [_normal(rng, *lead, seq, d), n_heads], {"params": _random_attention_params(rng, d)}))
    return _cases(
        ("the lesson's fixture, 2 heads, identity projections", [fixtures.lesson_input(), 2], {}),
        ("(2, 5, 8), 2 heads, with projections", [_normal(rng, 2, 5, 8), 2], {"params": _random_attention_params(rng, 8)}),
        ("(4, 12), 3 heads, with projections", [_normal(rng, 4, 12), 3], {"params": _random_attention_params(rng, 12)}),
    )


def _mha_model(x, n_heads, params=None, *, scale_by_d_model=False, split=None, project=True, biases=True,
               heads=True):
    d_model = x.shape[-1]
    split = split or attention.split_heads
    if params is None:
        if not biases:
            raise NotApplicable  # without projections there are no biases to forget
        q = k = v = x
    else:
        q, k, v = (x @ params[f"w_{n}"] + (params[f"b_{n}"] if biases else 0) for n in "qkv")
    if heads:
        q, k, v = (split(t, n_heads) for t in (q, k, v))
        scale = np.sqrt(d_model if scale_by_d_model else d_model // n_heads)
        weights = attention.softmax(q @ np.swapaxes(k, -1, -2) / scale)
        out = attention.merge_heads(weights @ v)
    else:  # one attention over all of d_model, as scaled_dot_product_attention(q, k, v) gives it
        out, weights = attention.scaled_dot_product_attention(q, k, v)
    if params is not None and project:
        out = out @ params["w_o"] + (params["b_o"] if biases else 0)
    return out, weights


# --- 03: the FFN ---------------------------------------------------------------


def _random_ffn_params(rng, d_model, d_ff):
    return init_block_params(d_model, d_ff, rng, dtype=np.float64)["ffn"]


def _ffn_cases(rng, hidden):
    if hidden:
        d_model, d_ff, seq = int(rng.integers(2, 7)), int(rng.integers(7, 13)), int(rng.integers(1, 5))
        lead = tuple(rng.integers(1, 3, size=rng.integers(0, 2)))
        return _cases((f"random x {lead + (seq, d_model)}, d_ff {d_ff}",
                       [_normal(rng, *lead, seq, d_model), _random_ffn_params(rng, d_model, d_ff)], {}),
                      (f"random x ({seq}, {d_model}), d_ff {d_ff}, GELU",
                       [_normal(rng, seq, d_model), _random_ffn_params(rng, d_model, d_ff)], {"activation": "gelu"}))
    return _cases(
        ("the lesson's row (1, 0, 0.5, -1)", [np.array(fixtures.FFN_ROW), fixtures.lesson_ffn_params()], {}),
        ("the lesson's input (3, 4)", [fixtures.lesson_input(), fixtures.lesson_ffn_params()], {}),
        ("(2, 5, 6) with d_ff 10", [_normal(rng, 2, 5, 6), _random_ffn_params(rng, 6, 10)], {}),
        ("(5, 6) with d_ff 10, GELU", [_normal(rng, 5, 6), _random_ffn_params(rng, 6, 10)], {"activation": "gelu"}),
    )


def _ffn_model(x, params, activation="relu", *, relu_first=True, relu_last=False, b1=True, b2=True):
    if activation != "relu":
        raise NotApplicable  # the models are of ReLU mistakes
    h = x @ params["w1"] + (params["b1"] if b1 else 0)
    if relu_first:
        h = np.maximum(h, 0)
    y = h @ params["w2"] + (params["b2"] if b2 else 0)
    return np.maximum(y, 0) if relu_last else y


def _gelu_cases(rng, hidden):
    if hidden:
        return _cases(("random (3, 5) values", [_normal(rng, 3, 5) * 3], {}))
    return _cases(("17 points from -4 to 4", [np.linspace(-4, 4, 17)], {}),
                  ("a (2, 3) array", [_normal(rng, 2, 3)], {}))


def _gelu_tanh(x):
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))


def _gelu_no_sqrt2(x):
    from scipy.special import erf
    return 0.5 * x * (1 + erf(x))


# --- 04: layer norm, Add & Norm -------------------------------------------------


def _ln_cases(rng, hidden):
    if hidden:
        d = int(rng.integers(3, 9))
        lead = tuple(rng.integers(1, 4, size=rng.integers(1, 3)))
        return _cases((f"random x {lead + (d,)} with gamma and beta",
                       [_normal(rng, *lead, d) * 3 + 1, rng.uniform(0.5, 2, d), rng.normal(0, 1, d)], {}),
                      ("rows of variance about 1e-5", [_normal(rng, 4, d) * 3e-3], {}))
    return _cases(
        ("the lesson's input (3, 4)", [fixtures.lesson_input()], {}),
        ("(2, 5, 6) with gamma and beta", [_normal(rng, 2, 5, 6), rng.uniform(0.5, 2, 6), rng.normal(0, 1, 6)], {}),
        ("rows of variance about 1e-5 (eps matters)", [_normal(rng, 3, 6) * 3e-3], {}),
    )


def _ln_model(x, gamma=None, beta=None, eps=1e-5, *, axis=-1, ddof=0, eps_outside=False, affine=True):
    mean = x.mean(axis=axis, keepdims=True)
    std = x.std(axis=axis, keepdims=True, ddof=ddof)
    y = (x - mean) / (std + eps if eps_outside else np.sqrt(std ** 2 + eps))
    if affine and gamma is not None:
        y = y * gamma
    if affine and beta is not None:
        y = y + beta
    return y


def _sublayer_cases(rng, hidden):
    def ffn_of(params):  # the sub-layer: a function; in the grader's sandbox a stand-in for the library's
        return Call("feed_forward", params)

    if hidden:
        d, d_ff, seq = int(rng.integers(3, 8)), int(rng.integers(8, 14)), int(rng.integers(1, 5))
        return _cases((f"random x ({seq}, {d}), an FFN sub-layer with d_ff {d_ff}, gamma and beta",
                       [_normal(rng, seq, d) * 2, ffn_of(_random_ffn_params(rng, d, d_ff)),
                        rng.uniform(0.5, 2, d), rng.normal(0, 0.5, d)], {}))
    return _cases(
        ("the lesson's input and FFN", [fixtures.lesson_input(), ffn_of(fixtures.lesson_ffn_params())], {}),
        ("(2, 4, 6) with an FFN, gamma and beta", [_normal(rng, 2, 4, 6) * 2, ffn_of(_random_ffn_params(rng, 6, 10)),
                                                   rng.uniform(0.5, 2, 6), rng.normal(0, 0.5, 6)], {}),
    )


def _ln_of(gamma, beta, eps):
    return lambda y: norm.layer_norm(y, gamma, beta, eps)


def _post_variants(kind):
    def model(x, sublayer, gamma=None, beta=None, eps=1e-5):
        ln = _ln_of(gamma, beta, eps)
        return {"pre": lambda: x + sublayer(ln(x)), "no_residual": lambda: ln(sublayer(x)),
                "norm_input": lambda: ln(x) + sublayer(x), "post": lambda: ln(x + sublayer(x)),
                "double": lambda: ln(x + sublayer(ln(x))), "norm_output": lambda: x + ln(sublayer(x)),
                "pre_no_residual": lambda: sublayer(ln(x)),
                "residual_of_norm": lambda: ln(x) + sublayer(ln(x))}[kind]()
    return model


# --- 05: the block ---------------------------------------------------------------


def _masked_cases(rng, hidden):
    if hidden:
        batch, seq_q, seq_k = (int(n) for n in rng.integers(1, 5, size=3))
        mask = rng.random((batch, seq_k)) < 0.4
        return _cases((f"random scores ({batch}, {seq_q}, {seq_k}) and mask", [_normal(rng, batch, seq_q, seq_k) * 3, mask], {}))
    return _cases(
        ("scores (2, 3, 3), the last key of sequence 0 padded",
         [_normal(rng, 2, 3, 3), np.array([[False, False, True], [False, False, False]])], {}),
        ("a sequence that is all padding", [_normal(rng, 2, 2, 3), np.array([[False, True, True], [True, True, True]])], {}),
        ("no mask", [_normal(rng, 3, 4)], {"padding_mask": None}),
    )


def _masked_after(scores, padding_mask=None):
    weights = attention.softmax(scores)
    return weights if padding_mask is None else weights * ~padding_mask[..., None, :]


def _masked_polarity(scores, padding_mask=None):
    return attention.masked_softmax(scores, None if padding_mask is None else ~padding_mask)


def _masked_nan(scores, padding_mask=None):
    if padding_mask is not None:
        scores = np.where(padding_mask[..., None, :], -np.inf, scores)
    return _softmax_no_max(scores - np.max(scores, axis=-1, keepdims=True))


MASK_ON_QUERIES = ("the mask is applied to the queries: padding_mask[..., :, None] lines it up with the rows of the "
                   "scores (one per query), but it marks keys, the last axis: use padding_mask[..., None, :]")


def _masked_queries(scores, padding_mask=None, fill=-1e9, own_softmax=False):
    if padding_mask is None:
        raise NotApplicable
    scores = np.where(padding_mask[..., :, None], fill, scores)
    return _masked_nan(scores) if own_softmax else attention.softmax(scores)


def _masked_library_softmax(scores, padding_mask=None):
    if padding_mask is None:
        raise NotApplicable
    return attention.softmax(np.where(padding_mask[..., None, :], -np.inf, scores))


def _pe_cases(rng, hidden):
    if hidden:
        seq_len, d_model = int(rng.integers(1, 30)), 2 * int(rng.integers(1, 17))
        odd = 2 * int(rng.integers(1, 9)) + 1
        return _cases((f"seq_len {seq_len}, d_model {d_model}", [seq_len, d_model], {}),
                      (f"seq_len {seq_len}, odd d_model {odd}", [seq_len, odd], {}))
    return _cases(("seq_len 4, d_model 6", [4, 6], {}), ("seq_len 50, d_model 16", [50, 16], {}),
                  ("seq_len 3, odd d_model 5 (the last sine has no cosine)", [3, 5], {}))


def _pe_model(seq_len, d_model, *, swap=False, exponent_i=False, halves=False, per_column=False):
    pos = np.arange(seq_len)[:, None]
    if per_column:  # column j's exponent j / d_model, in place of the pair's 2i / d_model
        angle = pos / 10000 ** (np.arange(d_model) / d_model)
        return np.where(np.arange(d_model) % 2 == 0, np.sin(angle), np.cos(angle))
    i = np.arange((d_model + 1) // 2)  # an odd d_model has one more sine column than cosine columns
    angle = pos / 10000 ** ((i if exponent_i else 2 * i) / d_model)
    first, second = (np.cos(angle), np.sin(angle)) if swap else (np.sin(angle), np.cos(angle))
    if halves:
        return np.concatenate([first, second[:, : d_model // 2]], axis=-1)
    pe = np.empty((seq_len, d_model))
    pe[:, 0::2], pe[:, 1::2] = first, second[:, : d_model // 2]
    return pe


def _pe_odd_unhandled(seq_len, d_model):
    angle = np.arange(seq_len)[:, None] / 10000 ** (np.arange(0, d_model, 2) / d_model)
    pe = np.zeros((seq_len, d_model))
    pe[:, 0::2] = np.sin(angle)
    pe[:, 1::2] = np.cos(angle)
    return pe


def _random_block(rng, d_model, d_ff):
    return off_defaults(init_block_params(d_model, d_ff, rng, dtype=np.float64), rng)


def _block_cases(rng, hidden):
    if hidden:
        n_heads, d_head = int(rng.integers(1, 4)), int(rng.integers(2, 4))
        d, seq, batch = n_heads * d_head, int(rng.integers(2, 6)), int(rng.integers(1, 3))
        norm = ("post", "pre")[int(rng.integers(2))]
        mask = rng.random((batch, seq)) < 0.3
        mask[:, 0] = False
        return _cases((f"random x ({batch}, {seq}, {d}), {n_heads} heads, {norm}-norm, with a mask",
                       [_normal(rng, batch, seq, d), _random_block(rng, d, 2 * d + 1), n_heads],
                       {"norm": norm, "padding_mask": mask}))
    return _cases(
        ("the lesson's fixture, post-norm", [fixtures.lesson_input(), fixtures.lesson_block_params(), 2], {}),
        ("the lesson's fixture, pre-norm", [fixtures.lesson_input(), fixtures.lesson_block_params(), 2], {"norm": "pre"}),
        ("(2, 5, 8), 2 heads, d_ff 12, post-norm, a padding mask",
         [_normal(rng, 2, 5, 8), _random_block(rng, 8, 12), 2],
         {"padding_mask": np.array([[False] * 5, [False] * 3 + [True] * 2])}),
        ("(2, 5, 8), 2 heads, d_ff 12, pre-norm", [_normal(rng, 2, 5, 8), _random_block(rng, 8, 12), 2], {"norm": "pre"}),
    )


def _block_swapped(x, params, n_heads, norm="post", padding_mask=None):
    other = "pre" if norm == "post" else "post"
    return block.encoder_block(x, params, n_heads, norm=other, padding_mask=padding_mask)


def _block_no_residual(x, params, n_heads, norm="post", padding_mask=None):
    return block.encoder_block(x, params, n_heads, norm=norm, padding_mask=padding_mask, residual=False)


def _block_no_mask(x, params, n_heads, norm="post", padding_mask=None):
    return block.encoder_block(x, params, n_heads, norm=norm)


def _block_one_norm(x, params, n_heads, norm="post", padding_mask=None):
    return block.encoder_block(x, {**params, "norm2": params["norm1"]}, n_heads, norm=norm, padding_mask=padding_mask)


# --- 06: the stack ----------------------------------------------------------------


def _encoder_cases(rng, hidden):
    if hidden:
        n_layers, n_heads = int(rng.integers(2, 5)), int(rng.integers(1, 3))
        d = 2 * n_heads * int(rng.integers(1, 3))
        norm = ("post", "pre")[int(rng.integers(2))]
        layers = [_random_block(rng, d, d + 3) for _ in range(n_layers)]
        return _cases((f"{n_layers} random {norm}-norm layers on (2, 4, {d})",
                       [_normal(rng, 2, 4, d), layers, n_heads], {"norm": norm}))
    layers = [_random_block(rng, 8, 12) for _ in range(3)]
    return _cases(
        ("3 post-norm layers on (2, 4, 8)", [_normal(rng, 2, 4, 8), layers, 2], {}),
        ("3 pre-norm layers on (2, 4, 8)", [_normal(rng, 2, 4, 8), layers, 2], {"norm": "pre"}),
        ("2 layers with a padding mask", [_normal(rng, 2, 4, 8), layers[:2], 2],
         {"padding_mask": np.array([[False] * 4, [False, False, True, True]])}),
    )


def _encoder_reused(x, layers, n_heads, norm="post", padding_mask=None):
    return block.encoder(x, [layers[0]] * len(layers), n_heads, norm=norm, padding_mask=padding_mask)


def _encoder_last_only(x, layers, n_heads, norm="post", padding_mask=None):
    return block.encoder_block(x, layers[-1], n_heads, norm=norm, padding_mask=padding_mask)


def _encoder_ignores_norm(x, layers, n_heads, norm="post", padding_mask=None):
    return block.encoder(x, layers, n_heads, padding_mask=padding_mask)


def _encoder_no_mask(x, layers, n_heads, norm="post", padding_mask=None):
    if padding_mask is None:
        raise NotApplicable
    return block.encoder(x, layers, n_heads, norm=norm)


# --- 07: gradients -----------------------------------------------------------


def _softmax_grad_cases(rng, hidden):
    if hidden:
        shape = tuple(rng.integers(1, 5, size=rng.integers(1, 3))) + (int(rng.integers(2, 7)),)
        return _cases((f"random weights and gradients {shape}",
                       [attention.softmax(_normal(rng, *shape) * 2), _normal(rng, *shape)], {}))
    masked = attention.masked_softmax(_normal(rng, 2, 4), np.array([False, False, True, True]))
    return _cases(
        ("the row (0.5, 0.5) with gradient (1, 0)", [np.array([0.5, 0.5]), np.array([1.0, 0.0])], {}),
        ("weights (2, 3, 5), random gradient", [attention.softmax(_normal(rng, 2, 3, 5)), _normal(rng, 2, 3, 5)], {}),
        ("weights with two masked keys (weight 0)", [masked, _normal(rng, 2, 4)], {}),
    )


def _softmax_grad_diagonal(weights, grad_weights):
    return weights * (1 - weights) * grad_weights


def _softmax_grad_unweighted(weights, grad_weights):
    return grad_weights - np.sum(grad_weights * weights, axis=-1, keepdims=True)


def _softmax_grad_plain_sum(weights, grad_weights):
    return weights * (grad_weights - np.sum(grad_weights, axis=-1, keepdims=True))


def _softmax_grad_wrong_axis(weights, grad_weights):
    if weights.ndim < 2:
        raise NotApplicable
    return weights * (grad_weights - np.sum(grad_weights * weights, axis=0, keepdims=True))


def _ln_grad_cases(rng, hidden):
    if hidden:
        d = int(rng.integers(3, 9))
        lead = tuple(rng.integers(1, 4, size=rng.integers(1, 3)))
        x = _normal(rng, *lead, d) * 2 + 1
        return _cases((f"random x {lead + (d,)} with gamma and beta",
                       [x, _normal(rng, *x.shape), rng.uniform(0.5, 2, d), rng.normal(0, 1, d)], {}))
    x = fixtures.lesson_input()
    return _cases(
        ("the lesson's input (3, 4), gradient 1 on the first feature",
         [x, np.tile([1.0, 0.0, 0.0, 0.0], (3, 1))], {}),
        ("(2, 5, 6) with gamma and beta", [_normal(rng, 2, 5, 6), _normal(rng, 2, 5, 6),
                                           rng.uniform(0.5, 2, 6), rng.normal(0, 1, 6)], {}),
        ("rows of variance about 1e-5 (eps matters)", [_normal(rng, 3, 6) * 3e-3, _normal(rng, 3, 6)], {}),
    )


def _ln_grad_model(x, grad_out, gamma=None, beta=None, eps=1e-5, *, mean_term=True, var_term=True,
                   use_gamma=True, sum_params=True):
    centred = x - x.mean(axis=-1, keepdims=True)
    sigma = np.sqrt((centred ** 2).mean(axis=-1, keepdims=True) + eps)
    xhat = centred / sigma
    g = grad_out * gamma if (gamma is not None and use_gamma) else grad_out
    grad_x = g
    if mean_term:
        grad_x = grad_x - g.mean(axis=-1, keepdims=True)
    if var_term:
        grad_x = grad_x - xhat * (g * xhat).mean(axis=-1, keepdims=True)
    grad_x = grad_x / sigma
    d = x.shape[-1]
    grad_gamma, grad_beta = grad_out * xhat, grad_out
    if sum_params:
        grad_gamma, grad_beta = grad_gamma.reshape(-1, d).sum(axis=0), grad_beta.reshape(-1, d).sum(axis=0)
    return grad_x, grad_gamma, grad_beta


# --- 08: a real encoder: mean pooling ----------------------------------------------


def _mean_pool_cases(rng, hidden):
    if hidden:
        lead = tuple(int(n) for n in rng.integers(2, 4, size=rng.integers(1, 3)))
        seq, d = int(rng.integers(2, 8)), int(rng.integers(2, 7))
        mask = rng.random(lead + (seq,)) < 0.4
        rows = mask.reshape(-1, seq)  # a view: one row per sequence
        rows[0] = True  # one sequence all padding
        rows[1] = False
        rows[1, -1] = True  # one with only its last position padded
        return _cases((f"random hidden {lead + (seq, d)} with padding, one sequence all padding",
                       [_normal(rng, *lead, seq, d), mask], {}),
                      (f"random hidden ({seq}, {d}), no mask", [_normal(rng, seq, d)], {}))
    return _cases(
        ("4 tokens of 2 features, no mask", [np.arange(8.0).reshape(4, 2)], {}),
        ("(2, 4, 3), the last two positions of sequence 0 and the last one of sequence 1 padded",
         [_normal(rng, 2, 4, 3), np.array([[False, False, True, True], [False, False, False, True]])], {}),
        ("(2, 3, 5), sequence 1 all padding (its mean is 0)",
         [_normal(rng, 2, 3, 5), np.array([[False, False, True], [True, True, True]])], {}),
    )


def _pool_model(hidden, padding_mask=None, *, use_mask=True, invert=False, divide_by_seq=False, axis=-2,
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


# --- 08: your own block runs the real model ---------------------------------------------

#: Sentences the grader's hidden cases run through all-MiniLM-L6-v2; none of them is in lesson 08.
GRADER_SENTENCES = (
    "Rain is expected over the hills by the evening.",
    "He forgot his umbrella at the station again.",
    "The committee approved the new budget on Tuesday.",
    "Bees carry pollen from one flower to the next.",
    "Our train was delayed by forty minutes.",
    "She painted the fence a bright shade of yellow.",
    "A quiet library is a good place to think.",
    "The recipe calls for two eggs and a cup of flour.",
    "Satellites help farmers measure the moisture of their fields.",
    "The orchestra tuned their instruments before the concert.",
    "My neighbour grows tomatoes on her balcony.",
    "Old maps often show coastlines that have since changed.",
)
#: Lesson 08's sentence for the visible cases.
LESSON_SENTENCES = ("The cat sat on the mat because the cat was tired.", "Tokenisation splits unfamiliar words.")


#: The block the cases run: the first, whose input is the embedding layer's output. Its weights (14 MB in
#: float64) are the same objects in every case, so they cross to the grader's sandbox once (``wire.encode``),
#: and every learner's lesson 08 sends them (a second block would add 14 MB, and 0.15 s, to each learner).
MINILM_LAYERS = (1,)


@functools.lru_cache(maxsize=len(MINILM_LAYERS))
def _minilm_params(layer):
    """All-MiniLM-L6-v2's block ``layer`` (1..6), its weights in float64: one object per block."""
    from .. import pretrained  # the model's files: only where this exercise's cases are built

    model = pretrained.load_minilm()
    return {part: {name: np.asarray(a, dtype=np.float64) for name, a in values.items()}
            for part, values in model.layers[layer - 1].items()}


def _minilm_case(texts, layer):
    """``(x, params, n_heads, padding_mask)``: the library's input to all-MiniLM-L6-v2's block ``layer``, float64."""
    from .. import pretrained

    model = pretrained.load_minilm()
    enc = pretrained.encode(list(texts), model)
    return [enc.hidden_states[layer - 1].astype(np.float64), _minilm_params(layer), model.block.n_heads], \
        {"padding_mask": enc.padding_mask}


def _bert_cases(rng, hidden):
    if hidden:
        picked = [GRADER_SENTENCES[i] for i in rng.choice(len(GRADER_SENTENCES), size=2, replace=False)]
        layer = int(rng.choice(MINILM_LAYERS))
        args, kwargs = _minilm_case(picked, layer)
        return _cases((f"all-MiniLM-L6-v2's block {layer} on {picked[0]!r} and {picked[1]!r}", args, kwargs))
    small_mask = np.array([[False] * 5, [False] * 3 + [True] * 2])
    first, first_kwargs = _minilm_case(LESSON_SENTENCES[:1], 1)
    both, both_kwargs = _minilm_case(LESSON_SENTENCES, 1)
    return _cases(
        ("a small random block: (2, 5, 8), 2 heads, d_ff 12, a padding mask",
         [_normal(rng, 2, 5, 8), _random_block(rng, 8, 12), 2], {"padding_mask": small_mask}),
        (f"all-MiniLM-L6-v2's block 1 on {LESSON_SENTENCES[0]!r}", first, first_kwargs),
        ("all-MiniLM-L6-v2's block 1 on the lesson's two sentences (the second one padded)", both, both_kwargs),
    )


def _bert_reference(x, params, n_heads, padding_mask=None):
    return block.encoder_block(x, params, n_heads, norm="post", padding_mask=padding_mask, activation="gelu",
                               eps=1e-12)


def _bert_model(x, params, n_heads, padding_mask=None, *, act="gelu", eps=1e-12, placement="post", use_mask=True,
                scale_by_d_model=False):
    """BERT's block with one thing changed: what a learner's block computes when it gets that one thing wrong."""
    mask = padding_mask if use_mask else None
    a = params["attn"]

    def sublayer1(h):
        if not scale_by_d_model:
            return attention.multi_head_attention(h, n_heads, a, padding_mask=mask)[0]
        q, k, v = (attention.split_heads(h @ a[f"w_{n}"] + a[f"b_{n}"], n_heads) for n in "qkv")
        weights = attention.masked_softmax(q @ np.swapaxes(k, -1, -2) / np.sqrt(h.shape[-1]),
                                           None if mask is None else mask[..., None, :])
        return attention.merge_heads(weights @ v) @ a["w_o"] + a["b_o"]

    activation = {"gelu": ffn.gelu, "tanh": _gelu_tanh, "relu": lambda h: np.maximum(h, 0)}[act]
    p = params["ffn"]
    sublayer2 = lambda h: activation(h @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"]  # noqa: E731

    def ln(h, which):
        return norm.layer_norm(h, params[which]["gamma"], params[which]["beta"], eps)

    if placement == "pre":
        x = x + sublayer1(ln(x, "norm1"))
        return x + sublayer2(ln(x, "norm2"))
    x = ln(x + sublayer1(x), "norm1")
    return ln(x + sublayer2(x), "norm2")


# =============================================================== the table

ATTENTION = ("softmax", "masked_softmax", "scaled_dot_product_attention", "split_heads", "merge_heads",
             "multi_head_attention")
BLOCK_PARTS = ATTENTION + ("feed_forward", "relu", "gelu", "layer_norm", "post_norm", "pre_norm")

EXERCISES = {e.name: e for e in [
    Exercise(
        "softmax", "01_attention", 2,
        r"\mathrm{softmax}(x)_i = \frac{e^{x_i - m}}{\sum_j e^{x_j - m}},\quad m = \max_j x_j",
        _softmax_cases, attention.softmax, (
            ("exp overflows on large scores: subtract each row's maximum before np.exp "
             "(softmax(x) = softmax(x - max), and exp(1000) is inf)", _softmax_no_max),
            ("softmax over the wrong axis: normalise along `axis` (the last one by default), "
             "so each row of weights sums to 1", _softmax_wrong_axis),
            ("normalised over every entry at once: sum along `axis` with keepdims=True",
             lambda x, axis=-1: np.exp(x - x.max()) / np.exp(x - x.max()).sum()),
            ("the maximum subtracted is the whole array's, not each row's: a row far below it (the row "
             "(0, 1, -1000) beside a 1000) has every exp underflow to 0, and 0 / 0 is NaN; subtract "
             "x.max(axis=axis, keepdims=True)", _softmax_global_max),
            ("a sum without keepdims=True: e.sum(axis=axis) drops the axis, so it no longer lines up with e "
             "(shapes (2, 3, 5) and (2, 3) do not broadcast); keep it with keepdims=True", _softmax_no_keepdims),
        )),
    Exercise(
        "scaled_dot_product_attention", "01_attention", 2,
        r"\mathrm{attention}(q, k, v) = \mathrm{softmax}\!\left(\frac{q k^\top}{\sqrt{d_k}}\right) v",
        _sdpa_cases, attention.scaled_dot_product_attention, (
            ("no 1/sqrt(d_k) scaling: divide the scores q k^T by sqrt(d_k) before the softmax",
             lambda q, k, v: _sdpa_scaled(q, k, v, np.sqrt)),
            ("scores divided by d_k: the scale is 1/sqrt(d_k), the square root of the key size",
             lambda q, k, v: _sdpa_scaled(q, k, v, lambda d: 1 / np.sqrt(d))),
            ("softmax over the queries: each query's weights (a row, the last axis) must sum to 1",
             _sdpa_weights_over_queries),
            ("returned (weights, out): return the output first, then the weights",
             lambda q, k, v: attention.scaled_dot_product_attention(q, k, v)[::-1]),
            ("k.T reverses every axis of a batched k, (2, 4, 6, 8) -> (8, 6, 4, 2); swap only the last two: "
             "np.swapaxes(k, -1, -2)", _sdpa_plain_transpose),
        ), uses=("softmax",), may_call=("softmax",)),
    Exercise(
        "split_heads", "02_multi_head_attention", 1,
        r"(\ldots, s, d_{\mathrm{model}}) \to (\ldots, h, s, d_{\mathrm{model}} / h)",
        _split_cases, attention.split_heads, (
            ("heads split by a reshape without the transpose, which mixes positions: reshape to "
             "(..., seq, n_heads, d_head), then swap the seq and head axes", _split_no_transpose),
            ("head h must take columns h*d_head to (h+1)*d_head; yours takes every n_heads-th column "
             "(reshape to (..., seq, n_heads, d_head), not (..., seq, d_head, n_heads))", _split_interleaved),
            ("written for a batch (3 axes) only: x may be (seq, d_model) or have any number of batch axes in "
             "front; unpack it as *lead, seq, d_model = x.shape and reshape to (*lead, seq, n_heads, d_head)",
             _split_unpack_three),
            ("written for one sequence (2 axes) only: x may have batch axes in front; unpack it as "
             "*lead, seq, d_model = x.shape and swap axes -3 and -2 (np.swapaxes works for any number of axes)",
             _split_unpack_two),
        )),
    Exercise(
        "merge_heads", "02_multi_head_attention", 1,
        r"(\ldots, h, s, d_{\mathrm{head}}) \to (\ldots, s, h \cdot d_{\mathrm{head}})",
        _merge_cases, attention.merge_heads, (
            ("heads merged by a reshape without the transpose, which mixes positions: swap the head and "
             "seq axes first, to (..., seq, n_heads, d_head)", _merge_no_transpose),
            ("heads merged in the wrong order: head 0's columns must come first, then head 1's "
             "(move the head axis next to d_head as (n_heads, d_head), not (d_head, n_heads))", _merge_wrong_order),
            ("the wrong axes swapped: seq and d_head (the last two); swap the head axis with seq, axes -3 and -2, "
             "to get (..., seq, n_heads, d_head) before the reshape", _merge_swapped_last_two),
            ("written for a batch (4 axes) only: x may be (n_heads, seq, d_head) or have any number of batch axes "
             "in front; unpack it as *lead, n_heads, seq, d_head = x.shape and use np.swapaxes(x, -3, -2)",
             _merge_unpack_four),
        )),
    Exercise(
        "multi_head_attention", "02_multi_head_attention", 2,
        r"\mathrm{MHA}(x) = \mathrm{concat}_h\!\left(\mathrm{attention}(x W_q^h + b_q^h,\, x W_k^h + b_k^h,\,"
        r" x W_v^h + b_v^h)\right) W_o + b_o",
        _mha_cases, attention.multi_head_attention, (
            ("scores scaled by sqrt(d_model): each head's scale is sqrt(d_head), d_head = d_model / n_heads",
             lambda x, n, params=None: _mha_model(x, n, params, scale_by_d_model=True)),
            ("heads split by a reshape without the transpose, which mixes positions",
             lambda x, n, params=None: _mha_model(x, n, params, split=_split_no_transpose)),
            ("the output projection is missing: merge the heads, then apply w_o and b_o",
             lambda x, n, params=None: _mha_model(x, n, params, project=False)),
            ("the biases are missing: each projection is x @ w + b (b_q, b_k, b_v, and b_o after w_o)",
             lambda x, n, params=None: _mha_model(x, n, params, biases=False)),
            ("one attention over all of d_model: split q, k and v into n_heads heads (split_heads) and give "
             "each head its own softmax", lambda x, n, params=None: _mha_model(x, n, params, heads=False)),
        ), uses=("softmax", "scaled_dot_product_attention", "split_heads", "merge_heads"),
        may_call=("softmax", "masked_softmax", "scaled_dot_product_attention", "split_heads", "merge_heads")),
    Exercise(
        "feed_forward", "03_feed_forward", 2,
        r"\mathrm{FFN}(x) = \mathrm{act}(x W_1 + b_1)\, W_2 + b_2",
        _ffn_cases, ffn.feed_forward, (
            ("ReLU after the second linear layer: the ReLU goes between the two layers only",
             lambda x, p, activation="relu": _ffn_model(x, p, activation, relu_first=False, relu_last=True)),
            ("a ReLU after the second linear layer too: the FFN's output is not passed through ReLU",
             lambda x, p, activation="relu": _ffn_model(x, p, activation, relu_last=True)),
            ("the ReLU is missing: apply max(h, 0) to the hidden layer",
             lambda x, p, activation="relu": _ffn_model(x, p, activation, relu_first=False)),
            ("a missing bias: add b1 after the first layer",
             lambda x, p, activation="relu": _ffn_model(x, p, activation, b1=False)),
            ("a missing bias: add b2 after the second layer",
             lambda x, p, activation="relu": _ffn_model(x, p, activation, b2=False)),
            ("`activation` is ignored: with activation=\"gelu\" the hidden layer goes through GELU (el.gelu), "
             "not ReLU", lambda x, p, activation="relu": _ffn_model(x, p)),
        ), uses=("gelu",), may_call=("relu", "gelu")),
    Exercise(
        "gelu", "03_feed_forward", 1,
        r"\mathrm{GELU}(x) = \tfrac{1}{2}\, x \left(1 + \mathrm{erf}(x / \sqrt{2})\right)",
        _gelu_cases, ffn.gelu, (
            ("that is the tanh approximation; the exact GELU is 0.5 x (1 + erf(x / sqrt(2)))", _gelu_tanh),
            ("erf needs x / sqrt(2), not x: GELU is x times the normal CDF", _gelu_no_sqrt2),
            ("that is ReLU; GELU is 0.5 x (1 + erf(x / sqrt(2)))", lambda x: np.maximum(x, 0)),
            ("the factor 1/2 is missing: GELU is 0.5 x (1 + erf(x / sqrt(2))), which is x times the normal CDF",
             lambda x: 2 * ffn.gelu(x)),
        )),
    Exercise(
        "layer_norm", "04_add_and_norm", 2,
        r"\mathrm{LN}(x) = \gamma \odot \frac{x - \mu}{\sqrt{\sigma^2 + \epsilon}} + \beta",
        _ln_cases, norm.layer_norm, (
            ("layer norm over the sequence axis: take the mean and variance over the last axis "
             "(a position's features), not over positions",
             lambda x, g=None, b=None, eps=1e-5: _ln_model(x, g, b, eps, axis=-2)),
            ("layer norm with the unbiased variance: divide by d_model (np.var's default), not d_model - 1",
             lambda x, g=None, b=None, eps=1e-5: _ln_model(x, g, b, eps, ddof=1)),
            ("eps outside the square root: divide by sqrt(var + eps), not sqrt(var) + eps",
             lambda x, g=None, b=None, eps=1e-5: _ln_model(x, g, b, eps, eps_outside=True)),
            ("gamma and beta are ignored: multiply by gamma and add beta when they are given",
             lambda x, g=None, b=None, eps=1e-5: _ln_model(x, g, b, eps, affine=False)),
        )),
    Exercise(
        "post_norm", "04_add_and_norm", 1, r"x \mapsto \mathrm{LN}(x + f(x))",
        _sublayer_cases, norm.post_norm, (
            ("post-norm and pre-norm swapped: post-norm is LN(x + sublayer(x))", _post_variants("pre")),
            ("the residual connection is missing: add x to the sub-layer's output before the norm",
             _post_variants("no_residual")),
            ("in post-norm the norm goes on the sum x + sublayer(x), not on the sub-layer's input",
             _post_variants("norm_input")),
            ("the norm is applied twice; post-norm normalises once, after the sum", _post_variants("double")),
        ), uses=("layer_norm",), may_call=("layer_norm",)),
    Exercise(
        "pre_norm", "04_add_and_norm", 1, r"x \mapsto x + f(\mathrm{LN}(x))",
        _sublayer_cases, norm.pre_norm, (
            ("post-norm and pre-norm swapped: pre-norm is x + sublayer(LN(x))", _post_variants("post")),
            ("the residual connection is missing: add x to sublayer(LN(x))", _post_variants("pre_no_residual")),
            ("the norm is on the sub-layer's output; in pre-norm it goes on the sub-layer's input",
             _post_variants("norm_output")),
            ("a norm after the sum as well: pre-norm leaves the sum un-normalised", _post_variants("double")),
            ("the residual adds LN(x); it must add x itself: pre-norm is x + sublayer(LN(x)), so the "
             "un-normalised x passes the block untouched", _post_variants("residual_of_norm")),
        ), uses=("layer_norm",), may_call=("layer_norm",)),
    Exercise(
        "masked_softmax", "05_encoder_block", 2,
        r"w = \mathrm{softmax}(s + m),\quad m_j = -\infty \text{ where key } j \text{ is padding, else } 0",
        _masked_cases, attention.masked_softmax, (
            ("the mask is applied after the softmax: set padded scores to -inf before it, "
             "so the real keys' weights still sum to 1", _masked_after),
            ("the mask has the wrong polarity: True marks padding, so those keys get weight 0", _masked_polarity),
            ("a sequence that is all padding gives NaN: give such rows zero weights", _masked_nan),
            (MASK_ON_QUERIES, _masked_queries),
            (MASK_ON_QUERIES, lambda s, m=None: _masked_queries(s, m, -np.inf, own_softmax=True)),
            (MASK_ON_QUERIES, lambda s, m=None: _masked_queries(s, m, -np.inf)),
            ("a sequence that is all padding has every score at -inf, and a softmax of that is 0 / 0: give "
             "such rows zero weights (find them with padding_mask.all(axis=-1)), or write a softmax that does",
             _masked_library_softmax),
        ), uses=("softmax",), may_call=("softmax",)),
    Exercise(
        "positional_encoding", "05_encoder_block", 2,
        r"PE_{p,\,2i} = \sin\!\left(p / 10000^{2i/d}\right),\quad PE_{p,\,2i+1} = \cos\!\left(p / 10000^{2i/d}\right)",
        _pe_cases, lambda seq_len, d_model: positional.positional_encoding(seq_len, d_model, dtype=np.float64), (
            ("sine and cosine swapped: sine goes in the even columns 0, 2, 4, ..., cosine in the odd ones",
             lambda s, d: _pe_model(s, d, swap=True)),
            ("the exponent: the pair of columns (2i, 2i+1) uses 10000^(2i / d_model)",
             lambda s, d: _pe_model(s, d, exponent_i=True)),
            ("sines and cosines must interleave (even, odd columns), not fill the first and second half",
             lambda s, d: _pe_model(s, d, halves=True)),
            ("the exponent is per pair of columns, not per column: columns 2i and 2i+1 share the angle "
             "pos / 10000^(2i / d_model), so column j uses 2 * (j // 2), not j",
             lambda s, d: _pe_model(s, d, per_column=True)),
            ("an odd d_model has one more even column than odd ones ((d_model + 1) // 2 sines, d_model // 2 "
             "cosines): give the odd columns the first d_model // 2 angles, angle[:, : d_model // 2]",
             _pe_odd_unhandled),
        )),
    Exercise(
        "encoder_block", "05_encoder_block", 2,
        r"\text{post: } x \leftarrow \mathrm{LN}(x + \mathrm{MHA}(x)),\ x \leftarrow \mathrm{LN}(x + \mathrm{FFN}(x));"
        r"\quad \text{pre: } x \leftarrow x + \mathrm{MHA}(\mathrm{LN}(x)),\ x \leftarrow x + \mathrm{FFN}(\mathrm{LN}(x))",
        _block_cases, block.encoder_block, (
            ("post-norm and pre-norm swapped: post is LN(x + f(x)), pre is x + f(LN(x))", _block_swapped),
            ("the residual connection is missing: each sub-layer's output is added to its input", _block_no_residual),
            ("the padding mask is not passed on to the attention", _block_no_mask),
            ("norm1's parameters used for both norms: the second Add & Norm uses params['norm2']", _block_one_norm),
        ), uses=("masked_softmax", "post_norm", "pre_norm"), may_call=BLOCK_PARTS),
    Exercise(
        "encoder", "06_stacking_blocks", 2, r"x_{l+1} = \mathrm{block}_l(x_l),\quad l = 0, \ldots, L - 1",
        _encoder_cases, block.encoder, (
            ("one set of parameters reused for every layer of the stack: block i uses layers[i]", _encoder_reused),
            ("every block reads the stack's input, so only the last block counts: the output of each block is "
             "the input of the next (x = block(x, ...) inside the loop)", _encoder_last_only),
            ("the norm placement is not passed on to the blocks: call each block with norm=norm", _encoder_ignores_norm),
            ("the padding mask is not passed on to the blocks: call each block with padding_mask=padding_mask, "
             "or the real tokens read the padding", _encoder_no_mask),
        ), may_call=BLOCK_PARTS + ("encoder_block",)),
    Exercise(
        "softmax_grad", "07_gradients_and_training", 1,
        r"\frac{\partial L}{\partial s} = w \odot \left(g - \textstyle\sum_j g_j w_j\right)",
        _softmax_grad_cases, grad.softmax_grad, (
            ("only the diagonal of the Jacobian (w * (1 - w) * g): each weight also depends on every other "
             "score of its row, which adds -w_i w_j g_j; the whole product is w * (g - sum(g * w))",
             _softmax_grad_diagonal),
            ("the result is not multiplied by the weights: it is w * (g - sum(g * w))", _softmax_grad_unweighted),
            ("the sum must be weighted: sum(g * w) over the row, not sum(g)", _softmax_grad_plain_sum),
            ("the sum runs over the wrong axis: each row of weights is one softmax, so sum g * w over the last "
             "axis (axis=-1, keepdims=True)", _softmax_grad_wrong_axis),
        ), may_call=("softmax",)),
    Exercise(
        "layer_norm_grad", "07_gradients_and_training", 2,
        r"\frac{\partial L}{\partial x} = \frac{1}{\sigma}\left(g - \bar{g} - \hat{x}\, \overline{g \hat{x}}\right),"
        r"\quad g = \gamma \odot \frac{\partial L}{\partial y}",
        _ln_grad_cases, grad.layer_norm_grad, (
            ("the mean and the variance were treated as constants: both depend on every input of the row, "
             "which subtracts mean(g) and xhat * mean(g * xhat) before dividing by sigma",
             lambda x, g, gamma=None, beta=None, eps=1e-5: _ln_grad_model(x, g, gamma, beta, eps, mean_term=False,
                                                                          var_term=False)),
            ("the variance's part is missing: also subtract xhat * mean(g * xhat), since sigma depends on x",
             lambda x, g, gamma=None, beta=None, eps=1e-5: _ln_grad_model(x, g, gamma, beta, eps, var_term=False)),
            ("the mean's part is missing: also subtract mean(g), since the mean depends on x",
             lambda x, g, gamma=None, beta=None, eps=1e-5: _ln_grad_model(x, g, gamma, beta, eps, mean_term=False)),
            ("gamma is missing from grad_x: the gradient reaching xhat is grad_out * gamma",
             lambda x, g, gamma=None, beta=None, eps=1e-5: _ln_grad_model(x, g, gamma, beta, eps, use_gamma=False)),
            ("grad_gamma and grad_beta must be summed over every position: they have shape (d_model,)",
             lambda x, g, gamma=None, beta=None, eps=1e-5: _ln_grad_model(x, g, gamma, beta, eps, sum_params=False)),
        ), may_call=("layer_norm",)),
    Exercise(
        "mean_pool", "08_inside_a_real_encoder", 1,
        r"\mathrm{pool}(h) = \frac{\sum_{t \text{ real}} h_t}{\max(1,\ \#\{t \text{ real}\})}",
        _mean_pool_cases, pooling.mean_pool, (
            ("the padding is averaged in too: leave out the positions where padding_mask is True, and divide by "
             "the number of real tokens", lambda h, m=None: _pool_model(h, m, use_mask=False)),
            ("divided by the full length: after zeroing the padding, divide each sequence's sum by its number of "
             "real tokens (the False entries of its mask row), not by seq",
             lambda h, m=None: _pool_model(h, m, divide_by_seq=True)),
            ("the mask has the wrong polarity: True marks padding, so average the positions where it is False",
             lambda h, m=None: _pool_model(h, m, invert=True)),
            ("averaged over the features, not the positions: take the mean over the seq axis (-2), "
             "so the result has shape (..., d_model)", lambda h, m=None: _pool_model(h, m, axis=-1)),
            ("a sequence that is all padding gives NaN (0 / 0): give it zeros, e.g. divide by max(count, 1)",
             lambda h, m=None: _pool_model(h, m, guard=False)),
        )),
    Exercise(
        "bert_block", "08_inside_a_real_encoder", 3,
        r"x \leftarrow \mathrm{LN}_{10^{-12}}(x + \mathrm{MHA}(x)),\quad"
        r" x \leftarrow \mathrm{LN}_{10^{-12}}(x + \mathrm{GELU}(x W_1 + b_1) W_2 + b_2)",
        _bert_cases, _bert_reference, (
            ("GELU's tanh approximation: BERT and all-MiniLM-L6-v2 use the exact GELU, "
             "0.5 x (1 + erf(x / sqrt(2)))", lambda x, p, n, padding_mask=None: _bert_model(x, p, n, padding_mask,
                                                                                           act="tanh")),
            ("eps = 1e-5 (the course's default) in the layer norms: this model's are eps = 1e-12",
             lambda x, p, n, padding_mask=None: _bert_model(x, p, n, padding_mask, eps=1e-5)),
            ("the padding mask is not used: padded keys must get weight 0 (score -inf before the softmax), or the "
             "padded sentence's real tokens read its [PAD]s", lambda x, p, n, padding_mask=None: _bert_model(
                 x, p, n, padding_mask, use_mask=False)),
            ("pre-norm: BERT's blocks are post-norm, x = LN(x + MHA(x)), then x = LN(x + FFN(x))",
             lambda x, p, n, padding_mask=None: _bert_model(x, p, n, padding_mask, placement="pre")),
            ("ReLU in the FFN: BERT's is the exact GELU", lambda x, p, n, padding_mask=None: _bert_model(
                x, p, n, padding_mask, act="relu")),
            ("scores scaled by sqrt(d_model): each head's scale is sqrt(d_head), d_head = d_model / n_heads",
             lambda x, p, n, padding_mask=None: _bert_model(x, p, n, padding_mask, scale_by_d_model=True)),
        )),
]}
