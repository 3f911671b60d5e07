"""Lesson 09's widgets and experiments: RMSNorm, rotary positions, gated FFNs, the three placements, attention's
memory and local windows; and its questions, whose keys a planted change to an experiment moves."""

import numpy as np
import pytest
from widget_helpers import faint, highlighted, set_controls

import encoder_lib as el
from encoder_lib import questions
from encoder_lib.experiments import modern as lesson
from encoder_lib.widgets import modern


@pytest.fixture(scope="module")
def norms():
    return modern.NormExplorer()


@pytest.fixture(scope="module")
def rope():
    return modern.RopeExplorer()


def test_rms_norm_keeps_the_rows_mean_where_layer_norm_takes_it_out(norms):
    for offset in lesson.OFFSETS:
        state = set_controls(norms, offset=offset, norm="rms")
        assert state["layer_mean"] < 1e-12
        np.testing.assert_allclose(state["rms_mean"], offset / np.sqrt(1 + offset ** 2), atol=1e-5)  # eps 1e-5
        np.testing.assert_allclose([state["rms_rms"], state["layer_rms"]], 1, atol=1e-5)
    assert set_controls(norms, offset=0.0)["difference"] < 1e-12


def test_the_chosen_norm_is_bold_and_its_rows_are_the_heatmap(norms):
    state = set_controls(norms, offset=2.0, norm="layer")
    assert highlighted(norms.lines["layer"]) and faint(norms.lines["rms"])
    np.testing.assert_array_equal(norms.map_image.get_array(), el.layer_norm(norms.rows + 2.0))
    assert "layer norm" in norms.map_image.axes.get_title() and state["norm"] == "layer"


def test_a_rotary_score_depends_on_i_minus_j_only_and_on_the_layout(rope):
    for layout in lesson.LAYOUTS:
        scores = lesson.rope_scores(layout)
        _, _, spread = lesson.by_offset(scores)
        assert spread.max() < 1e-12
        np.testing.assert_allclose(lesson.rope_scores(layout, shift=24), scores, atol=1e-12)
    state = set_controls(rope, layout="half", shift=8)
    assert state["layout_difference"] > 0.1 and state["diagonal_spread"] < 1e-12 and state["shift_change"] < 1e-12


def test_rotary_scores_are_the_library_s_rope_of_q_and_k(rope):
    q, k = lesson.rope_contents()
    positions = np.arange(8, 8 + lesson.SEQ)
    turned = [el.rope(np.tile(v, (lesson.SEQ, 1)), layout="interleaved", positions=positions) for v in (q, k)]
    np.testing.assert_allclose(lesson.rope_scores("interleaved", shift=8), turned[0] @ turned[1].T / np.sqrt(8))


def test_four_ffns_hold_one_number_of_weights_and_the_gated_ones_take_either_sign():
    explorer = modern.GatedFFNExplorer()
    states = {kind: set_controls(explorer, kind=kind) for kind in modern.FFN_NAMES}
    assert {s["weights"] for s in states.values()} == {2 * lesson.D_FFN * lesson.PLAIN_D_FF}
    assert states["relu"]["width"] == 48 and states["swiglu"]["width"] == el.gated_d_ff(48) == 32
    assert states["relu"]["lowest"] == 0 and 0.3 < states["relu"]["zero_share"] < 0.7
    assert -0.18 < states["gelu"]["lowest"] < 0 and states["gelu"]["zero_share"] == 0
    assert states["geglu"]["lowest"] < -0.3 and states["swiglu"]["lowest"] < -0.3


def test_the_placements_gradients_are_lesson_07_s_setting():
    table = lesson.placement_gradients()
    assert set(table) == {"post", "pre", "peri"} and table["peri"].shape == (24, 24)
    from encoder_lib.training import gradient_norms_by_depth

    direct = np.mean([gradient_norms_by_depth(3, "peri", True, seed=s)[2]["params"] for s in range(3)], axis=0)
    np.testing.assert_allclose(table["peri"][2, :3], direct, rtol=1e-10)
    explorer = modern.PlacementExplorer()
    state = set_controls(explorer, norm="peri", depth=24)
    assert state["bottom"] == table["peri"][23, 0] and state["top"] == table["peri"][23, 23]


def test_memory_grows_with_the_square_and_blockwise_with_the_length():
    explorer = modern.MemoryExplorer()
    short, long = (set_controls(explorer, seq=s, block=128) for s in (512, 8192))
    assert short["full_bytes"] == 12 * 512 * 512 * 4 and long["full_bytes"] == 256 * short["full_bytes"]
    assert long["block_bytes"] == 16 * short["block_bytes"] == 12 * 8192 * 128 * 4
    assert all(lesson.blockwise_gap(block) < 1e-12 for block in lesson.BLOCKS)


def test_local_windows_reach_window_over_two_further_each_layer():
    for window in lesson.WINDOWS:
        for layers in (1, 2, 3):
            reach = lesson.reach(window, layers)
            assert np.flatnonzero(reach[0]).max() == min(layers * (window // 2), lesson.WINDOW_SEQ - 1)
    assert lesson.reach(4, 1, global_every=3).all()  # the first layer global: everything at once
    explorer = modern.WindowExplorer()
    assert set_controls(explorer, window=4, global_layers=False, layers=2)["layers_to_10"] == 5


def test_the_choices_table_names_both_models_for_every_choice():
    lines = lesson.choices_table().splitlines()
    assert [line for line in lines if not line.startswith(" ")] == list(lesson.CHOICE_ROWS)
    assert sum("ModernBERT-base" in line for line in lines) == len(lesson.CHOICE_ROWS)


def test_lesson_09_asks_a_question_of_every_widget():
    asked = {q.widget for q in questions.QUESTIONS if q.lesson.startswith("09")}
    assert asked == {explorer.__name__ for explorer in modern.EXPLORERS}


def test_a_planted_change_to_the_norms_experiment_changes_a_key(monkeypatch):
    """Were RMSNorm to take the mean out (layer norm in its place), the key would move: the keys are computed."""
    question = questions.BY_ID["09_the_encoder_since_2017/rms-norm-mean"]
    right = question.answer(modern.NormExplorer()).key
    monkeypatch.setattr(lesson, "norms_of", lambda x: {"layer": el.layer_norm(x), "rms": el.layer_norm(x)})
    planted = question.answer(modern.NormExplorer()).key
    assert right > 0.8 and abs(planted) < 1e-6
