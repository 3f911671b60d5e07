"""Lesson 07 widgets: the gradient's size through a stack, and training runs side by side.

- ``GradientFlowExplorer``: for stacks of depth 1 to 24 at initialisation,
  the gradient norm at each block, post-norm against pre-norm, with the
  residual connections on or off (all computed once, when it is built).
- ``TrainingMonitor``: a progress bar and a loss curve that follow a
  training run live (``encoder_lib.training.train``'s ``on_step``).
- ``TrainingComparisonExplorer``: loss curves of finished runs, chosen by
  placement and warm-up.
"""

import html

import ipywidgets as widgets
import matplotlib.ticker
import numpy as np

from ..experiments.gradients import gradient_table, smoothed_loss
from ..plots import legend_above
from ..training import SortTask, compare_runs
from ._base import COLORS, MARKERS, Explorer, drawing_order, highlight, sentences
from ._controls import PLACEMENT_NAMES, checkbox, placement_toggle, slider, toggle



class GradientFlowExplorer(Explorer):
    """How big is the gradient that reaches each block, and how does the top block's change with depth?"""

    figsize = (8.6, 3.3)

    def __init__(self, table=None):
        self.table = table if table is not None else gradient_table()
        self.max_depth = len(self.table["post", True])
        controls = {
            "depth": slider("depth", min(12, self.max_depth), 1, self.max_depth),
            "norm": placement_toggle("post"),
            "residual": checkbox("residual connections", True),
        }
        super().__init__(
            "The gradient through a stack, at initialisation",
            "Left: the size (norm) of each block's parameter gradient in a stack of the chosen depth, bottom "
            "block on the left, on a log scale; the faint line is the other placement. Right: the top block's "
            "gradient for every depth from 1 to 24, both placements. Compare how the right-hand curves change "
            "with depth, then switch the residual connections off and look at the left-hand plot again.",
            controls,
        )

    def setup(self, figure):
        self.ax_layers, self.ax_depth = figure.subplots(1, 2, gridspec_kw={"width_ratios": [1.25, 1]})
        self.layer_lines, self.depth_lines = {}, {}
        for i, norm in enumerate(("post", "pre")):
            style = "-" if norm == "post" else "--"
            (self.layer_lines[norm],) = self.ax_layers.plot([1], [1], ls=style, marker=MARKERS[i], color=COLORS[i],
                                                            markersize=4, label=PLACEMENT_NAMES[norm])
            (self.depth_lines[norm],) = self.ax_depth.plot([1], [1], ls=style, marker=MARKERS[i], color=COLORS[i],
                                                           markersize=3, label=PLACEMENT_NAMES[norm])
        (self.here,) = self.ax_depth.plot([1], [1], ls="none", marker="o", markersize=11, markerfacecolor="none",
                                          markeredgecolor="black", markeredgewidth=1.5)
        legend_above(figure, list(self.layer_lines.values()))  # above the panels: over them it hid the bottom blocks
        self._log_scales()
        self.ax_layers.set_xlabel("block (1 = bottom)")
        self.ax_layers.set_ylabel("gradient norm of the block's parameters")
        self.ax_depth.set_xlabel("depth of the stack")
        self.ax_depth.set_ylabel("top block's gradient norm")
        self.ax_depth.set_xlim(0.5, self.max_depth + 0.5)
        self.ax_layers.set_title(" ")
        self.ax_depth.set_title(" ")

    def _log_scales(self):
        """One fixed log scale for every setting, so that curves compare across settings and only the data are
        redrawn when a control moves."""
        every = np.concatenate([run["params"] for runs in self.table.values() for run in runs])
        low, high = every.min() / 1.5, every.max() * 1.5
        ticks = [t for t in (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000) if low <= t <= high]
        for ax in (self.ax_layers, self.ax_depth):
            ax.set_yscale("log")
            ax.set_ylim(low, high)
            ax.yaxis.set_major_locator(matplotlib.ticker.FixedLocator(ticks))
            ax.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda value, _: f"{value:g}"))
            ax.yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
            ax.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))

    def dynamic_artists(self):
        axes = (self.ax_layers, self.ax_depth)
        changing = [*self.layer_lines.values(), *self.depth_lines.values(), self.here, self.ax_layers.xaxis,
                    *(ax.title for ax in axes)]
        return drawing_order(changing, spines_of=axes)

    def draw(self, depth, norm, residual):
        blocks = np.arange(1, depth + 1)
        for i, (name, line) in enumerate(self.layer_lines.items()):
            values = self.table[name, residual][depth - 1]["params"]
            line.set_data(blocks, values)
            highlight(line, COLORS[i], name == norm)
        self.ax_layers.set_xlim(0.5, depth + 0.5)
        depths = np.arange(1, self.max_depth + 1)
        tops = {}
        for i, (name, line) in enumerate(self.depth_lines.items()):
            tops[name] = np.array([run["params"][-1] for run in self.table[name, residual]])
            line.set_data(depths, tops[name])
            highlight(line, COLORS[i], name == norm, widths=(1.5, 1.5))
        self.here.set_data([depth], [tops[norm][depth - 1]])
        chosen = self.table[norm, residual][depth - 1]["params"]
        state = {
            "depth": depth, "norm": norm, "residual": residual,
            "bottom": float(chosen[0]), "top": float(chosen[-1]), "bottom_over_top": float(chosen[0] / chosen[-1]),
            "top_post": float(tops["post"][depth - 1]), "top_pre": float(tops["pre"][depth - 1]),
            "top_post_depth1": float(tops["post"][0]), "top_pre_depth1": float(tops["pre"][0]),
        }
        self.ax_layers.set_title(f"{PLACEMENT_NAMES[norm]}, {depth} block{'s' if depth > 1 else ''}, residual "
                                 f"{'on' if residual else 'off'}", fontsize=10)
        self.ax_depth.set_title(f"top block at depth {depth}: post {state['top_post']:.0f}, pre {state['top_pre']:.0f}",
                                fontsize=10)
        return state

    def alt_text(self, state):
        """The readout, and the faint line's numbers (the other placement): drawn faint, they are in words here."""
        other = "pre" if state["norm"] == "post" else "post"
        values = self.table[other, state["residual"]][state["depth"] - 1]["params"]
        return sentences(super().alt_text(state),
                         f"Faint, {PLACEMENT_NAMES[other]}: bottom block {values[0]:.0f}, top block {values[-1]:.0f}")

    def describe(self, s):
        return (f"{PLACEMENT_NAMES[s['norm']]}, {s['depth']} blocks, residual {'on' if s['residual'] else 'off'}: "
                f"bottom block <b>{s['bottom']:.0f}</b>, top block <b>{s['top']:.0f}</b> "
                f"(bottom / top = {s['bottom_over_top']:.2f})")


class TrainingMonitor(Explorer):
    """A progress bar and a live loss curve for ``train(..., on_step=monitor.on_step)``.

    The picture is redrawn every ``every`` steps (and at the last), so that
    drawing costs little of the run's time.
    """

    figsize = (6.4, 2.6)

    def __init__(self, steps, title="training", every=25):
        self.steps, self.every = steps, every
        self.history = None
        self.progress = widgets.IntProgress(value=0, min=0, max=steps, description="step 0",
                                            style={"description_width": "initial"})
        super().__init__(title, "The training loss of each batch, and the held-out accuracy when it was last measured.",
                         {}, extras=(self.progress,))

    def setup(self, figure):
        ax = self.ax = figure.add_subplot()
        (self.loss_line,) = ax.plot([], [], color=COLORS[0], lw=1.2, label="training loss (per batch)")
        ax.set_xlabel("step")
        ax.set_ylabel("cross-entropy")
        ax.set_xlim(0, self.steps)
        legend_above(figure, [self.loss_line])

    def draw(self):
        h = self.history
        if h is None or not h.loss:
            return {"step": 0}
        self.loss_line.set_data(h.steps, h.loss)
        self.ax.set_ylim(0, max(h.loss) * 1.05)
        last_test = h.test_accuracy[-1] if h.test_accuracy else None
        return {"step": h.steps[-1], "loss": h.loss[-1], "train_accuracy": h.train_accuracy[-1],
                "test_accuracy": last_test}

    def describe(self, s):
        if s["step"] == 0:
            return "not started"
        test = s["test_accuracy"]
        return (f"loss {s['loss']:.3f}, training accuracy {s['train_accuracy']:.1%}"
                + (f", held-out accuracy {test[1]:.1%} (step {test[0]})" if test else ""))

    def on_step(self, step, history):
        if step % self.every and step != self.steps and history.seconds_to_target is None:
            return
        self.history = history
        self.progress.value = step
        self.progress.description = f"step {step}"
        self.update()


class TrainingComparisonExplorer(Explorer):
    """Which runs train and which stall? Loss curves of four runs, chosen by placement and warm-up.

    Build it from finished runs (``compare_runs``'s result), or with ``live``,
    which shows the widget at once and trains the four runs while it draws.
    """

    figsize = (6.4, 3.0)

    def __init__(self, runs, warmup_steps, steps=None, extras=()):
        """``runs``: ``{(norm, warmup): History}`` for norm in post/pre and warmup in (0, ``warmup_steps``)."""
        self.runs = dict(runs)
        self.warmup_steps = warmup_steps
        self.steps = steps or max(len(h.loss) for h in self.runs.values())
        self.status = ""  # what a live run is doing, shown in the readout
        controls = {
            "norm": placement_toggle("post"),
            "warmup": toggle("warm-up", (("none", 0), (f"{warmup_steps} steps", warmup_steps)), 0),
        }
        super().__init__(
            "Four runs from the same seed",
            "The training loss of the chosen run (smoothed over 10 steps), with the other three faint. All four "
            "start from the same weights and see the same batches; only the placement and the warm-up differ.",
            controls, extras,
        )

    @classmethod
    def live(cls, task, steps, lr, warmup, every=50, **options):
        """Show the widget now, then train the four runs (``compare_runs``), redrawing every ``every`` steps."""
        from IPython.display import display

        from ..training import COMPARED, History

        keys = [(norm, w) for norm in COMPARED for w in (0, warmup)]
        progress = widgets.IntProgress(value=0, min=0, max=len(keys) * steps, description="training",
                                       style={"description_width": "initial"})
        explorer = cls({key: History() for key in keys}, warmup, steps, extras=(progress,))
        explorer.status = "training starts"
        explorer.update()
        display(explorer)

        def on_step(key, step, history):
            explorer.runs[key] = history
            if step % every == 0 or step == steps:  # each message to the browser costs the run time
                progress.value = keys.index(key) * steps + step
                explorer.status = f"training {PLACEMENT_NAMES[key[0]]} with warm-up {key[1]}: step {step} of {steps}"
                explorer.update()

        options.setdefault("evaluate_every", steps)  # the held-out accuracy is shown after the last step only
        compare_runs(task, steps, lr, warmup, on_step=on_step, **options)
        progress.description = "trained"
        explorer.status = ""
        explorer.update()
        return explorer

    def setup(self, figure):
        ax = self.ax = figure.add_subplot()
        self.lines = {}
        for i, key in enumerate(sorted(self.runs)):
            (self.lines[key],) = ax.plot(*smoothed_loss(self.runs[key]), color=COLORS[i], lw=1.0,
                                         ls="-" if key[0] == "post" else "--",
                                         label=f"{PLACEMENT_NAMES[key[0]]}, warm-up {key[1]}")
        ax.set_xlim(0, self.steps + 1)
        ax.set_xlabel("step")
        ax.set_ylabel("training loss")
        ax.set_yscale("log")
        ax.set_ylim(0.05, 5)  # until a run has data to scale to
        legend_above(figure, list(self.lines.values()), ncol=2)
        ax.set_title(" ")

    def draw(self, norm, warmup):
        for i, (key, line) in enumerate(self.lines.items()):
            line.set_data(*smoothed_loss(self.runs[key]))
            chosen = key == (norm, warmup)
            highlight(line, COLORS[i], chosen, widths=(2.2, 1.0))
            line.set_zorder(3 if chosen else 2)
        if any(len(h.loss) for h in self.runs.values()):
            self.ax.relim()
            self.ax.autoscale_view(scalex=False)
        history = self.runs[norm, warmup]
        final = history.test_accuracy[-1][1] if history.test_accuracy else float("nan")
        self.ax.set_title(f"{PLACEMENT_NAMES[norm]}, warm-up {warmup}: held-out accuracy "
                          + (f"{final:.1%}" if history.test_accuracy else "(not trained yet)"), fontsize=10)
        return {"norm": norm, "warmup": warmup,
                "final_loss": float(np.mean(history.loss[-10:])) if history.loss else float("nan"),
                "test_accuracy": float(final), "steps": len(history.loss), "status": self.status}

    def alt_text(self, state):
        """The readout, and the faint runs' final losses: drawn faint, they are in words here."""
        chosen = (state["norm"], state["warmup"])
        others = [f"{PLACEMENT_NAMES[norm]}, warm-up {warmup}: "
                  + (f"final loss {np.mean(h.loss[-10:]):.3f}" if h.loss else "not trained yet")
                  for (norm, warmup), h in sorted(self.runs.items()) if (norm, warmup) != chosen]
        return sentences(super().alt_text(state), "Faint, the other runs: " + "; ".join(others))

    def describe(self, s):
        if s["status"]:
            return html.escape(s["status"])
        return (f"{html.escape(PLACEMENT_NAMES[s['norm']])} with warm-up {s['warmup']}: final loss {s['final_loss']:.3f}, "
                f"held-out accuracy <b>{s['test_accuracy']:.1%}</b> after {s['steps']} steps")


def small_comparison():
    """A ``TrainingComparisonExplorer`` over four short runs (a second or two), for tests and benchmarks."""
    task = SortTask(seq_len=6, vocab=8)
    runs = compare_runs(task, steps=40, lr=3e-3, warmup=10, evaluate_every=20,
                        d_model=16, n_heads=2, d_ff=32, n_layers=2)
    return TrainingComparisonExplorer(runs, warmup_steps=10)


EXPLORERS = (GradientFlowExplorer, small_comparison)
