"""The Add & Norm widget (lesson 04): post-norm vs pre-norm, residual on or off, on the lesson's block."""

import re

import numpy as np
import pytest

import encoder_lib as el
from encoder_lib import fixtures
from encoder_lib.widgets import add_norm
from encoder_lib.widgets._controls import control_values
from widget_helpers import set_controls

READOUT = re.compile(r"row variances: (-?\d+\.\d{3}), (-?\d+\.\d{3}), (-?\d+\.\d{3})$")


@pytest.fixture(scope="module")
def explorer():
    return add_norm.AddNormExplorer()


def readout_variances(explorer):
    match = READOUT.search(explorer.readout.value)
    assert match, explorer.readout.value
    return [float(v) for v in match.groups()]


def test_controls_are_readable_placements_and_a_residual_switch(explorer):
    labels = [label for label, _ in explorer.controls["norm"].options]
    assert labels == ["post-norm", "pre-norm"]
    assert control_values(explorer.controls["norm"]) == ["post", "pre"]
    assert explorer.controls["residual"].value is True


def test_default_is_post_norm_with_unit_rows(explorer):
    fresh = add_norm.AddNormExplorer()
    assert fresh.state["norm"] == "post" and fresh.state["residual"] is True
    assert readout_variances(fresh) == [1.0, 1.0, 1.0]


@pytest.mark.parametrize("residual", [True, False])
def test_post_norm_rows_have_mean_zero_and_unit_variance(explorer, residual):
    state = set_controls(explorer, norm="post", residual=residual)
    assert state["max_abs_mean"] < 1e-6
    assert state["max_var_error"] < 1e-3  # eps inside the square root keeps it a hair under 1
    assert state["unit_rows"]
    assert readout_variances(explorer) == [1.0, 1.0, 1.0]


@pytest.mark.parametrize("residual", [True, False])
def test_pre_norm_rows_are_not_normalised(explorer, residual):
    state = set_controls(explorer, norm="pre", residual=residual)
    assert not state["unit_rows"]
    assert state["max_var_error"] > 0.5
    assert state["max_abs_mean"] > 0.1
    assert readout_variances(explorer) == pytest.approx(np.round(state["variances"], 3))


def test_pre_norm_with_residual_keeps_the_input_scale(explorer):
    # x + f(LN(x)): the input's large entries (2.0 in row 1) survive, so row 1's variance is above 3
    state = set_controls(explorer, norm="pre", residual=True)
    assert state["variances"][1] > 3
    assert readout_variances(explorer) == [2.730, 3.335, 0.964]


def test_shown_numbers_match_encoder_block(explorer):
    x, params = fixtures.lesson_input(), fixtures.lesson_block_params()
    for norm in ("post", "pre"):
        for residual in (True, False):
            set_controls(explorer, norm=norm, residual=residual)
            expected = el.encoder_block(x, params, 2, norm=norm, residual=residual)
            np.testing.assert_allclose(explorer.im.get_array(), expected)
            np.testing.assert_allclose(explorer.state["variances"], expected.var(axis=-1))
            heights = [bar.get_height() for bar in explorer.var_bars]
            np.testing.assert_allclose(heights, expected.var(axis=-1))
            np.testing.assert_allclose([bar.get_height() for bar in explorer.mean_bars], expected.mean(axis=-1))


def test_title_names_the_formula(explorer):
    set_controls(explorer, norm="pre", residual=True)
    assert explorer.ax_out.get_title() == "output = x + f(LN(x))"
    set_controls(explorer, norm="post", residual=False)
    assert explorer.ax_out.get_title() == "output = LN(f(x))"


def test_picture_changes_with_each_control(explorer):
    pictures = set()
    for norm in ("post", "pre"):
        for residual in (True, False):
            set_controls(explorer, norm=norm, residual=residual)
            pictures.add(bytes(explorer.image.value))
    assert len(pictures) == 4


def test_readout_never_shows_negative_zero(explorer):
    for norm in ("post", "pre"):
        for residual in (True, False):
            set_controls(explorer, norm=norm, residual=residual)
            assert "-0.000" not in explorer.readout.value
