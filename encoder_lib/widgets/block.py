"""Lesson 05 widgets: inside one encoder block, padding, and word order.

- ``BlockStepExplorer``: step through the block's intermediates (post- or pre-norm).
- ``PaddingExplorer``: add padding after three real tokens; do their outputs move?
- ``PermutationExplorer``: shuffle the tokens, with and without positional encoding.

All three use a small seeded block: d_model 16, 4 heads, d_ff 64.
"""

import matplotlib
import matplotlib.ticker
import numpy as np

from ..experiments import rms
from ..experiments.block import (D_MODEL, MAX_PAD, N_HEADS, N_SHUFFLES, REAL, SEQ, STEPS, padding_experiment,
                                  shuffle_experiment, step_traces, toy_block)
from ..plots import GUIDE, heatmap
from ._base import COLORS, MARKERS, Explorer, drawing_order
from ._controls import checkbox, placement_toggle, slider, toggle


def _labels_from(labels):
    """A tick formatter that reads tick ``pos``'s label from the list ``labels`` (changed in place later)."""
    def label(value, pos):
        return labels[pos] if pos is not None and pos < len(labels) else ""

    return matplotlib.ticker.FuncFormatter(label)


class BlockStepExplorer(Explorer):
    """Where do the rows get mean 0 and std 1, and where does the scale grow?"""

    def __init__(self, x=None, params=None, n_heads=N_HEADS):
        if x is None or params is None:
            params, x = toy_block()
        self.traces = step_traces(x, params, n_heads)
        self.seq = x.shape[-2]
        # one fixed x range for the row statistics, so the dots move against a still frame
        widest = max(float(t[key].std(axis=-1).max()) for t in self.traces.values() for key, _ in STEPS["post"])
        lowest = min(float(t[key].mean(axis=-1).min()) for t in self.traces.values() for key, _ in STEPS["post"])
        self.stat_range = (min(-0.2, lowest - 0.1), max(1.2, widest + 0.1))
        controls = {
            "step": slider("step", 3, 0, len(STEPS["post"]) - 1),
            "norm": placement_toggle("post"),
        }
        super().__init__(
            "One block, step by step",
            "Move the step slider: the heatmap shows every position's features at that point of the block; "
            "the dots on the right are each row's mean (circles) and standard deviation (squares). "
            "Look for the steps where every square sits on the line at 1, and for the steps whose colour scale "
            "(the RMS in the readout) is larger than the input's.",
            controls,
        )

    def setup(self, figure):
        grid = figure.add_gridspec(1, 2, width_ratios=(3.2, 1))
        self.ax_map = figure.add_subplot(grid[0])
        self.ax_stats = figure.add_subplot(grid[1], sharey=self.ax_map)
        first = self.traces["post"]["input"]
        self.map_image, _ = heatmap(self.ax_map, first, title=" ", xlabel="feature", ylabel="position",
                                vmin=-1, vmax=1, annotate=False)
        self.shown_cols = None
        # one label width for every scale, so the layout made for the first picture fits them all
        self.map_image.colorbar.formatter = matplotlib.ticker.FormatStrFormatter("%.1f")
        ax = self.ax_stats
        ax.axvline(0, color=GUIDE, lw=0.8, ls=":")
        ax.axvline(1, color=GUIDE, lw=0.8, ls="--")
        rows = np.arange(self.seq)
        (self.mean_dots,) = ax.plot(np.zeros(self.seq), rows, ls="none", marker=MARKERS[0],
                                    color=COLORS[0], label="mean")
        (self.std_dots,) = ax.plot(np.ones(self.seq), rows, ls="none", marker=MARKERS[1],
                                   color=COLORS[1], label="std")
        ax.set_xlim(*self.stat_range)
        ax.set_title("each row")
        ax.set_xlabel("value")
        ax.set_ylabel("position")
        ax.yaxis.set_label_position("right")
        ax.tick_params(left=False, labelleft=False)
        ax.legend(loc="lower center", fontsize=8, bbox_to_anchor=(0.5, 1.08), ncol=2, frameon=False,
                  handletextpad=0.2, columnspacing=0.6)

    def dynamic_artists(self):
        changing = [self.map_image, self.ax_map.title, self.ax_map.xaxis, self.mean_dots, self.std_dots]
        colorbar = self.map_image.colorbar.ax  # its scale follows the data: redrawn whole, after the rest
        return drawing_order(changing, (self.ax_map, self.ax_stats)) + [colorbar]

    def draw(self, step, norm):
        name, meaning = STEPS[norm][step]
        data = self.traces[norm][name]  # (seq, width): width is d_ff for ffn_hidden, else d_model
        rows, cols = data.shape
        self.map_image.set_data(data)
        if cols != self.shown_cols:  # only ffn_hidden is wider (d_ff): rebuild the ticks only then
            self.shown_cols = cols
            self.map_image.set_extent((-0.5, cols - 0.5, rows - 0.5, -0.5))
            self.ax_map.set_xlim(-0.5, cols - 0.5)
            ticks = range(0, cols, 4 if cols <= 16 else 16)
            self.ax_map.set_xticks(ticks, [str(t) for t in ticks])
        top = float(np.abs(data).max())
        self.map_image.set_clim(-top, top)
        self.ax_map.set_title(f"{norm}-norm, step {step}: {name}\n{meaning}", fontsize=10)
        means, stds = data.mean(axis=-1), data.std(axis=-1)
        self.mean_dots.set_xdata(means)
        self.std_dots.set_xdata(stds)
        return {
            "norm": norm, "step": step, "name": name, "meaning": meaning,
            "shape": f"({rows}, {cols})", "rows": rows, "cols": cols,
            "max_abs_row_mean": float(np.abs(means).max()),
            "min_row_std": float(stds.min()), "max_row_std": float(stds.max()),
            "rms": rms(data), "input_rms": rms(self.traces[norm]["input"]), "colour_limit": top,
        }

    def describe(self, s):
        return (f"{s['norm']}-norm, step {s['step']}: <b>{s['name']}</b> = {s['meaning']}, shape {s['shape']}: "
                f"row means within &plusmn;{s['max_abs_row_mean']:.2f} of 0, row stds {s['min_row_std']:.2f} to "
                f"{s['max_row_std']:.2f}; RMS {s['rms']:.2f} (the input's: {s['input_rms']:.2f})")


class PaddingExplorer(Explorer):
    """Do the real tokens' outputs move when you add padding?"""

    def __init__(self, seed=0, n_heads=N_HEADS, dtype=np.float32):
        #: reference: the three tokens alone, no padding and no mask: what their outputs should stay
        self.reference, self.inputs, self.runs = padding_experiment(seed, n_heads, dtype)
        self.out_limit = max(float(np.abs(out).max()) for out, _ in self.runs.values())
        controls = {
            "n_pad": slider("padding positions", 3, 0, MAX_PAD),
            "use_mask": checkbox("use the padding mask", True),
        }
        super().__init__(
            "Padding after three real tokens",
            "The sentence is three tokens (t0 t1 t2); the slider appends padding slots filled with random junk, "
            "different for every setting. Left: head 0's attention weights, padded key columns at 0 when the "
            "mask is on. Right: the three real tokens' outputs. Does the right picture change as you move the "
            "slider? Then untick the mask.",
            controls,
        )

    def setup(self, figure):
        size = REAL + MAX_PAD
        self.ax_w, self.ax_out = figure.subplots(1, 2, width_ratios=(1, 1.35))
        blank = np.full((size, size), np.nan)
        self.w_image, _ = heatmap(self.ax_w, blank, title="head 0 attention weights", xlabel="key",
                                  ylabel="query", annotate=False)
        self.w_image.set_cmap(matplotlib.colormaps["cividis"].with_extremes(bad="#eeeeee"))
        self.out_image, _ = heatmap(self.ax_out, self.reference, title=" ", xlabel="feature", ylabel="token",
                                    row_labels=[f"t{i}" for i in range(REAL)], vmin=-self.out_limit,
                                    vmax=self.out_limit, annotate=False)
        self.ax_out.set_xticks(range(0, D_MODEL, 4), [str(t) for t in range(0, D_MODEL, 4)])
        self.slot_labels = [""] * (REAL + MAX_PAD)
        self.ax_w.set_xticks(range(REAL + MAX_PAD))
        self.ax_w.set_yticks(range(REAL + MAX_PAD))
        for axis in (self.ax_w.xaxis, self.ax_w.yaxis):
            axis.set_major_formatter(_labels_from(self.slot_labels))
        self.ax_w.tick_params(labelsize=8)
        self.ax_w.tick_params(axis="x", labelrotation=90)

    def dynamic_artists(self):
        changing = [self.w_image, self.ax_w.xaxis, self.ax_w.yaxis, self.out_image, self.ax_out.title]
        return drawing_order(changing, (self.ax_w, self.ax_out))

    def draw(self, n_pad, use_mask):
        out, weights = self.runs[n_pad, use_mask]  # (REAL, d_model), (n_heads, seq, seq)
        seq = REAL + n_pad
        shown = np.full((REAL + MAX_PAD,) * 2, np.nan)
        shown[:seq, :seq] = weights[0]
        self.w_image.set_data(shown)
        labels = [f"t{i}" for i in range(REAL)] + ["pad"] * n_pad + [""] * (MAX_PAD - n_pad)
        self.slot_labels[:] = labels  # read by the tick formatter: the ticks stay, only their words change
        self.out_image.set_data(out)
        change = float(np.abs(out.astype(np.float64) - self.reference).max())
        self.ax_out.set_title(f"outputs of t0 t1 t2\nmax change vs. alone: {amount(change)}", fontsize=10)
        real_rows = weights[:, :REAL, :]  # (n_heads, REAL, seq): what the real tokens read
        return {
            "n_pad": n_pad, "use_mask": use_mask, "seq": seq,
            "max_change": change,
            "max_weight_on_padding": float(real_rows[..., REAL:].max()) if n_pad else 0.0,
            "max_row_sum_error": float(np.abs(weights.sum(axis=-1) - 1).max()),
        }

    def describe(self, s):
        mask = "on" if s["use_mask"] else "off"
        return (f"{s['n_pad']} padding slots (sequence length {s['seq']}), mask {mask}: the real tokens put at "
                f"most {s['max_weight_on_padding']:.3f} attention weight on padding, and their outputs moved by "
                f"at most <b>{amount(s['max_change'])}</b> from the three tokens run alone")


def amount(value):
    """A change as the lesson's text quotes it: to four decimals (2.1534), and a rounding-sized one (under 1e-4) in
    its order of magnitude (1.2e-07), as the text says float32 rounding is; 0 as 0."""
    if value == 0:
        return "0"
    return f"{value:.4f}" if abs(value) >= 1e-4 else f"{value:.1e}"


class PermutationExplorer(Explorer):
    """Without positional encoding, can the block tell word order?"""

    def __init__(self, seed=0, n_heads=N_HEADS):
        self.perms, self.runs = shuffle_experiment(seed, n_heads)
        self.limit = max(float(np.abs(np.stack(r)).max()) for r in self.runs.values())
        options = [("original order", 0)] + [(f"shuffle {k}", k) for k in range(1, N_SHUFFLES + 1)]
        controls = {
            "shuffle": toggle("order", options, 1),
            "use_pe": checkbox("add positional encoding", False),
        }
        super().__init__(
            "Shuffle the tokens",
            "Left: the block's output for the shuffled tokens. Right: the block's output for the original order, "
            "shuffled afterwards. Rows are labelled by token. If the two pictures match, the block only moved "
            "its outputs along with its inputs: it cannot see the order. Now tick positional encoding.",
            controls,
        )

    def setup(self, figure):
        ax_a, ax_b = figure.subplots(1, 2)
        zeros = np.zeros((SEQ, D_MODEL))
        self.a_image, _ = heatmap(ax_a, zeros, title="block(shuffle(x))", xlabel="feature", ylabel="token",
                                  vmin=-self.limit, vmax=self.limit, annotate=False, colorbar=False)
        self.b_image, _ = heatmap(ax_b, zeros, title="shuffle(block(x))", xlabel="feature", ylabel="token",
                                  vmin=-self.limit, vmax=self.limit, annotate=False)
        self.axes = (ax_a, ax_b)
        self.row_labels = [""] * SEQ
        for ax in self.axes:
            ax.set_xticks(range(0, D_MODEL, 4), [str(t) for t in range(0, D_MODEL, 4)])
            ax.set_yticks(range(SEQ))
            ax.yaxis.set_major_formatter(_labels_from(self.row_labels))
        self.headline = figure.suptitle(" ", fontsize=10)

    def dynamic_artists(self):
        changing = [self.a_image, self.b_image, *(ax.yaxis for ax in self.axes), self.headline]
        return drawing_order(changing, self.axes)

    def draw(self, shuffle, use_pe):
        of_shuffled, shuffled_out = self.runs[shuffle, use_pe]
        perm = self.perms[shuffle]
        self.a_image.set_data(of_shuffled)
        self.b_image.set_data(shuffled_out)
        self.row_labels[:] = [f"tok {i}" for i in perm]
        diff = float(np.abs(of_shuffled.astype(np.float64) - shuffled_out).max())
        pe = "with" if use_pe else "without"
        self.headline.set_text(f"{pe} positional encoding: max difference {amount(diff)}")
        return {"shuffle": shuffle, "use_pe": use_pe, "order": " ".join(map(str, perm)), "max_difference": diff,
                "equivariant": diff < 1e-5}

    def describe(self, s):
        if s["shuffle"] == 0:
            return "original order: both sides are the same run; pick a shuffle"
        verdict = ("the same: the block cannot tell the order" if s["equivariant"]
                   else "different: the block sees where each token sits")
        pe = "with" if s["use_pe"] else "without"
        return (f"order {s['order']}, {pe} positional encoding: max |block(shuffle(x)) - shuffle(block(x))| = "
                f"<b>{amount(s['max_difference'])}</b>, {verdict}")


EXPLORERS = (BlockStepExplorer, PaddingExplorer, PermutationExplorer)
