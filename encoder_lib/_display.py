"""Matplotlib figures in a notebook with a text alternative: an ``<img>`` with ``alt``, not a bare PNG.

JupyterLab (4.6) and Voila show a figure's ``image/png`` output as an
``<img>`` without ``alt``, which a screen reader announces as "image" and
axe-core counts as a critical violation (``image-alt``). ``import
encoder_lib`` therefore registers, in IPython only, a ``text/html``
representation of ``matplotlib.figure.Figure``: the same PNG in an ``<img>``
whose ``alt`` is ``plots.figure_alt_text`` (its titles, axis labels and
ranges, and its legend). Front ends prefer HTML to PNG; the PNG output stays
for the others. When presenting (``make present``) the HTML's PNG is drawn
``plots.PRESENT_SCALE`` times larger, so that its labels read on a projector.

This module imports neither IPython nor matplotlib: the formatter is
registered by the class's name and runs only when a figure is shown.
"""

import sys

# Registered for Figure's base class: the inline backend, when pyplot starts (often after `import
# encoder_lib`), removes every formatter registered for Figure itself, but looks up its base classes too.
FIGURE = ("matplotlib.figure", "FigureBase")


def figure_html(figure):
    """The ``text/html`` of a figure: ``plots.figure_html`` (imported here, when a figure is shown)."""
    from .plots import figure_html as html

    return html(figure)


def describe_figures_in_ipython():
    """Register ``figure_html`` for matplotlib figures in the running IPython; nothing outside IPython."""
    ipython_module = sys.modules.get("IPython")
    shell = ipython_module.get_ipython() if ipython_module is not None else None
    if shell is None or not hasattr(shell, "display_formatter"):
        return False
    shell.display_formatter.formatters["text/html"].for_type_by_name(*FIGURE, figure_html)
    return True
