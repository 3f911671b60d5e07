"""The lesson 06 widget: the residual stream's scale through 1 to 24 blocks, pre-norm vs post-norm."""

import numpy as np
import pytest
from widget_helpers import faint, highlighted, set_controls

import encoder_lib as el
from encoder_lib.experiments import rms
from encoder_lib.experiments import stack as lesson
from encoder_lib.widgets import stack
from encoder_lib.widgets._controls import control_values


@pytest.fixture(scope="module")
def explorer():
    return stack.StackScaleExplorer()


def test_controls_are_depth_1_to_24_and_both_placements(explorer):
    controls = explorer.controls
    assert (controls["depth"].min, controls["depth"].max, controls["depth"].value) == (1, 24, 12)
    assert control_values(controls["norm"]) == ["pre", "post"]


def test_axes_say_what_is_plotted(explorer):
    assert explorer.ax.get_ylabel() == "RMS of the residual stream"
    assert explorer.ax.get_xlabel() == "layer"


@pytest.mark.parametrize("depth", [1, 6, 12, 24])
def test_post_norm_stays_at_1_after_every_layer(explorer, depth):
    state = set_controls(explorer, norm="post", depth=depth)
    assert abs(state["rms_post"] - 1) < 1e-4  # a hair under 1: eps sits inside the square root
    assert state["rms_selected"] == state["rms_post"]


def test_pre_norm_grows_with_depth(explorer):
    scale = [set_controls(explorer, norm="pre", depth=d)["rms_pre"] for d in (1, 6, 12, 24)]
    assert scale == sorted(scale) and scale[0] < scale[-1]
    assert scale[-1] > 2 * explorer.scale["pre"][0]  # more than twice the input's RMS after 24 blocks
    assert set_controls(explorer, depth=24)["growth_pre"] > 2


def test_the_slider_shows_the_first_depth_layers_of_the_precomputed_curves(explorer):
    for depth in (1, 7, 24):
        set_controls(explorer, norm="pre", depth=depth)
        for norm, line in explorer.lines.items():
            np.testing.assert_array_equal(line.get_xdata(), np.arange(depth + 1))
            np.testing.assert_array_equal(line.get_ydata(), explorer.scale[norm][: depth + 1])
        assert explorer.ax.get_xlim()[1] > depth


def test_the_chosen_placement_is_highlighted_and_the_other_faint(explorer):
    for chosen, other in (("pre", "post"), ("post", "pre")):
        set_controls(explorer, norm=chosen)
        assert highlighted(explorer.lines[chosen])
        assert faint(explorer.lines[other])
        assert explorer.lines[chosen].get_linewidth() > explorer.lines[other].get_linewidth()


def test_redraws_reuse_the_traces_instead_of_running_the_stack(explorer, monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("a redraw ran the stack again")

    monkeypatch.setattr(el, "trace_encoder", refuse)
    monkeypatch.setattr(el, "encoder", refuse)
    pictures = set()
    for depth in (3, 17):
        for norm in ("pre", "post"):
            set_controls(explorer, depth=depth, norm=norm)
            pictures.add(explorer.image.value)
    assert len(pictures) == 4


def test_the_curves_match_running_the_blocks_one_by_one():
    layers, x = lesson.toy_stack(depth=4)
    for norm in ("pre", "post"):
        h, expected = x, [rms(x)]
        for params in layers:
            h = el.encoder_block(h, params, lesson.N_HEADS, norm=norm)
            expected.append(rms(h))
        np.testing.assert_allclose(lesson.residual_scale(x, layers, lesson.N_HEADS, norm), expected, rtol=1e-6)


def test_each_layer_has_its_own_parameters():
    layers, _ = lesson.toy_stack(depth=3)
    assert not np.array_equal(layers[0]["attn"]["w_q"], layers[1]["attn"]["w_q"])
    assert not np.array_equal(layers[1]["ffn"]["w1"], layers[2]["ffn"]["w1"])
