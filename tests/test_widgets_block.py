"""The lesson 05 widgets: the block step by step, padding, and shuffled tokens."""

import re

import numpy as np
import pytest
from widget_helpers import set_controls

import encoder_lib as el
from encoder_lib.experiments import block as lesson
from encoder_lib.widgets import block
from encoder_lib.widgets._controls import control_values


# --- (a) the block, step by step ----------------------------------------------------------

@pytest.fixture(scope="module")
def steps():
    return block.BlockStepExplorer()


def step_of(norm, name):
    return [key for key, _ in lesson.STEPS[norm]].index(name)


def test_steps_are_listed_in_the_order_each_placement_computes_them():
    assert [k for k, _ in lesson.STEPS["post"]] == [
        "input", "attn_out", "sum1", "norm1", "ffn_hidden", "ffn_out", "sum2", "norm2"]
    assert [k for k, _ in lesson.STEPS["pre"]] == [
        "input", "norm1", "attn_out", "sum1", "norm2", "ffn_hidden", "ffn_out", "sum2"]


def test_the_step_slider_covers_every_step_and_the_toggle_both_placements(steps):
    assert control_values(steps.controls["step"]) == list(range(8))
    assert control_values(steps.controls["norm"]) == ["post", "pre"]


def test_default_is_post_norm_norm1_with_unit_rows():
    state = block.BlockStepExplorer().state
    assert (state["norm"], state["name"]) == ("post", "norm1")
    assert abs(state["min_row_std"] - 1) < 1e-3 and abs(state["max_row_std"] - 1) < 1e-3


@pytest.mark.parametrize("norm", ["post", "pre"])
def test_the_heatmap_shows_the_chosen_intermediate_with_a_symmetric_colour_range(steps, norm):
    for step, (name, _) in enumerate(lesson.STEPS[norm]):
        state = set_controls(steps, norm=norm, step=step)
        shown = np.asarray(steps.map_image.get_array())
        expected = steps.traces[norm][name]
        np.testing.assert_array_equal(shown, expected)
        low, high = steps.map_image.get_clim()
        assert low == -high == pytest.approx(-np.abs(expected).max())
        assert state["shape"] == str(expected.shape)
        np.testing.assert_allclose(steps.std_dots.get_xdata(), expected.std(axis=-1), rtol=1e-6)


@pytest.mark.parametrize("norm, name", [("post", "norm1"), ("post", "norm2"), ("pre", "norm1"), ("pre", "norm2")])
def test_rows_have_mean_0_and_std_1_right_after_each_layer_norm(steps, norm, name):
    state = set_controls(steps, norm=norm, step=step_of(norm, name))
    assert state["max_abs_row_mean"] < 1e-5
    assert 1 - 1e-3 < state["min_row_std"] <= state["max_row_std"] < 1 + 1e-3
    assert re.search(r"row stds 1\.00 to 1\.00", steps.readout.value), steps.readout.value


@pytest.mark.parametrize("name", ["sum1", "sum2"])
def test_rows_are_not_normalised_at_the_residual_sums(steps, name):
    state = set_controls(steps, norm="pre", step=step_of("pre", name))
    assert state["max_row_std"] - state["min_row_std"] > 0.3
    assert state["max_abs_row_mean"] > 0.3


def test_pre_norm_output_is_larger_than_its_input_and_post_norm_output_is_not(steps):
    pre_sum1 = set_controls(steps, norm="pre", step=step_of("pre", "sum1"))["rms"]
    pre_out = set_controls(steps, norm="pre", step=7)
    assert pre_out["name"] == "sum2"
    assert pre_out["rms"] > pre_sum1 > pre_out["input_rms"] + 0.05  # the scale grows at each residual sum
    post_out = set_controls(steps, norm="post", step=7)
    assert post_out["name"] == "norm2" and abs(post_out["rms"] - 1) < 1e-3


@pytest.mark.parametrize("norm", ["post", "pre"])
def test_ffn_hidden_step_is_d_ff_wide_and_never_negative(steps, norm):
    state = set_controls(steps, norm=norm, step=step_of(norm, "ffn_hidden"))
    assert (state["rows"], state["cols"]) == (lesson.SEQ, lesson.D_FF)
    assert steps.ax_map.get_xlim() == (-0.5, lesson.D_FF - 0.5)
    assert np.asarray(steps.map_image.get_array()).min() >= 0  # after the ReLU
    back = set_controls(steps, step=0)
    assert back["cols"] == lesson.D_MODEL and steps.ax_map.get_xlim() == (-0.5, lesson.D_MODEL - 0.5)


def test_the_last_step_is_the_blocks_output(steps):
    params, x = lesson.toy_block()
    for norm in ("post", "pre"):
        set_controls(steps, norm=norm, step=7)
        np.testing.assert_allclose(steps.map_image.get_array(),
                                   el.encoder_block(x, params, lesson.N_HEADS, norm=norm), atol=1e-6)


def test_moving_the_step_changes_the_picture(steps):
    pictures = set()
    for step in range(8):
        set_controls(steps, norm="post", step=step)
        pictures.add(steps.image.value)
    assert len(pictures) == 8


# --- (b) padding ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def padding():
    return block.PaddingExplorer()


def test_padding_slider_runs_from_none_to_five(padding):
    assert control_values(padding.controls["n_pad"]) == [0, 1, 2, 3, 4, 5]
    assert padding.controls["use_mask"].value is True


@pytest.mark.parametrize("n_pad", range(6))
def test_with_the_mask_real_outputs_do_not_move_and_padding_gets_no_weight(padding, n_pad):
    state = set_controls(padding, use_mask=True, n_pad=n_pad)
    assert state["seq"] == lesson.REAL + n_pad
    assert state["max_change"] < 1e-6  # float32; the same real tokens alone are the reference
    assert state["max_weight_on_padding"] == 0.0


@pytest.mark.parametrize("n_pad", range(1, 6))
def test_without_the_mask_padding_junk_moves_the_real_outputs(padding, n_pad):
    state = set_controls(padding, use_mask=False, n_pad=n_pad)
    assert state["max_change"] > 0.1
    assert state["max_weight_on_padding"] > 0.01


def test_padded_key_columns_are_zero_in_the_weights_heatmap_for_every_query(padding):
    set_controls(padding, use_mask=True, n_pad=4)
    shown = np.ma.filled(np.ma.asarray(padding.w_image.get_array()), np.nan)
    seq = lesson.REAL + 4
    assert np.all(shown[:seq, lesson.REAL:seq] == 0)
    np.testing.assert_allclose(shown[:seq, :seq].sum(axis=-1), 1, atol=1e-6)
    assert np.isnan(shown[seq:]).all() and np.isnan(shown[:, seq:]).all()  # slots not in this sequence


def test_padding_slots_hold_different_junk_in_every_setting(padding):
    slot = lesson.REAL  # the first padding slot exists for n_pad >= 1
    junk = [padding.inputs[n][slot] for n in range(1, 6)]
    for a, b in zip(junk, junk[1:]):
        assert np.abs(a - b).max() > 0.5
    np.testing.assert_array_equal(padding.inputs[1][: lesson.REAL], padding.inputs[5][: lesson.REAL])


def test_the_real_tokens_picture_stays_still_while_the_weights_picture_changes(padding):
    outputs, pictures = [], set()
    for n_pad in range(6):
        set_controls(padding, use_mask=True, n_pad=n_pad)
        outputs.append(np.asarray(padding.out_image.get_array()).copy())
        pictures.add(padding.image.value)
    for out in outputs[1:]:
        np.testing.assert_allclose(out, outputs[0], atol=1e-6)
    assert len(pictures) == 6
    assert "pad" in [t.get_text() for t in padding.ax_w.get_xticklabels()]


def test_in_float64_the_real_outputs_do_not_move_at_all():
    explorer = block.PaddingExplorer(dtype=np.float64)
    changes = [set_controls(explorer, use_mask=True, n_pad=n)["max_change"] for n in range(6)]
    assert max(changes) < 1e-12


# --- (c) shuffled tokens ------------------------------------------------------------------

@pytest.fixture(scope="module")
def shuffles():
    return block.PermutationExplorer()


def test_shuffles_are_distinct_and_not_the_identity():
    perms = lesson.permutations()
    assert np.array_equal(perms[0], np.arange(lesson.SEQ))
    assert len({tuple(p) for p in perms}) == len(perms) == lesson.N_SHUFFLES + 1


def test_default_shows_a_shuffle_without_positional_encoding():
    state = block.PermutationExplorer().state
    assert state["shuffle"] == 1 and state["use_pe"] is False and state["equivariant"]


@pytest.mark.parametrize("shuffle", [1, 2, 3])
def test_without_positional_encoding_the_block_is_permutation_equivariant(shuffles, shuffle):
    state = set_controls(shuffles, use_pe=False, shuffle=shuffle)
    assert state["max_difference"] < 1e-5 and state["equivariant"]
    assert "cannot tell the order" in shuffles.readout.value


@pytest.mark.parametrize("shuffle", [1, 2, 3])
def test_with_positional_encoding_shuffling_changes_the_outputs(shuffles, shuffle):
    state = set_controls(shuffles, use_pe=True, shuffle=shuffle)
    assert state["max_difference"] > 0.1 and not state["equivariant"]
    assert not np.allclose(shuffles.a_image.get_array(), shuffles.b_image.get_array(), atol=1e-3)


@pytest.mark.parametrize("use_pe", [False, True])
def test_the_original_order_compares_a_run_with_itself(shuffles, use_pe):
    assert set_controls(shuffles, use_pe=use_pe, shuffle=0)["max_difference"] == 0.0


def test_rows_are_labelled_by_the_token_that_sits_there(shuffles):
    state = set_controls(shuffles, use_pe=False, shuffle=2)
    labels = [t.get_text() for t in shuffles.axes[0].get_yticklabels()]
    assert labels == [f"tok {i}" for i in lesson.permutations()[2]]
    assert state["order"] == " ".join(str(i) for i in lesson.permutations()[2])


# --- all three: the quick redraw paints the same picture as a full draw ------------------

@pytest.mark.parametrize("builder", block.EXPLORERS, ids=lambda b: b.__name__)
def test_quick_redraws_paint_what_a_full_draw_paints(builder):
    """Only ``dynamic_artists()`` are repainted on a change: anything else that changes would go stale."""
    explorer = builder()
    names = list(explorer.controls)
    for name in names:
        for value in control_values(explorer.controls[name]):
            explorer.controls[name].value = value
            quick = np.asarray(explorer.figure.canvas.buffer_rgba()).astype(int)
            changing = explorer.dynamic_artists()
            for artist in changing:
                artist.set_animated(False)
            explorer.figure.canvas.draw()
            full = np.asarray(explorer.figure.canvas.buffer_rgba()).astype(int)
            for artist in changing:
                artist.set_animated(True)
            differing = np.abs(quick - full).max(axis=-1) > 16  # antialiasing where a tick meets the frame
            assert differing.sum() == 0, f"{name}={value!r}: {differing.sum()} pixels differ from a full draw"


def test_the_padding_widget_quotes_its_changes_as_the_lesson_s_text_does():
    """Lesson 05's answer says the outputs move "by 0.8289 to 2.1534 for 1 to 5 slots" without the mask, and that with
    it the change is 0 at four decimals: the widget's readout and picture say the same numbers, not 2.2e+00."""
    import nbformat

    from tools.course import ROOT

    text = " ".join(c.source for c in nbformat.read(ROOT / "notebooks/05_encoder_block/05_encoder_block.ipynb",
                                                    as_version=4).cells if c.cell_type == "markdown")
    quoted = re.search(r"by (\d\.\d{4}) to (\d\.\d{4}) for 1 to 5 slots", text)
    assert quoted, "lesson 05 quotes the changes without the mask"
    explorer = block.PaddingExplorer()
    said = {}
    for n_pad in range(1, 6):
        for use_mask in (True, False):
            state = set_controls(explorer, n_pad=n_pad, use_mask=use_mask)
            said[n_pad, use_mask] = re.search(r"at most <b>([^<]+)</b> from", explorer.describe(state)).group(1)
            assert said[n_pad, use_mask] in explorer.ax_out.get_title()
    changes = [float(said[n, False]) for n in range(1, 6)]
    assert (f"{min(changes):.4f}", f"{max(changes):.4f}") == quoted.groups()
    assert all(said[n, True] == "0" or float(said[n, True]) < 1e-4 for n in range(1, 6))
    assert block.amount(2.15339) == "2.1534" and block.amount(3.6e-7) == "3.6e-07" and block.amount(0.0) == "0"
