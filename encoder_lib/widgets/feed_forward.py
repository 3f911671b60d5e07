"""Lesson 03: the feed-forward network's hidden layer, and how many of its units the activation silences.

The question the notebook asks: what fraction of hidden units does ReLU
silence, and does GELU silence any? The widget runs a seeded batch of
positions through freshly initialised FFN weights (``el.init_block_params``)
at four expansion factors, precomputed once, and shows the hidden
activations with the exact zeros left white.
"""

import matplotlib
import matplotlib.ticker
import numpy as np


from .. import plots
from ..experiments.feed_forward import D_MODEL, FACTORS, N_POSITIONS, SMALL, hidden_activations, silence_summary
from ._base import COLORS, Explorer
from ._controls import toggle

NAMES = {"relu": "ReLU", "gelu": "GELU"}
VMIN, VMAX = -0.2, 1.2  # colour range of the hidden activations, fixed across controls


class FeedForwardExplorer(Explorer):
    """Hidden activations (positions x hidden units) for an expansion factor and an activation."""

    figsize = (7.2, 3.2)

    def __init__(self, seed=0):
        self.hidden = hidden_activations(seed=seed)
        controls = {
            "factor": toggle("d_ff / d_model", [(f"{f}x", f) for f in FACTORS], value=4),
            "activation": toggle("activation", [(NAMES[a], a) for a in ("relu", "gelu")], value="relu"),
        }
        super().__init__(
            "Which hidden units does the activation silence?",
            f"{N_POSITIONS} positions (d_model {D_MODEL}) through a freshly initialised FFN. "
            "White cells are hidden values that are exactly 0. Count them for ReLU, then switch to GELU: "
            "do any stay exactly 0, and what happens to the negative ones?",
            controls,
        )

    def setup(self, figure):
        ax, bar_ax = self.ax_heat, self.ax_bars = figure.subplots(1, 2, width_ratios=(3, 1.3))
        first = self.hidden[FACTORS[-1], "relu"]
        self.im, _ = plots.heatmap(ax, first, title="", xlabel="hidden unit",
                                   ylabel="position", vmin=VMIN, vmax=VMAX, annotate=False)
        cmap = matplotlib.colormaps[plots.CMAP].copy()
        cmap.set_bad("white")  # masked = exactly 0
        self.im.set_cmap(cmap)
        self.im.set_interpolation("nearest")  # one sharp cell per value, also at d_ff = 128
        self.im.colorbar.set_label("hidden value (white = 0)")
        self.im.colorbar.set_ticks([0, 0.5, 1])
        ax.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(nbins=4, integer=True))
        ax.yaxis.set_major_locator(matplotlib.ticker.MultipleLocator(3))
        ax.set_facecolor("white")

        self.labels = ("exactly 0", "negative", "positive")
        self.bars = bar_ax.barh(range(3), [0, 0, 0], color=["white", COLORS[1], COLORS[0]],
                                edgecolor="black", height=0.6)
        for bar, hatch in zip(self.bars, ("", "//", "..")):
            bar.set_hatch(hatch)
        self.bar_texts = [bar_ax.text(0.02, i, "", va="center", ha="left", fontsize=9) for i in range(3)]
        bar_ax.set_yticks(range(3), self.labels)
        bar_ax.invert_yaxis()
        bar_ax.set_xlim(0, 1)
        bar_ax.set_xticks([0, 0.5, 1], ["0", "½", "1"])
        bar_ax.set_xlabel("fraction of values")
        bar_ax.set_ylabel("hidden values")
        bar_ax.yaxis.set_label_position("right")  # away from the colorbar's label
        bar_ax.set_title("silent or not")

    def draw(self, factor, activation):
        h = self.hidden[factor, activation]
        d_ff = h.shape[1]
        self.im.set_data(np.ma.masked_equal(h, 0))
        self.im.set_extent((-0.5, d_ff - 0.5, N_POSITIONS - 0.5, -0.5))
        self.ax_heat.set_xlim(-0.5, d_ff - 0.5)
        self.ax_heat.set_title(f"{NAMES[activation]}(x @ w1 + b1), d_ff = {d_ff}")
        summary = silence_summary(h)
        fractions = (summary["frac_zero"], summary["frac_negative"], summary["frac_positive"])
        for bar, text, frac in zip(self.bars, self.bar_texts, fractions):
            bar.set_width(frac)
            text.set_text(f"{frac:.0%}")
            text.set_x(min(frac + 0.02, 0.8))
        return {"factor": factor, "d_ff": d_ff, "activation": activation,
                "n_positions": N_POSITIONS, **summary}

    def describe(self, state):
        name = NAMES[state["activation"]]
        text = (f"{name}, d_ff = {state['d_ff']}: {state['n_zero']} of {state['n_values']} hidden values "
                f"are exactly 0 ({state['frac_zero']:.0%})")
        if state["activation"] == "gelu":
            text += (f"; {state['frac_negative']:.0%} are negative (smallest {state['min']:.3f}), "
                     f"{state['frac_small']:.0%} have |h| &lt; {SMALL:g}")
        return text + "."


EXPLORERS = (FeedForwardExplorer,)
