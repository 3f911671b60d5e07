"""The feed-forward widget (lesson 03): hidden activations, and how many the activation silences."""

import numpy as np
import pytest

import encoder_lib as el
from encoder_lib.widgets import feed_forward as ffw
from encoder_lib.widgets._controls import control_values
from widget_helpers import set_controls


@pytest.fixture(scope="module")
def explorer():
    return ffw.FeedForwardExplorer()


def test_controls_offer_the_four_factors_and_both_activations(explorer):
    assert control_values(explorer.controls["factor"]) == [1, 2, 4, 8]
    assert control_values(explorer.controls["activation"]) == ["relu", "gelu"]


def test_default_shows_relu_at_factor_four_with_zeros(explorer):
    fresh = ffw.FeedForwardExplorer()
    assert fresh.state["activation"] == "relu" and fresh.state["d_ff"] == 64
    assert fresh.state["n_zero"] > 0


@pytest.mark.parametrize("factor", [1, 2, 4, 8])
def test_relu_silences_about_half_the_hidden_values(explorer, factor):
    state = set_controls(explorer, factor=factor, activation="relu")
    assert state["d_ff"] == factor * ffw.D_MODEL
    assert 0.35 < state["frac_zero"] < 0.65
    assert state["frac_negative"] == 0
    assert state["frac_zero"] + state["frac_positive"] == pytest.approx(1)
    assert "exactly 0" in explorer.readout.value and f"d_ff = {factor * ffw.D_MODEL}" in explorer.readout.value


@pytest.mark.parametrize("factor", [1, 2, 4, 8])
def test_gelu_silences_nothing_exactly_but_dips_below_zero(explorer, factor):
    relu_zero = set_controls(explorer, factor=factor, activation="relu")["frac_zero"]
    state = set_controls(explorer, factor=factor, activation="gelu")
    assert state["n_zero"] == 0 and state["frac_zero"] == 0
    # the values ReLU zeroes are exactly the ones GELU makes negative (same pre-activations)
    assert state["frac_negative"] == pytest.approx(relu_zero)
    assert state["frac_small"] < 0.05
    # GELU's minimum is about -0.17 (at x near -0.75)
    assert -0.171 < state["min"] < -0.15
    assert "0 of" in explorer.readout.value and "negative" in explorer.readout.value


def test_heatmap_width_follows_d_ff_and_masks_exact_zeros(explorer):
    for factor in (1, 8):
        set_controls(explorer, factor=factor, activation="relu")
        data = explorer.im.get_array()
        assert data.shape == (ffw.N_POSITIONS, factor * ffw.D_MODEL)
        assert np.ma.count_masked(data) == explorer.state["n_zero"]
        assert explorer.ax_heat.get_xlim() == (-0.5, factor * ffw.D_MODEL - 0.5)
    set_controls(explorer, factor=8, activation="gelu")
    assert np.ma.count_masked(explorer.im.get_array()) == 0


def test_bars_show_the_fractions(explorer):
    state = set_controls(explorer, factor=2, activation="relu")
    widths = [bar.get_width() for bar in explorer.bars]
    assert widths == pytest.approx([state["frac_zero"], 0.0, state["frac_positive"]])
    state = set_controls(explorer, factor=2, activation="gelu")
    widths = [bar.get_width() for bar in explorer.bars]
    assert widths == pytest.approx([0.0, state["frac_negative"], state["frac_positive"]])


def test_picture_changes_with_each_control(explorer):
    set_controls(explorer, factor=4, activation="relu")
    relu = bytes(explorer.image.value)
    set_controls(explorer, factor=4, activation="gelu")
    gelu = bytes(explorer.image.value)
    set_controls(explorer, factor=1, activation="gelu")
    small = bytes(explorer.image.value)
    assert relu[:8] == b"\x89PNG\r\n\x1a\n"
    assert len({relu, gelu, small}) == 3


def test_hidden_layer_is_the_ffn_hidden_layer_of_el():
    rng = np.random.default_rng(0)
    x = el.layer_norm(rng.standard_normal((ffw.N_POSITIONS, ffw.D_MODEL), dtype=np.float32))
    ffn = el.init_block_params(ffw.D_MODEL, ffw.D_MODEL, rng)["ffn"]
    hidden = ffw.hidden_activations()
    np.testing.assert_allclose(hidden[1, "relu"], el.relu(x @ ffn["w1"] + ffn["b1"]), atol=1e-6)
    # the FFN's output from these hidden values is el.feed_forward's
    np.testing.assert_allclose(hidden[1, "gelu"] @ ffn["w2"] + ffn["b2"],
                               el.feed_forward(x, ffn, activation="gelu"), atol=1e-5)
