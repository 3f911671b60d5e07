"""The backward passes of encoder_lib.grad, against finite differences and against PyTorch autograd.

- Finite differences: every gradient of every part (softmax, attention with a
  padding mask, multi-head attention, the FFN with ReLU and GELU, layer norm,
  the block in both placements, with and without residuals, and the stack)
  against central differences in float64. Each array's error is measured
  relative to the largest gradient of the same call, so that a gradient that
  is exactly zero in theory (the key bias: adding a constant to every score of
  a row changes no softmax) is checked too. Bound: 1e-6.
- PyTorch (``@pytest.mark.torch``): ``nn.TransformerEncoderLayer`` and
  ``nn.TransformerEncoder`` in float64 with the same weights, a padding mask,
  and ``loss = sum(out * grad_out)``; every gradient agrees to 1e-10.
"""

import numpy as np
import pytest

import encoder_lib as el
from encoder_lib import grad as G
from encoder_lib.params import flat_arrays, off_defaults

FD_STEP = 1e-5
FD_BOUND = 1e-6
TORCH_BOUND = 1e-10


# ---------------------------------------------------------------- helpers


def numeric_grad(f, arr):
    """Central differences of the scalar ``f()`` for each entry of ``arr``."""
    out = np.zeros_like(arr)
    for i in np.ndindex(arr.shape):
        out[i] = G.central_difference(f, arr, i, FD_STEP)
    return out


def assert_grads_match(f, inputs, analytic, bound=FD_BOUND):
    """Each array in ``inputs`` (name -> array used by ``f``) against its ``analytic`` gradient."""
    assert set(inputs) == set(analytic), f"gradients for {sorted(analytic)}, expected {sorted(inputs)}"
    numeric = {name: numeric_grad(f, arr) for name, arr in inputs.items()}
    scale = max(np.abs(g).max() for g in numeric.values())
    assert scale > 1e-3, "the test's loss is flat: pick other weights"
    for name, num in numeric.items():
        ana = analytic[name]
        assert ana.shape == num.shape and ana.dtype == num.dtype, f"{name}: {ana.shape} {ana.dtype}"
        error = np.abs(ana - num).max() / max(np.abs(num).max(), scale * 1e-3)
        assert error < bound, f"{name}: relative error {error:.2e} (bound {bound:g})"


def block_params(rng, d_model, d_ff, attn=True):
    """Float64 block params with every bias, gamma and beta away from its default."""
    p = off_defaults(el.init_block_params(d_model, d_ff, rng, dtype=np.float64), rng)
    if not attn:
        p["attn"] = None
    return p


MASK = np.array([[False] * 5, [False] * 3 + [True] * 2])  # sequence 1 has two padded positions


# ---------------------------------------------------------------- the parts


def test_softmax_grad_against_finite_differences():
    rng = np.random.default_rng(0)
    scores, g = rng.standard_normal((3, 6)), rng.standard_normal((3, 6))
    analytic = G.softmax_grad(el.softmax(scores), g)
    assert_grads_match(lambda: (el.softmax(scores) * g).sum(), {"scores": scores}, {"scores": analytic})


@pytest.mark.parametrize("masked", [False, True], ids=["nomask", "mask"])
def test_scaled_dot_product_attention_grad_against_finite_differences(masked):
    rng = np.random.default_rng(1)
    q, k, v = rng.standard_normal((2, 5, 4)), rng.standard_normal((2, 5, 4)), rng.standard_normal((2, 5, 3))
    g = rng.standard_normal((2, 5, 3))
    mask = MASK if masked else None
    grads = G.scaled_dot_product_attention_grad(q, k, v, g, mask)
    assert_grads_match(lambda: (el.scaled_dot_product_attention(q, k, v, mask)[0] * g).sum(),
                       {"q": q, "k": k, "v": v}, dict(zip("qkv", grads)))
    if masked:  # nobody reads a padded key: no gradient reaches its key or value
        assert (grads[1][1, 3:] == 0).all() and (grads[2][1, 3:] == 0).all()


def test_attention_grad_sums_over_broadcast_batch_axes():
    """k and v shared by every batch element (batch axis 1, or none) get the sum of the elements' gradients."""
    rng = np.random.default_rng(11)
    q, k, v = rng.standard_normal((3, 5, 4)), rng.standard_normal((1, 5, 4)), rng.standard_normal((5, 2))
    g = rng.standard_normal((3, 5, 2))
    grads = G.scaled_dot_product_attention_grad(q, k, v, g)
    assert [a.shape for a in grads] == [q.shape, k.shape, v.shape]
    assert_grads_match(lambda: (el.scaled_dot_product_attention(q, k, v)[0] * g).sum(),
                       {"q": q, "k": k, "v": v}, dict(zip("qkv", grads)))


@pytest.mark.parametrize("with_params", [True, False], ids=["projections", "identity"])
def test_multi_head_attention_grad_against_finite_differences(with_params):
    rng = np.random.default_rng(2)
    x, g = rng.standard_normal((2, 5, 8)), rng.standard_normal((2, 5, 8))
    params = block_params(rng, 8, 12)["attn"] if with_params else None
    grad_x, grad_p = G.multi_head_attention_grad(x, 2, g, params, MASK)
    inputs = {"x": x, **flat_arrays(params)}
    analytic = {"x": grad_x, **flat_arrays(grad_p)}
    assert_grads_match(lambda: (el.multi_head_attention(x, 2, params, MASK)[0] * g).sum(), inputs, analytic)


@pytest.mark.parametrize("activation", ["relu", "gelu"])
def test_feed_forward_grad_against_finite_differences(activation):
    rng = np.random.default_rng(3)
    x, g = rng.standard_normal((2, 5, 8)), rng.standard_normal((2, 5, 8))
    params = block_params(rng, 8, 12)["ffn"]
    grad_x, grad_p = G.feed_forward_grad(x, params, g, activation)
    assert list(grad_p) == ["w1", "b1", "w2", "b2"]
    assert_grads_match(lambda: (el.feed_forward(x, params, activation) * g).sum(),
                       {"x": x, **params}, {"x": grad_x, **grad_p})


def test_layer_norm_grad_against_finite_differences():
    rng = np.random.default_rng(4)
    x, g = rng.standard_normal((2, 5, 8)), rng.standard_normal((2, 5, 8))
    gamma, beta = rng.uniform(0.5, 1.5, 8), rng.uniform(-0.5, 0.5, 8)
    grad_x, grad_gamma, grad_beta = G.layer_norm_grad(x, g, gamma, beta)
    assert_grads_match(lambda: (el.layer_norm(x, gamma, beta) * g).sum(),
                       {"x": x, "gamma": gamma, "beta": beta},
                       {"x": grad_x, "gamma": grad_gamma, "beta": grad_beta})
    # a row's output does not change when the row shifts by a constant: its gradient sums to 0
    np.testing.assert_allclose(grad_x.sum(axis=-1), 0, atol=1e-12)


# ---------------------------------------------------------------- the block and the stack


@pytest.mark.parametrize("residual", [True, False], ids=["residual", "noresidual"])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
@pytest.mark.parametrize("norm", ["post", "pre"])
def test_encoder_block_grad_against_finite_differences(norm, activation, residual):
    rng = np.random.default_rng(5)
    x, g = rng.standard_normal((2, 5, 8)), rng.standard_normal((2, 5, 8))
    params = block_params(rng, 8, 12)
    options = {"norm": norm, "padding_mask": MASK, "activation": activation, "residual": residual}
    grad_x, grad_p = G.encoder_block_grad(x, params, 2, g, **options)
    assert flat_arrays(grad_p).keys() == flat_arrays(params).keys()
    assert_grads_match(lambda: (el.encoder_block(x, params, 2, **options) * g).sum(),
                       {"x": x, **flat_arrays(params)}, {"x": grad_x, **flat_arrays(grad_p)})


@pytest.mark.parametrize("norm", ["post", "pre"])
def test_encoder_block_grad_with_identity_attention(norm):
    rng = np.random.default_rng(6)
    x, g = rng.standard_normal((5, 8)), rng.standard_normal((5, 8))
    params = block_params(rng, 8, 12, attn=False)
    grad_x, grad_p = G.encoder_block_grad(x, params, 2, g, norm=norm)
    assert grad_p["attn"] is None
    assert_grads_match(lambda: (el.encoder_block(x, params, 2, norm=norm) * g).sum(),
                       {"x": x, **flat_arrays(params)}, {"x": grad_x, **flat_arrays(grad_p)})


@pytest.mark.parametrize("norm", ["post", "pre"])
def test_encoder_grad_against_finite_differences(norm):
    rng = np.random.default_rng(7)
    x, g = rng.standard_normal((2, 5, 8)), rng.standard_normal((2, 5, 8))
    layers = [block_params(rng, 8, 10) for _ in range(3)]
    options = {"norm": norm, "padding_mask": MASK, "activation": "gelu", "eps": 1e-6}
    grad_x, grad_layers, grad_inputs = G.encoder_grad(x, layers, 4, g, keep_layer_grads=True, **options)
    assert len(grad_layers) == len(grad_inputs) == 3 and grad_inputs[0] is grad_x
    assert_grads_match(lambda: (el.encoder(x, layers, 4, **options) * g).sum(),
                       {"x": x, **flat_arrays(layers)}, {"x": grad_x, **flat_arrays(grad_layers)})
    # the gradient for block i's input is block i-1's output gradient: the chain rule, block by block
    for i in (1, 2):
        _, block_grads = G.encoder_block_grad(el.encoder(x, layers[:i], 4, **options), layers[i], 4,
                                              grad_inputs[i + 1] if i < 2 else g, **options)
        np.testing.assert_allclose(flat_arrays(block_grads)["ffn/w1"], flat_arrays(grad_layers[i])["ffn/w1"], rtol=1e-12)


def test_float32_in_float32_out():
    rng = np.random.default_rng(8)
    params = el.init_block_params(8, 12, rng)
    x = rng.standard_normal((2, 5, 8), dtype=np.float32)
    grad_x, grad_p = G.encoder_block_grad(x, params, 2, np.ones_like(x), activation="gelu")
    assert grad_x.dtype == np.float32
    assert {a.dtype for a in flat_arrays(grad_p).values()} == {np.dtype(np.float32)}


# ---------------------------------------------------------------- bad input


@pytest.mark.parametrize("grad_out, message", [
    (np.ones((2, 5, 7)), r"grad_out .* must have shape \(2, 5, 8\), got \(2, 5, 7\)"),
    (np.ones((2, 5, 8), dtype=np.float32), r"grad_out .* is float32 but the input is float64"),
    (None, r"grad_out .* must be an array of floats, got None"),
])
def test_a_wrong_grad_out_is_named(grad_out, message):
    rng = np.random.default_rng(9)
    params = block_params(rng, 8, 12)
    with pytest.raises((ValueError, TypeError), match=message):
        G.encoder_block_grad(rng.standard_normal((2, 5, 8)), params, 2, grad_out)


def test_encoder_grad_checks_layers_like_encoder():
    with pytest.raises(ValueError, match="layers must hold at least one block"):
        G.encoder_grad(np.ones((2, 8)), [], 2, np.ones((2, 8)))


# ---------------------------------------------------------------- PyTorch autograd


def torch_grads(torch, torch_reference, module, x, mask, grad_out):
    """PyTorch's gradients of ``sum(module(x) * grad_out)``: for x, and per layer in encoder_lib's layout."""
    xt = torch.from_numpy(x.copy()).requires_grad_(True)
    module.zero_grad()
    module.requires_grad_(True)
    with torch.enable_grad():
        out = module(xt, src_key_padding_mask=None if mask is None else torch.from_numpy(mask))
        (out * torch.from_numpy(grad_out)).sum().backward()
    layers = []
    for layer in torch_reference.layer_modules(module):
        grads = {name: p.grad.numpy() for name, p in layer.named_parameters()}
        layers.append(el.from_torch_state_dict(grads))
    return xt.grad.numpy(), layers


def assert_close(actual, expected, what):
    error = np.abs(actual - expected) / np.maximum(1.0, np.abs(expected))
    assert error.max() < TORCH_BOUND, f"{what}: error {error.max():.2e} (bound {TORCH_BOUND:g})"


@pytest.mark.torch
@pytest.mark.parametrize("n_layers", [1, 3], ids=["block", "stack3"])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
@pytest.mark.parametrize("norm", ["post", "pre"])
def test_gradients_match_torch_autograd(torch, torch_reference, norm, activation, n_layers):
    rng = np.random.default_rng(10)
    d_model, d_ff, n_heads = 12, 20, 3
    state_dicts = [torch_reference.random_state_dict(rng, d_model, d_ff) for _ in range(n_layers)]
    module = torch_reference.build_module(norm, activation, state_dicts, n_heads, np.float64)
    layers = [el.from_torch_state_dict(sd) for sd in state_dicts]
    x = rng.standard_normal((3, 6, d_model))
    mask = np.array([[False] * 6, [False] * 4 + [True] * 2, [False] + [True] * 5])
    g = rng.standard_normal(x.shape)
    expected_x, expected_layers = torch_grads(torch, torch_reference, module, x, mask, g)
    options = {"norm": norm, "padding_mask": mask, "activation": activation}
    if n_layers == 1:
        grad_x, grad_p = G.encoder_block_grad(x, layers[0], n_heads, g, **options)
        grad_layers = [grad_p]
    else:
        grad_x, grad_layers = G.encoder_grad(x, layers, n_heads, g, **options)
    assert_close(grad_x, expected_x, "grad_x")
    for i, (ours, theirs) in enumerate(zip(grad_layers, expected_layers, strict=True)):
        for name, value in flat_arrays(theirs).items():
            assert_close(flat_arrays(ours)[name], value, f"layer {i} {name}")


# ---------------------------------------------------------------- the encoder since 2017 (lesson 09)


def modern_params(rng, config, d_model=8, d_ff=12):
    """Float64 params for a modern config, every gamma, beta and bias off its default."""
    return off_defaults(el.init_block_params(d_model, d_ff, rng, np.float64, config=config), rng)


def test_rms_norm_grad_against_finite_differences():
    rng = np.random.default_rng(20)
    x, g, gamma = rng.standard_normal((2, 5, 8)), rng.standard_normal((2, 5, 8)), rng.uniform(0.5, 1.5, 8)
    grad_x, grad_gamma = G.rms_norm_grad(x, g, gamma)
    assert_grads_match(lambda: (el.rms_norm(x, gamma) * g).sum(), {"x": x, "gamma": gamma},
                       {"x": grad_x, "gamma": grad_gamma})


@pytest.mark.parametrize("layout", ["half", "interleaved"])
def test_rope_grad_against_finite_differences(layout):
    rng = np.random.default_rng(21)
    x, g = rng.standard_normal((2, 3, 7, 6)), rng.standard_normal((2, 3, 7, 6))
    positions = rng.integers(0, 50, 7)
    analytic = G.rope_grad(g, base=100.0, layout=layout, positions=positions)
    assert_grads_match(lambda: (el.rope(x, 100.0, layout, positions) * g).sum(), {"x": x}, {"x": analytic})


@pytest.mark.parametrize("bias", [True, False], ids=["bias", "nobias"])
@pytest.mark.parametrize("activation", ["gelu", "silu", "relu"])
def test_gated_feed_forward_grad_against_finite_differences(activation, bias):
    rng = np.random.default_rng(22)
    x, g = rng.standard_normal((2, 5, 8)), rng.standard_normal((2, 5, 8))
    params = modern_params(rng, el.BlockConfig(2, ffn="gated", activation=activation, bias=bias))["ffn"]
    grad_x, grad_p = G.gated_feed_forward_grad(x, params, g, activation)
    assert list(grad_p) == list(params)
    assert_grads_match(lambda: (el.gated_feed_forward(x, params, activation) * g).sum(),
                       {"x": x, **params}, {"x": grad_x, **grad_p})


MODERN_ATTENTION = [
    el.BlockConfig(2, norm="pre", bias=False, rope="half", window=2),
    el.BlockConfig(2, norm="pre", norm_kind="rms", bias=False, rope="half", qk_norm=True),
    el.BlockConfig(2, norm="pre", bias=True, rope="interleaved", qk_norm=True, window=3),
]


@pytest.mark.parametrize("config", MODERN_ATTENTION, ids=["rope-window", "rope-rms-qknorm", "interleaved-qknorm-bias"])
def test_modern_attention_grad_against_finite_differences(config):
    rng = np.random.default_rng(23)
    x, g = rng.standard_normal((2, 5, 8)), rng.standard_normal((2, 5, 8))
    params = modern_params(rng, config)["attn"]
    grad_x, grad_p = G.modern_attention_grad(x, params, config, g, MASK)
    assert flat_arrays(grad_p).keys() == flat_arrays(params).keys()
    assert_grads_match(lambda: (el.modern_attention(x, params, config, MASK)[0] * g).sum(),
                       {"x": x, **flat_arrays(params)}, {"x": grad_x, **flat_arrays(grad_p)})


MODERN_BLOCKS = {
    "modernbert": el.BlockConfig(2, norm="pre", activation="gelu", bias=False, ffn="gated", rope="half", window=2),
    "peri-rms-swiglu": el.BlockConfig(2, norm="peri", norm_kind="rms", activation="silu", ffn="gated",
                                      rope="interleaved", qk_norm=True),
    "peri-original-parts": el.BlockConfig(2, norm="peri", activation="gelu"),
    "post-rms-nobias-noresidual": el.BlockConfig(2, norm="post", norm_kind="rms", bias=False, residual=False),
}


@pytest.mark.parametrize("name", MODERN_BLOCKS)
def test_modern_block_grad_against_finite_differences(name):
    config, rng = MODERN_BLOCKS[name], np.random.default_rng(24)
    x, g = rng.standard_normal((2, 5, 8)), rng.standard_normal((2, 5, 8))
    params = modern_params(rng, config)
    if name == "modernbert":
        params["norm1"] = None  # ModernBERT's layer 0: no norm in front of its attention
    grad_x, grad_p = G.encoder_block_grad(x, params, config, g, padding_mask=MASK)
    assert flat_arrays(grad_p).keys() == flat_arrays(params).keys()
    assert_grads_match(lambda: (el.encoder_block(x, params, config, padding_mask=MASK) * g).sum(),
                       {"x": x, **flat_arrays(params)}, {"x": grad_x, **flat_arrays(grad_p)})


def test_modern_stack_grad_with_local_and_global_layers_against_finite_differences():
    rng = np.random.default_rng(25)
    configs = el.local_global_configs(MODERN_BLOCKS["modernbert"], 3, global_every=2, window=2, local_rope_base=50.0)
    x, g = rng.standard_normal((2, 5, 8)), rng.standard_normal((2, 5, 8))
    layers = [modern_params(rng, c, d_ff=6) for c in configs]
    layers[0]["norm1"] = None
    grad_x, grad_layers = G.encoder_grad(x, layers, config=configs, grad_out=g, padding_mask=MASK)
    assert_grads_match(lambda: (el.encoder(x, layers, config=configs, padding_mask=MASK) * g).sum(),
                       {"x": x, **flat_arrays(layers)}, {"x": grad_x, **flat_arrays(grad_layers)})


@pytest.mark.parametrize("block", [1, 2, 5])
def test_blockwise_attention_grad_against_finite_differences_and_the_full_gradient(block):
    rng = np.random.default_rng(26)
    q, k, v = rng.standard_normal((2, 5, 4)), rng.standard_normal((2, 5, 4)), rng.standard_normal((2, 5, 3))
    g, mask = rng.standard_normal((2, 5, 3)), np.array([[False] * 5, [True] * 5])  # one sequence all padding
    grads = G.blockwise_attention_grad(q, k, v, g, mask, block=block)
    assert_grads_match(lambda: (el.blockwise_attention(q, k, v, mask, block=block) * g).sum(),
                       {"q": q, "k": k, "v": v}, dict(zip("qkv", grads)))
    for ours, full in zip(grads, G.scaled_dot_product_attention_grad(q, k, v, g, mask)):
        np.testing.assert_allclose(ours, full, rtol=1e-12, atol=1e-14)
