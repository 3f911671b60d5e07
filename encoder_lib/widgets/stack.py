"""Lesson 06 widget: how the residual stream's scale changes with depth, pre-norm vs post-norm.

Both 24-layer stacks are run once, when the widget is built, with the same
seeded blocks and input; the depth slider only chooses how many layers to show.
"""

import matplotlib.ticker
import numpy as np


from ..experiments.stack import N_HEADS, residual_scale, toy_stack
from ..plots import GUIDE
from ._base import COLORS, MARKERS, Explorer, highlight
from ._controls import PLACEMENT_NAMES, placement_toggle, slider


class StackScaleExplorer(Explorer):
    """How does the residual stream's scale change with depth in pre-norm vs post-norm?"""

    def __init__(self, layers=None, x=None, n_heads=N_HEADS):
        if layers is None or x is None:
            layers, x = toy_stack()
        self.scale = {norm: residual_scale(x, layers, n_heads, norm) for norm in ("pre", "post")}
        self.max_depth = len(layers)
        controls = {
            "depth": slider("depth", min(12, self.max_depth), 1, self.max_depth),
            "norm": placement_toggle("pre", order=("pre", "post")),
        }
        super().__init__(
            "The residual stream, layer by layer",
            "The RMS of the hidden state after each block (layer 0 is the input). The highlighted curve is "
            "the chosen placement, the faint one the other. Post-norm ends every block in a layer norm with "
            "gamma 1 and beta 0; pre-norm only ever adds to the stream. Watch both curves as depth grows.",
            controls,
        )

    def setup(self, figure):
        ax = self.ax = figure.add_subplot()
        ax.axhline(1.0, color=GUIDE, lw=0.8, ls=":")
        self.lines = {}
        for i, (norm, style) in enumerate((("pre", "-"), ("post", "--"))):
            (self.lines[norm],) = ax.plot([0], [1], ls=style, marker=MARKERS[i], color=COLORS[i],
                                          markersize=4, label=PLACEMENT_NAMES[norm])
        self.end_label = ax.text(0, 0, "", fontsize=9, ha="left", va="bottom")
        ax.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
        ax.set_xlabel("layer")
        ax.set_ylabel("RMS of the residual stream")
        ax.set_title(" ")
        ax.legend(loc="upper left", fontsize=9)

    def draw(self, depth, norm):
        layers = np.arange(depth + 1)
        for i, (name, line) in enumerate(self.lines.items()):
            line.set_data(layers, self.scale[name][: depth + 1])
            chosen = name == norm
            highlight(line, COLORS[i], chosen)
            line.set_zorder(3 if chosen else 2)
        shown = max(float(self.scale[name][: depth + 1].max()) for name in self.scale)
        self.ax.set_xlim(-0.5, depth + 0.5 + 0.08 * depth)  # room for the end label
        self.ax.set_ylim(0, 1.15 * shown)
        value = float(self.scale[norm][depth])
        self.end_label.set_position((depth + 0.1 + 0.02 * depth, value))
        self.end_label.set_text(f"{value:.2f}")
        self.ax.set_title(f"after {depth} layer{'s' if depth > 1 else ''}: pre-norm "
                          f"{self.scale['pre'][depth]:.2f}, post-norm {self.scale['post'][depth]:.2f}")
        return {
            "depth": depth, "norm": norm,
            "rms_pre": float(self.scale["pre"][depth]), "rms_post": float(self.scale["post"][depth]),
            "rms_selected": value, "rms_input": float(self.scale[norm][0]),
            "growth_pre": float(self.scale["pre"][depth] / self.scale["pre"][0]),
        }

    def describe(self, s):
        return (f"after {s['depth']} layers the RMS of the residual stream is <b>{s['rms_pre']:.2f}</b> in pre-norm "
                f"({s['growth_pre']:.2f} times the input's) and <b>{s['rms_post']:.2f}</b> in post-norm; "
                f"{PLACEMENT_NAMES[s['norm']]} is highlighted")


EXPLORERS = (StackScaleExplorer,)
