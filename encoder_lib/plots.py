"""Plot helpers shared by the notebooks and the widgets (imports matplotlib; not loaded by `import encoder_lib`).

Colours: heatmaps use cividis, which is perceptually uniform and reads in
greyscale and for colour-blind readers; lines use the Okabe-Ito palette and
differ by marker too, so they stay apart without colour.
"""

import numpy as np

CMAP = "cividis"
COLORS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442", "#000000")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")


def heatmap(ax, data, *, title, xlabel, ylabel, row_labels=None, col_labels=None,
            vmin=0.0, vmax=1.0, annotate=True, fmt="{:.2f}", colorbar=True):
    """Draw ``data`` (rows, cols) as a labelled heatmap; returns ``(image, texts)`` for ``update_heatmap``.

    Cell values are written in the cells (black on light, white on dark), so
    the numbers can be read without the colour scale.
    """
    data = np.asarray(data)
    image = ax.imshow(data, cmap=CMAP, vmin=vmin, vmax=vmax, aspect="auto")
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    rows, cols = data.shape
    ax.set_xticks(range(cols), col_labels if col_labels is not None else range(cols))
    ax.set_yticks(range(rows), row_labels if row_labels is not None else range(rows))
    if colorbar:
        ax.figure.colorbar(image, ax=ax, fraction=0.046, pad=0.04)
    texts = None
    if annotate:
        texts = [[ax.text(j, i, "", ha="center", va="center", fontsize=9) for j in range(cols)] for i in range(rows)]
    update_heatmap(image, texts, data, fmt=fmt)
    return image, texts


def update_heatmap(image, texts, data, fmt="{:.2f}"):
    """Put new ``data`` (same shape) into a heatmap made by ``heatmap``, in place."""
    data = np.asarray(data)
    image.set_data(data)
    if texts is None:
        return
    low, high = image.get_clim()
    middle = (low + high) / 2
    for i, row in enumerate(texts):
        for j, text in enumerate(row):
            text.set_text(fmt.format(data[i, j]))
            text.set_color("black" if data[i, j] > middle else "white")


def labelled_bars(ax, n, *, title, xlabel, ylabel, ylim=(0.0, 1.0), fontsize=8):
    """``n`` bars at 0..n-1 with their values written above them; returns ``(bars, texts)`` for ``update_bars``."""
    positions = np.arange(n)
    bars = ax.bar(positions, np.zeros(n), color=COLORS[0], edgecolor="black", linewidth=0.6)
    texts = [ax.text(i, 0, "", ha="center", va="bottom", fontsize=fontsize) for i in positions]
    ax.set_ylim(*ylim)
    ax.set_xticks(positions)
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    return bars, texts


def update_bars(bars, texts, values, fmt="{:.2f}"):
    """Put new heights (and their labels) into bars made by ``labelled_bars``, in place."""
    for bar, text, value in zip(bars, texts, values):
        bar.set_height(value)
        text.set_y(value + 0.01)
        text.set_text(fmt.format(value))


def largest_weight_plot(d_ks, largest, seq=6):
    """Lesson 01's picture: the mean largest weight against d_k, scaled and not (``largest_weight_by_d_k``)."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5, 3), dpi=80)
    for i, (label, values) in enumerate((("scaled by 1/sqrt(d_k)", largest["scaled"]),
                                         ("not scaled", largest["not scaled"]))):
        ax.plot(d_ks, values, color=COLORS[i], marker=MARKERS[i], linestyle=["-", "--"][i], label=label)
    ax.axhline(1 / seq, color="grey", linestyle=":", linewidth=1, label=f"even split (1/{seq})")
    ax.set_xscale("log", base=2)
    ax.set_xticks(d_ks, [str(d) for d in d_ks], minor=False)
    ax.minorticks_off()
    ax.set_ylim(0, 1.05)
    ax.set_title("Without scaling, the softmax saturates")
    ax.set_xlabel("d_k")
    ax.set_ylabel("mean largest weight")
    ax.legend(loc="upper left", fontsize=8)
    return fig
