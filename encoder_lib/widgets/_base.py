"""The frame every course widget shares: controls, a picture redrawn in place, a caption and a readout.

A widget is an ``Explorer``: a subclass builds its matplotlib figure once in
``setup`` and, in ``draw``, changes the artists' data for the current control
values and returns the numbers it shows. The figure is rendered to PNG (no
pyplot, no new figure per change) and shown as an ``<img>`` whose ``alt``
text says what the picture shows in words (see ``Picture``), which works the
same in JupyterLab, Voila and a test without a browser.

Everyone can use it: the picture's alt text and the readout under it carry
the same numbers and change together; every control has a visible label and
works from the keyboard (sliders: arrow keys, Home, End; toggle buttons and
checkboxes: Tab, then Space or Enter). ipywidgets 8 gives a slider's handle
no accessible name and a toggle button no pressed state, so a small script
that runs with each new picture (``ACCESSIBLE_JS``) adds them, and marks the
readout as a polite live region that screen readers announce.

Without a kernel (the course's website, ``tools/site``): ``_states.StateSpace``
lists every state the controls can reach and where each move leads, and
``Explorer.frame`` draws one state with the widget's own code and returns
its picture, alt text and readout (a ``Frame``); ``_controls`` makes the
controls, and its ``control_kind`` and ``control_options`` say how each
control is shown and which values it offers, with the labels the widget
gives them.
"""

import base64
import collections
import html
import io
import time

import ipywidgets as widgets
import PIL.Image
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from .. import plots
from ..plots import CMAP, COLORS, MARKERS  # noqa: F401  (re-exported for the widget modules)
from ..threads import single_blas_thread
from ._controls import SLIDERS, _same, control_options

# Runs in the page each time a widget's new picture has loaded: an inline handler of the <img> is the one
# way a widget made of ipywidgets' own views can run code beside them. Idempotent and cheap (a few
# querySelector calls). It waits (up to 5 s) until the widget's box and its controls are in the page: the
# first picture can load before its siblings have rendered. Without it (a page whose Content Security
# Policy forbids inline handlers) the widget still works; its sliders only lack their names.
ACCESSIBLE_JS = """(function fix(img, tries) {
  var box = img.closest('.course-explorer');
  var sliders = box ? box.querySelectorAll('.widget-slider') : [];
  var toggles = box ? box.querySelectorAll('.widget-toggle-buttons') : [];
  if (!box || sliders.length + toggles.length < Number(img.dataset.controls)) {
    if (tries < 50) setTimeout(function () { fix(img, tries + 1); }, 100);
    if (!box) return;
  }
  sliders.forEach(function (slider) {
    var label = slider.querySelector('.widget-label');
    slider.querySelectorAll('.noUi-handle').forEach(function (handle) {
      if (label && handle.getAttribute('aria-label') !== label.textContent)
        handle.setAttribute('aria-label', label.textContent);
    });
  });
  toggles.forEach(function (group) {
    var label = group.querySelector('.widget-label');
    group.setAttribute('role', 'group');
    if (label) group.setAttribute('aria-label', label.textContent);
    group.querySelectorAll('button').forEach(function (button) {
      button.setAttribute('aria-pressed', button.classList.contains('mod-active') ? 'true' : 'false');
    });
  });
  var readout = box.querySelector('.course-readout .widget-html-content');
  if (readout && readout.getAttribute('role') !== 'status') {
    readout.setAttribute('role', 'status');
    readout.setAttribute('aria-live', 'polite');
    readout.setAttribute('aria-atomic', 'true');
  }
})(this, 0)"""


class Picture:
    """A widget's picture: PNG bytes shown as an ``<img>`` with alt text, inside an ``ipywidgets.HTML``.

    ipywidgets' own ``Image`` cannot carry an ``alt`` (nor an ``aria-label``):
    its view is a bare ``<img>`` that only takes a width, a height and a
    tooltip. ``value`` holds the PNG bytes (what the tests compare), ``alt``
    the words; ``widget`` is what the page shows.
    """

    def __init__(self, controls=0):
        if isinstance(controls, bool) or not isinstance(controls, int) or controls < 0:
            raise ValueError(f"controls must be the number of sliders and toggle buttons, got {controls!r}")
        self.controls = controls
        self.value = b""
        self.alt = ""
        self.widget = widgets.HTML(layout=widgets.Layout(max_width="100%", align_self="flex-start"))
        self.widget.add_class("course-picture")

    def show(self, png, alt):
        """Show the PNG ``png`` with the plain-text ``alt``; both always change together."""
        if not isinstance(png, (bytes, bytearray)) or not bytes(png[:8]) == b"\x89PNG\r\n\x1a\n":
            raise TypeError(f"the picture must be PNG bytes, got {type(png).__name__}")
        if not isinstance(alt, str) or not alt.strip():
            raise ValueError("the picture needs an alt text that says what it shows, got "
                             f"{alt!r}")
        width, height = PIL.Image.open(io.BytesIO(png)).size
        self.value, self.alt = bytes(png), alt
        # width and height keep the place of the picture while a new one decodes: nothing below it jumps
        self.widget.value = (
            f'<img src="data:image/png;base64,{base64.b64encode(png).decode("ascii")}" '
            f'alt="{html.escape(alt, quote=True)}" width="{width}" height="{height}" '
            f'data-controls="{self.controls}" style="display: block; max-width: 100%; height: auto" '
            f'onload="{html.escape(ACCESSIBLE_JS, quote=True)}">'
        )


class Explorer:
    """Base class: ``controls`` (name -> ipywidget with a ``value``), a figure, a caption.

    Subclasses implement ``setup(figure)`` (draw the artists once) and
    ``draw(**values) -> dict`` (update them; return what the picture shows, as
    plain numbers, which the tests and ``readout`` use). ``describe(state)``
    turns that dict into the one-line readout under the picture.

    Two optional hooks:

    - ``dynamic_artists()``: the artists a control can change. When a widget
      lists them, everything else (ticks, labels, colorbars: most of a full
      draw's time) is drawn once into a saved background, and each redraw
      paints only these on top of it (blitting), in the order listed. List
      them in drawing order, and include the spines of an axes whose image is
      repainted (the image would otherwise cover the frame): ``drawing_order``
      does both.
    - ``adjust_controls(change)``: keep linked controls consistent (say, clamp
      a head slider when the number of heads drops) before the one redraw
      that follows; control changes made inside it do not redraw again.
    """

    figsize = (6.4, 3.2)
    dpi = 80

    def __init_subclass__(cls, **kwargs):
        # a widget's constructor computes what it shows (runs stacks, trains): with one BLAS thread
        super().__init_subclass__(**kwargs)
        if "__init__" in cls.__dict__:
            cls.__init__ = single_blas_thread(cls.__init__)

    def __init__(self, title, caption, controls, extras=()):
        """``extras``: more widgets shown between the controls and the picture (a progress bar, say)."""
        self.title = title
        self.caption = caption  # HTML: shown in italics under the title
        self.controls = dict(controls)
        self.extras = tuple(extras)
        # larger (in pixels, the same layout) when the course is presented on a projector
        self.figure = Figure(figsize=self.figsize, dpi=plots.figure_dpi(self.dpi), layout="constrained")
        FigureCanvasAgg(self.figure)
        # at its own size (never stretched to the output's width, which blurs it),
        # shrinking only when the output is narrower than the picture
        self.image = Picture(controls=sum(isinstance(c, (widgets.ToggleButtons, *SLIDERS))
                                          for c in self.controls.values()))
        self.readout = widgets.HTML()
        self.readout.add_class("course-readout")
        self.widget = self._box()
        self.state = {}
        self.last_redraw_seconds = None
        self._background = None
        self._adjusting = False
        self._held = False  # controls move without a redraw (settle)
        self.setup(self.figure)
        self.update()
        # the layout is computed once for the first picture and then kept, so
        # that redraws only repaint the changed artists
        self.figure.set_layout_engine("none")
        if self.dynamic_artists():
            self._save_background()
        for control in self.controls.values():
            control.observe(self._changed, names="value")

    def _box(self):
        """The widget as the notebook shows it: title and caption, the controls, the extras, picture, readout."""
        header = widgets.HTML(f"<b>{html.escape(self.title)}</b><br><i>{self.caption}</i>")
        box = widgets.VBox(
            # controls wrap onto a second row when the notebook is narrow, rather than squeeze
            [header, widgets.HBox(list(self.controls.values()), layout=widgets.Layout(flex_flow="row wrap")),
             *self.extras, self.image.widget, self.readout],
            layout=widgets.Layout(border="1px solid #ccc", padding="6px"),
        )
        box.add_class("course-explorer")
        return box

    # --- to implement -------------------------------------------------
    def setup(self, figure):  # pragma: no cover - abstract
        raise NotImplementedError

    def draw(self, **values):  # pragma: no cover - abstract
        raise NotImplementedError

    def describe(self, state):
        return ""

    def alt_text(self, state):
        """The picture in words, for its ``alt``: the titles of its panels, then the readout's numbers."""
        titles = [ax.get_title() for ax in self.figure.axes if ax.get_label() != "<colorbar>"]
        suptitle = self.figure.get_suptitle()
        shown = [" ".join(t.split()) for t in (suptitle, *titles) if t.strip()]
        what = "; ".join(shown) if shown else self.title
        return sentences(f"Plot: {what}", plots.markup_words(self.describe(state)))

    def dynamic_artists(self):
        """The artists that controls change, for blitting; empty means: redraw everything."""
        return []

    def adjust_controls(self, change):
        """Make linked controls consistent after ``change``; called before the redraw."""

    # --- machinery ----------------------------------------------------
    def values(self):
        return {name: control.value for name, control in self.controls.items()}

    def _changed(self, change):
        if self._adjusting:
            return  # a control moved by adjust_controls: the change that caused it redraws
        self._adjusting = True
        try:
            self.adjust_controls(change)
        finally:
            self._adjusting = False
        if not self._held:
            self.update()

    def settle(self, moves):
        """Move controls one after the other, as a learner would, without drawing; returns ``values()``.

        ``moves``: ``[(control name, value), ...]``, each value one that the
        control offers when its turn comes (``control_options``).
        ``adjust_controls`` runs after each move, as it does on the page, so
        linked controls end where the widget puts them. The picture is left
        as it was: ``frame`` or ``update`` draws.
        """
        moves = list(moves)
        if not all(isinstance(move, (tuple, list)) and len(move) == 2 for move in moves):
            raise TypeError(f"moves must be (control name, value) pairs, got {moves!r}")
        self._held = True
        try:
            for name, value in moves:
                if name not in self.controls:
                    raise ValueError(f"moves names the control {name!r}; this widget's controls are "
                                     f"{', '.join(map(repr, self.controls)) or 'none'}")
                offered = [v for _, v in control_options(self.controls[name])]
                if not any(_same(value, v) for v in offered):
                    raise ValueError(f"moves sets {name!r} to {value!r}, which it does not offer now: "
                                     f"{offered}")
                self.controls[name].value = value
        finally:
            self._held = False
        return self.values()

    def frame(self, values, picture=True):
        """Draw the state whose control values are ``values`` (name -> value, every control) with the
        widget's own code; returns its ``Frame``: the picture's PNG, its alt text, the readout's HTML.

        ``picture=False`` sets the figure's artists for the state (``draw``) and words it, without rendering
        the picture: ``png`` is None (the course's website reads the artists of a widget it draws itself)."""
        if not isinstance(values, dict) or set(values) != set(self.controls):
            raise ValueError(f"values must give every control of the widget ({', '.join(self.controls) or 'none'}) "
                             f"a value, got {values!r}")
        ordered = [(name, values[name]) for name in self.controls]
        reached = self.settle(ordered)
        if not all(_same(reached[name], value) for name, value in ordered):
            raise ValueError(f"{type(self).__name__} cannot show {values}: its controls settle at {reached}")
        if not picture:
            state = self.draw(**self.values())
            return Frame(None, self.alt_text(state), self.describe(state))
        self.update()
        return Frame(bytes(self.image.value), self.image.alt, self.readout.value)

    @single_blas_thread
    def update(self):
        """Redraw for the current control values; records the time it took."""
        start = time.perf_counter()
        if not isinstance(self.image, Picture):
            raise TypeError(f"{type(self).__name__} replaced self.image, the widget's picture; "
                            "give its matplotlib artists other names")
        self.state = self.draw(**self.values())
        self.readout.value = self.describe(self.state)
        self.image.show(self.render_png(), self.alt_text(self.state))
        self.last_redraw_seconds = time.perf_counter() - start

    def stop_blitting(self):
        """Draw every artist in full from now on, as before ``start_blitting``: for changing the figure's size or
        layout (the course's website draws each state again at a phone's width, ``tools/site/phone.py``)."""
        for artist in self.dynamic_artists():
            artist.set_animated(False)
        self._background = None

    def start_blitting(self):
        """Save the background again for the figure's present size and layout, and blit from it (when the widget
        lists ``dynamic_artists``)."""
        if self.dynamic_artists():
            self._save_background()

    def _save_background(self):
        """Draw the figure without the changing artists and keep the pixels."""
        for artist in self.dynamic_artists():
            artist.set_animated(True)  # a full draw skips animated artists
        self.figure.canvas.draw()
        self._background = self.figure.canvas.copy_from_bbox(self.figure.bbox)

    def render_png(self):
        """The figure as PNG bytes: a canvas draw (or a blit) and a fast PNG encoder.

        A plain canvas draw is about twice as fast as ``savefig``; restoring
        the saved background and painting only ``dynamic_artists()`` takes
        about a third of a full draw. That is what keeps a redraw under the
        course's 50 ms.
        """
        canvas = self.figure.canvas
        if self._background is None:
            canvas.draw()
        else:
            canvas.restore_region(self._background)
            for artist in self.dynamic_artists():
                self.figure.draw_artist(artist)
        return canvas_png(canvas)

    def _repr_mimebundle_(self, **kwargs):
        return self.widget._repr_mimebundle_(**kwargs)

    def __repr__(self):
        shown = ", ".join(f"{k}={v!r}" for k, v in self.values().items())
        return f"<{type(self).__name__}: {self.title} ({shown})>"


#: One state of a widget as a page shows it: ``png`` (bytes), ``alt`` (plain text), ``readout`` (HTML).
Frame = collections.namedtuple("Frame", "png alt readout")


def sentences(*parts):
    """``parts`` as sentences of alt text: each ends in one full stop; empty ones are left out."""
    return " ".join(part.strip().rstrip(".") + "." for part in parts if part.strip().rstrip("."))


def canvas_png(canvas):
    """What an Agg ``canvas`` last drew, as PNG bytes (PIL's fastest compression: PNG encoding is most of the cost)."""
    buffer = io.BytesIO()
    PIL.Image.frombuffer("RGBA", canvas.get_width_height(), canvas.buffer_rgba()).save(
        buffer, format="png", compress_level=1)
    return buffer.getvalue()


def drawing_order(artists, spines_of=()):
    """``artists`` plus the spines of the axes ``spines_of``, sorted by zorder as a full draw orders them.

    For ``dynamic_artists()``: a repainted heatmap or marker would otherwise
    cover the frame of its axes.
    """
    spines = [spine for ax in spines_of for spine in ax.spines.values()]
    return sorted([*artists, *spines], key=lambda artist: artist.get_zorder())


def highlight(line, color, chosen, widths=(2.0, 1.0)):
    """The chosen ``line`` in full ``color`` and wider; another in ``plots.faint(color)``, a lighter tint
    that keeps 3:1 against the background (a low alpha would not): context, yet visible."""
    line.set_color(color if chosen else plots.faint(color))
    line.set_alpha(None)
    line.set_linewidth(widths[0] if chosen else widths[1])
