"""The lesson 07 widgets: gradient flow through 1 to 24 blocks, the live training monitor, and the four runs."""

import numpy as np
import pytest

from encoder_lib import training as T
from encoder_lib.widgets import gradients
from encoder_lib.widgets._controls import control_values
from widget_helpers import faint, highlighted, pixels, set_controls


@pytest.fixture(scope="module")
def flow():
    return gradients.GradientFlowExplorer()


def test_flow_controls_are_depth_placement_and_the_residual_switch(flow):
    depth = flow.controls["depth"]
    assert (depth.min, depth.max, depth.value) == (1, 24, 12)
    assert control_values(flow.controls["norm"]) == ["post", "pre"]
    assert flow.controls["residual"].value is True


@pytest.mark.parametrize("norm", ["post", "pre"])
@pytest.mark.parametrize("residual", [True, False])
def test_the_left_plot_is_the_chosen_stack_s_per_block_gradients(flow, norm, residual):
    for depth in (1, 9, 24):
        state = set_controls(flow, depth=depth, norm=norm, residual=residual)
        # the mean over three seeds of each block's gradient norm
        expected = np.mean([T.gradient_norms(depth, norm, residual, seed=s)["params"] for s in range(3)], axis=0)
        line = flow.layer_lines[norm]
        np.testing.assert_array_equal(line.get_xdata(), np.arange(1, depth + 1))
        np.testing.assert_allclose(line.get_ydata(), expected, rtol=1e-12)
        assert state["bottom"] == line.get_ydata()[0] and state["top"] == line.get_ydata()[-1]
        assert highlighted(line) and faint(flow.layer_lines[{"post": "pre", "pre": "post"}[norm]])


def test_the_right_plot_has_one_point_per_depth_and_rings_the_chosen_one(flow):
    state = set_controls(flow, depth=7, norm="pre", residual=True)
    assert len(flow.depth_lines["pre"].get_xdata()) == 24
    assert flow.here.get_xdata()[0] == 7 and flow.here.get_ydata()[0] == pytest.approx(state["top_pre"])
    assert "top block <b>" in flow.readout.value and "pre-norm, 7 blocks, residual on" in flow.readout.value


def test_each_control_changes_the_picture(flow):
    set_controls(flow, depth=12, norm="post", residual=True)
    for name, value in (("depth", 20), ("norm", "pre"), ("residual", False)):
        before = pixels(flow)
        set_controls(flow, **{name: value})
        assert np.abs(pixels(flow) - before).sum() > 0, f"moving {name} changed nothing"


def test_the_monitor_follows_a_run_and_shows_its_last_step():
    task = T.SortTask(seq_len=4, vocab=5)
    model = T.init_model(task, d_model=16, n_heads=2, d_ff=32, n_layers=1, norm="pre", rng=np.random.default_rng(0))
    monitor = gradients.TrainingMonitor(steps=30, every=10)
    first = monitor.image.value
    history = T.train(task, model, 30, evaluate_every=10, on_step=monitor.on_step)
    assert monitor.progress.value == 30 and monitor.progress.description == "step 30"
    np.testing.assert_array_equal(monitor.loss_line.get_ydata(), history.loss)
    assert monitor.image.value != first
    assert "held-out accuracy" in monitor.readout.value


def test_the_comparison_highlights_the_chosen_run():
    explorer = gradients.small_comparison()
    assert set(explorer.runs) == {("post", 0), ("post", 10), ("pre", 0), ("pre", 10)}
    for norm in ("post", "pre"):
        for warmup in (0, 10):
            state = set_controls(explorer, norm=norm, warmup=warmup)
            run = explorer.runs[norm, warmup]
            assert state["test_accuracy"] == run.test_accuracy[-1][1]
            assert state["final_loss"] == pytest.approx(np.mean(run.loss[-10:]))
            for key, line in explorer.lines.items():
                assert (highlighted(line), faint(line)) == ((True, False) if key == (norm, warmup) else (False, True))


def test_live_shows_the_widget_first_then_draws_the_runs_as_they_train(monkeypatch):
    shown = []
    monkeypatch.setattr("IPython.display.display", lambda obj: shown.append((obj, obj.image.value)))
    explorer = gradients.TrainingComparisonExplorer.live(T.SortTask(seq_len=4, vocab=5), steps=20, lr=3e-3, warmup=5,
                                                         every=10, d_model=16, n_heads=2, d_ff=32, n_layers=1)
    assert len(shown) == 1 and shown[0][0] is explorer
    assert explorer.image.value != shown[0][1], "the picture did not change while the runs trained"
    progress = explorer.widget.children[2]
    assert progress.value == progress.max == 80 and progress.description == "trained"
    assert all(len(run.loss) == 20 for run in explorer.runs.values())
    state = set_controls(explorer, norm="pre", warmup=5)
    assert state["steps"] == 20 and state["status"] == "" and "held-out accuracy" in explorer.readout.value
    # the same runs as compare_runs trains on its own
    again = T.compare_runs(T.SortTask(seq_len=4, vocab=5), 20, 3e-3, 5, d_model=16, n_heads=2, d_ff=32, n_layers=1)
    for key, run in again.items():
        np.testing.assert_array_equal(run.loss, explorer.runs[key].loss)


def _overlap(a, b):
    return a.x0 < b.x1 and b.x0 < a.x1 and a.y0 < b.y1 and b.y0 < a.y1


def _legends_over_panels(figure):
    figure.canvas.draw()
    renderer = figure.canvas.get_renderer()
    panels = [ax for ax in figure.axes if ax.get_label() != "<colorbar>"]
    legends = [*figure.legends, *(ax.get_legend() for ax in panels if ax.get_legend() is not None)]
    assert legends, "the figure names its lines in a legend"
    return [(legend.get_texts()[0].get_text(), ax.get_title()) for legend in legends for ax in panels
            if _overlap(legend.get_window_extent(renderer), ax.get_window_extent(renderer))]


@pytest.mark.parametrize("make", [gradients.GradientFlowExplorer, gradients.small_comparison,
                                  lambda: gradients.TrainingMonitor(10)], ids=["flow", "comparison", "monitor"])
def test_no_legend_lies_over_a_panel_so_none_hides_data_in_the_widget_or_on_a_phone(make):
    """Lesson 07's legend once sat over the bottom blocks its question asks about: every legend is now above the
    panels, where it hides nothing, at the widget's size and in the site's phone drawing."""
    from tools.site import phone

    explorer = make()
    explorer.frame(explorer.values())
    assert _legends_over_panels(explorer.figure) == []
    with phone.stacked(explorer.figure):
        assert _legends_over_panels(explorer.figure) == []
    assert _legends_over_panels(explorer.figure) == []


def test_lesson_07_s_why_lower_pre_norm_blocks_get_more_gradient_is_what_the_widget_s_setting_measures(flow):
    """The lesson explains the left plot's pre-norm profile by the gradient on the residual stream growing on its
    way down, with two numbers: the stream's gradient at block 1's input over block 24's, and the parameter
    gradients' ratio (the widget's readout). Both are measured here, in the widget's setting (three seeds)."""
    import re

    import nbformat

    from tools.course import ROOT

    text = " ".join(" ".join(c.source.split()) for c in nbformat.read(
        ROOT / "notebooks/07_gradients_and_training/07_gradients_and_training.ipynb", as_version=4).cells
        if c.cell_type == "markdown")
    said = re.search(r"the stream's gradient at block 1's input is about ([\d.]+) times the one at block 24's, most "
                     r"of the ([\d.]+) times between the two blocks' parameter gradients", text)
    assert said, "lesson 07 says why lower pre-norm blocks get more gradient"
    runs = [T.gradient_norms(24, "pre", True, seed=s) for s in range(3)]
    stream = np.mean([run["inputs"] for run in runs], axis=0)
    params = np.mean([run["params"] for run in runs], axis=0)
    assert np.all(np.diff(stream) < 0), "the stream's gradient grows at every block on its way down"
    assert f"{stream[0] / stream[-1]:.1f}" == said.group(1)
    state = set_controls(flow, depth=24, norm="pre", residual=True)
    assert f"{params[0] / params[-1]:.1f}" == said.group(2) == f"{state['bottom_over_top']:.1f}"
    assert stream[0] / stream[-1] > 0.5 * params[0] / params[-1]  # "most of"
