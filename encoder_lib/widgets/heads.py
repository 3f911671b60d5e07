"""Lesson 02's widget: what each head of multi-head attention reads, on the lesson's fixture.

The question it answers: which position does head 1 read most? Each head attends with its own ``d_head =
d_model / n_heads`` columns of the projected queries, keys and values, so the heads of one layer can read different
positions for the same input.
"""

import numpy as np

from .. import fixtures, plots
from ..experiments.heads import HEAD_COUNTS, head_weights, reads_most, top_keys
from ._base import COLORS, Explorer, drawing_order
from ._controls import slider, toggle


class HeadsExplorer(Explorer):
    """One head's (seq x seq) weights as an annotated heatmap, and the mean weight each key receives."""

    figsize = (7.2, 3.2)

    def __init__(self, x=None, n_heads=2, head=0, head_counts=HEAD_COUNTS):
        self.x = fixtures.lesson_input() if x is None else np.asarray(x)
        self.seq, d_model = self.x.shape[-2:]
        # every head's weights for every head count, computed once: (n_heads, seq, seq) each
        self.weights = head_weights(self.x, head_counts)
        self.d_model = d_model
        controls = {
            "n_heads": toggle("heads", tuple(head_counts), n_heads),
            "head": slider("head", head, 0, n_heads - 1),
        }
        caption = (f"Each head attends with its own {d_model} / heads columns of x (identity projections). "
                   "Row = query, column = key; the bars average each column, so the tallest bar is "
                   "the position the head reads most. Positions count from 0.")
        super().__init__("What one head of multi-head attention reads", caption, controls)

    def adjust_controls(self, change):
        """Keep the head slider within the current number of heads."""
        if change["owner"] is self.controls["n_heads"]:
            self.controls["head"].max = change["new"] - 1  # lowering max below the value moves the value down too

    def setup(self, figure):
        map_ax, bar_ax = figure.subplots(1, 2, width_ratios=(1.2, 1))
        labels = [str(i) for i in range(self.seq)]
        self.weights_map, self.texts = plots.heatmap(
            map_ax, np.zeros((self.seq, self.seq)), title="", xlabel="key position",
            ylabel="query position", row_labels=labels, col_labels=labels)
        self.map_title = map_ax.title
        self.bars, self.bar_texts = plots.labelled_bars(
            bar_ax, self.seq, title="how much it reads each key", xlabel="key position",
            ylabel="mean weight over queries", fontsize=9)

    def dynamic_artists(self):
        changing = [self.map_title, self.weights_map, *(t for row in self.texts for t in row), *self.bars, *self.bar_texts]
        return drawing_order(changing, spines_of=[self.weights_map.axes])

    def draw(self, n_heads, head):
        head = min(head, n_heads - 1)
        weights = self.weights[n_heads][head]  # (seq, seq): row = query, column = key
        d_head = self.d_model // n_heads
        start, stop = head * d_head, (head + 1) * d_head
        plots.update_heatmap(self.weights_map, self.texts, weights)
        self.map_title.set_text(f"head {head} of {n_heads}: columns {start}:{stop} of x")
        mean_per_key, most = reads_most(weights)  # (seq,); usually one position, all of them when they tie
        plots.update_bars(self.bars, self.bar_texts, mean_per_key)
        for i, bar in enumerate(self.bars):  # the most-read position stands out by colour and hatching
            bar.set_facecolor(COLORS[1] if i in most else COLORS[0])
            bar.set_hatch("//" if i in most else "")
        return {
            "n_heads": int(n_heads),
            "head": int(head),
            "d_head": int(d_head),
            "columns": (start, stop),
            "weights": weights.round(4).tolist(),
            "top_keys": [top_keys(row) for row in weights],
            "argmax_per_query": [int(i) for i in weights.argmax(axis=-1)],
            "mean_weight_per_key": [float(w) for w in mean_per_key],
            "reads_most": most[0],
            "reads_most_keys": most,
            "reads_most_weight": float(mean_per_key[most[0]]),
        }

    def describe(self, state):
        parts = []
        for query, keys in enumerate(state["top_keys"]):
            weight = state["weights"][query][keys[0]]
            if len(keys) == 1:
                parts.append(f"query {query} &rarr; key {keys[0]} ({weight:.2f})")
            else:
                parts.append(f"query {query} &rarr; tie of keys {', '.join(map(str, keys))} ({weight:.2f} each)")
        most = state["reads_most_keys"]
        where = f"position {most[0]}" if len(most) == 1 else "positions " + " and ".join(map(str, most))
        return (f"Head {state['head']} of {state['n_heads']}: " + "; ".join(parts)
                + f". Overall it reads <b>{where}</b> most "
                  f"(mean weight {state['reads_most_weight']:.2f}{' each' if len(most) > 1 else ''}).")


def heads_explorer():
    """The lesson's view: the fixture with 2 heads, starting on head 0 (the text asks about head 1)."""
    return HeadsExplorer()


EXPLORERS = (heads_explorer,)
