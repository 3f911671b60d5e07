"""Lesson 01's widget: how scaling by 1/sqrt(d_k) and a temperature shape the attention weights.

The question it answers: what happens to the weights when scaling is off and
d_k is large? Random queries and keys have dot products whose spread grows
like sqrt(d_k); without the 1/sqrt(d_k) the softmax sees large scores and puts
nearly all of a query's weight on one key.
"""

import numpy as np
from matplotlib.patches import Rectangle


from .. import plots
from ..experiments.attention import attention_weights, entropy, random_queries_keys, score_std
from ._base import Explorer, drawing_order
from ._controls import checkbox, slider, toggle

D_K_OPTIONS = (4, 16, 64, 256)


class AttentionExplorer(Explorer):
    """One query's weight row (bars) and the whole weight matrix (heatmap) for random q and k."""

    figsize = (7.2, 3.2)

    def __init__(self, seq=6, seed=0, d_k=64, query=0, scale=True, temperature=1.0):
        self.seq = seq
        # the random queries and keys for every d_k, drawn once: no control changes them
        self.data = {d: random_queries_keys(d, seq, seed) for d in D_K_OPTIONS}
        controls = {
            "query": slider("query position", query, 0, seq - 1),
            "temperature": slider("temperature", float(temperature), 0.25, 4.0, 0.25),
            "scale": checkbox("scale by 1/sqrt(d_k)", scale),
            "d_k": toggle("d_k", D_K_OPTIONS, d_k),
        }
        caption = ("Turn the scaling off, then raise d_k: the chosen query's largest weight climbs towards 1 "
                   "and its entropy falls towards 0 (the softmax saturates). "
                   "Temperature above 1 spreads the weights out, below 1 sharpens them.")
        super().__init__("Scaled dot-product attention on random queries and keys", caption, controls)

    def setup(self, figure):
        bar_ax, map_ax = figure.subplots(1, 2, width_ratios=(1, 1.15))
        self.bars, self.bar_texts = plots.labelled_bars(
            bar_ax, self.seq, title="", xlabel="key position", ylabel="attention weight", ylim=(0, 1.15))
        self.bar_title = bar_ax.title
        self.weights_map, self.texts = plots.heatmap(
            map_ax, np.full((self.seq, self.seq), 1 / self.seq), title="all weights (row = query)",
            xlabel="key position", ylabel="query position", annotate=False)  # the bars carry the numbers
        # an outline around the chosen query's row: black with a white halo, seen on dark and light cells
        self.row_box = map_ax.add_patch(
            Rectangle((-0.5, -0.5), self.seq, 1, fill=False, edgecolor="black", linewidth=2.5,
                      path_effects=plots.halo(2.5)))

    def dynamic_artists(self):
        changing = [self.bar_title, *self.bars, *self.bar_texts, self.weights_map, self.row_box]
        return drawing_order(changing, spines_of=[self.weights_map.axes])

    def draw(self, query, temperature, scale, d_k):
        q, k = self.data[d_k]
        weights = attention_weights(q, k, scale, temperature)  # (seq, seq)
        row = weights[query]
        plots.update_bars(self.bars, self.bar_texts, row)
        self.bar_title.set_text(f"query {query}: its weights over the keys")
        plots.update_heatmap(self.weights_map, self.texts, weights)
        self.row_box.set_y(query - 0.5)
        return {
            "query": int(query),
            "d_k": int(d_k),
            "scale": bool(scale),
            "temperature": float(temperature),
            "max_weight": float(row.max()),
            "argmax_key": int(row.argmax()),
            "entropy": float(entropy(row)),
            "uniform_entropy": float(np.log(self.seq)),
            "mean_max_weight": float(weights.max(axis=-1).mean()),
            "score_std": score_std(q, k, scale, temperature),
            "row": [float(w) for w in row],
        }

    def describe(self, state):
        return (f"query {state['query']}: largest weight <b>{state['max_weight']:.3f}</b> on key "
                f"{state['argmax_key']}; row entropy <b>{state['entropy']:.2f}</b> nats "
                f"(even split: {state['uniform_entropy']:.2f}, one-hot: 0); "
                f"spread (std) of the scores fed to the softmax: {state['score_std']:.1f}")


def attention_explorer():
    """The lesson's default view: d_k 64, scaling on, query 0."""
    return AttentionExplorer()


EXPLORERS = (attention_explorer,)
