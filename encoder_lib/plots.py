"""Plot helpers shared by the notebooks and the widgets (imports matplotlib; not loaded by `import encoder_lib`).

Colours: heatmaps use cividis, which is perceptually uniform and reads in
greyscale and for colour-blind readers; lines use the Okabe-Ito palette and
differ by marker too, so they stay apart without colour.

Contrast (WCAG 2 AA, checked by tests/test_accessibility.py): every line,
marker and bar colour has at least 3:1 against the white background, text at
least 4.5:1 against what it is drawn on. So the palette's three light colours
are darkened, a de-emphasised line is a lighter tint that keeps 3:1 (never a
low alpha), numbers in heatmap cells are black or white, whichever contrasts
more with their cell, and outlines drawn over a heatmap have a white halo.

Presentation (`make present`): tools/present.py sets ``ENCODER_COURSE_PRESENT=1``
for Voila's kernel, and ``figure_dpi`` then draws every figure at
``PRESENT_SCALE`` times its dpi: the same layout, with every label that much
larger on a projector (8 pt, the smallest, becomes 14 px).
"""

import numpy as np
from matplotlib.colors import to_hex, to_rgb

# presenting and the figures' text alternatives live below the library's layers, where `import encoder_lib`
# registers them for notebooks; re-exported here, where the pictures are
from ._display import (PRESENT_ENV, PRESENT_SCALE, figure_alt_text, figure_dpi, figure_html,  # noqa: F401
                       markup_words, presenting)

CMAP = "cividis"
# Okabe-Ito; orange, sky blue and yellow darkened (same hue) to 3:1 against white
COLORS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#C28600", "#1D99E0", "#9E940D", "#000000")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
BACKGROUND = "#FFFFFF"  # the figures' and axes' face colour
GUIDE = "#767676"  # reference lines (a level, an even split): the lightest grey with 4.5:1 on white
GRAPHICS_CONTRAST = 3.0  # WCAG 1.4.11: lines, markers, bars
TEXT_CONTRAST = 4.5  # WCAG 1.4.3: text of normal size



# ------------------------------------------------------------------ contrast

def relative_luminance(color):
    """WCAG 2's relative luminance of a matplotlib colour (alpha ignored): 0 for black, 1 for white."""
    channels = np.array(to_rgb(color))
    linear = np.where(channels <= 0.04045, channels / 12.92, ((channels + 0.055) / 1.055) ** 2.4)
    return float(linear @ (0.2126, 0.7152, 0.0722))


def contrast_ratio(a, b):
    """WCAG 2's contrast ratio of two colours, from 1 (the same) to 21 (black on white)."""
    high, low = sorted((relative_luminance(a), relative_luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def text_color_on(color):
    """Black or white, whichever contrasts more with ``color`` (at least 4.58:1 whatever the colour)."""
    return "black" if contrast_ratio(color, "black") >= contrast_ratio(color, "white") else "white"


def faint(color, against=BACKGROUND, minimum=GRAPHICS_CONTRAST):
    """The lightest tint of ``color`` (mixed with white) that keeps ``minimum`` contrast against ``against``.

    For the line a widget shows as context beside the chosen one: it looks
    fainter, yet stays visible, which an alpha of 0.3 would not.
    """
    base = np.array(to_rgb(color))
    if contrast_ratio(color, against) < minimum:
        raise ValueError(f"{color} has only {contrast_ratio(color, against):.2f}:1 against {against}, "
                         f"below {minimum}:1 even before it is made fainter")
    low, high = 0.0, 1.0  # the share of white: 0 keeps the colour, 1 is white
    for _ in range(30):
        middle = (low + high) / 2
        tint = to_hex(base + (1 - base) * middle)  # judged as drawn: rounded to 8 bits a channel
        low, high = (middle, high) if contrast_ratio(tint, against) >= minimum else (low, middle)
    return to_hex(base + (1 - base) * low)


def halo(width):
    """Path effects that draw a white halo under a black outline of ``width`` points, so that the outline
    stands out (3:1 or more) on every colour of a heatmap, dark or light."""
    from matplotlib import patheffects

    return [patheffects.withStroke(linewidth=width + 3, foreground="white")]


# ------------------------------------------------------------------ drawing


def heatmap(ax, data, *, title, xlabel, ylabel, row_labels=None, col_labels=None,
            vmin=0.0, vmax=1.0, annotate=True, fmt="{:.2f}", colorbar=True):
    """Draw ``data`` (rows, cols) as a labelled heatmap; returns ``(image, texts)`` for ``update_heatmap``.

    Cell values are written in the cells (black or white, whichever contrasts
    more with the cell), so the numbers can be read without the colour scale.
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
    cells = image.cmap(image.norm(data))  # (rows, cols, 4): each cell's colour
    for i, row in enumerate(texts):
        for j, text in enumerate(row):
            text.set_text(fmt.format(data[i, j]))
            text.set_color(text_color_on(cells[i, j]))


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


def legend_above(figure, handles, ncol=None):
    """The figure's legend above its panels, where it hides no data (``handles``: the lines it names). The figure's
    constrained layout makes room for it, at a widget's width and at a phone's (``tools/site/phone.py``)."""
    legend = figure.legend(handles=handles, loc="outside upper center", ncol=ncol or len(handles), fontsize=8,
                           frameon=False)
    legend.course_handles = list(handles)  # what a phone's drawing lists again, in one column
    return legend


def largest_weight_plot(d_ks, largest, seq=6):
    """Lesson 01's picture: the mean largest weight against d_k, scaled and not (``largest_weight_by_d_k``)."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5, 3), dpi=80)  # shown through figure_html, larger when presenting
    for i, (label, values) in enumerate((("scaled by 1/sqrt(d_k)", largest["scaled"]),
                                         ("not scaled", largest["not scaled"]))):
        ax.plot(d_ks, values, color=COLORS[i], marker=MARKERS[i], linestyle=["-", "--"][i], label=label)
    ax.axhline(1 / seq, color=GUIDE, linestyle=":", linewidth=1, label=f"even split (1/{seq})")
    ax.set_xscale("log", base=2)
    ax.set_xticks(d_ks, [str(d) for d in d_ks], minor=False)
    ax.minorticks_off()
    ax.set_ylim(0, 1.05)
    ax.set_title("Without scaling, the softmax saturates")
    ax.set_xlabel("d_k")
    ax.set_ylabel("mean largest weight")
    ax.legend(loc="upper left", fontsize=8)
    return fig
