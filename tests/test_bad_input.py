"""Every bad argument gets a TypeError or ValueError that names it and says what was expected."""

import dataclasses

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



X64 = RNG.standard_normal((5, 8))
P64 = el.init_block_params(8, 16, np.random.default_rng(2), dtype=np.float64)
G = el.grad
SD = el.to_torch_state_dict(P)
MASK = np.array([[False, False, True], [False, False, False]])
BIG_FFN = {"w1": np.full((8, 16), 1e3, np.float32), "b1": np.zeros(16, np.float32),
           "w2": np.full((16, 8), 1e3, np.float32), "b2": np.zeros(8, np.float32)}


def state_dict_with(key, value):
    return {**SD, key: value}


def nan_at(array, index=0):
    out = np.array(array, copy=True)
    out.flat[index] = np.nan
    return out


def returns(value):
    return lambda h: value


def self_referencing():
    d = {"w": np.ones(2)}
    d["me"] = d
    return d


def ragged():
    return [[1.0, 2.0], [3.0]]


MORE = [
    # --- softmax
    ("softmax of None", lambda: el.softmax(None), TypeError, ["x", "None"]),
    ("softmax of a string", lambda: el.softmax("abc"), TypeError, ["x", "string"]),
    ("softmax of booleans", lambda: el.softmax(np.array([True, False])), TypeError, ["x", "bool"]),
    ("softmax of complex numbers", lambda: el.softmax(np.array([1 + 2j])), TypeError, ["x", "complex"]),
    ("softmax of objects", lambda: el.softmax(np.array([object()])), TypeError, ["x", "object"]),
    ("softmax of a masked array", lambda: el.softmax(np.ma.masked_array([1.0, 2.0], [0, 1])), TypeError, ["x", "masked array"]),
    ("softmax of a ragged list", lambda: el.softmax(ragged()), TypeError, ["x"]),
    ("softmax with infinity", lambda: el.softmax(np.array([1.0, np.inf])), ValueError, ["x", "finite", "inf"]),
    ("softmax with NaN", lambda: el.softmax(np.array([[1.0, 2.0], [0.0, np.nan]])), ValueError, ["x[1, 1]", "nan"]),
    ("softmax of a row that is all -inf", lambda: el.softmax(np.array([[0.0, -np.inf], [-np.inf, -np.inf]])),
     ValueError, ["x[1, :]", "-inf", "0 / 0", "all padding", "zeros"]),
    ("softmax over axis 0 of a column that is all -inf", lambda: el.softmax(np.array([[-np.inf, 0.0], [-np.inf, 1.0]]), axis=0),
     ValueError, ["x[:, 0]", "-inf"]),
    ("softmax of an empty array", lambda: el.softmax(np.zeros(0)), ValueError, ["x", "empty axis"]),
    ("softmax of a 0-d array", lambda: el.softmax(np.float64(1.0)), ValueError, ["x", "at least 1 axes"]),
    ("softmax with axis=True", lambda: el.softmax(Q, axis=True), TypeError, ["axis", "integer", "True"]),
    ("softmax with a float axis", lambda: el.softmax(Q, axis=1.0), TypeError, ["axis", "integer"]),
    ("softmax with a string axis", lambda: el.softmax(Q, axis="0"), TypeError, ["axis", "integer"]),
    ("softmax with axis -3 of 2", lambda: el.softmax(Q, axis=-3), ValueError, ["axis", "[-2, 1]", "-3"]),
    # --- masked_softmax
    ("masked_softmax of None", lambda: el.masked_softmax(None), TypeError, ["scores", "None"]),
    ("masked_softmax of one row", lambda: el.masked_softmax(np.zeros(3)), ValueError, ["scores", "at least 2 axes"]),
    ("masked_softmax with +inf", lambda: el.masked_softmax(np.array([[0.0, np.inf]])), ValueError, ["scores", "+inf"]),
    ("masked_softmax of integers", lambda: el.masked_softmax(np.zeros((2, 3), int)), TypeError, ["scores", "int64"]),
    ("masked_softmax with an integer mask", lambda: el.masked_softmax(np.zeros((2, 3)), np.zeros(3, int)), TypeError, ["padding_mask", "boolean", "int64"]),
    ("masked_softmax with a mask of more batch axes", lambda: el.masked_softmax(np.zeros((2, 3)), np.zeros((2, 1, 3), bool)), ValueError, ["padding_mask", "more batch axes"]),
    # --- scaled_dot_product_attention
    ("attention with q None", lambda: el.scaled_dot_product_attention(None, Q, Q), TypeError, ["q", "None"]),
    ("attention with one query vector", lambda: el.scaled_dot_product_attention(np.ones(4), Q, Q), ValueError, ["q", "at least 2 axes"]),
    ("attention with integer keys", lambda: el.scaled_dot_product_attention(Q, np.ones((3, 4), int), Q), TypeError, ["k", "int64"]),
    ("attention with a NaN value", lambda: el.scaled_dot_product_attention(Q, Q, nan_at(Q)), ValueError, ["v", "finite", "nan"]),
    ("attention whose batches do not broadcast", lambda: el.scaled_dot_product_attention(np.ones((2, 3, 4)), np.ones((3, 3, 4)), np.ones((3, 3, 4))), ValueError, ["batch axes", "broadcast"]),
    ("attention with a float mask", lambda: el.scaled_dot_product_attention(Q, Q, Q, np.zeros(3)), TypeError, ["padding_mask", "boolean"]),
    ("attention scores overflowing float32", lambda: el.scaled_dot_product_attention(np.full((2, 4), 1e20, np.float32), np.full((2, 4), 1e20, np.float32), np.ones((2, 4), np.float32)), ValueError, ["overflow", "float32", "float64"]),
    # --- split_heads, merge_heads
    ("split_heads into 3 of 8", lambda: el.split_heads(X, 3), ValueError, ["d_model (8)", "n_heads (3)", "divisible"]),
    ("split_heads into 0", lambda: el.split_heads(X, 0), ValueError, ["n_heads", "at least 1"]),
    ("split_heads into -1", lambda: el.split_heads(X, -1), ValueError, ["n_heads", "at least 1", "-1"]),
    ("split_heads into 2.0", lambda: el.split_heads(X, 2.0), TypeError, ["n_heads", "integer", "2.0"]),
    ("split_heads into True", lambda: el.split_heads(X, True), TypeError, ["n_heads", "integer", "True"]),
    ("split_heads into 16 of 8", lambda: el.split_heads(X, 16), ValueError, ["d_model (8)", "n_heads (16)"]),
    ("split_heads into '2'", lambda: el.split_heads(X, "2"), TypeError, ["n_heads", "integer", "'2'"]),
    ("split_heads of None", lambda: el.split_heads(None, 2), TypeError, ["x", "None"]),
    ("split_heads of a list", lambda: el.split_heads([1.0, 2.0], 2), ValueError, ["x", "at least 2 axes"]),
    ("split_heads of a vector", lambda: el.split_heads(np.ones(8), 2), ValueError, ["x", "at least 2 axes", "(8,)"]),
    ("split_heads of integers", lambda: el.split_heads(np.ones((3, 8), int), 2), TypeError, ["x", "int64"]),
    ("split_heads of complex numbers", lambda: el.split_heads(np.ones((3, 8), complex), 2), TypeError, ["x", "complex"]),
    ("split_heads of NaN", lambda: el.split_heads(nan_at(X64), 2), ValueError, ["x", "finite"]),
    ("split_heads of an empty sequence", lambda: el.split_heads(np.zeros((0, 8)), 2), ValueError, ["x", "empty axis"]),
    ("merge_heads of a 2-D array", lambda: el.merge_heads(np.ones((3, 4))), ValueError, ["x", "at least 3 axes"]),
    ("merge_heads of None", lambda: el.merge_heads(None), TypeError, ["x", "None"]),
    ("merge_heads of a list of lists", lambda: el.merge_heads([[1.0]]), ValueError, ["x", "at least 3 axes"]),
    ("merge_heads of integers", lambda: el.merge_heads(np.ones((2, 3, 4), int)), TypeError, ["x", "int64"]),
    ("merge_heads of NaN", lambda: el.merge_heads(nan_at(np.ones((2, 3, 4)))), ValueError, ["x", "finite"]),
    # --- multi_head_attention
    ("attention params as a list", lambda: el.multi_head_attention(X, 2, [P["attn"]]), TypeError, ["params", "dict"]),
    ("attention params without b_v", lambda: el.multi_head_attention(X, 2, with_entry(P, ("attn", "b_v"), ...)["attn"]), ValueError, ["params", "'b_v'"]),
    ("a NaN in w_q", lambda: el.multi_head_attention(X, 2, with_entry(P, ("attn", "w_q"), nan_at(P["attn"]["w_q"]))["attn"]), ValueError, ["params['w_q']", "finite", "nan"]),
    ("an infinite b_v", lambda: el.multi_head_attention(X, 2, with_entry(P, ("attn", "b_v"), np.full(8, np.inf, np.float32))["attn"]), ValueError, ["params['b_v']", "finite", "inf"]),
    ("b_q of the wrong size", lambda: el.multi_head_attention(X, 2, with_entry(P, ("attn", "b_q"), np.zeros(4, np.float32))["attn"]), ValueError, ["params['b_q']", "(8,)", "(4,)"]),
    ("float64 attention params with float32 x", lambda: el.multi_head_attention(X, 2, P64["attn"]), TypeError, ["float64", "float32", "one dtype"]),
    ("attention over rows of 1e20 in float32", lambda: el.multi_head_attention(np.full((2, 3, 8), 1e20, np.float32) * np.sign(X), 2, P["attn"]), ValueError, ["overflow", "float64"]),
    # --- feed_forward, relu, gelu
    ("activation None", lambda: el.feed_forward(X, FFN, activation=None), ValueError, ["activation", "'relu' or 'gelu'", "None"]),
    ("w1 transposed", lambda: el.feed_forward(X, {**FFN, "w1": FFN["w1"].T}), ValueError, ["params['w1']", "(8, 16)", "(16, 8)", "transposed"]),
    ("w1 a vector", lambda: el.feed_forward(X, {**FFN, "w1": np.ones(8, np.float32)}), ValueError, ["params['w1']", "(d_model, d_ff)"]),
    ("w1 None", lambda: el.feed_forward(X, {**FFN, "w1": None}), ValueError, ["params['w1']", "NoneType"]),
    ("a NaN in b1", lambda: el.feed_forward(X, {**FFN, "b1": nan_at(FFN["b1"])}), ValueError, ["params['b1']", "finite"]),
    ("b2 of the wrong size", lambda: el.feed_forward(X, {**FFN, "b2": np.zeros(16, np.float32)}), ValueError, ["params['b2']", "(8,)", "(16,)"]),
    ("FFN params as a list", lambda: el.feed_forward(X, [FFN]), TypeError, ["params", "dict"]),
    ("FFN of integers", lambda: el.feed_forward(np.ones((3, 8), int), FFN), TypeError, ["x", "int64"]),
    ("FFN overflowing float32", lambda: el.feed_forward(np.full((3, 8), 1e35, np.float32), BIG_FFN), ValueError, ["feed_forward", "overflows", "1e+35"]),
    ("relu of None", lambda: el.relu(None), TypeError, ["x", "None"]),
    ("relu of a string", lambda: el.relu("abc"), TypeError, ["x", "string"]),
    ("relu of objects", lambda: el.relu(np.array([object(), object()])), TypeError, ["x", "object"]),
    ("relu of complex numbers", lambda: el.relu(np.array([1 + 1j])), TypeError, ["x", "complex"]),
    ("relu of NaN", lambda: el.relu(np.array([np.nan])), ValueError, ["x", "finite"]),
    ("relu of integers", lambda: el.relu(np.array([1, -2])), TypeError, ["x", "int64", "convert"]),
    ("gelu of None", lambda: el.gelu(None), TypeError, ["x", "None"]),
    ("gelu of a string", lambda: el.gelu("1.0"), TypeError, ["x", "string"]),
    ("gelu of integers", lambda: el.gelu(np.array([1, 2, -3])), TypeError, ["x", "int64", "convert"]),
    ("gelu of a list of integers", lambda: el.gelu([1, 2]), TypeError, ["x", "int64"]),
    ("gelu of booleans", lambda: el.gelu(np.array([True, False])), TypeError, ["x", "bool"]),
    ("gelu of complex numbers", lambda: el.gelu(np.array([1j])), TypeError, ["x", "complex"]),
    ("gelu of NaN", lambda: el.gelu(np.array([np.nan, 1.0])), ValueError, ["x", "finite"]),
    ("gelu of objects", lambda: el.gelu(np.array([None, 1.0])), TypeError, ["x", "object"]),
    # --- layer_norm
    ("a NaN in gamma", lambda: el.layer_norm(X, gamma=nan_at(np.ones(8, np.float32))), ValueError, ["gamma", "finite"]),
    ("an infinite beta", lambda: el.layer_norm(X, beta=np.full(8, -np.inf, np.float32)), ValueError, ["beta", "finite"]),
    ("beta of the wrong size", lambda: el.layer_norm(X, beta=np.zeros(5, np.float32)), ValueError, ["beta", "(8,)", "(5,)"]),
    ("float64 gamma with float32 x", lambda: el.layer_norm(X, gamma=np.ones(8)), TypeError, ["gamma", "float64", "one dtype"]),
    ("eps negative", lambda: el.layer_norm(X, eps=-1e-5), ValueError, ["eps", "positive"]),
    ("eps infinite", lambda: el.layer_norm(X, eps=np.inf), ValueError, ["eps", "finite"]),
    ("eps NaN", lambda: el.layer_norm(X, eps=float("nan")), ValueError, ["eps", "finite"]),
    ("eps a string", lambda: el.layer_norm(X, eps="1e-5"), TypeError, ["eps", "number", "'1e-5'"]),
    ("eps True", lambda: el.layer_norm(X, eps=True), TypeError, ["eps", "number", "True"]),
    ("eps None", lambda: el.layer_norm(X, eps=None), TypeError, ["eps", "number", "None"]),
    ("layer_norm of a 0-d array", lambda: el.layer_norm(np.float32(1.0)), ValueError, ["x", "at least 1 axes"]),
    ("layer_norm of integers", lambda: el.layer_norm(np.array([1, 2, 3])), TypeError, ["x", "int64"]),
    # --- post_norm, pre_norm
    ("a sub-layer that returns None", lambda: el.post_norm(X, returns(None)), TypeError, ["sublayer(x)", "NoneType"]),
    ("a sub-layer that returns a string", lambda: el.pre_norm(X, returns("out")), TypeError, ["sublayer(x)", "str"]),
    ("a sub-layer that takes two arguments", lambda: el.post_norm(X, lambda a, b: a), TypeError, ["sublayer", "one array", "(a, b)"]),
    ("a sub-layer that returns one row", lambda: el.post_norm(X, returns(np.ones(8, np.float32))), ValueError, ["sublayer(x)", "(2, 3, 8)", "(8,)"]),
    ("a sub-layer that returns a column", lambda: el.pre_norm(X[0], returns(np.ones((3, 1), np.float32))), ValueError, ["sublayer(x)", "(3, 8)", "(3, 1)"]),
    ("a sub-layer that adds a batch axis", lambda: el.post_norm(X[0], returns(np.ones((2, 3, 8), np.float32))), ValueError, ["sublayer(x)", "(3, 8)", "(2, 3, 8)"]),
    ("a sub-layer that returns integers", lambda: el.post_norm(X, lambda h: np.ones(h.shape, int)), TypeError, ["sublayer(x)", "dtype", "int64"]),
    ("a sub-layer that returns float64 for float32", lambda: el.pre_norm(X, lambda h: h.astype(np.float64)), TypeError, ["sublayer(x)", "float32", "float64"]),
    ("a sub-layer that returns NaN", lambda: el.post_norm(X, lambda h: h * np.nan), ValueError, ["sublayer(x)", "NaN"]),
    ("a sub-layer that returns a list", lambda: el.pre_norm(X, lambda h: h.tolist()), TypeError, ["sublayer(x)", "list"]),
    ("post_norm with eps 0", lambda: el.post_norm(X, lambda h: h, eps=0), ValueError, ["eps", "positive"]),
    ("pre_norm of one vector", lambda: el.pre_norm(np.ones(8), lambda h: h), ValueError, ["x", "at least 2 axes"]),
    # --- encoder_block, encoder, traces, BlockConfig
    ("norm None", lambda: el.encoder_block(X, P, 2, norm=None), ValueError, ["norm", "'post' or 'pre'", "None"]),
    ("residual 'no'", lambda: el.encoder_block(X, P, 2, residual="no"), TypeError, ["residual", "True or False", "'no'"]),
    ("residual None", lambda: el.encoder_block(X, P, 2, residual=None), TypeError, ["residual", "True or False", "None"]),
    ("residual 1", lambda: el.encoder_block(X, P, 2, residual=1), TypeError, ["residual", "True or False"]),
    ("eps a string in the block", lambda: el.encoder_block(X, P, 2, eps="small"), TypeError, ["eps", "number"]),
    ("activation 'swish'", lambda: el.encoder_block(X, P, 2, activation="swish"), ValueError, ["activation", "'swish'"]),
    ("a NaN in norm2's beta", lambda: el.encoder_block(X, with_entry(P, ("norm2", "beta"), nan_at(P["norm2"]["beta"])), 2), ValueError, ["params['norm2']['beta']", "finite"]),
    ("dropout True", lambda: el.encoder_block(X, P, 2, dropout=True), TypeError, ["dropout", "probability"]),
    ("dropout negative", lambda: el.encoder_block(X, P, 2, dropout=-0.1), ValueError, ["dropout", "[0, 1)"]),
    ("dropout with a seed for rng", lambda: el.encoder_block(X, P, 2, dropout=0.1, rng=0), TypeError, ["rng", "Generator", "int"]),
    ("a block over rows of 1e20 in float32", lambda: el.encoder_block(np.full((2, 3, 8), 1e20, np.float32) * np.sign(X), P, 2), ValueError, ["overflow", "float64"]),
    ("a norm that is a list", lambda: el.encoder_block(X, with_entry(P, ("norm1",), [1.0]), 2), TypeError, ["params['norm1']", "dict"]),
    ("layers as a dict", lambda: el.encoder(X, {"0": P}, 2), TypeError, ["layers", "list of block params"]),
    ("a layer that is None", lambda: el.encoder(X, [P, None], 2), TypeError, ["layers[1]", "dict"]),
    ("residual 'no' in the stack", lambda: el.encoder(X, [P], 2, residual="no"), TypeError, ["residual", "True or False"]),
    ("trace with a bad mask", lambda: el.trace_encoder_block(X, P, 2, padding_mask=np.zeros((2, 3))), TypeError, ["padding_mask", "boolean"]),
    ("trace with norm 'middle'", lambda: el.trace_encoder_block(X, P, 2, norm="middle"), ValueError, ["norm", "'middle'"]),
    ("trace of an empty stack", lambda: el.trace_encoder(X, [], 2), ValueError, ["layers", "at least one"]),
    ("trace with residual 'yes'", lambda: el.trace_encoder(X, [P], 2, residual="yes"), TypeError, ["residual", "True or False"]),
    ("BlockConfig with n_heads '4'", lambda: el.BlockConfig("4"), TypeError, ["n_heads", "integer", "'4'"]),
    ("BlockConfig with eps 0", lambda: el.BlockConfig(2, eps=0.0), ValueError, ["eps", "positive"]),
    ("BlockConfig with dropout 1", lambda: el.BlockConfig(2, dropout=1.0), ValueError, ["dropout", "[0, 1)"]),
    ("BlockConfig with its options by position", lambda: el.BlockConfig(2, "pre"), TypeError, ["positional", "3 were given"]),
    # --- a BlockConfig, or n_heads and the options loose: one or the other
    ("a config and a loose option together", lambda: el.encoder_block(X, P, config=el.BlockConfig(2), norm="pre"),
     TypeError, ["encoder_block", "config=", "norm='pre'", "already holds norm", "dataclasses.replace(config, norm='pre')"]),
    ("a config by position and a loose option", lambda: el.encoder(X, [P], el.BlockConfig(2), eps=1e-6, residual=False),
     TypeError, ["encoder", "config=", "eps=1e-06, residual=False"]),
    ("a config and n_heads together", lambda: el.trace_encoder_block(X, P, 2, config=el.BlockConfig(2)),
     TypeError, ["trace_encoder_block", "config=", "n_heads=2"]),
    ("a config given twice", lambda: el.trace_encoder(X, [P], el.BlockConfig(2), config=el.BlockConfig(2)),
     TypeError, ["BlockConfig twice", "pass it once"]),
    ("a config that is a dict", lambda: el.encoder_block(X, P, config={"n_heads": 2, "norm": "pre"}),
     TypeError, ["config must be a BlockConfig", "dict"]),
    ("a config that is a string", lambda: G.encoder_block_grad(X64, P64, grad_out=X64, config="post"),
     TypeError, ["config must be a BlockConfig", "str", "'post'"]),
    ("n_heads missing", lambda: el.encoder_block(X, P), TypeError, ["encoder_block", "needs n_heads", "BlockConfig", "neither"]),
    ("n_heads missing from a stack", lambda: el.encoder(X, [P], norm="pre"), TypeError, ["encoder", "needs n_heads"]),
    ("n_heads missing from a gradient", lambda: G.encoder_grad(X64, [P64], grad_out=X64), TypeError, ["encoder_grad", "needs n_heads"]),
    ("norm by position", lambda: el.encoder_block(X, P, 2, "pre"), TypeError, ["encoder_block", "positional arguments but 4 were given"]),
    ("a misspelt option", lambda: el.encoder(X, [P], 2, nrom="pre"), TypeError, ["encoder", "unexpected keyword", "nrom"]),
    ("grad_out missing", lambda: G.encoder_block_grad(X64, P64, 2), TypeError, ["encoder_block_grad", "grad_out"]),
    ("grad_out None", lambda: G.encoder_grad(X64, [P64], 2, None), TypeError, ["grad_out", "None"]),
    ("a gradient with a config that has dropout", lambda: G.encoder_block_grad(X64, P64, el.BlockConfig(2, dropout=0.1, rng=RNG), X64),
     ValueError, ["encoder_block_grad", "no dropout", "0.1", "dataclasses.replace(config, dropout=0.0)"]),
    # --- positional_encoding, init_block_params, count_params
    ("seq_len True", lambda: el.positional_encoding(True, 8), TypeError, ["seq_len", "integer", "True"]),
    ("seq_len '5'", lambda: el.positional_encoding("5", 8), TypeError, ["seq_len", "integer"]),
    ("d_model negative", lambda: el.positional_encoding(4, -2), ValueError, ["d_model", "at least 1", "-2"]),
    ("positional dtype None", lambda: el.positional_encoding(4, 8, dtype=None), TypeError, ["dtype", "float32", "None"]),
    ("positional dtype 'foo'", lambda: el.positional_encoding(4, 8, dtype="foo"), TypeError, ["dtype", "float32"]),
    ("positional dtype int32", lambda: el.positional_encoding(4, 8, dtype=np.int32), TypeError, ["dtype", "float32", "int32"]),
    ("init dtype 'foo'", lambda: el.init_block_params(8, 16, RNG, dtype="foo"), TypeError, ["dtype", "float32"]),
    ("init with d_model 0", lambda: el.init_block_params(0, 16, RNG), ValueError, ["d_model", "at least 1"]),
    ("init with d_ff 1.5", lambda: el.init_block_params(8, 1.5, RNG), TypeError, ["d_ff", "integer", "1.5"]),
    ("init with d_model True", lambda: el.init_block_params(True, 16, RNG), TypeError, ["d_model", "integer", "True"]),
    ("count_params of a string", lambda: el.count_params("abc"), TypeError, ["params", "str"]),
    ("count_params of a number", lambda: el.count_params(5), TypeError, ["params", "int"]),
    ("count_params of a set", lambda: el.count_params({1, 2, 3}), TypeError, ["params", "set"]),
    ("count_params of a generator", lambda: el.count_params(a for a in [np.ones(2)]), TypeError, ["params", "generator"]),
    ("count_params of an object", lambda: el.count_params({"a": object()}), TypeError, ["params['a']", "object"]),
    ("count_params of a dict that holds itself", lambda: el.count_params(self_referencing()), ValueError, ["params['me']", "itself"]),
    # --- PyTorch state dicts
    ("state_dict as a list", lambda: el.from_torch_state_dict([SD]), TypeError, ["state_dict", "mapping", "list"]),
    ("prefix None", lambda: el.from_torch_state_dict(SD, prefix=None), TypeError, ["prefix", "string", "None"]),
    ("prefix a number", lambda: el.from_torch_state_dict(SD, prefix=3), TypeError, ["prefix", "string"]),
    ("linear1.weight transposed", lambda: el.from_torch_state_dict(state_dict_with("linear1.weight", SD["linear1.weight"].T)), ValueError, ["state_dict['linear1.weight']", "(16, 8)", "transposed", "(out, in)"]),
    ("linear2.weight transposed", lambda: el.from_torch_state_dict(state_dict_with("linear2.weight", SD["linear2.weight"].T)), ValueError, ["state_dict['linear2.weight']", "transposed"]),
    ("in_proj_weight of the wrong shape", lambda: el.from_torch_state_dict(state_dict_with("self_attn.in_proj_weight", np.ones((8, 8), np.float32))), ValueError, ["state_dict['self_attn.in_proj_weight']", "(3 d_model, d_model)"]),
    ("a NaN in norm1.bias", lambda: el.from_torch_state_dict(state_dict_with("norm1.bias", nan_at(SD["norm1.bias"]))), ValueError, ["state_dict['norm1.bias']", "finite"]),
    ("integer weights in a state dict", lambda: el.from_torch_state_dict(state_dict_with("linear1.bias", np.ones(16, int))), TypeError, ["state_dict['linear1.bias']", "int64"]),
    ("a NaN in linear1.weight", lambda: el.from_torch_state_dict(state_dict_with("linear1.weight", nan_at(SD["linear1.weight"]))), ValueError, ["state_dict['linear1.weight']", "finite"]),
    ("to_torch of empty attention", lambda: el.to_torch_state_dict({"attn": {}}), ValueError, ["params", "d_model"]),
    ("to_torch of attention as a list", lambda: el.to_torch_state_dict({**P, "attn": [1, 2]}), TypeError, ["params['attn']", "dict"]),
    ("to_torch with w_q 1.0", lambda: el.to_torch_state_dict(with_entry(P, ("attn", "w_q"), np.float32(1.0))), ValueError, ["params['attn']['w_q']", "(8, 8)", "()"]),
    ("to_torch with w_q None", lambda: el.to_torch_state_dict(with_entry(P, ("attn", "w_q"), None)), TypeError, ["params['attn']['w_q']", "None"]),
    ("to_torch with prefix None", lambda: el.to_torch_state_dict(P, prefix=None), TypeError, ["prefix", "string"]),
    ("to_torch of a list", lambda: el.to_torch_state_dict([P]), TypeError, ["params", "dict", "list"]),
    # --- mean_pool
    ("mean_pool of one vector", lambda: el.mean_pool(np.ones(4)), ValueError, ["hidden", "at least 2 axes"]),
    ("mean_pool with a float mask", lambda: el.mean_pool(X, np.zeros((2, 3))), TypeError, ["padding_mask", "boolean"]),
    ("mean_pool with a mask of the wrong length", lambda: el.mean_pool(X, np.zeros((2, 4), bool)), ValueError, ["padding_mask", "(2, 3)", "(2, 4)"]),
    ("mean_pool of integers", lambda: el.mean_pool(np.ones((3, 4), int)), TypeError, ["hidden", "int64"]),
    ("mean_pool of NaN", lambda: el.mean_pool(nan_at(X64)), ValueError, ["hidden", "finite"]),
    ("mean_pool with a mask of more batch axes", lambda: el.mean_pool(X[0], MASK), ValueError, ["padding_mask", "more batch axes"]),
    # --- the backward passes
    ("softmax_grad of None", lambda: G.softmax_grad(None, Q), TypeError, ["weights", "None"]),
    ("softmax_grad of another shape", lambda: G.softmax_grad(Q, np.ones((3, 5))), ValueError, ["grad_weights", "(3, 4)", "(3, 5)"]),
    ("softmax_grad with NaN", lambda: G.softmax_grad(Q, nan_at(Q)), ValueError, ["grad_weights", "finite"]),
    ("softmax_grad of mixed dtypes", lambda: G.softmax_grad(Q, Q.astype(np.float32)), TypeError, ["grad_weights", "float32", "float64"]),
    ("softmax_grad of integers", lambda: G.softmax_grad(np.ones((2, 2), int), np.ones((2, 2))), TypeError, ["weights", "int64"]),
    ("attention grad of another shape", lambda: G.scaled_dot_product_attention_grad(Q, Q, Q, np.ones((3, 5))), ValueError, ["grad_out", "(3, 4)", "(3, 5)"]),
    ("attention grad with NaN", lambda: G.scaled_dot_product_attention_grad(Q, Q, Q, nan_at(Q)), ValueError, ["grad_out", "finite"]),
    ("attention grad with a float mask", lambda: G.scaled_dot_product_attention_grad(Q, Q, Q, Q, np.zeros(3)), TypeError, ["padding_mask", "boolean"]),
    ("multi-head grad with infinity", lambda: G.multi_head_attention_grad(X64, 2, np.full((5, 8), np.inf)), ValueError, ["grad_out", "finite"]),
    ("multi-head grad with 3 heads", lambda: G.multi_head_attention_grad(X64, 3, X64), ValueError, ["d_model (8)", "n_heads (3)"]),
    ("multi-head grad with a NaN weight", lambda: G.multi_head_attention_grad(X64, 2, X64, with_entry(P64, ("attn", "w_k"), nan_at(P64["attn"]["w_k"]))["attn"]), ValueError, ["params['w_k']", "finite"]),
    ("FFN grad of another shape", lambda: G.feed_forward_grad(X64, P64["ffn"], np.ones((5, 4))), ValueError, ["grad_out", "(5, 8)", "(5, 4)"]),
    ("FFN grad with activation 'tanh'", lambda: G.feed_forward_grad(X64, P64["ffn"], X64, activation="tanh"), ValueError, ["activation", "'tanh'"]),
    ("FFN grad with w1 transposed", lambda: G.feed_forward_grad(X64, {**P64["ffn"], "w1": P64["ffn"]["w1"].T}, X64), ValueError, ["params['w1']", "transposed"]),
    ("layer_norm_grad with NaN", lambda: G.layer_norm_grad(X64, nan_at(X64)), ValueError, ["grad_out", "finite"]),
    ("layer_norm_grad with eps 0", lambda: G.layer_norm_grad(X64, X64, eps=0), ValueError, ["eps", "positive"]),
    ("layer_norm_grad with a NaN beta", lambda: G.layer_norm_grad(X64, X64, beta=nan_at(np.zeros(8))), ValueError, ["beta", "finite"]),
    ("layer_norm_grad with gamma of the wrong size", lambda: G.layer_norm_grad(X64, X64, gamma=np.ones(3)), ValueError, ["gamma", "(8,)", "(3,)"]),
    ("block grad with residual 'no'", lambda: G.encoder_block_grad(X64, P64, 2, X64, residual="no"), TypeError, ["residual", "True or False"]),
    ("block grad of float32", lambda: G.encoder_block_grad(X64, P64, 2, X64.astype(np.float32)), TypeError, ["grad_out", "float32", "float64"]),
    ("block grad with norm 'both'", lambda: G.encoder_block_grad(X64, P64, 2, X64, norm="both"), ValueError, ["norm", "'both'"]),
    ("stack grad with keep_layer_grads 'no'", lambda: G.encoder_grad(X64, [P64], 2, X64, keep_layer_grads="no"), TypeError, ["keep_layer_grads", "True or False"]),
    ("stack grad of no layers", lambda: G.encoder_grad(X64, [], 2, X64), ValueError, ["layers", "at least one"]),
    ("stack grad of another shape", lambda: G.encoder_grad(X64, [P64], 2, np.ones((4, 8))), ValueError, ["grad_out", "(5, 8)", "(4, 8)"]),
]


# --- the encoder since 2017 (lesson 09)
ML = el.BlockConfig(2, norm="pre", bias=False, ffn="gated", activation="gelu", rope="half", window=2)
PM = el.init_block_params(8, 16, np.random.default_rng(3), config=ML)
PERI = el.BlockConfig(2, norm="peri")
QK = el.BlockConfig(2, norm="pre", qk_norm=True)
PQK = el.init_block_params(8, 16, np.random.default_rng(4), config=QK)
GATED = PM["ffn"]
MODERN = [
    ("rms_norm of integers", lambda: el.rms_norm(np.ones((2, 4), int)), TypeError, ["x", "int64"]),
    ("rms_norm with gamma of the wrong size", lambda: el.rms_norm(X, np.ones(3, np.float32)), ValueError, ["gamma", "(8,)", "(3,)"]),
    ("rms_norm with eps 0", lambda: el.rms_norm(X, eps=0), ValueError, ["eps", "positive"]),
    ("peri_norm with gamma_out of the wrong size", lambda: el.peri_norm(X, lambda h: h, gamma_out=np.ones(3, np.float32)), ValueError, ["gamma_out", "(8,)"]),
    ("peri_norm with a sublayer that changes the shape", lambda: el.peri_norm(X, lambda h: h[..., :2]), ValueError, ["sublayer", "shape"]),
    ("rope of an odd width", lambda: el.rope(np.ones((3, 5))), ValueError, ["d_head", "even", "5"]),
    ("rope with layout 'pairs'", lambda: el.rope(X, layout="pairs"), ValueError, ["layout", "'half' or 'interleaved'", "'pairs'"]),
    ("rope with base 0", lambda: el.rope(X, base=0), ValueError, ["base", "positive"]),
    ("rope with positions of the wrong length", lambda: el.rope(X, positions=np.arange(4)), ValueError, ["positions", "3"]),
    ("rope_pairs of an odd width", lambda: el.rope_pairs(7), ValueError, ["d_head", "even", "7"]),
    ("shift_rotation by 1.5", lambda: el.shift_rotation(1.5, 4), TypeError, ["offset", "integer"]),
    ("shift_rotation of an odd width", lambda: el.shift_rotation(1, 5), ValueError, ["d_model", "even"]),
    ("gated FFN with a plain FFN's params", lambda: el.gated_feed_forward(X, FFN), ValueError, ["params", "'w1'", "w_in"]),
    ("gated FFN with activation 'tanh'", lambda: el.gated_feed_forward(X, GATED, "tanh"), ValueError, ["activation", "'gelu' or 'silu' or 'relu'"]),
    ("gated FFN with w_gate transposed", lambda: el.geglu(X, {**GATED, "w_gate": GATED["w_gate"].T}), ValueError, ["params['w_gate']", "(8, 16)", "transposed"]),
    ("gated FFN missing w_out", lambda: el.swiglu(X, {k: v for k, v in GATED.items() if k != "w_out"}), ValueError, ["params", "'w_out'"]),
    ("gated_d_ff of 100", lambda: el.gated_d_ff(100), ValueError, ["d_ff", "divide by 3", "100"]),
    ("causal_mask of 0", lambda: el.causal_mask(0), ValueError, ["seq", "at least 1"]),
    ("local_window_mask with window 2.0", lambda: el.local_window_mask(5, 2.0), TypeError, ["window", "integer"]),
    ("attention_weights_bytes in int8", lambda: el.attention_weights_bytes(512, dtype=np.int8), TypeError, ["dtype", "float"]),
    ("blockwise_attention with block 0", lambda: el.blockwise_attention(Q, Q, Q, block=0), ValueError, ["block", "at least 1"]),
    ("blockwise_attention with a float mask", lambda: el.blockwise_attention(Q, Q, Q, np.zeros(3)), TypeError, ["padding_mask", "boolean"]),
    ("blockwise_attention with q and k of different d_k", lambda: el.blockwise_attention(Q, np.ones((3, 5)), Q), ValueError, ["q and k", "d_k"]),
    ("BlockConfig with norm_kind 'batch'", lambda: el.BlockConfig(2, norm_kind="batch"), ValueError, ["norm_kind", "'layer' or 'rms'", "'batch'"]),
    ("BlockConfig with rope 'full'", lambda: el.BlockConfig(2, rope="full"), ValueError, ["rope", "'half' or 'interleaved'"]),
    ("BlockConfig with ffn 'glu'", lambda: el.BlockConfig(2, ffn="glu"), ValueError, ["ffn", "'plain' or 'gated'"]),
    ("BlockConfig with silu in a plain FFN", lambda: el.BlockConfig(2, activation="silu"), ValueError, ["activation", "'relu' or 'gelu'", "'silu'"]),
    ("BlockConfig with window 0", lambda: el.BlockConfig(2, window=0), ValueError, ["window", "at least 1"]),
    ("BlockConfig with bias 'no'", lambda: el.BlockConfig(2, bias="no"), TypeError, ["bias", "True or False"]),
    ("a modern block with rope and an odd head width", lambda: el.encoder_block(np.ones((3, 6), np.float32), PM, ML), ValueError, ["rotary", "6 / 2", "even"]),
    ("a modern block given biases it does not use", lambda: el.encoder_block(X, with_entry(PM, ("attn", "b_q"), np.zeros(8, np.float32)), ML), ValueError, ["params['attn']", "'b_q'", "bias=False"]),
    ("a modern block missing w_gate", lambda: el.encoder_block(X, with_entry(PM, ("ffn", "w_gate"), ...), ML), ValueError, ["params['ffn']", "'w_gate'"]),
    ("a bias-free norm given beta", lambda: el.encoder_block(X, with_entry(PM, ("norm2", "beta"), np.zeros(8, np.float32)), ML), ValueError, ["params['norm2']", "'beta'", "no beta"]),
    ("a peri-norm block without its norms after the sub-layers", lambda: el.encoder_block(X, P, PERI), ValueError, ["params", "norm1_out", "norm2_out"]),
    ("QK-norm without q_norm", lambda: el.encoder_block(X, with_entry(PQK, ("attn", "q_norm"), ...), QK), ValueError, ["params['attn']", "'q_norm'", "(4,)"]),
    ("QK-norm gamma over d_model, not d_head", lambda: el.encoder_block(X, with_entry(PQK, ("attn", "q_norm"), {"gamma": np.ones(8, np.float32), "beta": np.zeros(8, np.float32)}), QK), ValueError, ["q_norm", "(4,)", "(8,)"]),
    ("a stack with fewer configs than layers", lambda: el.encoder(X, [PM, PM], config=[ML]), ValueError, ["1 BlockConfigs", "2 blocks"]),
    ("a stack with a config that is not one", lambda: el.encoder(X, [PM], config=[ML, "pre"]), TypeError, ["config[1]", "BlockConfig"]),
    ("a stack with configs and a loose option", lambda: el.encoder(X, [PM], config=[ML], eps=1e-6), TypeError, ["config alone"]),
    ("modern_attention without a config", lambda: el.modern_attention(X, PM["attn"], 2), TypeError, ["config", "BlockConfig"]),
    ("modern_attention with params None", lambda: el.modern_attention(X, None, ML), TypeError, ["params", "None"]),
    ("local_global_configs with global_every 0", lambda: el.local_global_configs(ML, 4, global_every=0, window=8), ValueError, ["global_every", "at least 1"]),
    ("modernbert_configs of a list", lambda: el.modernbert_configs([1]), TypeError, ["config", "dict", "to_dict"]),
    ("modernbert_configs with mixed biases", lambda: el.modernbert_configs({"attention_bias": True, "global_rope_theta": 1.0, "local_rope_theta": 1.0}), ValueError, ["attention_bias", "mlp_bias", "differ"]),
    ("modernbert_configs without rope_theta", lambda: el.modernbert_configs({}), ValueError, ["rope_theta", "full_attention"]),
    ("from_modernbert_state_dict without Wqkv", lambda: el.from_modernbert_state_dict({}), ValueError, ["'attn.Wqkv.weight'", "missing"]),
    ("from_modernbert_state_dict of a list", lambda: el.from_modernbert_state_dict([1]), TypeError, ["state_dict", "mapping"]),
    ("to_modernbert_state_dict of a plain FFN", lambda: el.to_modernbert_state_dict(P), ValueError, ["params['ffn']", "w_in"]),
    ("init_block_params with a config 'pre'", lambda: el.init_block_params(8, 16, RNG, config="pre"), TypeError, ["config", "BlockConfig"]),
    ("rms_norm_grad with NaN", lambda: G.rms_norm_grad(X64, nan_at(X64)), ValueError, ["grad_out", "finite"]),
    ("rope_grad of an odd width", lambda: G.rope_grad(np.ones((3, 5))), ValueError, ["even"]),
    ("gated FFN grad of another shape", lambda: G.gated_feed_forward_grad(X, GATED, np.ones((2, 3, 4), np.float32)), ValueError, ["grad_out", "(2, 3, 8)"]),
    ("modern attention grad of float64", lambda: G.modern_attention_grad(X, PM["attn"], ML, X64), ValueError, ["grad_out"]),
    ("modern block grad with dropout", lambda: G.encoder_block_grad(X, PM, dataclasses.replace(ML, dropout=0.1, rng=RNG), X), ValueError, ["no dropout"]),
]


CASES = CASES + MORE + MODERN


@pytest.mark.parametrize("call, error, words", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_argument_is_named_in_a_clear_error(call, error, words):
    with pytest.raises(error) as info:
        call()
    message = str(info.value)
    missing = [w for w in words if w.lower() not in message.lower()]
    assert not missing, f"message {message!r} lacks {missing}"


def test_the_table_is_long_enough_and_names_each_case_once():
    assert len(CASES) >= 200
    assert len({c[0] for c in CASES}) == len(CASES)
