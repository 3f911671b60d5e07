"""Properties that hold for every input, checked on random shapes with hypothesis."""

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import encoder_lib as el
from encoder_lib.params import off_defaults

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def configs(draw):
    """A small random encoder: batch axes, seq, d_model, heads, d_ff, dtype, placement, activation."""
    n_heads = draw(st.sampled_from([1, 2, 4]))
    d_model = n_heads * draw(st.integers(1, 4))
    return {
        "lead": tuple(draw(st.lists(st.integers(1, 3), max_size=2))),
        "seq": draw(st.integers(1, 7)),
        "d_model": d_model,
        "n_heads": n_heads,
        "d_ff": draw(st.integers(1, 12)),
        "dtype": draw(st.sampled_from([np.float32, np.float64])),
        "norm": draw(st.sampled_from(["post", "pre"])),
        "activation": draw(st.sampled_from(["relu", "gelu"])),
        "n_layers": draw(st.integers(1, 3)),
        "seed": draw(st.integers(0, 2**16)),
    }


def build(c):
    rng = np.random.default_rng(c["seed"])
    layers = [el.init_block_params(c["d_model"], c["d_ff"], rng, dtype=c["dtype"]) for _ in range(c["n_layers"])]
    off_defaults(layers, rng)  # non-trivial norms and biases, so the tests do not rely on gamma 1, beta 0
    x = rng.standard_normal(c["lead"] + (c["seq"], c["d_model"])).astype(c["dtype"])
    return rng, x, layers


def run(c, x, layers, **kw):
    return el.encoder(x, layers, c["n_heads"], norm=c["norm"], activation=c["activation"], **kw)


def tolerance(dtype):
    return 2e-5 if dtype == np.float32 else 1e-11


@SETTINGS
@given(configs())
def test_block_and_stack_preserve_shape_and_dtype(c):
    _, x, layers = build(c)
    one = el.encoder_block(x, layers[0], c["n_heads"], norm=c["norm"], activation=c["activation"])
    out = run(c, x, layers)
    assert one.shape == out.shape == x.shape
    assert one.dtype == out.dtype == x.dtype


@SETTINGS
@given(configs(), st.data())
def test_attention_rows_are_distributions(c, data):
    rng, x, layers = build(c)
    mask = rng.random(c["lead"] + (c["seq"],)) < data.draw(st.sampled_from([0.0, 0.4, 1.0]))
    _, weights = el.multi_head_attention(x, c["n_heads"], layers[0]["attn"], padding_mask=mask)
    assert weights.shape == c["lead"] + (c["n_heads"], c["seq"], c["seq"])
    assert (weights >= 0).all()
    sums = weights.sum(axis=-1)
    all_padded = mask.all(axis=-1)[..., None, None]  # a sequence with no real key: weights all zero
    np.testing.assert_allclose(sums, np.broadcast_to(np.where(all_padded, 0.0, 1.0), sums.shape), atol=tolerance(c["dtype"]) * 10)
    padded_keys = np.broadcast_to(mask[..., None, None, :], weights.shape)
    assert (weights[padded_keys] == 0).all()


@SETTINGS
@given(configs())
def test_without_positional_encoding_the_encoder_is_permutation_equivariant(c):
    rng, x, layers = build(c)
    perm = rng.permutation(c["seq"])
    out = run(c, x, layers)
    out_of_shuffled = run(c, x[..., perm, :], layers)
    np.testing.assert_allclose(out_of_shuffled, out[..., perm, :], atol=tolerance(c["dtype"]))


@SETTINGS
@given(configs())
def test_values_at_padded_positions_do_not_reach_real_positions(c):
    rng, x, layers = build(c)
    mask = rng.random(c["lead"] + (c["seq"],)) < 0.4
    other = np.where(mask[..., None], rng.standard_normal(x.shape) * 10, x).astype(c["dtype"])
    out = run(c, x, layers, padding_mask=mask)
    out_other = run(c, other, layers, padding_mask=mask)
    assert np.isfinite(out).all()
    np.testing.assert_allclose(out_other[~mask], out[~mask], atol=tolerance(c["dtype"]))


@SETTINGS
@given(
    st.integers(1, 5), st.integers(2, 16),
    st.floats(-100, 100), st.floats(0.01, 100),
    st.sampled_from([np.float32, np.float64]), st.integers(0, 2**16),
)
def test_layer_norm_ignores_shifting_and_positively_scaling_a_row(seq, d, shift, scale, dtype, seed):
    x = np.random.default_rng(seed).standard_normal((seq, d)).astype(dtype)
    # the property holds while eps is negligible next to every row's variance
    assume(((x * scale).var(axis=-1) > 1e-3).all())
    base = el.layer_norm(x, eps=1e-12)
    moved = el.layer_norm((x * dtype(scale) + dtype(shift)).astype(dtype), eps=1e-12)
    np.testing.assert_allclose(moved, base, atol=5e-3 if dtype == np.float32 else 1e-8)


@SETTINGS
@given(configs())
def test_batch_elements_are_independent(c):
    rng, x, layers = build(c)
    x = x.reshape((-1, c["seq"], c["d_model"]))
    together = run(c, x, layers)
    for i in range(x.shape[0]):
        alone = run(c, x[i], layers)
        np.testing.assert_allclose(alone, together[i], atol=tolerance(c["dtype"]))


@SETTINGS
@given(st.integers(1, 6), st.integers(1, 6), st.integers(0, 2**16))
def test_softmax_is_stable_and_shift_invariant(rows, cols, seed):
    x = np.random.default_rng(seed).standard_normal((rows, cols)) * 300
    p = el.softmax(x)
    assert np.isfinite(p).all()
    np.testing.assert_allclose(p.sum(axis=-1), 1.0, atol=1e-12)
    np.testing.assert_allclose(el.softmax(x + 1000.0), p, atol=1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_fully_padded_sequence_gets_zero_weights_and_no_nan(dtype):
    rng = np.random.default_rng(1)
    p = el.init_block_params(8, 16, rng, dtype=dtype)
    x = rng.standard_normal((2, 4, 8)).astype(dtype)
    mask = np.array([[False, False, True, True], [True, True, True, True]])
    trace = el.trace_encoder_block(x, p, 2, padding_mask=mask)
    assert all(np.isfinite(v).all() for v in trace.values())
    assert (trace["attn_weights"][1] == 0).all()
    np.testing.assert_allclose(trace["attn_out"][1], np.broadcast_to(p["attn"]["b_o"], (4, 8)), atol=1e-6)


# ---------------------------------------------------------------- the encoder since 2017 (lesson 09)


@SETTINGS
@given(st.integers(1, 9), st.integers(1, 4), st.integers(-50, 50), st.sampled_from(["half", "interleaved"]),
       st.sampled_from([10000.0, 160000.0, 7.0]), st.integers(0, 2**16))
def test_rope_scores_depend_only_on_the_distance(seq, pairs, shift, layout, base, seed):
    rng = np.random.default_rng(seed)
    q, k = rng.standard_normal((2, seq, 2 * pairs))
    positions = rng.integers(-100, 100, seq)

    def scores(moved):
        return el.rope(q, base, layout, positions + moved) @ el.rope(k, base, layout, positions + moved).T

    np.testing.assert_allclose(scores(shift), scores(0), rtol=1e-10, atol=1e-10)  # every position moved alike
    same_rows = el.rope(np.tile(q[:1], (seq, 1)), base, layout) @ el.rope(np.tile(k[:1], (seq, 1)), base, layout).T
    for d in range(-seq + 1, seq):  # one query and one key at every position: the score is a function of i - j
        np.testing.assert_allclose(np.diag(same_rows, d), np.diag(same_rows, d)[0], rtol=1e-10, atol=1e-10)


@SETTINGS
@given(st.integers(2, 8), st.integers(2, 5), st.integers(0, 2**16))
def test_the_two_rope_layouts_differ_but_are_one_reordering_apart(seq, pairs, seed):
    rng = np.random.default_rng(seed)
    q, k = rng.standard_normal((2, seq, 2 * pairs))
    half = el.rope(q, layout="half") @ el.rope(k, layout="half").T
    interleaved = el.rope(q, layout="interleaved") @ el.rope(k, layout="interleaved").T
    assert not np.allclose(half, interleaved)  # the same weights: other columns turn together, at other speeds
    order = el.rope_pairs(2 * pairs, "half").ravel()
    reordered = el.rope(q[:, order], layout="interleaved") @ el.rope(k[:, order], layout="interleaved").T
    np.testing.assert_allclose(reordered, half, rtol=1e-10, atol=1e-10)


@SETTINGS
@given(st.integers(-40, 40), st.integers(1, 8), st.integers(0, 60))
def test_a_shift_of_the_sinusoidal_encoding_is_one_rotation_for_every_position(offset, pairs, first):
    pe = el.positional_encoding(first + 100, 2 * pairs, dtype=np.float64)
    r = el.shift_rotation(offset, 2 * pairs, dtype=np.float64)
    np.testing.assert_allclose(r @ r.T, np.eye(2 * pairs), atol=1e-12)  # a rotation
    i = np.arange(max(first, -offset), first + 100 - max(offset, 0))
    np.testing.assert_allclose(pe[i] @ r.T, pe[i + offset], atol=1e-9)


@SETTINGS
@given(configs(), st.integers(1, 9), st.data())
def test_blockwise_attention_equals_attention_for_any_block_and_mask(c, block, data):
    rng, x, _ = build(c)
    mask = rng.random(c["lead"] + (c["seq"],)) < data.draw(st.sampled_from([0.0, 0.4, 1.0]))
    expected, _ = el.scaled_dot_product_attention(x, x[..., ::-1], x, mask)
    got = el.blockwise_attention(x, x[..., ::-1], x, mask, block=block)
    assert got.dtype == x.dtype
    np.testing.assert_allclose(got, expected, rtol=tolerance(c["dtype"]), atol=tolerance(c["dtype"]))


@SETTINGS
@given(st.integers(1, 12), st.integers(1, 30))
def test_the_local_window_keeps_each_query_and_its_neighbours(seq, window):
    mask = el.local_window_mask(seq, window)
    assert not mask.diagonal().any() and (mask == mask.T).all()
    i, j = np.indices((seq, seq))
    np.testing.assert_array_equal(mask, np.abs(i - j) > window // 2)
    assert el.causal_mask(seq).sum() == seq * (seq - 1) // 2


@SETTINGS
@given(st.integers(1, 16), st.integers(1, 40))
def test_a_gated_ffn_of_two_thirds_the_width_has_the_plain_ffns_weights(d_model, third):
    rng = np.random.default_rng(0)
    plain = el.init_block_params(d_model, 3 * third, rng, config=el.BlockConfig(1, norm="pre", bias=False))["ffn"]
    gated = el.init_block_params(d_model, el.gated_d_ff(3 * third), rng,
                                 config=el.BlockConfig(1, norm="pre", bias=False, ffn="gated", activation="silu"))["ffn"]
    assert el.count_params(plain) == el.count_params(gated) == 6 * d_model * third


@SETTINGS
@given(st.integers(1, 5), st.integers(2, 9), st.integers(0, 2**16))
def test_rms_norm_is_layer_norm_on_rows_of_mean_zero(seq, d, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((seq, d))
    x -= x.mean(axis=-1, keepdims=True)
    gamma = rng.uniform(0.5, 1.5, d)
    np.testing.assert_allclose(el.rms_norm(x, gamma), el.layer_norm(x, gamma), rtol=1e-12, atol=1e-12)
    assert not np.allclose(el.rms_norm(x + 1.0, gamma), el.layer_norm(x + 1.0, gamma))  # the mean matters to rms


@SETTINGS
@given(configs(), st.sampled_from(["pre", "peri"]), st.integers(1, 6))
def test_a_modern_stack_keeps_padded_values_from_real_positions(c, norm, window):
    assume(c["seq"] >= 2 and (c["d_model"] // c["n_heads"]) % 2 == 0)
    config = el.BlockConfig(c["n_heads"], norm=norm, norm_kind="rms", bias=False, ffn="gated", activation="silu",
                            rope="half", window=window, qk_norm=True)
    configs_ = el.local_global_configs(config, c["n_layers"], global_every=2, window=window)
    rng, x, _ = build(c)
    layers = [off_defaults(el.init_block_params(c["d_model"], c["d_ff"], rng, c["dtype"], config=one), rng)
              for one in configs_]
    mask = np.zeros(c["lead"] + (c["seq"],), dtype=bool)
    mask[..., -1] = True
    changed = x.copy()
    changed[..., -1, :] = rng.standard_normal(changed[..., -1, :].shape)
    out, out_changed = (el.encoder(a, layers, config=configs_, padding_mask=mask) for a in (x, changed))
    np.testing.assert_allclose(out[..., :-1, :], out_changed[..., :-1, :], rtol=tolerance(c["dtype"]),
                               atol=tolerance(c["dtype"]))
