"""Helpers for the widget tests: move controls, read the picture."""

import io

import numpy as np
import PIL.Image
from matplotlib.colors import to_hex

from encoder_lib import plots


def set_controls(explorer, **values):
    """Set controls by name, in the order given; returns the widget's new ``state``."""
    for name, value in values.items():
        explorer.controls[name].value = value
    return explorer.state


def highlighted(line):
    """Whether ``line`` is drawn in full colour (a palette colour, opaque), not in a faint tint."""
    return to_hex(line.get_color()) in {to_hex(c) for c in plots.COLORS} and line.get_alpha() in (None, 1.0)


def faint(line):
    """Whether ``line`` is drawn in a lighter tint of a palette colour that still has 3:1 on white."""
    return (not highlighted(line) and line.get_alpha() in (None, 1.0)
            and plots.contrast_ratio(line.get_color(), plots.BACKGROUND) >= plots.GRAPHICS_CONTRAST)


def pixels(explorer):
    """The widget's current picture as an (height, width, 3) float array."""
    return np.asarray(PIL.Image.open(io.BytesIO(explorer.image.value)).convert("RGB"), dtype=float)


def smallest_text_px(figure):
    """The smallest font size of ``figure``'s visible text (tick labels too), in pixels of its PNG."""
    figure.canvas.draw()
    texts = figure.findobj(lambda artist: hasattr(artist, "get_fontsize") and hasattr(artist, "get_text"))
    sizes = [text.get_fontsize() for text in texts if text.get_visible() and text.get_text().strip()]
    return min(sizes) * figure.dpi / 72
