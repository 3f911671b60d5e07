"""Every widget usable by everyone, checked without a browser (issue 15, item 7).

- Colour: every line, marker, bar and outline has WCAG AA's 3:1 against what
  it is drawn on, every piece of text 4.5:1 (numbers in heatmap cells against
  their cell's colour), in every state a control can reach.
- Text alternative: the picture's ``alt`` says what it shows with the
  readout's numbers, and it changes, with the readout, whenever a control does.
- Controls: each has a visible, non-empty label.
- Projector (`make present`): the smallest label of every figure is 14 px or more.

tests/test_browser_lab.py checks the same in JupyterLab (axe-core, the keyboard);
tests/test_present.py the presentation view's sizes on the screen.
"""

import re

import ipywidgets as widgets
import numpy as np
import pytest
from matplotlib.collections import Collection
from matplotlib.colors import to_rgba
from matplotlib.figure import Figure
from matplotlib.image import AxesImage
from matplotlib.patches import Rectangle

from encoder_lib import _display, plots
from encoder_lib.widgets import all_explorers
from encoder_lib.widgets._base import Picture
from encoder_lib.widgets._controls import control_values
from widget_helpers import smallest_text_px

EXPLORERS = all_explorers()
IDS = [f"{module}.{builder.__name__}" for module, builder in EXPLORERS]
NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?%?")


@pytest.fixture(params=EXPLORERS, ids=IDS)
def explorer(request):
    return request.param[1]()


# ------------------------------------------------------------------ the palette

def test_the_contrast_ratio_is_wcag_s():
    assert plots.contrast_ratio("black", "white") == pytest.approx(21.0)
    assert plots.contrast_ratio("#767676", "white") == pytest.approx(4.54, abs=0.01)  # WCAG's own example grey
    assert plots.contrast_ratio("#0072B2", "#0072B2") == pytest.approx(1.0)


@pytest.mark.parametrize("color", plots.COLORS)
def test_every_palette_colour_stands_out_on_white(color):
    assert plots.contrast_ratio(color, plots.BACKGROUND) >= plots.GRAPHICS_CONTRAST


def test_the_guide_grey_is_readable_as_text():
    assert plots.contrast_ratio(plots.GUIDE, plots.BACKGROUND) >= plots.TEXT_CONTRAST


@pytest.mark.parametrize("color", plots.COLORS[:-1])
def test_a_faint_colour_is_lighter_and_still_3_to_1(color):
    tint = plots.faint(color)
    assert plots.relative_luminance(tint) > plots.relative_luminance(color)
    assert plots.contrast_ratio(tint, plots.BACKGROUND) >= plots.GRAPHICS_CONTRAST


@pytest.mark.parametrize("cell", [0.0, 0.25, 0.5, 0.75, 1.0])
def test_numbers_in_heatmap_cells_are_readable_on_every_colour_of_the_map(cell):
    from matplotlib import colormaps

    color = colormaps[plots.CMAP](cell)
    assert plots.contrast_ratio(plots.text_color_on(color), color) >= plots.TEXT_CONTRAST


# ------------------------------------------------------------------ colours in every widget

def _opaque(color, alpha, background):
    """``color`` with ``alpha`` painted on ``background``: what the eye sees."""
    r, g, b, a = to_rgba(color, alpha)
    under = np.array(to_rgba(background)[:3])
    return tuple(np.array((r, g, b)) * a + under * (1 - a))


def _visible(artist):
    return artist.get_visible() and (artist.get_alpha() is None or artist.get_alpha() > 0)


def _cell_color(ax, x, y):
    """The colour of the heatmap cell under data point (x, y), or None when no image is there."""
    for image in ax.get_images():
        if not isinstance(image, AxesImage) or not _visible(image):
            continue
        data = np.ma.asarray(image.get_array())
        left, right, bottom, top = image.get_extent()
        rows, cols = data.shape[:2]
        col = int(np.floor((x - min(left, right)) / abs(right - left) * cols))
        # row 0 is at the smaller y in data coordinates, whichever way up the axis is drawn
        row = int(np.floor((y - min(bottom, top)) / abs(top - bottom) * rows))
        if 0 <= row < rows and 0 <= col < cols:
            value = data[row, col]
            if np.ma.is_masked(value):
                return to_rgba(ax.get_facecolor())
            return image.cmap(image.norm(value))
    return None


def low_contrast(figure):
    """Every artist of ``figure`` below WCAG AA: ``[(what, ratio, needed)]``."""
    found = []
    figure_bg = figure.get_facecolor()
    for ax in figure.axes:
        if ax.get_label() == "<colorbar>" or not ax.get_visible():
            continue
        bg = ax.get_facecolor()
        where = ax.get_title() or ax.get_label()

        def check(what, color, alpha, against, needed):
            seen = _opaque(color, alpha, against)
            ratio = plots.contrast_ratio(seen, against)
            if ratio < needed:
                found.append((f"{where!r}: {what}", round(ratio, 2), needed))

        for line in ax.get_lines():
            if not _visible(line):
                continue
            if line.get_linestyle() not in ("None", "", " ") and line.get_linewidth() > 0:
                check(f"line {line.get_label()!r}", line.get_color(), line.get_alpha(), bg, plots.GRAPHICS_CONTRAST)
            if line.get_marker() not in ("None", "", " ", None):
                face, edge = line.get_markerfacecolor(), line.get_markeredgecolor()
                colors = [c for c in (face, edge) if not (isinstance(c, str) and c == "none")]
                ratios = [plots.contrast_ratio(_opaque(c, line.get_alpha(), bg), bg) for c in colors]
                if not ratios or max(ratios) < plots.GRAPHICS_CONTRAST:
                    found.append((f"{where!r}: markers of {line.get_label()!r}", round(max(ratios, default=1), 2),
                                  plots.GRAPHICS_CONTRAST))
        for patch in ax.patches:
            if not _visible(patch) or (isinstance(patch, Rectangle) and patch.get_height() == 0 and patch.fill):
                continue
            against = bg
            if _cell_color(ax, *patch.get_xy()) is not None and patch.get_path_effects():
                against = "white"  # an outline over a heatmap draws on its own white halo
            colors = []
            if patch.fill:
                colors.append(patch.get_facecolor())
            if patch.get_linewidth() > 0 and to_rgba(patch.get_edgecolor())[3] > 0:
                colors.append(patch.get_edgecolor())
            ratios = [plots.contrast_ratio(_opaque(c, None, against), against) for c in colors]
            if not ratios or max(ratios) < plots.GRAPHICS_CONTRAST:
                found.append((f"{where!r}: patch {type(patch).__name__}", round(max(ratios, default=1), 2),
                              plots.GRAPHICS_CONTRAST))
        for collection in ax.collections:
            if not _visible(collection) or not isinstance(collection, Collection):
                continue
            colors = [*collection.get_facecolors(), *collection.get_edgecolors()]
            ratios = [plots.contrast_ratio(_opaque(c, None, bg), bg) for c in colors if c[3] > 0]
            if ratios and max(ratios) < plots.GRAPHICS_CONTRAST:
                found.append((f"{where!r}: {type(collection).__name__}", round(max(ratios), 2),
                              plots.GRAPHICS_CONTRAST))
        for text in ax.texts:
            if not _visible(text) or not text.get_text().strip():
                continue
            x, y = text.get_position()
            cell = _cell_color(ax, x, y) if text.get_transform() == ax.transData else None
            check(f"text {text.get_text()!r}", text.get_color(), text.get_alpha(),
                  cell if cell is not None else bg, plots.TEXT_CONTRAST)
        labels = [ax.title, ax.xaxis.label, ax.yaxis.label, *ax.get_xticklabels(), *ax.get_yticklabels()]
        legend = ax.get_legend()
        if legend is not None:
            labels += legend.get_texts()
        for text in labels:
            if _visible(text) and text.get_text().strip():
                check(f"label {text.get_text()!r}", text.get_color(), text.get_alpha(), figure_bg, plots.TEXT_CONTRAST)
    suptitle = [figure._suptitle] if getattr(figure, "_suptitle", None) is not None else []
    legends = [text for legend in figure.legends for text in legend.get_texts()]  # above the panels
    for text in [*figure.texts, *suptitle, *legends]:
        if _visible(text) and text.get_text().strip():
            ratio = plots.contrast_ratio(_opaque(text.get_color(), text.get_alpha(), figure_bg), figure_bg)
            if ratio < plots.TEXT_CONTRAST:
                found.append((f"figure text {text.get_text()!r}", round(ratio, 2), plots.TEXT_CONTRAST))
    return found


def test_every_colour_in_every_state_meets_wcag_aa(explorer):
    problems = {"default": low_contrast(explorer.figure)}
    for name, control in explorer.controls.items():
        start = control.value
        for value in control_values(control, limit=6):
            control.value = value
            problems[f"{name}={value!r}"] = low_contrast(explorer.figure)
        control.value = start
    problems = {state: found for state, found in problems.items() if found}
    assert not problems, f"{explorer!r} has colours below WCAG AA (what, ratio, needed): {problems}"


def test_the_lesson_01_plot_meets_wcag_aa():
    from encoder_lib.experiments.attention import largest_weight_by_d_k

    d_ks = [1, 4, 16]
    figure = plots.largest_weight_plot(d_ks, largest_weight_by_d_k(d_ks, batch=20, seq=6))
    assert low_contrast(figure) == []


# ------------------------------------------------------------------ text alternatives

def _numbers(text):
    return NUMBER.findall(text)


def test_the_picture_has_alt_text_with_the_readout_s_numbers(explorer):
    alt, readout = explorer.image.alt, plots.markup_words(explorer.readout.value)
    assert isinstance(explorer.image, Picture)
    assert alt.startswith("Plot: ") and len(alt) > len("Plot: ") + 10, alt
    assert readout, f"{explorer!r} has an empty readout"
    missing = [n for n in _numbers(readout) if n not in alt]
    assert not missing, f"the alt text lacks the readout's numbers {missing}: {alt!r}"
    assert 'alt="' in explorer.image.widget.value
    assert plots.markup_words(explorer.readout.value) in alt


def test_alt_text_and_readout_change_whenever_a_control_does(explorer):
    for name, control in explorer.controls.items():
        start = control.value
        for value in control_values(control, limit=4):
            if value == control.value:
                continue
            alt, readout, html = explorer.image.alt, explorer.readout.value, explorer.image.widget.value
            control.value = value
            assert explorer.image.alt != alt, f"moving {name!r} to {value!r} left the alt text as it was: {alt!r}"
            assert explorer.readout.value != readout, f"moving {name!r} to {value!r} left the readout as it was"
            assert explorer.image.widget.value != html
        control.value = start


def test_the_picture_needs_png_and_words():
    picture = Picture()
    with pytest.raises(TypeError, match="PNG"):
        picture.show(b"GIF89a", "a plot")
    from encoder_lib.widgets._base import canvas_png
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(Figure(figsize=(1, 1), dpi=20))
    canvas.draw()
    with pytest.raises(ValueError, match="alt text"):
        picture.show(canvas_png(canvas), "  ")
    picture.show(canvas_png(canvas), 'a "quoted" <plot>')
    assert 'alt="a &quot;quoted&quot; &lt;plot&gt;"' in picture.widget.value
    assert 'width="20" height="20"' in picture.widget.value


def test_static_figures_are_shown_as_an_img_with_alt_text():
    figure = Figure(figsize=(3, 2), dpi=50)
    ax = figure.add_subplot()
    ax.plot([0, 10], [1, 3], label="pre-norm")
    ax.set(title="RMS by depth", xlabel="layer", ylabel="RMS")
    ax.legend()
    html = _display.figure_html(figure)
    assert html.startswith('<img src="data:image/png;base64,iVBOR')
    assert 'alt="Plot: RMS by depth: x axis layer from -0.5 to 10.5; y axis RMS from 0.9 to 3.1; legend: pre-norm."' \
        in html


def test_import_encoder_lib_registers_the_figure_html_in_ipython():
    from IPython.core.interactiveshell import InteractiveShell

    from IPython.core.pylabtools import select_figure_formats

    shell = InteractiveShell.instance()
    assert _display.describe_figures_in_ipython()
    select_figure_formats(shell, {"png"})  # what the inline backend does when pyplot starts: it kept the HTML
    figure = Figure(figsize=(2, 1), dpi=40)
    figure.add_subplot().set_title("t")
    data, _metadata = shell.display_formatter.format(figure)
    InteractiveShell.clear_instance()  # no later test finds itself inside an IPython it did not start
    assert 'alt="Plot: t:' in data["text/html"]


# ------------------------------------------------------------------ controls

def test_every_control_has_a_visible_label(explorer):
    for name, control in explorer.controls.items():
        assert control.description.strip(), f"control {name!r} of {explorer!r} has no label"
        assert control.layout.display != "none" and control.layout.visibility != "hidden"
        width = getattr(control.style, "description_width", "")
        assert width in ("", "initial") or not width.startswith("0"), f"{name!r}'s label is squeezed to {width}"
        if isinstance(control, widgets.Checkbox):
            assert control.indent is False  # the label beside the box, not an empty indent


# ------------------------------------------------------------------ projector

@pytest.mark.parametrize("builder", [b for _m, b in EXPLORERS], ids=IDS)
def test_when_presenting_every_label_is_14_px_or_more(builder, monkeypatch):
    monkeypatch.setenv(plots.PRESENT_ENV, "1")
    explorer = builder()
    assert smallest_text_px(explorer.figure) >= 14, explorer
    monkeypatch.setenv(plots.PRESENT_ENV, "0")
    assert smallest_text_px(builder().figure) < 14  # on a laptop the pictures keep their size


def test_presenting_accepts_1_or_0_only(monkeypatch):
    monkeypatch.setenv(plots.PRESENT_ENV, "yes")
    with pytest.raises(ValueError, match="ENCODER_COURSE_PRESENT must be 1"):
        plots.presenting()
