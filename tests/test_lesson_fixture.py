"""The lesson's worked fixture (seq 3, d_model 4, 2 heads, d_ff 8) and its expected numbers."""

import numpy as np
import pytest

import encoder_lib as el
from encoder_lib import fixtures

DTYPES = [np.float32, np.float64]


@pytest.mark.parametrize("dtype", DTYPES)
def test_attention_rows_sum_to_one(dtype):
    _, weights = el.multi_head_attention(fixtures.lesson_input(dtype), fixtures.N_HEADS)
    assert weights.shape == (2, 3, 3)
    np.testing.assert_allclose(weights.sum(axis=-1), 1.0, atol=1e-6)
    assert (weights > 0).all()


@pytest.mark.parametrize("dtype", DTYPES)
def test_equal_keys_give_the_mean_of_the_values(dtype):
    out, weights = el.scaled_dot_product_attention(*fixtures.lesson_tie_case(dtype))
    np.testing.assert_allclose(out, [[7.0], [7.0]], atol=1e-6)
    np.testing.assert_allclose(weights, 0.5, atol=1e-6)


def test_head_one_reads_differently_from_head_zero():
    _, weights = el.multi_head_attention(fixtures.lesson_input(), fixtures.N_HEADS)
    assert not np.allclose(weights[0], weights[1])
    # head 0 and head 1 disagree already on query 0's weight for key 1
    assert abs(weights[0, 0, 1] - weights[1, 0, 1]) > 0.1


def test_each_head_uses_its_own_columns():
    x = fixtures.lesson_input()
    _, weights = el.multi_head_attention(x, fixtures.N_HEADS)
    for h in range(fixtures.N_HEADS):
        cols = x[:, h * 2 : (h + 1) * 2]
        _, expected = el.scaled_dot_product_attention(cols, cols, cols)
        np.testing.assert_allclose(weights[h], expected, atol=1e-12)


@pytest.mark.parametrize("dtype", DTYPES)
def test_ffn_on_the_lesson_row_matches_the_hand_worked_numbers(dtype):
    out = el.feed_forward(np.array(fixtures.FFN_ROW, dtype=dtype), fixtures.lesson_ffn_params(dtype))
    assert out.dtype == dtype
    np.testing.assert_allclose(out, fixtures.FFN_ROW_OUTPUT, atol=1e-6)


@pytest.mark.parametrize("dtype", DTYPES)
def test_post_norm_rows_have_mean_zero_and_unit_variance(dtype):
    out = el.encoder_block(fixtures.lesson_input(dtype), fixtures.lesson_block_params(dtype), fixtures.N_HEADS)
    np.testing.assert_allclose(out.mean(axis=-1), 0.0, atol=1e-5)
    np.testing.assert_allclose(out.var(axis=-1), 1.0, atol=1e-3)


def test_pre_norm_differs_from_post_norm_and_is_not_normalised():
    x, p = fixtures.lesson_input(), fixtures.lesson_block_params()
    post = el.encoder_block(x, p, fixtures.N_HEADS, norm="post")
    pre = el.encoder_block(x, p, fixtures.N_HEADS, norm="pre")
    assert np.isfinite(pre).all()
    assert np.abs(pre - post).max() > 0.1
    assert np.abs(pre.var(axis=-1) - 1.0).max() > 0.1


def test_identity_projections_spelled_out_give_the_same_block():
    x = fixtures.lesson_input()
    implicit = el.encoder_block(x, fixtures.lesson_block_params(), 2)
    explicit = el.encoder_block(x, fixtures.lesson_block_params(identity_attention=True), 2)
    np.testing.assert_array_equal(implicit, explicit)


def test_the_lesson_stack_example_keeps_its_shape():
    """Six pre-norm blocks, 8 heads, d_ff 2048 on a (4, 100, 512) input: a (4, 100, 512) output."""
    rng = np.random.default_rng(0)
    layers = [el.init_block_params(512, 2048, rng) for _ in range(6)]
    x = rng.standard_normal((4, 100, 512), dtype=np.float32)
    out = el.encoder(x, layers, n_heads=8, norm="pre")
    assert out.shape == (4, 100, 512)
    assert out.dtype == np.float32
    assert np.isfinite(out).all()


@pytest.mark.parametrize("norm", ["post", "pre"])
def test_the_block_is_two_add_and_norms(norm):
    """encoder_block = Add & Norm around attention, then Add & Norm around the FFN."""
    x, p = fixtures.lesson_input(), fixtures.lesson_block_params()
    add_norm = el.post_norm if norm == "post" else el.pre_norm
    h = add_norm(x, lambda y: el.multi_head_attention(y, 2)[0], p["norm1"]["gamma"], p["norm1"]["beta"])
    out = add_norm(h, lambda y: el.feed_forward(y, p["ffn"]), p["norm2"]["gamma"], p["norm2"]["beta"])
    np.testing.assert_allclose(out, el.encoder_block(x, p, 2, norm=norm), atol=1e-12)
