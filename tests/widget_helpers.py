"""Helpers for the widget tests: move controls, read the picture."""

import io

import numpy as np
import PIL.Image


def set_controls(explorer, **values):
    """Set controls by name, in the order given; returns the widget's new ``state``."""
    for name, value in values.items():
        explorer.controls[name].value = value
    return explorer.state


def pixels(explorer):
    """The widget's current picture as an (height, width, 3) float array."""
    return np.asarray(PIL.Image.open(io.BytesIO(explorer.image.value)).convert("RGB"), dtype=float)
