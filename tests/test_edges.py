"""Valid inputs at the edges: the right answer, in the input's dtype, never NaN, never a view of the input."""

import numpy as np
import pytest
from scipy.special import erf

import encoder_lib as el
from encoder_lib import grad as G

RNG = np.random.default_rng(0)


# ---------------------------------------------------------------- dtypes


def test_gelu_of_float16_is_float16_and_right():
    x = np.array([1.0, 2.0, -3.0], np.float16)
    out = el.gelu(x)
    assert out.dtype == np.float16
    np.testing.assert_allclose(out, [0.8413, 1.9545, -0.004], atol=2e-3)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_every_computation_keeps_its_dtype(dtype):
    x = RNG.standard_normal((2, 3, 8)).astype(dtype)
    p = el.init_block_params(8, 16, np.random.default_rng(1), dtype=dtype)
    mask = np.array([[False, False, True], [False, False, False]])
    results = [el.softmax(x), el.masked_softmax(x[..., :3], mask), el.relu(x), el.gelu(x), el.layer_norm(x),
               el.feed_forward(x, p["ffn"]), el.encoder_block(x, p, 2, padding_mask=mask),
               el.encoder(x, [p, p], 2, norm="pre"), el.mean_pool(x, mask), el.split_heads(x, 2),
               el.merge_heads(el.split_heads(x, 2)), el.positional_encoding(3, 8, dtype=dtype),
               *el.multi_head_attention(x, 2, p["attn"], mask), *el.scaled_dot_product_attention(x, x, x, mask),
               el.post_norm(x, lambda h: el.feed_forward(h, p["ffn"])), *G.layer_norm_grad(x, x),
               G.encoder_block_grad(x, p, 2, x)[0], *G.scaled_dot_product_attention_grad(x, x, x, x)]
    for out in results:
        assert out.dtype == dtype and np.isfinite(out).all()


def test_float16_that_does_not_fit_is_an_error_not_infinity():
    big = {"w1": np.full((4, 4), 10, np.float16), "b1": np.zeros(4, np.float16),
           "w2": np.full((4, 4), 10, np.float16), "b2": np.zeros(4, np.float16)}
    with pytest.raises(ValueError, match="does not fit in float16"):
        el.feed_forward(np.full((2, 4), 6e4, np.float16), big)  # 9.6e7 in float32


# ---------------------------------------------------------------- magnitudes


@pytest.mark.parametrize("row, dtype, expected", [
    ([1e20, -1e20, 1e20, -1e20], np.float32, [1, -1, 1, -1]),
    ([1e200, -1e200, 0], np.float64, [1.2247, -1.2247, 0]),
    ([3e38, 3e38, -3e38], np.float32, [0.7071, 0.7071, -1.4142]),
    ([1e-30, -1e-30, 0], np.float64, [0.0, 0.0, 0.0]),  # eps dominates a variance of 1e-60: about 0, not 1
])
def test_layer_norm_is_right_for_rows_of_any_finite_size(row, dtype, expected):
    out = el.layer_norm(np.array([row], dtype))
    assert out.dtype == dtype
    np.testing.assert_allclose(out[0], expected, atol=1e-4)


def test_layer_norm_grad_of_huge_rows_is_finite_and_sums_to_zero():
    x = np.array([[1e20, -1e20, 3e19, 0]], np.float32)
    g = RNG.standard_normal((1, 4)).astype(np.float32)
    grad_x, grad_gamma, grad_beta = G.layer_norm_grad(x, g)
    assert all(np.isfinite(a).all() for a in (grad_x, grad_gamma, grad_beta))
    np.testing.assert_allclose(grad_gamma, g[0] * el.layer_norm(x)[0], rtol=1e-5)  # one row: g * xhat
    np.testing.assert_array_equal(grad_beta, g[0])
    assert abs(float(grad_x.sum())) <= 1e-6 * float(np.abs(grad_x).max() + 1e-30)


def test_layer_norm_of_ordinary_rows_is_unchanged_by_the_large_row_path():
    x = RNG.standard_normal((4, 8))
    np.testing.assert_array_equal(el.layer_norm(x), (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5))


def test_softmax_of_scores_far_apart_is_one_hot_not_nan():
    np.testing.assert_array_equal(el.softmax(np.array([1e308, -1e308])), [1.0, 0.0])


def test_masked_softmax_gives_zeros_for_a_row_of_minus_infinity_without_a_mask():
    out = el.masked_softmax(np.array([[-np.inf, -np.inf], [0.0, 1.0]]))
    np.testing.assert_array_equal(out[0], [0.0, 0.0])
    np.testing.assert_allclose(out[1], el.softmax(np.array([0.0, 1.0])))


def test_mean_pool_of_the_largest_float32_does_not_overflow():
    out = el.mean_pool(np.full((1, 3, 2), 3e38, np.float32))
    np.testing.assert_allclose(out, 3e38, rtol=1e-6)


def test_gelu_of_large_inputs_is_zero_or_the_input():
    np.testing.assert_allclose(el.gelu(np.array([-1e300, 1e300])), [0.0, 1e300])
    np.testing.assert_allclose(el.gelu(np.array([0.5])), 0.5 * 0.5 * (1 + erf(0.5 / np.sqrt(2))))


# ---------------------------------------------------------------- views


def test_split_heads_returns_a_new_array():
    x = RNG.standard_normal((3, 8))
    heads = el.split_heads(x, 2)
    heads[...] = 0
    assert np.abs(x).sum() > 0


def test_a_trace_holds_a_copy_of_the_input():
    x = RNG.standard_normal((3, 8))
    p = el.init_block_params(8, 16, RNG, dtype=np.float64)
    trace = el.trace_encoder_block(x, p, 2)
    assert trace["input"] is not x and not np.shares_memory(trace["input"], x)


def test_merge_heads_of_one_head_is_not_a_view():
    x = RNG.standard_normal((1, 3, 4))
    assert not np.shares_memory(el.merge_heads(x), x)


def test_count_params_counts_a_shared_block_once_per_use_and_none_as_zero():
    p = el.init_block_params(4, 8, RNG)
    assert el.count_params([p, p, None]) == 2 * el.count_params(p)


def test_softmax_gives_a_score_of_minus_infinity_weight_zero():
    """Lesson 05's text sets padded keys' scores to -inf before the softmax: that must work."""
    out = el.softmax(np.array([[1.0, -np.inf, 1.0], [0.0, 0.0, -np.inf]]))
    np.testing.assert_allclose(out, [[0.5, 0.0, 0.5], [0.5, 0.5, 0.0]])
