"""Lesson 04: where the layer norm goes, and what the block's output rows look like.

The question the notebook asks: which placement gives every row mean 0 and
variance 1 at the block's output, and why? The widget runs the lesson's
fixture block (seq 3, d_model 4, 2 heads, d_ff 8) with post-norm or pre-norm,
with or without the residual connections (all four precomputed once), and
shows the output and each output row's mean and variance.
"""

import numpy as np


from .. import plots
from ..experiments.add_norm import block_outputs, row_stats
from ._base import COLORS, Explorer
from ._controls import PLACEMENT_NAMES, checkbox, placement_toggle

FORMULAS = {"post": "LN(x + f(x))", "pre": "x + f(LN(x))"}
FORMULAS_NO_RESIDUAL = {"post": "LN(f(x))", "pre": "f(LN(x))"}


def _numbers(values):
    return ", ".join(f"{v + 0.0:.3f}" for v in np.round(values, 3))  # + 0.0: no "-0.000"


class AddNormExplorer(Explorer):
    """Post-norm or pre-norm, residual on or off: the output rows' means and variances."""

    figsize = (7.2, 3.2)

    def __init__(self):
        self.outputs = block_outputs()
        controls = {
            "norm": placement_toggle("post"),
            "residual": checkbox("residual (x + ...)", True),
        }
        super().__init__(
            "Which placement gives every output row mean 0 and variance 1?",
            "The lesson's block (3 tokens, d_model 4, 2 heads). Bars: each output row's mean and variance; "
            "the dashed line is variance 1. Switch between post-norm and pre-norm, then turn the residual "
            "off: which bars stay on the lines, and which op of the block comes last in each case?",
            controls,
        )

    def setup(self, figure):
        ax, bar_ax = self.ax_out, self.ax_bars = figure.subplots(1, 2, width_ratios=(1, 1.4))
        limit = max(np.abs(out).max() for out in self.outputs.values())
        limit = np.ceil(limit * 2) / 2
        self.im, self.texts = plots.heatmap(
            ax, self.outputs["post", True], title="", xlabel="feature", ylabel="token (row)",
            vmin=-limit, vmax=limit, fmt="{:.2f}", colorbar=False)  # the values are written in the cells

        rows = np.arange(3)
        width = 0.38
        self.mean_bars = bar_ax.bar(rows - width / 2, [0, 0, 0], width, color=COLORS[0],
                                    edgecolor="black", hatch="..", label="mean")
        self.var_bars = bar_ax.bar(rows + width / 2, [0, 0, 0], width, color=COLORS[1],
                                   edgecolor="black", hatch="//", label="variance")
        self.var_texts = [bar_ax.text(r + width / 2, 0, "", ha="center", va="bottom", fontsize=8)
                          for r in rows]
        bar_ax.axhline(1, color="black", linestyle="--", linewidth=1, label="variance 1")
        bar_ax.axhline(0, color="black", linestyle="-", linewidth=0.6)
        stats = [row_stats(out) for out in self.outputs.values()]
        low = min(0.0, min(m.min() for m, _ in stats))
        high = max(v.max() for _, v in stats)
        bar_ax.set_ylim(low - 0.25, high * 1.35)  # fixed: the four variants share one scale
        bar_ax.set_yticks(np.arange(0, high * 1.35, 1.0))
        bar_ax.set_xticks(rows, [f"row {r}" for r in rows])
        bar_ax.set_xlabel("output row (token)")
        bar_ax.set_ylabel("over the row's 4 features")
        bar_ax.set_title("row mean and variance")
        bar_ax.legend(loc="upper center", fontsize=8, ncols=3, frameon=False)

    def draw(self, norm, residual):
        out = self.outputs[norm, residual]
        plots.update_heatmap(self.im, self.texts, out)
        formula = (FORMULAS if residual else FORMULAS_NO_RESIDUAL)[norm]
        self.ax_out.set_title(f"output = {formula}", fontsize=10)
        means, variances = row_stats(out)
        for bar, mean in zip(self.mean_bars, means):
            bar.set_height(mean)
        for bar, text, var in zip(self.var_bars, self.var_texts, variances):
            bar.set_height(var)
            text.set_y(max(var, 0) + 0.03)
            text.set_text(f"{var:.2f}")
        return {
            "norm": norm,
            "residual": bool(residual),
            "means": tuple(float(m) for m in means),
            "variances": tuple(float(v) for v in variances),
            "max_abs_mean": float(np.abs(means).max()),
            "max_var_error": float(np.abs(variances - 1).max()),
            "unit_rows": bool(np.abs(means).max() < 1e-3 and np.abs(variances - 1).max() < 1e-3),
        }

    def describe(self, state):
        name = PLACEMENT_NAMES[state["norm"]]
        return (f"{name}, residual {'on' if state['residual'] else 'off'}. "
                f"row means: {_numbers(state['means'])}; row variances: {_numbers(state['variances'])}")


EXPLORERS = (AddNormExplorer,)
