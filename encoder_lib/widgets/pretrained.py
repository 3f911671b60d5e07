"""Lesson 08's widgets: inside all-MiniLM-L6-v2, a real encoder run through encoder_lib's blocks.

The questions they answer: what does one head of the real model read from a
given token (the previous word, ``[CLS]``, the same word elsewhere)? And
which summary of a sentence, at which layer, tells paraphrases from
unrelated sentences? The model runs once, when a widget is built
(``encoder_lib.pretrained.encode``), and ``encoder_lib.experiments.pretrained``
computes what they show from it; the controls only choose what to show.
"""

import html

import ipywidgets as widgets
import numpy as np
from matplotlib.patches import Rectangle

from .. import plots
from ..experiments.pretrained import POOLINGS, pair_gap, paraphrase_gaps, similarities, text_attention
from ..pretrained import Encoding, encode
from ._base import COLORS, MARKERS, Explorer, drawing_order
from ._controls import slider, toggle

#: The attention widget's sentence: "the" and "cat" come twice, so a head that reads the same word elsewhere shows.
DEFAULT_SENTENCE = "The cat sat on the mat because the cat was tired."
#: The similarity widget's sentences: three pairs of paraphrases about unrelated things.
DEFAULT_TEXTS = (
    "A man is playing a guitar.", "Someone is playing an instrument.",
    "The stock market fell sharply today.", "Share prices dropped this afternoon.",
    "The cat is sleeping on the sofa.", "A kitten naps on the couch.",
)


def _quoted(token):
    return "'" + html.escape(token) + "'"


class AttentionHeadExplorer(Explorer):
    """One head's attention over a text's real tokens, and one query token's weights over the keys."""

    figsize = (8.4, 3.6)

    def __init__(self, encoding=None, index=0, layer=1, head=0, query=1):
        if encoding is None:
            encoding = encode(DEFAULT_SENTENCE)
        if not isinstance(encoding, Encoding):
            raise TypeError("encoding must be what encoder_lib.pretrained.encode returns, "
                            f"got {type(encoding).__name__}")
        n_texts = len(encoding.texts)
        if isinstance(index, bool) or not isinstance(index, (int, np.integer)) or not 0 <= index < n_texts:
            raise ValueError(f"index must be the number of one of the encoding's {n_texts} texts, 0 to {n_texts - 1}, "
                             f"got {index!r}")
        # the text's own tokens ([CLS] and [SEP] included), and every head's weights between them: (layers, heads, n, n)
        self.tokens, self.weights = text_attention(encoding, index)
        n_layers, n_heads, n = self.weights.shape[:3]
        self.n = n
        query = min(max(int(query), 0), n - 1)
        controls = {
            "layer": slider("layer", min(max(layer, 1), n_layers), 1, n_layers),
            "head": slider("head", min(max(head, 0), n_heads - 1), 0, n_heads - 1),  # heads from 0, as in lesson 02
            "query": widgets.SelectionSlider(
                options=[(f"{i}: {token}", i) for i, token in enumerate(self.tokens)], value=query,
                description="query token", continuous_update=True, style={"description_width": "initial"}),
        }
        caption = ("Left: one head's weights, row = query token, column = key token (each row sums to 1); the "
                   "outlined row is the chosen query. Right: that row as bars, the key it reads most hatched. "
                   "Look for heads whose every row reads the previous token, [CLS] or [SEP], or the same word "
                   "elsewhere. Layers count from 1 (layer k is block k), heads from 0, as in lesson 02.")
        super().__init__("What one head of all-MiniLM-L6-v2 reads", caption, controls)

    def setup(self, figure):
        map_ax, bar_ax = figure.subplots(1, 2, width_ratios=(1.15, 1))
        self.weights_map, _ = plots.heatmap(
            map_ax, np.zeros((self.n, self.n)), title=" ", xlabel="key token", ylabel="query token",
            row_labels=self.tokens, col_labels=self.tokens, annotate=False)
        map_ax.tick_params(axis="x", labelrotation=90, labelsize=8)
        map_ax.tick_params(axis="y", labelsize=8)
        self.map_title = map_ax.title
        # black with a white halo: it stands out on the heatmap's dark and light cells alike
        self.outline = map_ax.add_patch(Rectangle((-0.5, -0.5), self.n, 1, fill=False, edgecolor="black",
                                                  linewidth=2.0, zorder=3, path_effects=plots.halo(2.0)))
        self.bars = bar_ax.bar(np.arange(self.n), np.zeros(self.n), color=COLORS[0], edgecolor="black", linewidth=0.6)
        bar_ax.set_xticks(np.arange(self.n), self.tokens)
        bar_ax.tick_params(axis="x", labelrotation=90, labelsize=8)
        bar_ax.set_xlim(-0.6, self.n - 0.4)
        bar_ax.set_ylim(0, 1.05)
        bar_ax.set_xlabel("key token")
        bar_ax.set_ylabel("attention weight")
        bar_ax.set_title(" ")
        self.bar_title = bar_ax.title

    def dynamic_artists(self):
        changing = [self.map_title, self.weights_map, self.outline, self.bar_title, *self.bars]
        return drawing_order(changing, spines_of=[self.weights_map.axes, self.bars[0].axes])

    def draw(self, layer, head, query):
        weights = self.weights[layer - 1, head]  # (n, n): row = query, column = key; layers from 1, heads from 0
        row = weights[query]  # (n,): what the query token reads
        top = int(np.argmax(row))
        plots.update_heatmap(self.weights_map, None, weights)
        self.outline.set_y(query - 0.5)
        self.map_title.set_text(f"layer {layer}, head {head}")
        for i, (bar, value) in enumerate(zip(self.bars, row)):
            bar.set_height(value)
            bar.set_facecolor(COLORS[1] if i == top else COLORS[0])
            bar.set_hatch("//" if i == top else "")
        self.bar_title.set_text(f"what '{self.tokens[query]}' ({query}) reads")
        return {
            "layer": int(layer), "head": int(head), "query": int(query), "query_token": self.tokens[query],
            "row": [float(w) for w in row],
            "top_key": top, "top_token": self.tokens[top], "top_weight": float(row[top]),
            "previous_weight": float(row[query - 1]) if query > 0 else None,
            "own_weight": float(row[query]),
            "cls_weight": float(row[0]), "sep_weight": float(row[-1]),
        }

    def describe(self, s):
        previous = "none" if s["previous_weight"] is None else f"{s['previous_weight']:.2f}"
        return (f"layer {s['layer']}, head {s['head']}: {_quoted(s['query_token'])} reads "
                f"<b>{_quoted(s['top_token'])}</b> most ({s['top_weight']:.2f}). Its weight on the previous token: "
                f"{previous}; on itself: {s['own_weight']:.2f}; on [CLS]: {s['cls_weight']:.2f}; "
                f"on [SEP]: {s['sep_weight']:.2f}")


class SimilarityExplorer(Explorer):
    """Cosine similarities of a few sentences, summarised by mean pooling or by [CLS], after each layer."""

    figsize = (8.4, 3.4)
    POOLINGS = POOLINGS

    def __init__(self, texts=DEFAULT_TEXTS, pairs=None, layer=None, pooling="mean"):
        texts = list(texts)
        if pairs is None:  # the default: texts 0 and 1 are paraphrases, 2 and 3, ...
            pairs = [(i, i + 1) for i in range(0, len(texts) - 1, 2)]
        self.texts, self.pairs = texts, [tuple(p) for p in pairs]
        self.similarity = similarities(texts)  # (pooling, layer) -> (n, n) cosine similarities; layer 0: embeddings
        self.gaps = paraphrase_gaps(self.similarity, self.pairs)  # pooling -> the paraphrases' lead, by layer
        self.n_layers = len(self.gaps["mean"]) - 1
        controls = {
            "pooling": toggle("sentence vector", tuple((label, name) for name, label in self.POOLINGS.items()),
                              pooling),
            "layer": slider("after layer", self.n_layers if layer is None else layer, 0, self.n_layers),
        }
        pairs_text = ", ".join(f"{i + 1} and {j + 1}" for i, j in self.pairs)
        caption = (f"Left: the cosine similarity of every two sentences' vectors (darkest at 0 or below); sentences "
                   f"{pairs_text} are paraphrases. Right: how far the paraphrases' mean similarity is above the "
                   "other pairs', after each layer (layer 0 is the embedding layer), for both ways of making one "
                   "vector per sentence. all-MiniLM-L6-v2 was trained with the mean after layer 6.")
        super().__init__("Which sentence vector tells paraphrases apart?", caption, controls)

    def setup(self, figure):
        map_ax, gap_ax = figure.subplots(1, 2, width_ratios=(1.35, 1))
        n = len(self.texts)
        labels = [f"{i + 1}  {text}" for i, text in enumerate(self.texts)]
        self.similarity_map, self.texts_in_cells = plots.heatmap(
            map_ax, np.zeros((n, n)), title=" ", xlabel="sentence", ylabel="sentence",
            row_labels=labels, col_labels=[str(i + 1) for i in range(n)])
        map_ax.tick_params(axis="y", labelsize=8)
        self.map_title = map_ax.title
        layers = np.arange(self.n_layers + 1)
        for i, (name, label) in enumerate(self.POOLINGS.items()):
            gap_ax.plot(layers, self.gaps[name], marker=MARKERS[i], color=COLORS[i], markersize=4, label=label,
                        ls="-" if i == 0 else "--")
        (self.marker,) = gap_ax.plot([0], [0], marker="o", markersize=12, markerfacecolor="none",
                                     markeredgecolor="black", markeredgewidth=1.5, ls="none", zorder=4)
        gap_ax.axhline(0, color=plots.GUIDE, lw=0.8, ls=":")
        gap_ax.set_xticks(layers)
        gap_ax.set_xlabel("after layer")
        gap_ax.set_ylabel("paraphrases minus others")
        gap_ax.set_title("how far apart")
        gap_ax.legend(loc="upper left", fontsize=8)

    def dynamic_artists(self):
        changing = [self.map_title, self.similarity_map, *(t for row in self.texts_in_cells for t in row),
                    self.marker]
        return drawing_order(changing, spines_of=[self.similarity_map.axes])

    def draw(self, pooling, layer):
        similarity = self.similarity[pooling, layer]
        plots.update_heatmap(self.similarity_map, self.texts_in_cells, similarity)
        self.marker.set_data([layer], [self.gaps[pooling][layer]])
        where = "the embedding layer" if layer == 0 else f"layer {layer}"
        self.map_title.set_text(f"{self.POOLINGS[pooling]}, after {where}")
        paraphrases, others = pair_gap(similarity, self.pairs)
        return {"pooling": pooling, "layer": int(layer), "similarity": similarity.round(4).tolist(),
                "paraphrase_mean": paraphrases, "other_mean": others, "gap": paraphrases - others}

    def describe(self, s):
        where = "the embedding layer" if s["layer"] == 0 else f"layer {s['layer']}"
        return (f"{self.POOLINGS[s['pooling']]} after {where}: paraphrases {s['paraphrase_mean']:.2f} on average, "
                f"other pairs {s['other_mean']:.2f}, <b>a gap of {s['gap']:.2f}</b>")


EXPLORERS = (AttentionHeadExplorer, SimilarityExplorer)
