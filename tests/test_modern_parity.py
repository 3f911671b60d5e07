"""Lesson 09's parts against references nobody here wrote: Hugging Face ModernBERT built from its configuration with
random weights, LLaMA's and GPT-J's pieces, PyTorch's RMSNorm and scaled_dot_product_attention.

Each part and each ModernBERT layer (layer 0, global with no attention norm; a local one; a global one) and the
whole model agree to 1e-6 in float32 and 1e-12 in float64 (relative where an entry is above 1). What the references
are, and why float64 runs ModernBERT with sdpa and float64 rotary tables, is in ``tests/modern_reference.py``;
``benchmarks/bench_parity.py`` prints the same comparisons as a table. Without torch and transformers (installed by
``.ci/install``) these tests skip locally and fail in CI.
"""

import functools

import numpy as np
import pytest

import encoder_lib as el
from conftest import require
from tests import modern_reference as M

pytestmark = pytest.mark.torch
DTYPES = [np.float32, np.float64]


@pytest.fixture(scope="module")
def transformers(torch):
    return require("transformers", "install it with `.ci/install` (transformers==5.24.0) to compare against "
                                   "Hugging Face's ModernBERT")


@functools.lru_cache(maxsize=2)
def references(torch, transformers, dtype):
    return M.References(torch, transformers, dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=["float32", "float64"])
@pytest.mark.parametrize("part", list(M.PARTS))
def test_each_part_matches_its_reference(torch, transformers, part, dtype):
    function, reference = M.PARTS[part]
    ours, theirs = function(references(torch, transformers, dtype))
    assert ours.dtype == np.dtype(dtype), f"{part}: encoder_lib returned {ours.dtype} for {np.dtype(dtype)}"
    err, tolerance = M.error(ours, theirs), M.TOLERANCE[np.dtype(dtype)]
    assert err <= tolerance, f"{part} differs from {reference} by {err:.3g} (tolerance {tolerance:g})"


def test_the_configs_read_from_modernbert_are_its_layers(torch, transformers):
    r = references(torch, transformers, np.float32)
    assert r.config.layer_types == ["full_attention", "sliding_attention", "sliding_attention", "full_attention"]
    assert [c.window for c in r.configs] == [None, M.LOCAL_ATTENTION, M.LOCAL_ATTENTION, None]
    assert [c.rope_base for c in r.configs] == [160000.0, 10000.0, 10000.0, 160000.0]  # the config's default_theta
    assert {(c.norm, c.norm_kind, c.bias, c.ffn, c.activation, c.rope) for c in r.configs} == {
        ("pre", "layer", False, "gated", "gelu", "half")}
    assert r.layers[0]["norm1"] is None and r.layers[1]["norm1"] is not None  # layer 0's attn_norm is nn.Identity
    assert r.model.layers[1].attn.sliding_window == M.LOCAL_ATTENTION // 2 + 1  # flash attention's inclusive +1


def test_the_modernbert_state_dict_round_trip_is_exact(torch, transformers):
    r = references(torch, transformers, np.float64)
    for i, params in enumerate(r.layers):
        back = el.to_modernbert_state_dict(params, f"layers.{i}.")
        mine = {key: value for key, value in r.state.items() if key.startswith(f"layers.{i}.")}
        assert set(back) == set(mine), i
        assert all(np.array_equal(back[key], mine[key]) for key in mine), i


def test_our_params_load_into_a_modernbert_layer(torch, transformers):
    """The other way: encoder_lib's own random params, loaded into a ModernBERT layer, give the same output."""
    r = references(torch, transformers, np.float64)
    params = el.init_block_params(M.D_MODEL, M.D_FF, np.random.default_rng(3), np.float64, config=r.configs[1])
    params = el.params.off_defaults(params, np.random.default_rng(4))
    layer = transformers.models.modernbert.modeling_modernbert.ModernBertEncoderLayer(r.config, 1).to(torch.float64)
    layer.load_state_dict({k: torch.from_numpy(v) for k, v in el.to_modernbert_state_dict(params).items()})
    theirs = r.run(layer.eval(), r.tensor(r.x), attention_mask=r.mask("sliding_attention"),
                   position_embeddings=r.rope_tables("sliding_attention"))
    ours = el.encoder_block(r.x, params, config=r.configs[1], padding_mask=r.padding)
    assert M.error(ours, theirs) <= 1e-12


def test_the_local_window_is_modernberts_sliding_window_mask(torch, transformers):
    r = references(torch, transformers, np.float64)  # sdpa: a boolean mask, True = attend
    theirs = r.mask("sliding_attention", np.zeros_like(r.padding))[0, 0].numpy()
    np.testing.assert_array_equal(el.local_window_mask(M.SEQ, M.LOCAL_ATTENTION), ~theirs)


def test_the_causal_mask_is_pytorchs(torch):
    theirs = torch.nn.Transformer.generate_square_subsequent_mask(7).numpy()  # -inf above the diagonal
    np.testing.assert_array_equal(el.causal_mask(7), np.isneginf(theirs))


def test_the_mask_conventions_are_what_each_library_does(torch, transformers):
    """Key 2 of 4 masked with True (or 0 for Hugging Face): which libraries then leave it out, as the table says."""
    rng = np.random.default_rng(0)
    q = torch.from_numpy(rng.standard_normal((1, 4, 8)))
    marked = torch.tensor([[False, False, True, False]])
    mha = torch.nn.MultiheadAttention(8, 1, batch_first=True, dtype=torch.float64).eval()
    with torch.no_grad():
        _, weights = mha(q, q, q, key_padding_mask=marked)
        left_out_by_mha = bool((weights[0, :, 2] == 0).all())
        sdpa_weights = torch.nn.functional.scaled_dot_product_attention(
            q, q, torch.eye(4, dtype=torch.float64)[None], attn_mask=marked[:, None, :])  # v = I: the weights
        kept_only_by_sdpa = bool((sdpa_weights[0, :, [0, 1, 3]] == 0).all())
    hf = transformers.masking_utils.create_bidirectional_mask(
        config=M.hf_config(transformers, "sdpa"), inputs_embeds=q.float(), attention_mask=(~marked).long())
    rows = {row["where"]: row["true_means"] for row in el.mask_conventions()}
    assert left_out_by_mha and rows["PyTorch nn.MultiheadAttention, nn.TransformerEncoderLayer"].startswith("left out")
    assert kept_only_by_sdpa and rows["PyTorch F.scaled_dot_product_attention"].startswith("kept")
    assert not bool(hf[0, 0, :, 2].any()) and rows["Hugging Face transformers"].startswith("kept: '1")
    out, weights = el.scaled_dot_product_attention(q.numpy(), q.numpy(), q.numpy(), marked.numpy())
    assert (weights[0, :, 2] == 0).all() and rows["this course (encoder_lib)"].startswith("left out")


def test_modernberts_own_float32_rotary_is_why_float64_uses_float64_tables(torch, transformers):
    """Without the float64 tables, ModernBERT's float32 angles would fail the float64 tolerance: the patch matters."""
    assert 1e-9 < M.modernbert_own_rope_error(torch, transformers) < 1e-5


@pytest.mark.parametrize("i, layer_type", [(0, "full_attention"), (1, "sliding_attention")], ids=["layer0", "layer1"])
def test_the_modern_block_grad_matches_modernbert_autograd(torch, transformers, i, layer_type):
    """encoder_block_grad against PyTorch's autograd through a ModernBERT layer, float64: every gradient to 1e-10."""
    r = references(torch, transformers, np.float64)
    layer, g = r.model.layers[i], np.random.default_rng(5).standard_normal(r.x.shape)
    x = r.tensor(r.x.copy()).requires_grad_(True)
    layer.zero_grad()
    with torch.enable_grad(), r.float64_rope():
        out = layer(x, attention_mask=r.mask(layer_type), position_embeddings=r.rope_tables(layer_type))
        (out * r.tensor(g)).sum().backward()
    theirs = el.from_modernbert_state_dict({name: p.grad.numpy() for name, p in layer.named_parameters()})
    grad_x, ours = el.grad.encoder_block_grad(r.x, r.layers[i], r.configs[i], g, padding_mask=r.padding)
    assert M.error(grad_x, x.grad.numpy()) < 1e-10
    flat_ours, flat_theirs = el.params.flat_arrays(ours), el.params.flat_arrays(theirs)
    assert flat_ours.keys() == flat_theirs.keys()
    for name, value in flat_theirs.items():
        assert M.error(flat_ours[name], value) < 1e-10, name


def test_the_blockwise_attention_grad_matches_pytorch_autograd(torch):
    rng = np.random.default_rng(6)
    q, k, v, g = rng.standard_normal((4, 2, 3, 9, 8))
    padding = rng.random((2, 3, 9)) < 0.3
    padding[..., 0] = False  # every query keeps a key: PyTorch gives NaN for a row that has none
    tensors = [torch.from_numpy(a.copy()).requires_grad_(True) for a in (q, k, v)]
    with torch.enable_grad():
        out = torch.nn.functional.scaled_dot_product_attention(*tensors, attn_mask=torch.from_numpy(~padding[..., None, :]))
        (out * torch.from_numpy(g)).sum().backward()
    for ours, theirs in zip(el.grad.blockwise_attention_grad(q, k, v, g, padding, block=4), tensors):
        assert M.error(ours, theirs.grad.numpy()) < 1e-12
