"""Lesson 09's widgets: the encoder since 2017, one question each.

RMSNorm against layer norm on rows moved off mean 0; rotary positions' scores by distance, in both layouts; the
hidden layers of four FFNs of one parameter count; the gradient through depth in the three placements; the bytes
of attention's weights against blockwise attention's; how far local attention reaches through a stack. The numbers
come from ``encoder_lib.experiments.modern``.
"""

import ipywidgets as widgets
import numpy as np

from .. import plots
from ..experiments import modern as lesson
from ._base import COLORS, MARKERS, Explorer, drawing_order, highlight
from ._controls import checkbox, slider, toggle

NORM_NAMES = {"layer": "layer norm", "rms": "RMSNorm"}


def choice_slider(description, options, value, fmt="{}"):
    """A slider over a few given values, each labelled as ``fmt`` writes it."""
    return widgets.SelectionSlider(options=[(fmt.format(v), v) for v in options], value=value,
                                   description=description, continuous_update=True,
                                   style={"description_width": "initial"})


class NormExplorer(Explorer):
    """What does RMSNorm do to rows whose mean is not 0, where layer norm takes the mean out?"""

    figsize = (7.2, 3.0)

    def __init__(self, seed=0):
        self.rows = lesson.unit_rows(seed)  # (6, 16): mean 0, variance 1
        self.outputs = {c: lesson.norms_of(self.rows + c) for c in lesson.OFFSETS}
        controls = {"offset": choice_slider("offset", lesson.OFFSETS, 0.0, "{:.1f}"),
                    "norm": toggle("norm", tuple((name, key) for key, name in NORM_NAMES.items()), "rms")}
        super().__init__(
            "RMSNorm against layer norm",
            "Six rows of mean 0 and variance 1, each with the offset added to every entry. Left: the chosen norm's "
            "output rows. Right: row 0 before (dotted) and after each norm; the chosen one is bold.", controls)

    def setup(self, figure):
        map_ax, self.line_ax = figure.subplots(1, 2, width_ratios=(1.1, 1))
        self.map_image, _ = plots.heatmap(map_ax, np.zeros(self.rows.shape), title=" ", xlabel="feature", ylabel="row",
                                      vmin=-3, vmax=3, annotate=False)
        map_ax.set_xticks(range(0, self.rows.shape[1], 3))
        features = np.arange(self.rows.shape[1])
        (self.input_line,) = self.line_ax.plot(features, self.rows[0], ls=":", color=plots.GUIDE, label="input")
        self.lines = {}
        for i, (key, name) in enumerate(NORM_NAMES.items()):
            (self.lines[key],) = self.line_ax.plot(features, self.rows[0], marker=MARKERS[i], markersize=3,
                                                   color=COLORS[i], label=name)
        self.line_ax.axhline(0, color=plots.GUIDE, lw=0.6)
        self.line_ax.set(title="row 0", xlabel="feature", ylabel="value", ylim=(-3, 6.5))
        self.line_ax.legend(loc="upper right", fontsize=8)

    def dynamic_artists(self):
        return drawing_order([self.map_image, self.map_image.axes.title, self.input_line, *self.lines.values()],
                             spines_of=[self.map_image.axes])

    def draw(self, offset, norm):
        out = self.outputs[offset]
        self.map_image.set_data(out[norm])
        self.map_image.axes.set_title(f"{NORM_NAMES[norm]}, offset {offset:.1f}")
        self.input_line.set_ydata(self.rows[0] + offset)
        for i, (key, line) in enumerate(self.lines.items()):
            line.set_ydata(out[key][0])
            highlight(line, COLORS[i], key == norm)
        (rms_mean, rms_root), (layer_mean, layer_root) = (lesson.row_stats(out[key]) for key in ("rms", "layer"))
        return {"offset": float(offset), "norm": norm, "rms_mean": float(np.round(rms_mean.mean(), 12)) + 0,
                "layer_mean": float(np.abs(layer_mean).max()), "rms_rms": float(rms_root.mean()),
                "layer_rms": float(layer_root.mean()),
                "difference": float(np.abs(out["layer"] - out["rms"]).max())}

    def describe(self, s):
        gap = "less than 1e-6" if s["difference"] < 1e-6 else f"{s['difference']:.2f}"
        return (f"{NORM_NAMES[s['norm']]} drawn, offset {s['offset']:.1f}: RMSNorm's rows have mean <b>"
                f"{s['rms_mean']:.2f}</b> and root mean square {s['rms_rms']:.2f}; layer norm's have mean "
                f"{s['layer_mean']:.2f} and root mean square {s['layer_rms']:.2f}; the two outputs differ by up to <b>{gap}</b>")


class RopeExplorer(Explorer):
    """With rotary positions, does a score depend on where the query and key are, or only on how far apart?"""

    figsize = (7.2, 3.0)

    def __init__(self, seed=1):
        self.scores = {(layout, shift): lesson.rope_scores(layout, shift, seed=seed)
                       for layout in lesson.LAYOUTS for shift in lesson.SHIFTS}
        controls = {"layout": toggle("layout", lesson.LAYOUTS, "half"),
                    "shift": choice_slider("shift", lesson.SHIFTS, 0)}
        super().__init__(
            "Rotary positions: a score depends on i - j",
            "One query vector and one key vector, turned by their positions (shift to shift + 15). Left: every "
            "query-key score. Right: the scores by i - j, in both layouts (the chosen one bold); the ring marks "
            "query 9 with key 4.", controls)

    def setup(self, figure):
        map_ax, self.line_ax = figure.subplots(1, 2, width_ratios=(1, 1.1))
        self.map_image, _ = plots.heatmap(map_ax, np.zeros((lesson.SEQ, lesson.SEQ)), title=" ", xlabel="key j",
                                      ylabel="query i", vmin=-0.8, vmax=0.8, annotate=False)
        map_ax.set_xticks(range(0, lesson.SEQ, 3))
        map_ax.set_yticks(range(0, lesson.SEQ, 3))
        self.lines = {}
        for i, layout in enumerate(lesson.LAYOUTS):
            (self.lines[layout],) = self.line_ax.plot([0], [0], marker=MARKERS[i], markersize=3, color=COLORS[i],
                                                      label=layout)
        (self.ring,) = self.line_ax.plot([5], [0], "o", mfc="none", mec="black", ms=10)
        self.line_ax.set(title=" ", xlabel="i - j", ylabel="score", ylim=(-0.8, 0.8), xlim=(-lesson.SEQ, lesson.SEQ))
        self.line_ax.legend(loc="lower left", fontsize=8)

    def dynamic_artists(self):
        return drawing_order([self.map_image, self.map_image.axes.title, *self.lines.values(), self.ring,
                              self.line_ax.title], spines_of=[self.map_image.axes])

    def draw(self, layout, shift):
        scores = self.scores[layout, shift]
        self.map_image.set_data(scores)
        self.map_image.axes.set_title(f"{layout}, positions {shift} to {shift + lesson.SEQ - 1}")
        spread = 0.0
        for i, (name, line) in enumerate(self.lines.items()):
            offsets, score, ptp = lesson.by_offset(self.scores[name, shift])
            line.set_data(offsets, score)
            highlight(line, COLORS[i], name == layout)
            spread = max(spread, float(ptp.max()))
        self.ring.set_ydata([scores[9, 4]])
        other = self.scores[next(x for x in lesson.LAYOUTS if x != layout), shift]
        moved = max(float(np.abs(scores - self.scores[layout, s]).max()) for s in lesson.SHIFTS)
        self.line_ax.set_title(f"query 9, key 4: {scores[9, 4]:+.3f}")
        return {"layout": layout, "shift": int(shift), "pair_score": float(scores[9, 4]),
                "other_layout_pair_score": float(other[9, 4]), "diagonal_spread": spread,
                "shift_change": moved, "layout_difference": float(np.abs(scores - other).max())}

    def describe(self, s):
        same = "less than 1e-6" if s["diagonal_spread"] < 1e-6 else f"{s['diagonal_spread']:.2g}"
        return (f"{s['layout']} layout, shift {s['shift']}: query 9 and key 4 score <b>{s['pair_score']:+.3f}</b> "
                f"(the other layout: {s['other_layout_pair_score']:+.3f}); pairs equally far apart score the same "
                f"to within {same}, and moving both by any shift changes no score by more than "
                f"{'1e-6' if s['shift_change'] < 1e-6 else format(s['shift_change'], '.2g')}")


PLACEMENT_WORDS = {"post": "post-norm", "pre": "pre-norm", "peri": "peri-norm"}


class PlacementExplorer(Explorer):
    """How large a gradient reaches each block at initialisation, in the three placements?"""

    figsize = (7.2, 3.2)

    def __init__(self):
        self.table = lesson.placement_gradients()
        controls = {"depth": slider("depth", lesson.MAX_DEPTH, 1, lesson.MAX_DEPTH),
                    "norm": toggle("placement", tuple((w, n) for n, w in PLACEMENT_WORDS.items()), "peri")}
        super().__init__(
            "The gradient through a stack, three placements",
            "At initialisation, the loss sum(out * g) for a random g, three seeds (lesson 07's setting). Left: the "
            "gradient norm of each block's parameters in a stack of the chosen depth, block 1 at the left. Right: "
            "the top block's, for every depth; the ring marks the chosen one. The chosen placement is bold.",
            controls)

    def setup(self, figure):
        self.block_ax, self.top_ax = figure.subplots(1, 2)
        self.block_lines, self.top_lines = {}, {}
        depths = np.arange(1, lesson.MAX_DEPTH + 1)
        for i, norm in enumerate(lesson.PLACEMENTS):
            (self.block_lines[norm],) = self.block_ax.plot([1], [1], marker=MARKERS[i], markersize=3, color=COLORS[i],
                                                           label=PLACEMENT_WORDS[norm])
            (self.top_lines[norm],) = self.top_ax.plot(depths, np.diagonal(self.table[norm]), marker=MARKERS[i],
                                                       markersize=3, color=COLORS[i])
        (self.ring,) = self.top_ax.plot([1], [1], "o", mfc="none", mec="black", ms=10)
        top = 1.1 * max(float(t.max()) for t in self.table.values())
        self.block_ax.set(title=" ", xlabel="block (1 = the first)", ylabel="gradient norm", ylim=(0, top),
                          xlim=(0.5, lesson.MAX_DEPTH + 0.5))
        self.top_ax.set(title="the top block, by depth", xlabel="depth (blocks)", ylabel="gradient norm", ylim=(0, top))
        self.block_ax.legend(loc="upper right", fontsize=8)

    def dynamic_artists(self):
        return [*self.block_lines.values(), *self.top_lines.values(), self.ring, self.block_ax.title]

    def draw(self, depth, norm):
        for i, name in enumerate(lesson.PLACEMENTS):
            self.block_lines[name].set_data(np.arange(1, depth + 1), self.table[name][depth - 1, :depth])
            for line in (self.block_lines[name], self.top_lines[name]):
                highlight(line, COLORS[i], name == norm)
        row = self.table[norm][depth - 1, :depth]
        self.ring.set_data([depth], [row[-1]])
        self.block_ax.set_title(f"{PLACEMENT_WORDS[norm]}, {depth} blocks")
        return {"depth": int(depth), "norm": norm, "top": float(row[-1]), "bottom": float(row[0]),
                "bottom_over_top": float(row[0] / row[-1]), "one_block": float(self.table[norm][0, 0])}

    def describe(self, s):
        return (f"{PLACEMENT_WORDS[s['norm']]}, {s['depth']} blocks: block 1 gets a gradient of <b>{s['bottom']:.0f}"
                f"</b>, block {s['depth']} (the top) <b>{s['top']:.0f}</b>; a single block gets {s['one_block']:.0f}")


FFN_NAMES = {"relu": "ReLU", "gelu": "GELU", "geglu": "GeGLU", "swiglu": "SwiGLU"}


class GatedFFNExplorer(Explorer):
    """At one parameter count, how wide is each FFN's hidden layer, and which values can it hold?"""

    figsize = (7.2, 3.0)

    def __init__(self, seed=2):
        self.hidden = lesson.ffn_hidden(seed)
        self.counts = {kind: sum(a.size for a in params.values()) for kind, (_, params) in self.hidden.items()}
        controls = {"kind": toggle("FFN", tuple((name, key) for key, name in FFN_NAMES.items()), "relu")}
        super().__init__(
            "Four FFNs with the same number of weights",
            f"The hidden layer of each FFN (d_model {lesson.D_FFN}, no biases) for the same 12 positions: the plain "
            f"ones {lesson.PLAIN_D_FF} wide, the gated ones narrower, so that all four hold as many weights. Right: "
            "how the hidden values are spread.", controls)

    def setup(self, figure):
        map_ax, self.hist_ax = figure.subplots(1, 2, width_ratios=(1.3, 1))
        self.map_image, _ = plots.heatmap(map_ax, np.zeros((12, lesson.PLAIN_D_FF)), title=" ", xlabel="hidden unit",
                                      ylabel="position", vmin=-1.5, vmax=1.5, annotate=False)
        map_ax.set_xticks(range(0, lesson.PLAIN_D_FF, 8))
        self.edges = np.linspace(-1.5, 2.0, 29)
        self.bars = self.hist_ax.bar(self.edges[:-1], np.zeros(len(self.edges) - 1), width=np.diff(self.edges),
                                     align="edge", color=COLORS[0], edgecolor="black", linewidth=0.4)
        self.hist_ax.axvline(0, color=plots.GUIDE, lw=0.8, ls=":")
        self.hist_ax.set(title=" ", xlabel="hidden value", ylabel="share of values", ylim=(0, 1))

    def dynamic_artists(self):
        return drawing_order([self.map_image, self.map_image.axes.title, *self.bars, self.hist_ax.title],
                             spines_of=[self.map_image.axes, self.hist_ax])

    def draw(self, kind):
        hidden, _ = self.hidden[kind]
        shown = np.full((hidden.shape[0], lesson.PLAIN_D_FF), np.nan)  # a narrower layer leaves columns empty
        shown[:, : hidden.shape[1]] = hidden
        self.map_image.set_data(shown)
        width = hidden.shape[1]
        self.map_image.axes.set_title(f"{FFN_NAMES[kind]}: {width} hidden units")
        shares = np.histogram(np.clip(hidden, self.edges[0], self.edges[-1]), self.edges)[0] / hidden.size
        for bar, share in zip(self.bars, shares):
            bar.set_height(share)
        self.hist_ax.set_title(f"{self.counts[kind]:,} weights")
        return {"kind": kind, "width": int(width), "weights": int(self.counts[kind]),
                "zero_share": float(np.mean(hidden == 0)), "negative_share": float(np.mean(hidden < 0)),
                "lowest": float(hidden.min()), "highest": float(hidden.max())}

    def describe(self, s):
        return (f"{FFN_NAMES[s['kind']]}: {s['width']} hidden units, <b>{s['weights']:,}</b> weights; "
                f"{s['zero_share']:.0%} of its hidden values are exactly 0 and {s['negative_share']:.0%} negative, "
                f"from {s['lowest']:+.2f} to {s['highest']:+.2f}")


class MemoryExplorer(Explorer):
    """How do the bytes of attention's weights grow with the sequence, and those blockwise attention holds?"""

    figsize = (6.4, 3.2)

    def __init__(self):
        self.table = lesson.memory_table()
        self.seqs = np.array(lesson.MEMORY_SEQS)
        controls = {"seq": choice_slider("sequence length", lesson.MEMORY_SEQS, 512, "{:,}"),
                    "block": toggle("block of keys", lesson.BLOCKS, 128)}
        super().__init__(
            "Attention's memory",
            f"The float32 bytes of one layer's attention weights, (1, {lesson.MEMORY_HEADS} heads, seq, seq), "
            "against the (1, heads, seq, block) scores blockwise attention holds at a time. Both axes are "
            "logarithmic: a line twice as steep grows with the square.", controls)

    def setup(self, figure):
        ax = self.ax = figure.add_subplot()
        (self.full_line,) = ax.loglog(self.seqs, self.table["full"], marker=MARKERS[0], color=COLORS[0],
                                      label="full weights")
        (self.block_line,) = ax.loglog(self.seqs, self.table[128], marker=MARKERS[1], color=COLORS[1], ls="--",
                                       label="blockwise")
        (self.marks,) = ax.loglog([512, 512], [1, 1], "o", mfc="none", mec="black", ms=11)
        ax.axhline(1e9, color=plots.GUIDE, lw=0.8, ls=":")
        ax.text(self.seqs[-1], 1.3e9, "1 GB", fontsize=8, ha="right")
        ax.set(title=" ", xlabel="sequence length (tokens)", ylabel="bytes", ylim=(3e5, 5e10))
        ax.legend(loc="upper left", fontsize=8)

    def dynamic_artists(self):
        return [self.block_line, self.marks, self.ax.title]

    def draw(self, seq, block):
        i = int(np.flatnonzero(self.seqs == seq)[0])
        self.block_line.set_ydata(self.table[block])
        full, held = float(self.table["full"][i]), float(self.table[block][i])
        self.marks.set_data([seq, seq], [full, held])
        self.ax.set_title(f"seq {seq:,}: {_size(full)} against {_size(held)}")
        return {"seq": int(seq), "block": int(block), "full_bytes": full, "block_bytes": held,
                "gap": lesson.blockwise_gap(block)}

    def describe(self, s):
        return (f"at {s['seq']:,} tokens the weights take <b>{_size(s['full_bytes'])}</b>; blocks of {s['block']} "
                f"keys hold <b>{_size(s['block_bytes'])}</b> at a time, and blockwise attention's output equals the "
                f"full one's to within {'1e-12' if s['gap'] < 1e-12 else format(s['gap'], '.1e')}")


def _size(n):
    """Bytes in words: kB, MB or GB (powers of 1000)."""
    for unit, size in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= size:
            return f"{n / size:,.1f} {unit}"
    return f"{n:,.0f} bytes"


class WindowExplorer(Explorer):
    """How far does local attention reach, one layer and a stack of them?"""

    figsize = (7.2, 3.2)

    def __init__(self):
        controls = {"window": toggle("window", tuple((f"{w} ({w // 2} either side)", w) for w in lesson.WINDOWS), 4),
                    "layers": slider("layers", 1, 1, lesson.WINDOW_LAYERS),
                    "global_layers": checkbox("every third layer global, from the first", False)}
        super().__init__(
            "How far local attention reaches",
            f"{lesson.WINDOW_SEQ} positions. Left: which keys one local layer lets each query read. Right: which "
            "inputs can change each position's output after the chosen number of layers. Bright: yes.", controls)

    def setup(self, figure):
        axes = figure.subplots(1, 2)
        blank = np.zeros((lesson.WINDOW_SEQ, lesson.WINDOW_SEQ))
        self.images = [plots.heatmap(ax, blank, title=" ", xlabel=x, ylabel="query position", annotate=False,
                                     colorbar=False)[0] for ax, x in zip(axes, ("key position", "input position"))]
        for ax in axes:
            ax.set_xticks(range(0, lesson.WINDOW_SEQ, 4))
            ax.set_yticks(range(0, lesson.WINDOW_SEQ, 4))

    def dynamic_artists(self):
        return drawing_order([*self.images, *(image.axes.title for image in self.images)],
                             spines_of=[image.axes for image in self.images])

    def draw(self, window, layers, global_layers):
        every = 3 if global_layers else None
        one, many = lesson.reach(window, 1), lesson.reach(window, layers, global_every=every)
        self.images[0].set_data(one)
        self.images[0].axes.set_title(f"one local layer, window {window}")
        self.images[1].set_data(many)
        self.images[1].axes.set_title(f"after {layers} layer{'s' if layers > 1 else ''}"
                                      + (", 1 in 3 global" if global_layers else ", all local"))
        farthest = int(np.flatnonzero(many[0]).max())
        return {"window": int(window), "layers": int(layers), "global_layers": bool(global_layers),
                "farthest_from_0": farthest, "everywhere": bool(many.all()),
                "layers_to_10": lesson.layers_to_reach(window, 10, global_every=every)}

    def describe(self, s):
        return (f"window {s['window']}, {s['layers']} layer{'s' if s['layers'] > 1 else ''}"
                f"{', every third global' if s['global_layers'] else ''}: position 0's output can depend on inputs "
                f"up to <b>{s['farthest_from_0']}</b> positions away" + (" (every position)" if s["everywhere"] else ""))


EXPLORERS = (NormExplorer, RopeExplorer, GatedFFNExplorer, PlacementExplorer, MemoryExplorer, WindowExplorer)
