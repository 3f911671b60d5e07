"""Every bad argument gets a TypeError or ValueError that names it and says what was expected."""

import numpy as np
import pytest

import encoder_lib as el
from encoder_lib import fixtures

RNG = np.random.default_rng(0)
X = RNG.standard_normal((2, 3, 8)).astype(np.float32)
P = el.init_block_params(8, 16, np.random.default_rng(1))
FFN = P["ffn"]
Q = np.ones((3, 4))


def with_entry(params, path, value):
    """A deep copy of block params with one entry replaced (or removed if value is ...)."""
    copy = {k: (dict(v) if isinstance(v, dict) else v) for k, v in params.items()}
    *outer, last = path
    target = copy
    for key in outer:
        target = target[key]
    if value is ...:
        del target[last]
    else:
        target[last] = value
    return copy


# (description, call, expected exception, words the message must contain)
CASES = [
    ("d_model not divisible by n_heads", lambda: el.multi_head_attention(X, 3), ValueError, ["d_model (8)", "n_heads (3)"]),
    ("n_heads zero", lambda: el.multi_head_attention(X, 0), ValueError, ["n_heads", "at least 1"]),
    ("n_heads a float", lambda: el.encoder_block(X, P, 2.0), TypeError, ["n_heads", "integer"]),
    ("integer input", lambda: el.softmax(np.array([1, 2, 3])), TypeError, ["x", "float32 or float64", "int"]),
    ("integer x to the block", lambda: el.encoder_block(np.ones((3, 8), dtype=int), P, 2), TypeError, ["x", "dtype int"]),
    ("NaN in the input", lambda: el.layer_norm(np.array([1.0, np.nan])), ValueError, ["x", "finite", "nan"]),
    ("infinity in the input", lambda: el.encoder_block(np.full((3, 8), np.inf, np.float32), P, 2), ValueError, ["x", "finite"]),
    ("a seq of length 0", lambda: el.encoder_block(np.zeros((0, 8), np.float32), P, 2), ValueError, ["x", "empty axis", "(0, 8)"]),
    ("a single vector to the block", lambda: el.encoder_block(np.zeros(8, np.float32), P, 2), ValueError, ["x", "at least 2 axes"]),
    ("q and k of different d_k", lambda: el.scaled_dot_product_attention(Q, np.ones((3, 5)), Q), ValueError, ["q and k", "d_k"]),
    ("k and v of different length", lambda: el.scaled_dot_product_attention(Q, Q, np.ones((2, 4))), ValueError, ["k and v", "seq_k"]),
    ("q, k, v of mixed dtypes", lambda: el.scaled_dot_product_attention(Q, Q.astype(np.float32), Q), TypeError, ["q, k and v", "dtype"]),
    ("mask not boolean", lambda: el.multi_head_attention(X, 2, padding_mask=np.zeros((2, 3))), TypeError, ["padding_mask", "boolean", "float64"]),
    ("mask of the wrong length", lambda: el.encoder_block(X, P, 2, padding_mask=np.zeros((2, 4), bool)), ValueError, ["padding_mask", "(2, 3)", "(2, 4)"]),
    ("mask of the wrong batch", lambda: el.encoder(X, [P], 2, padding_mask=np.zeros((5, 3), bool)), ValueError, ["padding_mask", "batch axes"]),
    ("unknown norm", lambda: el.encoder_block(X, P, 2, norm="middle"), ValueError, ["norm", "'post' or 'pre'", "'middle'"]),
    ("unknown activation", lambda: el.feed_forward(X, FFN, activation="tanh"), ValueError, ["activation", "'relu' or 'gelu'", "'tanh'"]),
    ("FFN weights transposed (PyTorch layout)", lambda: el.feed_forward(X, {**FFN, "w2": FFN["w2"].T}), ValueError, ["params['w2']", "(16, 8)", "transposed"]),
    ("FFN params for another d_model", lambda: el.feed_forward(X[..., :4], FFN), ValueError, ["params['w1']", "(4, 16)"]),
    ("a missing FFN bias", lambda: el.encoder_block(X, with_entry(P, ("ffn", "b1"), ...), 2), ValueError, ["params['ffn']", "'b1'"]),
    ("attention weights of the wrong size", lambda: el.encoder_block(X, with_entry(P, ("attn", "w_q"), np.ones((4, 4), np.float32)), 2), ValueError, ["params['attn']['w_q']", "(8, 8)"]),
    ("float64 params with float32 input", lambda: el.encoder_block(X, el.init_block_params(8, 16, RNG, dtype=np.float64), 2), TypeError, ["float64", "float32", "one dtype"]),
    ("a missing layer norm", lambda: el.encoder_block(X, with_entry(P, ("norm2",), ...), 2), ValueError, ["params", "norm2"]),
    ("gamma of the wrong size", lambda: el.layer_norm(X, gamma=np.ones(3, np.float32)), ValueError, ["gamma must have shape (8,)", "(3,)"]),
    ("eps not positive", lambda: el.layer_norm(X, eps=0), ValueError, ["eps", "positive"]),
    ("layers not a list", lambda: el.encoder(X, P, 2), TypeError, ["layers", "list of block params"]),
    ("an empty stack", lambda: el.encoder(X, [], 2), ValueError, ["layers", "at least one", "empty"]),
    ("one bad layer in a stack", lambda: el.encoder(X, [P, with_entry(P, ("ffn", "w1"), FFN["w1"][:, :3].T.copy())], 2), ValueError, ["layers[1]['ffn']['w1']"]),
    ("dropout out of range", lambda: el.encoder_block(X, P, 2, dropout=1.5), ValueError, ["dropout", "[0, 1)"]),
    ("dropout without a generator", lambda: el.encoder_block(X, P, 2, dropout=0.1), TypeError, ["dropout", "rng", "Generator"]),
    ("softmax axis out of range", lambda: el.softmax(Q, axis=2), ValueError, ["axis", "[-2, 1]"]),
    ("positional encoding of length 0", lambda: el.positional_encoding(0, 8), ValueError, ["seq_len", "at least 1"]),
    ("positional encoding with a float d_model", lambda: el.positional_encoding(4, 8.0), TypeError, ["d_model", "integer"]),
    ("init without a Generator", lambda: el.init_block_params(8, 16, 0), TypeError, ["rng", "np.random.Generator"]),
    ("init with an integer dtype", lambda: el.init_block_params(8, 16, RNG, dtype=np.int32), TypeError, ["dtype", "float32"]),
    ("a state dict with a missing key", lambda: el.from_torch_state_dict({"linear1.weight": np.ones((2, 2))}), ValueError, ["state_dict", "self_attn.in_proj_weight"]),
    ("identity attention to PyTorch", lambda: el.to_torch_state_dict(fixtures.lesson_block_params()), ValueError, ["params", "'attn'"]),
    ("params not a dict", lambda: el.encoder_block(X, [P], 2), TypeError, ["params", "dict"]),
    ("None as input", lambda: el.layer_norm(None), TypeError, ["x", "None"]),
    ("masked_softmax with a float mask", lambda: el.masked_softmax(np.zeros((2, 3)), np.zeros(3)), TypeError, ["padding_mask", "boolean"]),
    ("masked_softmax with a mask of the wrong length", lambda: el.masked_softmax(np.zeros((2, 3)), np.zeros(4, bool)), ValueError, ["padding_mask", "(4,)"]),
    ("masked_softmax with NaN scores", lambda: el.masked_softmax(np.full((2, 2), np.nan)), ValueError, ["scores", "NaN"]),
    ("post_norm with a sublayer that is not a function", lambda: el.post_norm(X, P), TypeError, ["sublayer", "function"]),
    ("pre_norm with gamma of the wrong size", lambda: el.pre_norm(X, lambda h: h, gamma=np.ones(3, np.float32)), ValueError, ["gamma", "(8,)"]),
]


@pytest.mark.parametrize("call, error, words", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_argument_is_named_in_a_clear_error(call, error, words):
    with pytest.raises(error) as info:
        call()
    message = str(info.value)
    missing = [w for w in words if w.lower() not in message.lower()]
    assert not missing, f"message {message!r} lacks {missing}"


def test_the_table_is_long_enough():
    assert len(CASES) >= 20
