"""Where the hint ladder shows in a notebook, and how many of its rungs are open: kept in the notebook's metadata.

A rung is shown as a display output whose metadata holds
``{"encoder_course": {"hints": {"exercise": name, "failure": key, "opened": n}}}``.
The count belongs to one failure (``key``, ``verdict.Verdict.failure_key``):
a new, different failure of the same exercise starts at rung 1 again. The
notebook saves outputs with their metadata, so the count survives a kernel
restart, a page reload and a download: after a restart the first hint of a
failure reads its count back from the saved notebook (the kernel knows its
notebook's path, ``__session__``). In JupyterLab a failed self-check shows a
button (ipywidgets); each press calls back into the self-check's ``hint``,
which shows the next rung in the same output (``update_display``). Without
a notebook, the rungs are printed.

After the third rung, where the teacher's setting opens it, a fourth step
shows the course's solution (``solution_step``): the button offers it, and
the count records it as a fourth rung opened.

It imports nothing of the course's package but the ladder's length (``ladder.RUNGS``, ``ladder.STEPS``): what it
shows is handed to it.
"""

import json
import os
import re
import textwrap
import uuid

from .ladder import RUNGS, STEPS

META = "encoder_course"
#: The largest notebook file read back for a count (a notebook is a few MB; anything larger is not read).
MAX_SAVED_NOTEBOOK_BYTES = 64 * 2**20

_opened = {}  # (exercise, failure) -> rungs opened, this session
_areas = {}  # exercise -> (display handle, button, failure) of the latest self-check's hint area


def shell():
    """The running IPython, or None. Not the builtin ``get_ipython``, which exists only while a cell runs: a
    button's callback runs between cells."""
    try:
        from IPython import get_ipython
    except ImportError:
        return None
    return get_ipython()


def _in_a_kernel():
    running = shell()
    return running is not None and getattr(running, "kernel", None) is not None


def notebook_path():
    """The path of the notebook this kernel runs, or None (outside a notebook)."""
    running = shell()
    path = running.user_ns.get("__session__") if running is not None else None
    path = path or os.environ.get("JPY_SESSION_NAME")
    return path if isinstance(path, str) and path.endswith(".ipynb") and os.path.isfile(path) else None


def saved_count(name, failure=None, path=None):
    """The rungs of ``name``'s ladder opened for ``failure``, as the saved notebook at ``path`` records them (0
    if it records none; ``failure`` None: for any failure)."""
    path = path or notebook_path()
    if path is None:
        return 0
    try:
        if os.path.getsize(path) > MAX_SAVED_NOTEBOOK_BYTES:
            return 0
        with open(path, encoding="utf-8") as f:
            notebook = json.load(f)
    except (OSError, ValueError, RecursionError):
        return 0
    return counts_in(notebook).get((name, failure), 0) if failure is not None else \
        max((n for (exercise, _), n in counts_in(notebook).items() if exercise == name), default=0)


def _recorded(output):
    """``(exercise, failure, opened)`` that one output's metadata records, or None."""
    meta = output.get("metadata") if isinstance(output, dict) else None
    ours = meta.get(META) if isinstance(meta, dict) else None
    hints = ours.get("hints") if isinstance(ours, dict) else None
    if not isinstance(hints, dict) or not isinstance(hints.get("exercise"), str) or \
            not isinstance(hints.get("opened"), int):
        return None
    failure = hints.get("failure")
    return hints["exercise"], failure if isinstance(failure, str) else "", min(STEPS, max(0, hints["opened"]))


def counts_in(notebook):
    """``{(exercise, failure): rungs opened}`` recorded in a notebook's outputs (the largest count of each)."""
    counts = {}
    for cell in notebook.get("cells", []) if isinstance(notebook, dict) else []:
        for output in cell.get("outputs", []) if isinstance(cell, dict) else []:
            found = _recorded(output)
            if found:
                key = found[:2]
                counts[key] = max(counts.get(key, 0), found[2])
    return counts


def opened(name, failure):
    """How many rungs of ``name``'s ladder the learner has opened for this ``failure``."""
    if (name, failure) not in _opened:
        _opened[name, failure] = saved_count(name, failure)
    return _opened[name, failure]


def record(name, failure, count):
    _opened[name, failure] = count


def _metadata(name, failure, count):
    return {META: {"hints": {"exercise": name, "failure": failure, "opened": count}}}


def _markdown(rungs):
    """The rungs as markdown for the notebook, each link underlined (not told apart from the text by colour alone)."""
    from IPython.display import Markdown

    return Markdown(re.sub(r"\[([^\]]+)\]\(", r"[<u>\1</u>](", "\n\n".join(rungs)))


def button_label(count, total=RUNGS, solution=False):
    """The button's words after ``count`` rungs; ``solution``: the course's solution is the next step."""
    if count == 0:
        return f"Show a hint (1 of {total})"
    if count < total:
        return f"Next hint ({count + 1} of {total})"
    if count == total and solution:
        return "Show the course's solution"
    return f"All {total} hints" + (" and the course's solution shown" if count > total else " shown")


def finished(count, solution=False):
    """Whether the button has nothing more to show after ``count`` rungs."""
    return count >= STEPS or (count >= RUNGS and not solution)


class Part(str):
    """A part shown as this markdown in a notebook, and printed as ``plain`` (the solution's table, as text)."""

    def __new__(cls, markdown, plain):
        part = super().__new__(cls, markdown)
        part.plain = plain
        return part


def plain(part):
    """A shown part as a terminal reads it: its own plain text (the solution's table), else its markdown made plain
    (``terminal``)."""
    return getattr(part, "plain", None) or terminal(part)


def terminal(markdown):
    """Markdown as a terminal shows it: no bold marks, a link as its text (with its address where it leads out of
    the lesson), code without its backticks, each paragraph wrapped at 88 columns."""
    paragraphs = []
    for paragraph in markdown.split("\n\n"):
        pieces = paragraph.split("`")  # code is every second piece, kept as it is
        text = "".join(piece if i % 2 else re.sub(r"\[([^\]]+)\]\(([^)]*)\)", _link, piece.replace("**", ""))
                       for i, piece in enumerate(pieces))
        paragraphs.append(textwrap.fill(" ".join(text.split()), 88, break_long_words=False, break_on_hyphens=False))
    return "\n\n".join(paragraphs)


def _link(match):
    text, address = match.groups()
    return text if address.startswith("#") else f"{text} ({address})"


def show(name, failure, parts, count=None, solution=False):
    """Show ``parts`` (the first ``count`` rungs of the ladder, default all of them, and what follows the third):
    in the self-check's hint area if it shows this failure, else here (as plain text outside a notebook's
    kernel, where a terminal would print a Markdown object's name). ``solution``: the next step is the course's
    solution."""
    count = len(parts) if count is None else count
    if not _in_a_kernel():
        more = f'\n\nOnce more, grading.hint("{name}") shows the course\'s solution beside your code.'
        print("\n\n".join(plain(part) for part in parts) + (more if count == RUNGS and solution else ""))
        return
    from IPython.display import display

    area = _areas.get(name)
    if area is not None:  # the latest self-check's area, whichever failure it showed: the ladder follows the answer
        handle, button, _ = _areas[name] = (*area[:2], failure)
        handle.update(_markdown(parts), metadata=_metadata(name, failure, count))
        if button is not None:
            with button.hold_sync():  # one message: the label and the disabled state change together
                button.description = button_label(count, solution=solution)
                button.disabled = finished(count, solution)
        return
    display(_markdown(parts), metadata=_metadata(name, failure, count))


def done(name, text):
    """Say ``text`` where the ladder of ``name`` shows (its button then has nothing more to show): the answer checked
    again passes, or is not written yet."""
    area = _areas.get(name)
    if not _in_a_kernel() or area is None:
        print(terminal(text))
        return
    handle, button, _ = area
    handle.update(_markdown([text]), metadata=_metadata(name, "", 0))
    if button is not None:
        with button.hold_sync():
            button.description, button.disabled = "No hint needed", True


def offer(name, failure, parts, on_press, count=None, solution=False):
    """Under a failed self-check: a hint area showing ``parts`` (the ``count`` rungs already open for this failure,
    default all of them) and its button, which calls ``on_press()``; outside a notebook, a line that says how to
    ask for a hint. ``solution``: the course's solution follows the third rung."""
    widgets = _widgets() if _in_a_kernel() else None
    if widgets is None:
        print(f'Stuck? `grading.hint("{name}")` shows a hint: what is wrong, the idea it needs, then a worked step.')
        return
    from IPython.display import display

    count = len(parts) if count is None else count
    handle = display(_markdown(parts) if parts else _markdown([""]), metadata=_metadata(name, failure, count),
                     display_id=f"encoder-course-hint-{name}-{uuid.uuid4().hex[:8]}")
    button = widgets.Button(description=button_label(count, solution=solution), disabled=finished(count, solution),
                            tooltip=f"A hint for {name}: what is wrong, the idea it needs, a worked step",
                            layout=widgets.Layout(width="auto"))
    button.add_class("encoder-course-hint-button")
    button.on_click(lambda _: on_press())
    _areas[name] = (handle, button, failure)
    display(button)


def _widgets():
    try:
        import ipywidgets
    except ImportError:
        return None
    return ipywidgets
