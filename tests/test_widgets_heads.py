"""Lesson 02's widget: which positions each head reads, on the lesson's fixture."""


import numpy as np
import pytest

import encoder_lib as el
from encoder_lib import fixtures
from encoder_lib.widgets import heads
from widget_helpers import pixels, set_controls


@pytest.fixture
def explorer():
    return heads.heads_explorer()


def test_default_view_is_head_0_of_2_so_the_learner_must_move_to_head_1(explorer):
    state = explorer.state
    assert (state["n_heads"], state["head"]) == (2, 0)
    assert state["reads_most_keys"] == [2]
    assert state["top_keys"] == [[0, 2], [1, 2], [2]]


def test_head_1_of_2_reads_position_1_most(explorer):
    state = set_controls(explorer, head=1)
    assert state["columns"] == (2, 4)
    assert state["reads_most_keys"] == [1]
    assert state["reads_most_weight"] == pytest.approx(4 / 9, abs=1e-4)
    assert state["top_keys"] == [[0], [1], [0, 1, 2]]  # query 2's slice is (0, 0): an even split
    assert state["weights"][1][1] == pytest.approx(0.9437, abs=1e-4)
    assert "position 1</b> most" in explorer.readout.value


@pytest.mark.parametrize("n_heads", heads.HEAD_COUNTS)
def test_every_head_shows_the_libraries_weights(explorer, n_heads):
    _, expected = el.multi_head_attention(fixtures.lesson_input(), n_heads)
    set_controls(explorer, n_heads=n_heads)
    for head in range(n_heads):
        state = set_controls(explorer, head=head)
        np.testing.assert_allclose(state["weights"], expected[head], atol=1e-4)
        np.testing.assert_allclose(np.asarray(explorer.weights_map.get_array()), expected[head])
        np.testing.assert_allclose(state["mean_weight_per_key"], expected[head].mean(axis=0))
        assert state["d_head"] == 4 // n_heads
        assert state["columns"] == (head * 4 // n_heads, (head + 1) * 4 // n_heads)


def test_fewer_heads_clamp_the_head_control_and_more_heads_widen_it(explorer):
    set_controls(explorer, head=1)
    state = set_controls(explorer, n_heads=1)
    assert (explorer.controls["head"].value, explorer.controls["head"].max) == (0, 0)
    assert (state["n_heads"], state["head"], state["d_head"]) == (1, 0, 4)
    set_controls(explorer, n_heads=4)
    assert explorer.controls["head"].max == 3
    assert set_controls(explorer, head=3)["columns"] == (3, 4)
    state = set_controls(explorer, n_heads=2)
    assert (explorer.controls["head"].value, state["head"]) == (1, 1)


def test_changing_the_number_of_heads_redraws_once(explorer, monkeypatch):
    set_controls(explorer, head=1)
    calls = []
    original = explorer.update
    monkeypatch.setattr(explorer, "update", lambda: (calls.append(1), original())[1])
    set_controls(explorer, n_heads=1)
    assert len(calls) == 1


def test_tied_positions_are_all_reported_and_highlighted(explorer):
    state = set_controls(explorer, n_heads=4, head=1)  # columns 1:2; keys 1 and 2 get the same mean weight
    assert state["reads_most_keys"] == [1, 2]
    assert state["mean_weight_per_key"][1] == pytest.approx(state["mean_weight_per_key"][2])
    assert "positions 1 and 2</b> most" in explorer.readout.value
    assert [bar.get_hatch() or "" for bar in explorer.bars] == ["", "//", "//"]


def test_one_head_reads_each_query_mostly_itself(explorer):
    state = set_controls(explorer, n_heads=1)
    assert state["top_keys"] == [[0], [1], [2]]


def test_heatmap_numbers_and_bars_show_the_state(explorer):
    state = set_controls(explorer, head=1)
    texts = [[t.get_text() for t in row] for row in explorer.texts]
    assert texts[1] == ["0.01", "0.94", "0.05"]
    np.testing.assert_allclose([b.get_height() for b in explorer.bars], state["mean_weight_per_key"])
    assert explorer.map_title.get_text() == "head 1 of 2: columns 2:4 of x"


def test_redrawn_picture_matches_a_fresh_full_draw(explorer):
    set_controls(explorer, n_heads=4, head=3)
    fresh = heads.HeadsExplorer(n_heads=4, head=3)
    assert np.abs(pixels(explorer) - pixels(fresh)).mean() < 1.0
    assert explorer.state == fresh.state
