"""Lesson 01's widget: the weights it shows for each setting of its controls."""


import numpy as np
import pytest

import encoder_lib as el
from encoder_lib.widgets import attention
from widget_helpers import pixels, set_controls


@pytest.fixture
def explorer():
    return attention.attention_explorer()


def test_default_view_has_scaling_on_and_spread_weights(explorer):
    state = explorer.state
    assert (state["d_k"], state["scale"], state["temperature"], state["query"]) == (64, True, 1.0, 0)
    assert state["max_weight"] < 0.5
    assert state["entropy"] > 1.0
    assert sum(state["row"]) == pytest.approx(1.0)


@pytest.mark.parametrize(("d_k", "least_median_max"), [(64, 0.9), (256, 0.99)])
def test_scaling_off_with_large_d_k_puts_nearly_all_weight_on_one_key(explorer, d_k, least_median_max):
    set_controls(explorer, d_k=d_k, scale=False)
    maxima, entropies = [], []
    for query in range(explorer.seq):
        state = set_controls(explorer, query=query)
        maxima.append(state["max_weight"])
        entropies.append(state["entropy"])
    assert np.median(maxima) > least_median_max
    assert np.median(entropies) < 0.25
    assert explorer.state["mean_max_weight"] > 0.9


@pytest.mark.parametrize("d_k", attention.D_K_OPTIONS)
def test_scaling_on_keeps_the_weights_spread_for_every_d_k(explorer, d_k):
    state = set_controls(explorer, d_k=d_k, scale=True)
    assert state["mean_max_weight"] < 0.6
    assert 0.5 < state["score_std"] < 2.0


def test_unscaled_scores_spread_like_sqrt_d_k(explorer):
    spreads = {d_k: set_controls(explorer, scale=False, d_k=d_k)["score_std"] for d_k in attention.D_K_OPTIONS}
    for d_k, spread in spreads.items():
        assert 0.6 < spread / np.sqrt(d_k) < 1.5
    assert spreads[256] > 6 * spreads[4]


def test_saturation_grows_with_d_k_when_scaling_is_off(explorer):
    means = [set_controls(explorer, scale=False, d_k=d_k)["mean_max_weight"] for d_k in attention.D_K_OPTIONS]
    assert means == sorted(means)
    assert means[0] < 0.5 < 0.9 < means[-1]


def test_higher_temperature_spreads_the_weights_and_lower_sharpens_them(explorer):
    states = [set_controls(explorer, temperature=t) for t in (0.25, 1.0, 4.0)]
    entropies = [s["entropy"] for s in states]
    assert entropies[0] < entropies[1] < entropies[2]
    assert entropies[2] > 0.95 * states[2]["uniform_entropy"]
    assert states[0]["max_weight"] > 2 * states[1]["max_weight"]
    assert states[1]["max_weight"] > states[2]["max_weight"]


def test_shown_row_is_softmax_of_scaled_scores_from_the_library(explorer):
    state = set_controls(explorer, d_k=16, query=3, temperature=2.0, scale=True)
    q, k = explorer.data[16]
    expected = el.softmax(q @ k.T / (np.sqrt(16) * 2.0))[3]
    np.testing.assert_allclose(state["row"], expected, atol=1e-12)
    state = set_controls(explorer, scale=False)
    np.testing.assert_allclose(state["row"], el.softmax(q @ k.T / 2.0)[3], atol=1e-12)
    assert state["argmax_key"] == int(np.argmax(expected))


def test_bars_and_heatmap_show_the_state(explorer):
    state = set_controls(explorer, query=4, d_k=4)
    heights = [bar.get_height() for bar in explorer.bars]
    np.testing.assert_allclose(heights, state["row"])
    shown = np.asarray(explorer.weights_map.get_array())
    np.testing.assert_allclose(shown[4], state["row"])
    np.testing.assert_allclose(shown.sum(axis=1), 1.0)
    assert explorer.row_box.get_y() == pytest.approx(3.5)


def test_redrawn_picture_matches_a_fresh_full_draw(explorer):
    set_controls(explorer, d_k=256, scale=False, query=3, temperature=0.5)
    fresh = attention.AttentionExplorer(d_k=256, scale=False, query=3, temperature=0.5)
    assert np.abs(pixels(explorer) - pixels(fresh)).mean() < 1.0
    assert explorer.state == fresh.state


def test_readout_reports_the_max_weight_and_entropy(explorer):
    state = set_controls(explorer, d_k=256, scale=False)
    assert f"{state['max_weight']:.3f}" in explorer.readout.value
    assert f"{state['entropy']:.2f}" in explorer.readout.value
