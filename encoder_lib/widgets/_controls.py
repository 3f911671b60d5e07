"""The controls of the course's widgets: how each is made (sliders, toggle buttons, checkboxes), how a page
shows it (``control_kind``) and which values it offers (``control_options``), labelled as the widget shows them."""

import ipywidgets as widgets


#: The controls drawn as a slider (a handle that the arrow keys move).
SLIDERS = (widgets.IntSlider, widgets.FloatSlider, widgets.SelectionSlider)


def slider(description, value, low, high, step=1, **kwargs):
    """An integer or float slider with the course's defaults (keyboard-friendly, value shown)."""
    kind = widgets.IntSlider if all(isinstance(v, int) for v in (value, low, high, step)) else widgets.FloatSlider
    return kind(value=value, min=low, max=high, step=step, description=description,
                continuous_update=True, style={"description_width": "initial"}, **kwargs)


def toggle(description, options, value=None):
    """Toggle buttons for a small set of named choices."""
    return widgets.ToggleButtons(options=options, value=value if value is not None else options[0],
                                 description=description, style={"description_width": "initial", "button_width": "auto"})


#: The two placements of the layer norm, as the widgets name them.
PLACEMENT_NAMES = {"post": "post-norm", "pre": "pre-norm"}


def placement_toggle(value="post", order=("post", "pre")):
    """Toggle buttons for the norm's placement, post-norm or pre-norm."""
    return toggle("placement", tuple((PLACEMENT_NAMES[norm], norm) for norm in order), value)


def checkbox(description, value):
    return widgets.Checkbox(value=value, description=description, indent=False)


def control_kind(control):
    """How a page shows ``control``: ``"slider"``, ``"toggle"`` (one of a few named choices) or ``"checkbox"``.

    >>> control_kind(slider("depth", 3, 1, 24)), control_kind(checkbox("mask", True))
    ('slider', 'checkbox')
    """
    if isinstance(control, SLIDERS):
        return "slider"
    if isinstance(control, widgets.ToggleButtons):
        return "toggle"
    if isinstance(control, widgets.Checkbox):
        return "checkbox"
    raise TypeError(f"control must be a slider, toggle buttons or a checkbox, got {type(control).__name__}")


def control_options(control):
    """Every value ``control`` offers as it stands, as ``[(label, value), ...]``, labelled as the widget shows them.

    >>> control_options(slider("temperature", 1.0, 0.5, 1.5, 0.5))
    [('0.50', 0.5), ('1.00', 1.0), ('1.50', 1.5)]
    >>> control_options(toggle("d_k", (4, 16)))
    [('4', 4), ('16', 16)]
    """
    kind = control_kind(control)
    if kind == "checkbox":
        return [("off", False), ("on", True)]
    if isinstance(control, (widgets.SelectionSlider, widgets.ToggleButtons)):
        return list(zip(control._options_labels, control._options_values))
    count = int(round((control.max - control.min) / control.step)) + 1
    kind = type(control.value)
    values = [kind(round(control.min + i * control.step, 10)) for i in range(count)]
    return [(format(value, control.readout_format), value) for value in values]


def control_values(control, limit=20):
    """Valid values of one control, for tests and benchmarks that move it: at most ``limit``."""
    if isinstance(control, widgets.Checkbox):
        return [not control.value, control.value]
    if hasattr(control, "options"):
        values = [v if not isinstance(v, tuple) else v[1] for v in control.options]
        return values[:limit]
    low, high, step = control.min, control.max, control.step
    count = int(round((high - low) / step)) + 1
    picks = [low + step * round(i * (count - 1) / max(min(limit, count) - 1, 1)) for i in range(min(limit, count))]
    return [type(control.value)(round(v, 10)) for v in picks]


def _same(a, b):
    """Whether two control values are the same value (``True`` is not ``1`` here)."""
    return type(a) is type(b) and a == b
