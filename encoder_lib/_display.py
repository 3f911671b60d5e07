"""Matplotlib figures in a notebook with a text alternative: an ``<img>`` with ``alt``, not a bare PNG.

JupyterLab (4.6) and Voila show a figure's ``image/png`` output as an
``<img>`` without ``alt``, which a screen reader announces as "image" and
axe-core counts as a critical violation (``image-alt``). ``import
encoder_lib`` therefore registers, in IPython only, a ``text/html``
representation of ``matplotlib.figure.Figure``: the same PNG in an ``<img>``
whose ``alt`` is ``figure_alt_text`` (its titles, axis labels and
ranges, and its legend). Front ends prefer HTML to PNG; the PNG output stays
for the others. When presenting (``make present``) the HTML's PNG is drawn
``PRESENT_SCALE`` times larger, so that its labels read on a projector.

This module imports neither IPython nor matplotlib, nor any other part of
``encoder_lib`` (it sits below the library's layers, for ``__init__``): the
formatter is registered by the class's name and runs only when a figure is
shown. ``encoder_lib.plots`` re-exports what the pictures use from here.
"""

import html
import os
import re
import sys

PRESENT_ENV = "ENCODER_COURSE_PRESENT"
PRESENT_SCALE = 1.6  # 80 dpi becomes 128: 8 pt text is 14.2 px on screen

# Registered for Figure's base class: the inline backend, when pyplot starts (often after `import
# encoder_lib`), removes every formatter registered for Figure itself, but looks up its base classes too.
FIGURE = ("matplotlib.figure", "FigureBase")


def presenting():
    """Whether figures are drawn for a projector: ``ENCODER_COURSE_PRESENT`` is 1 (tools/present.py sets it)."""
    value = os.environ.get(PRESENT_ENV, "").strip()
    if value in ("", "0"):
        return False
    if value == "1":
        return True
    raise ValueError(f"{PRESENT_ENV} must be 1 (figures for a projector, as `make present` sets it) or 0 "
                     f"(or unset), got {value!r}")


def figure_dpi(dpi):
    """The dpi to draw a figure meant for ``dpi`` at: larger by PRESENT_SCALE when presenting."""
    if isinstance(dpi, bool) or not isinstance(dpi, (int, float)) or not 10 <= dpi <= 600:
        raise ValueError(f"dpi must be a number from 10 to 600, got {dpi!r}")
    return dpi * PRESENT_SCALE if presenting() else dpi


def markup_words(markup):
    """The words of a bit of the widgets' HTML (tags dropped, entities decoded, spaces collapsed): for alt text."""
    return " ".join(html.unescape(re.sub(r"<[^>]*>", "", markup)).split())


# ------------------------------------------------------------------ text alternatives

def _number(value):
    return f"{value:.3g}"


def figure_alt_text(figure):
    """A static figure in words, for its ``alt``: title, then per panel its title, axes with their
    ranges, and the legend's entries (as ``_display`` shows it in a notebook).

    >>> from matplotlib.figure import Figure
    >>> fig = Figure(); ax = fig.add_subplot(); _ = ax.plot([1, 2], [0, 5], label="loss")
    >>> _ = ax.set(title="Training", xlabel="step", ylabel="loss"); _ = ax.legend()
    >>> figure_alt_text(fig)
    'Plot: Training: x axis step from 0.95 to 2.05; y axis loss from -0.25 to 5.25; legend: loss.'
    """
    parts = []
    suptitle = figure.get_suptitle() if hasattr(figure, "get_suptitle") else ""
    for ax in figure.axes:
        if ax.get_label() == "<colorbar>":
            continue
        words = [" ".join(ax.get_title().split()) or "a panel"]
        axes = []
        for name, label, limits in (("x", ax.get_xlabel(), ax.get_xlim()), ("y", ax.get_ylabel(), ax.get_ylim())):
            low, high = sorted(limits)
            axes.append(f"{name} axis {' '.join(label.split()) or '(unlabelled)'} from {_number(low)} to "
                        f"{_number(high)}")
        words.append("; ".join(axes))
        legend = ax.get_legend()
        if legend is not None:
            words.append("legend: " + ", ".join(t.get_text() for t in legend.get_texts()))
        parts.append(": ".join(words[:1]) + ": " + "; ".join(words[1:]))
    head = " ".join(suptitle.split())
    parts += ["legend: " + ", ".join(t.get_text() for t in legend.get_texts()) for legend in figure.legends]
    body = ". ".join(parts) if parts else "an empty figure"
    return f"Plot: {head + '. ' if head else ''}{body}."


def figure_html(figure):
    """A figure as ``<img src="data:image/png..." alt="...">``, at its own size (larger when presenting)."""
    from IPython.core.pylabtools import print_figure

    data = print_figure(figure, fmt="png", bbox_inches="tight", base64=True, dpi=figure_dpi(figure.dpi))
    return (f'<img src="data:image/png;base64,{data}" alt="{html.escape(figure_alt_text(figure), quote=True)}" '
            f'class="course-figure">')


def describe_figures_in_ipython():
    """Register ``figure_html`` for matplotlib figures in the running IPython; nothing outside IPython."""
    ipython_module = sys.modules.get("IPython")
    shell = ipython_module.get_ipython() if ipython_module is not None else None
    if shell is None or not hasattr(shell, "display_formatter"):
        return False
    shell.display_formatter.formatters["text/html"].for_type_by_name(*FIGURE, figure_html)
    return True
