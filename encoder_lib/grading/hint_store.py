"""Where the hint ladder shows and remembers itself: an output of the notebook, with the count in its metadata.

A rung is shown as a display output whose metadata holds
``{"encoder_course": {"hints": {"exercise": name, "opened": n}}}``. The
notebook saves outputs with their metadata, so the count survives a kernel
restart, a page reload and a download: after a restart the first hint of an
exercise reads the count back from the saved notebook (the kernel knows its
notebook's path, ``__session__``). In JupyterLab the self-check shows a
button under a failed check (ipywidgets); each press shows the next rung in
the same output (``update_display``). Without a notebook, ``hint`` prints.
"""

import json
import os
import uuid

META = "encoder_course"
#: The largest notebook file read back for a count (a notebook is a few MB; anything larger is not read).
MAX_NOTEBOOK_BYTES = 64 * 2**20

_opened = {}  # exercise -> rungs opened, this session
_areas = {}  # exercise -> (display handle, button) of the latest self-check's hint area


def _shell():
    """The running IPython, or None. Not the builtin ``get_ipython``, which exists only while a cell runs: a
    button's callback runs between cells."""
    try:
        from IPython import get_ipython
    except ImportError:
        return None
    return get_ipython()


def notebook_path():
    """The path of the notebook this kernel runs, or None (outside a notebook)."""
    shell = _shell()
    path = shell.user_ns.get("__session__") if shell is not None else None
    path = path or os.environ.get("JPY_SESSION_NAME")
    return path if isinstance(path, str) and path.endswith(".ipynb") and os.path.isfile(path) else None


def saved_count(name, path=None):
    """The rungs of ``name`` opened, as the saved notebook at ``path`` records them (0 if it records none)."""
    path = path or notebook_path()
    if path is None:
        return 0
    try:
        if os.path.getsize(path) > MAX_NOTEBOOK_BYTES:
            return 0
        with open(path, encoding="utf-8") as f:
            notebook = json.load(f)
    except (OSError, ValueError, RecursionError):
        return 0
    return counts_in(notebook).get(name, 0)


def counts_in(notebook):
    """``{exercise: rungs opened}`` recorded in a notebook's outputs (the largest count for each exercise)."""
    counts = {}
    for cell in notebook.get("cells", []) if isinstance(notebook, dict) else []:
        for output in cell.get("outputs", []) if isinstance(cell, dict) else []:
            meta = output.get("metadata") if isinstance(output, dict) else None
            hints = meta.get(META, {}).get("hints") if isinstance(meta, dict) and isinstance(meta.get(META), dict) \
                else None
            if isinstance(hints, dict) and isinstance(hints.get("exercise"), str) and isinstance(hints.get("opened"), int):
                counts[hints["exercise"]] = max(counts.get(hints["exercise"], 0), min(3, max(0, hints["opened"])))
    return counts


def opened(name):
    if name not in _opened:
        _opened[name] = saved_count(name)
    return _opened[name]


def record(name, count):
    _opened[name] = count


def _metadata(name, count):
    return {META: {"hints": {"exercise": name, "opened": count}}}


def _markdown(rungs):
    """The rungs as markdown for the notebook, each link underlined (not told apart from the text by colour alone)."""
    import re

    from IPython.display import Markdown

    return Markdown(re.sub(r"\[([^\]]+)\]\(", r"[<u>\1</u>](", "\n\n".join(rungs)))


def _label(count, total=3):
    if count == 0:
        return f"Show a hint (1 of {total})"
    if count < total:
        return f"Next hint ({count + 1} of {total})"
    return f"All {total} hints shown"


def show(name, rungs, count):
    """Show the first ``count`` rungs: in the self-check's hint area if there is one, else here (as plain text
    outside a notebook's kernel, where a terminal would print a Markdown object's name)."""
    shell = _shell()
    if shell is None or getattr(shell, "kernel", None) is None:
        print("\n\n".join(rungs))
        return
    from IPython.display import display

    area = _areas.get(name)
    if area is not None:
        handle, button = area
        handle.update(_markdown(rungs), metadata=_metadata(name, count))
        if button is not None:
            button.description = _label(count)
            button.disabled = count >= 3
        return
    display(_markdown(rungs), metadata=_metadata(name, count))


def offer(name):
    """Under a failed self-check: the hint area and its button, or a line that says how to ask for a hint."""
    from . import hints
    from .self_check import LAST

    shell = _shell()
    widgets = _widgets() if shell is not None and getattr(shell, "kernel", None) is not None else None
    if widgets is None:
        print(f'Stuck? `grading.hint("{name}")` shows a hint: what is wrong, the idea it needs, then a worked step.')
        return
    from IPython.display import display

    count = opened(name)
    rungs = hints.ladder(name, LAST[name])[:count]
    handle = display(_markdown(rungs) if rungs else _markdown([""]), metadata=_metadata(name, count),
                     display_id=f"encoder-course-hint-{name}-{uuid.uuid4().hex[:8]}")
    button = widgets.Button(description=_label(count), disabled=count >= 3,
                            tooltip=f"A hint for {name}: what is wrong, the idea it needs, a worked step",
                            layout=widgets.Layout(width="auto"))
    button.add_class("encoder-course-hint-button")
    button.on_click(lambda _: hints.hint(name))
    _areas[name] = (handle, button)
    display(button)


def _widgets():
    try:
        import ipywidgets
    except ImportError:
        return None
    return ipywidgets
