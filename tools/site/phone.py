"""Pictures a phone can read: a figure's panels drawn again one above the other, at a phone's width.

A widget's picture is drawn for a notebook, 512 to 688 px wide with its text at
8 to 10 pt (9 to 11 px at 80 dpi). On a phone 375 px wide it would be shrunk to
about half, its labels to 4 or 5 px. So every picture is drawn a second time
for phones: the same figure (the same artists, colours and words), its panels
stacked in one column, ``WIDTH`` px wide at ``DPI``, which makes 8 pt text
11 px. A page shows that drawing when the screen is narrower than the first
one needs (``<picture>``, ``media_query``), at its own size or, on a screen
under 345 px, a little smaller: 8 pt text stays at 9 px or more down to 320 px.

``smallest_text_px`` is the height of the smallest text drawn in a figure,
in its own pixels: the page's data keeps it beside each picture, and the tests
multiply it by the scale the page shows the picture at.
"""

import contextlib

from matplotlib.gridspec import GridSpec
from matplotlib.text import Text

from .render import SiteError

WIDTH = 330  # px: what a 375 px screen leaves a widget's picture (the page's and the widget's margins)
DPI = 100  # 8 pt text is 11.1 px: 9.2 px when a 320 px screen shrinks the picture to 275 px
PANEL_HEIGHT = 2.75  # inches (275 px) a panel, one above the other
TITLE_HEIGHT = 0.35  # inches more for a figure's own title (suptitle)
#: The room a picture needs around it on a page (the page's and a widget's margins, in CSS px): a screen
#: narrower than a picture's width plus this gets the phone drawing.
PAGE_MARGINS = 80
LABEL_CHARS = 24  # a tick label longer than this keeps only its first word on a phone


def smallest_text_px(figure):
    """The font size of the smallest visible, non-empty text of ``figure``, in the figure's pixels."""
    sizes = [text.get_fontsize() for text in figure.findobj(Text)
             if text.get_visible() and text.get_text().strip() and text.figure is figure]
    if not sizes:
        return None
    return round(min(sizes) * figure.dpi / 72, 2)


def media_query(width):
    """When a page shows the phone drawing of a picture ``width`` CSS px wide: on a screen too narrow for it."""
    return f"screen and (max-width: {int(width) + PAGE_MARGINS}px)"


def _panels(figure):
    """The figure's panels (axes placed on one grid; colorbars and insets follow their panel), left to right."""
    panels = [ax for ax in figure.axes if ax.get_subplotspec() is not None and ax.get_label() != "<colorbar>"]
    grids = {id(ax.get_subplotspec().get_gridspec()) for ax in panels}
    if not panels or len(grids) != 1:
        raise SiteError(f"a figure whose panels are not on one grid ({len(panels)} panels, {len(grids)} grids): "
                        "tools/site/phone.py cannot stack them")
    rows, _ = panels[0].get_subplotspec().get_gridspec().get_geometry()
    if rows != 1:
        raise SiteError(f"a figure with {rows} rows of panels: tools/site/phone.py stacks one row only")
    return sorted(panels, key=lambda ax: ax.get_subplotspec().colspan.start)


@contextlib.contextmanager
def stacked(figure, before=lambda: None, draw=None, after=lambda: None):
    """Inside the block, ``figure`` is laid out for a phone: its panels in one column, ``WIDTH`` px wide at
    ``DPI``; afterwards it is laid out again as it was (its size, dpi and grid).

    Each time, the layout is computed as a widget computes it when it is made: ``before()`` (a widget stops
    blitting), then ``draw()`` with the constrained layout engine on (a widget draws its first state; by
    default the figure is drawn), then the engine off (a widget keeps that layout from then on) and
    ``after()`` (a widget saves its background for blitting). Laid out again, a figure is not always the very
    same to the pixel (the constrained layout moves an axes by a fraction of a pixel): draw a widget's wide
    pictures before its phone ones, as ``states.Grid.render`` does.
    """
    draw = draw or figure.canvas.draw
    panels = _panels(figure)
    undo = [_wrap_long_words(figure, panels), _shorten_phrases(panels), _legends_in_one_column(figure),
            _one_column(figure, panels)]
    _lay_out(figure, before, draw, after, "none")
    try:
        yield figure
    finally:
        engine = [put_back() for put_back in undo][-1]
        _lay_out(figure, before, draw, after, engine)


def _wrap_long_words(figure, panels):
    """Titles and axis labels longer than a phone's width break onto a second line rather than run off the
    picture; returns what puts them back."""
    words = [text for ax in panels for text in (ax.title, ax.xaxis.label, ax.yaxis.label)]
    words += [figure._suptitle] if figure._suptitle is not None else []
    saved = [(text, text.get_wrap()) for text in words]
    for text in words:
        text.set_wrap(True)
    return lambda: [text.set_wrap(wrap) for text, wrap in saved]


def _shorten_phrases(panels):
    """Tick labels that are phrases (lesson 08's numbered sentences) keep their first word, their number: whole,
    they would leave the panel no room on a phone. Returns what puts them back."""
    saved = []
    for ax in panels:
        for axis in (ax.xaxis, ax.yaxis):
            labels = [label.get_text() for label in axis.get_ticklabels()]
            if any(len(label) > LABEL_CHARS for label in labels):
                saved.append((axis, axis.get_major_locator(), axis.get_major_formatter()))
                axis.set_ticks(axis.get_ticklocs(), [(label.split() or [""])[0] for label in labels])

    def put_back():
        for axis, locator, formatter in saved:
            axis.set_major_locator(locator)
            axis.set_major_formatter(formatter)
    return put_back


def _legends_in_one_column(figure):
    """The figure's legends above its panels (``plots.legend_above``) list their entries one under the other, as a
    phone's width has room for one; returns what puts the legends back."""
    from encoder_lib.plots import legend_above

    wide = [legend for legend in figure.legends if hasattr(legend, "course_handles")]
    for legend in wide:
        legend.remove()
    narrow = [legend_above(figure, legend.course_handles, ncol=1) for legend in wide]

    def put_back():
        for legend in narrow:
            legend.remove()
        figure.legends.extend(wide)
        for legend in wide:
            legend.set_figure(figure)
    return put_back


def _one_column(figure, panels):
    """The panels one above the other, the figure ``WIDTH`` px wide at ``DPI``; returns what puts the figure's
    grid, size and dpi back and gives its layout engine."""
    saved = {"size": tuple(figure.get_size_inches()), "dpi": figure.dpi, "engine": figure.get_layout_engine(),
             "specs": [ax.get_subplotspec() for ax in panels]}
    column = GridSpec(len(panels), 1, figure=figure)
    for i, ax in enumerate(panels):
        ax.set_subplotspec(column[i, 0])
    figure.set_dpi(DPI)
    figure.set_size_inches(WIDTH / DPI, PANEL_HEIGHT * len(panels) + (TITLE_HEIGHT if figure.get_suptitle() else 0))

    def put_back():
        for ax, spec in zip(panels, saved["specs"]):
            ax.set_subplotspec(spec)
        figure.set_dpi(saved["dpi"])
        figure.set_size_inches(*saved["size"])
        return saved["engine"]
    return put_back


def _lay_out(figure, before, draw, after, engine):
    """Compute ``figure``'s layout with the constrained engine, by ``draw()``, then leave ``engine`` in place."""
    before()
    figure.set_layout_engine("constrained")
    draw()
    figure.set_layout_engine(engine)
    after()
