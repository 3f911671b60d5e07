"""Widgets whose states are numbers: the page carries the numbers and site.js draws them, as SVG.

Lesson 01's and lesson 08's widgets show attention weights: a heatmap of the
weights, one row of it as bars, that row outlined. Lesson 08's has 1,008
states (6 layers x 12 heads x 14 query tokens), lesson 01's 768; drawn as
pictures, at two sizes, they would not fit a page. Their numbers do: the
heatmaps of all of lesson 08's states together are 72 arrays of 14 x 14.

So the site draws them in the browser, from what the widget's own matplotlib
figure holds. ``drawing(explorer, states)`` reads the figure twice, laid out
as the notebook shows it and as a phone does (``phone.stacked``), and keeps:

- the fixed parts, in the figure's pixels: each panel's box and limits, its
  tick marks and every fixed text (tick labels, axis labels) with its place,
  size and angle; a colorbar's colours and ticks;
- for every state (``explorer.frame(values, picture=False)`` sets the
  artists without rendering): each panel's title, its heatmap as indices into
  the colour map's 256 colours (the very colours matplotlib gives the cells),
  its bars' heights, colours and hatches, its texts and its outline.

site.js (``drawSvg``) draws a state from that at the size the page has room
for. tests/test_site_reading.py compares, for a sample of states, the SVG in
Chromium with the PNG the widget draws: the colours of the cells, the tops of
the bars, every text.
"""

import numpy as np
from matplotlib.colors import to_hex
from matplotlib.container import BarContainer
from matplotlib.patches import Rectangle
from matplotlib.text import Text

from . import phone
from .render import SiteError

#: The widgets the site draws in the browser, from their numbers.
DRAWN = ("AttentionExplorer", "AttentionHeadExplorer")
DIGITS = 4  # bar heights and positions, in data units


def _px(value):
    return round(float(value), 1)


def _num(value):
    return round(float(value), DIGITS)


def _text(text, height, renderer):
    """A fixed text as site.js draws it: words, the centre of its box (from the top left), size (px), angle."""
    box = text.get_window_extent(renderer)
    return [text.get_text(), _px((box.x0 + box.x1) / 2), _px(height - (box.y0 + box.y1) / 2),
            _px(text.get_fontsize() * text.figure.dpi / 72), round(float(text.get_rotation()) % 360, 1)]


def _visible_texts(texts):
    return [t for t in texts if t.get_visible() and t.get_text().strip()]


def _tick_labels(ax, axis):
    """The tick labels matplotlib draws on ``axis``: those of the ticks within the panel's limits."""
    low, high = sorted(ax.get_xlim() if axis == "x" else ax.get_ylim())
    which = ax.xaxis if axis == "x" else ax.yaxis
    return [label for tick in which.get_major_ticks() if low - 1e-9 <= tick.get_loc() <= high + 1e-9
            for label in (tick.label1, tick.label2) if label.get_visible()]


def _ticks(ax, axis, height, transform, renderer):
    """The tick marks of ``axis`` (x or y) that lie within the panel, as pixel positions along it."""
    low, high = sorted(ax.get_xlim() if axis == "x" else ax.get_ylim())
    marks = []
    for loc in (ax.xaxis if axis == "x" else ax.yaxis).get_majorticklocs():
        if low - 1e-9 <= loc <= high + 1e-9:
            x, y = transform.transform((loc, 0) if axis == "x" else (0, loc))
            marks.append(_px(x) if axis == "x" else _px(height - y))
    return marks


def _layout(figure):
    """The fixed parts of ``figure`` as laid out now: its size and every panel's box, ticks and fixed texts."""
    figure.canvas.draw()
    renderer = figure.canvas.get_renderer()
    width, height = figure.canvas.get_width_height()
    panels = [_panel(ax, height, renderer) for ax in figure.axes]
    return {"size": [width, height], "panels": panels, "text_px": phone.smallest_text_px(figure)}


def _panel(ax, height, renderer):
    """One panel's fixed parts: its box, limits, tick marks and fixed texts, where its title goes; a heatmap's
    extent, a colorbar's colours."""
    box, dpi = ax.get_window_extent(renderer), ax.figure.dpi
    ticks = ax.xaxis.get_major_ticks()
    panel = {"box": [_px(box.x0), _px(height - box.y1), _px(box.width), _px(box.height)],
             "xlim": [float(v) for v in ax.get_xlim()], "ylim": [float(v) for v in ax.get_ylim()],
             "texts": [_text(t, height, renderer) for t in _visible_texts(
                 [*_tick_labels(ax, "x"), *_tick_labels(ax, "y"), ax.xaxis.label, ax.yaxis.label])],
             "tick": _px(ticks[0].tick1line.get_markersize() * dpi / 72) if ticks else 0,
             "title": [_px((box.x0 + box.x1) / 2), _px(height - sum(ax.title.get_window_extent(renderer).intervaly) / 2),
                       _px(ax.title.get_fontsize() * dpi / 72)],
             "spine": _px(ax.spines["left"].get_linewidth() * dpi / 72),
             "yticks": _ticks(ax, "y", height, ax.transData, renderer)}
    if ax.images:  # (left, right, bottom, top), and which of bottom and top the array's first row is at
        panel["extent"] = [float(v) for v in ax.images[0].get_extent()]
        panel["origin"] = ax.images[0].origin
    if ax.get_label() == "<colorbar>":  # its colours bottom to top, its ticks on the right
        panel["kind"] = "colorbar"
        panel["colors"] = [to_hex(ax._colorbar.cmap(i / 255)) for i in range(256)]
    else:
        panel["kind"] = "image" if ax.images else "bars"
        panel["xticks"] = _ticks(ax, "x", height, ax.transData, renderer)
    return panel


def _state(figure, shared, matrices):
    """What one state changes, panel by panel: title, heatmap (an index into ``matrices``), bars, texts, outlines."""
    out = []
    for ax in figure.axes:
        if ax.get_label() == "<colorbar>":
            out.append(None)
            continue
        panel = {"title": ax.get_title()}
        if ax.images:
            panel["image"] = _heatmap(ax.images[0], shared, matrices)
        bars = [p for c in ax.containers if isinstance(c, BarContainer) for p in c.patches]
        if bars:
            panel.update(_bars(bars, len(out), shared))
        panel["texts"] = [[t.get_text(), _num(t.get_position()[0]), _num(t.get_position()[1])]
                          for t in _visible_texts(ax.texts)]
        panel["boxes"] = [[_num(p.get_x()), _num(p.get_y()), _num(p.get_width()), _num(p.get_height())]
                          for p in ax.patches if isinstance(p, Rectangle) and p not in bars and p.get_visible()]
        out.append(panel)
    return out


def _heatmap(image, shared, matrices):
    """The heatmap's cells as indices into its colour map's colours (as ``Colormap.__call__`` picks them);
    returns its number in ``matrices``, where each different one is kept once."""
    lut = image.cmap.N
    index = np.clip((np.asarray(image.norm(np.asarray(image.get_array(), dtype=float))) * lut).astype(int), 0, lut - 1)
    key = index.tobytes()
    if key not in matrices:
        matrices[key] = (len(matrices), index.tolist())
    if shared["lut"] is None:
        shared["lut"] = [to_hex(image.cmap(i)) for i in range(lut)]
    return matrices[key][0]


def _bars(patches, where, shared):
    """The bars' heights, colours (indices into ``shared["palette"]``) and which are hatched; their places, the same
    in every state, are kept once in ``shared["bars"]``."""
    places = [[_num(p.get_x()), _num(p.get_width())] for p in patches]
    if shared["bars"].setdefault(where, places) != places:
        raise SiteError("site.js draws bars that keep their places; these move from state to state")
    return {"bars": [_num(p.get_height()) for p in patches],
            "colors": [shared["palette"].setdefault(to_hex(p.get_facecolor()), len(shared["palette"])) for p in patches],
            "hatched": [i for i, p in enumerate(patches) if p.get_hatch()]}


def _halo(patch):
    """The width (px) of the white halo drawn under an outline (``plots.halo``), or 0."""
    widths = [getattr(effect, "_gc", {}).get("linewidth", 0) for effect in patch.get_path_effects()]
    return max(widths, default=0) * patch.figure.dpi / 72


def _styles(figure):
    """How the changing artists look (the same in every state): texts' size and alignment, outlines' lines (and
    the white halo under them), bars' edges."""
    styles, dpi = [], figure.dpi
    for ax in figure.axes:
        texts = _visible_texts(ax.texts)
        bars = [p for c in ax.containers if isinstance(c, BarContainer) for p in c.patches]
        boxes = [p for p in ax.patches if isinstance(p, Rectangle) and p not in bars]
        styles.append({
            "text": [texts[0].get_fontsize() * dpi / 72, texts[0].get_ha(), texts[0].get_va()] if texts else None,
            "box": [boxes[0].get_linewidth() * dpi / 72, to_hex(boxes[0].get_edgecolor()), _halo(boxes[0])]
            if boxes else None,
            "edge": [to_hex(bars[0].get_edgecolor()), bars[0].get_linewidth() * dpi / 72] if bars else None,
        })
    return styles


def drawing(explorer, states, values, start):
    """The page's data for drawing ``explorer`` in the browser: its two layouts, and for each of ``states``
    (``values(state)`` its control values; ``start`` the one it starts at) what the figure shows, its alt
    text and its readout."""
    figure = explorer.figure
    if any(not isinstance(t, Text) for t in figure.texts) or figure.get_suptitle():
        raise SiteError(f"{type(explorer).__name__}: site.js draws panels only, not a figure's own texts")
    shared, matrices, records = {"lut": None, "palette": {}, "bars": {}}, {}, []
    for state in states:
        frame = explorer.frame(values(state), picture=False)
        records.append([_state(figure, shared, matrices), frame.alt, frame.readout])
    explorer.frame(values(start), picture=True)  # the figure drawn as it starts, its layout its own
    stop, go = explorer.stop_blitting, explorer.start_blitting
    stop()
    layouts = {"wide": _layout(figure)}
    layouts["wide"]["styles"] = _styles(figure)
    with phone.stacked(figure, stop, lambda: explorer.frame(values(start)), go):
        stop()
        layouts["phone"] = _layout(figure)
        layouts["phone"]["styles"] = _styles(figure)
    return {"layouts": layouts, "lut": shared["lut"] or [], "palette": list(shared["palette"]),
            "bars": [shared["bars"].get(i) for i in range(len(figure.axes))],
            "matrices": [m for _, m in sorted(matrices.values())], "records": records}
