"""What every course widget promises, checked on all of them without a browser."""

import pytest
from matplotlib.image import AxesImage

from encoder_lib.widgets import all_explorers
from encoder_lib.widgets._controls import control_values

EXPLORERS = all_explorers()
IDS = [f"{module}.{builder.__name__}" for module, builder in EXPLORERS]


@pytest.fixture(params=EXPLORERS, ids=IDS)
def explorer(request):
    return request.param[1]()


def test_default_state_shows_a_picture_and_a_readout(explorer):
    assert bytes(explorer.image.value).startswith(b"\x89PNG")
    assert explorer.state, "draw() must return what the picture shows"
    assert explorer.controls, "a widget without controls answers nothing"


def test_every_plot_has_a_title_and_labelled_axes(explorer):
    axes = [ax for ax in explorer.figure.axes if ax.get_label() != "<colorbar>"]
    assert axes
    for ax in axes:
        assert ax.get_title(), f"an axis of {explorer!r} has no title"
        assert ax.get_xlabel() and ax.get_ylabel(), f"{ax.get_title()!r} lacks an axis label"


def test_heatmaps_use_the_colour_blind_safe_map(explorer):
    for ax in explorer.figure.axes:
        for image in ax.get_images():
            if isinstance(image, AxesImage):
                assert image.get_cmap().name.startswith("cividis"), image.get_cmap().name


def test_each_control_changes_the_picture_in_place(explorer):
    figure = explorer.figure
    for name, control in explorer.controls.items():
        for value in control_values(control):
            if control.value == value:
                continue
            before = bytes(explorer.image.value)
            control.value = value
            assert explorer.figure is figure, "a redraw must not build a new figure"
            assert bytes(explorer.image.value) != before, f"moving {name!r} to {value!r} left the picture unchanged"


#: The library's math, which a widget leaves to ``encoder_lib.experiments``: ``__init__`` is ``import encoder_lib``.
COMPUTES = {"__init__", "attention", "ffn", "norm", "block", "positional", "pooling", "params", "grad"}


def library_math_imported(path):
    from test_layers import imported_parts

    return sorted({part for _, part in imported_parts(path)} & COMPUTES)


def test_widgets_only_draw_their_numbers_come_from_the_experiments():
    """No widget module runs the library's math itself: what it shows is computed in encoder_lib.experiments."""
    from test_layers import PACKAGE

    modules = sorted(p for p in (PACKAGE / "widgets").glob("*.py") if not p.name.startswith("_"))
    assert len(modules) == 9
    assert {p.name: library_math_imported(p) for p in modules} == {p.name: [] for p in modules}


def test_the_widget_check_sees_a_widget_that_computes(tmp_path, monkeypatch):
    """The check would fail: a widget that imports encoder_lib and its attention is caught, its experiments are not."""
    import test_layers

    computing = tmp_path / "encoder_lib" / "widgets" / "heads.py"
    computing.parent.mkdir(parents=True)
    computing.write_text("import encoder_lib as el\nfrom ..attention import softmax\nfrom ..experiments import rms\n")
    monkeypatch.setattr(test_layers, "PACKAGE", tmp_path / "encoder_lib")
    assert library_math_imported(computing) == ["__init__", "attention"]
