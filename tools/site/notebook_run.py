"""A teachers' notebook run in this process, cell by cell, to build the widgets its cells show.

A widget cell's stored output is only a reference to a widget that lived in
a kernel (``application/vnd.jupyter.widget-view+json``). To show the widget
itself, the site runs the whole notebook here, in order, in one namespace, as
Jupyter would, and keeps every course widget (``Explorer``) that a cell
shows: its last expression's value, or what it passes to ``display``. So the
site's widgets are the notebook's own, built by its own code, and cannot
drift from it.

``fresh(cell_id)`` runs one widget cell again, in a copy of the namespace as
it stood before the cell first ran: a new widget built the same way, for
checking the site's pictures against a drawing of its own.
"""

import ast
import contextlib
import io
import os
import time
import warnings
from pathlib import Path

import nbformat
import numpy as np

from encoder_lib import _display
from encoder_lib.questions import Questions
from encoder_lib.widgets._base import Explorer

from .render import SiteError

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


def stores_a_widget(cell):
    """Whether a code cell's stored outputs show a widget (a widget view, which needs a kernel)."""
    return any(WIDGET_MIME in output.get("data", {}) for output in cell.get("outputs", []))


@contextlib.contextmanager
def _headless(folder, shown):
    """Matplotlib without a screen, figures at the notebooks' size, ``display`` collecting into ``shown``,
    the notebook's folder as the working directory (as in Jupyter); all put back afterwards."""
    import IPython.core.display_functions
    import IPython.display
    import matplotlib

    matplotlib.use("Agg")
    saved_display = IPython.display.display, IPython.core.display_functions.display
    saved_present = os.environ.get(_display.PRESENT_ENV)
    saved_cwd = os.getcwd()

    def display(*objects, **_options):
        shown.extend(objects)

    IPython.display.display = IPython.core.display_functions.display = display
    os.environ[_display.PRESENT_ENV] = "0"  # the pictures of a page, not of a projector
    os.chdir(folder)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a lesson's warnings are the notebook's business, not the site's
            yield display
    finally:
        os.chdir(saved_cwd)
        IPython.display.display, IPython.core.display_functions.display = saved_display
        if saved_present is None:
            os.environ.pop(_display.PRESENT_ENV, None)
        else:
            os.environ[_display.PRESENT_ENV] = saved_present


@contextlib.contextmanager
def _notebook_printing(printing):
    """numpy's print options the notebook's (``printing``, updated with what the cell sets: a lesson's first cell
    sets its own), and the process's again afterwards, so that what this process prints next is printed as before."""
    saved = np.get_printoptions()
    np.set_printoptions(**printing)
    try:
        yield
    finally:
        printing.update(np.get_printoptions())
        np.set_printoptions(**saved)


def _run_cell(source, namespace, where):
    """Run one cell's ``source`` as IPython would (its last expression's value is shown); returns what it showed
    and the pyplot figures it left open (in Jupyter, the inline backend shows them), in the order made."""
    from IPython.core.inputtransformer2 import TransformerManager
    import matplotlib.pyplot as plt

    shown = []
    tree = ast.parse(TransformerManager().transform_cell(source), filename=where)
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    exec(compile(tree, where, "exec"), namespace)
    if last is not None:
        value = eval(compile(ast.Expression(last.value), where, "eval"), namespace)
        if value is not None:
            shown.append(value)
    figures = [plt.figure(number) for number in plt.get_fignums()]
    plt.close("all")
    return shown, figures


class NotebookRun:
    """The notebook at ``path``, run once; ``widgets``: ``{cell id: [Explorer, ...]}`` in the order shown;
    ``questions``: ``{cell id: [Questions, ...]}``, the questions a cell asked above its widgets;
    ``figures``: ``{cell id: [Figure, ...]}``, the matplotlib figures each cell showed (the site draws them
    again for phones)."""

    def __init__(self, path):
        self.path = Path(path)
        if not self.path.is_file():
            raise SiteError(f"no notebook at {self.path}")
        self.notebook = nbformat.read(self.path, as_version=4)
        self.widgets, self._before, self.output, self.figures, self.questions = {}, {}, io.StringIO(), {}, {}
        start = time.perf_counter()
        namespace = {"__name__": "__main__"}
        printing = np.get_printoptions()  # the notebook's numpy print options, as its cells set them
        for index, cell in enumerate(self.notebook.cells):
            if cell.cell_type != "code":
                continue
            before = dict(namespace), dict(printing)
            shown, figures = self._run(cell, index, namespace, printing)
            if figures:
                self.figures[cell.id] = figures
            explorers = [obj for obj in shown if isinstance(obj, Explorer)]
            asked = [obj for obj in shown if isinstance(obj, Questions)]
            if asked:
                self.questions[cell.id] = asked
            if explorers:
                self.widgets[cell.id] = explorers
                self._before[cell.id] = before
            elif stores_a_widget(cell):
                raise SiteError(f"{self._where(index, cell)} shows a widget in the notebook, but running it "
                                "showed no course widget (Explorer): the site can only show those")
        self.seconds = time.perf_counter() - start

    def _where(self, index, cell):
        return f"{self.path.name}, cell {index} (id {cell.id})"

    def _run(self, cell, index, namespace, printing):
        shown = []
        with _headless(self.path.parent, shown) as display, _notebook_printing(printing), \
                contextlib.redirect_stdout(self.output):
            namespace["display"] = display
            try:
                last, figures = _run_cell(cell.source, namespace, f"<{self._where(index, cell)}>")
            except Exception as exc:
                tail = "\n".join(self.output.getvalue().splitlines()[-10:])
                raise SiteError(f"{self._where(index, cell)} failed: {type(exc).__name__}: {exc}"
                                + (f"\nits last printed lines:\n{tail}" if tail else "")) from exc
        return shown + last, figures

    def fresh(self, cell_id):
        """The widgets of cell ``cell_id`` built again, by its code, from the namespace it first ran in."""
        if cell_id not in self.widgets:
            raise ValueError(f"cell_id must be a widget cell of {self.path.name} ({', '.join(self.widgets)}), "
                             f"got {cell_id!r}")
        index, cell = next((i, c) for i, c in enumerate(self.notebook.cells) if c.get("id") == cell_id)
        namespace, printing = self._before[cell_id]
        shown, _ = self._run(cell, index, dict(namespace), dict(printing))
        return [obj for obj in shown if isinstance(obj, Explorer)]
