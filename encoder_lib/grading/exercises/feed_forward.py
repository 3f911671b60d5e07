"""Lesson 03's exercises: the feed-forward network and GELU.

The code of its exercises: feed_forward.toml declares each one (its texts, points and mistakes) and names the functions
here.
"""

import numpy as np

from ... import fixtures

from ...ffn import feed_forward, gelu  # feed_forward: feed_forward.toml's reference
from ..in_words import number
from ..symptoms import Finding
from ._base import cases, load_exercises, normal, random_ffn_params


# --- the FFN ---------------------------------------------------------------------


def ffn_cases(rng):
    return cases(
        ("the lesson's row (1, 0, 0.5, -1)", [np.array(fixtures.FFN_ROW), fixtures.lesson_ffn_params()], {}),
        ("the lesson's input (3, 4)", [fixtures.lesson_input(), fixtures.lesson_ffn_params()], {}),
        ("(2, 5, 6) with d_ff 10", [normal(rng, 2, 5, 6), random_ffn_params(rng, 6, 10)], {}),
        ("(5, 6) with d_ff 10, GELU", [normal(rng, 5, 6), random_ffn_params(rng, 6, 10)], {"activation": "gelu"}),
    )


def ffn_draw(rng, point):
    """x of the point's sizes and random params; "large": x of about 30, so that hidden values reach 30 and more."""
    d_model, d_ff, activation = point["d_model"], point["d_ff"], point["activation"]
    x = normal(rng, *point.lead, point["seq"], d_model) * (30.0 if point.regime == "large" else 1.0)
    kwargs = {} if activation == "relu" else {"activation": activation}
    return f"x {x.shape}, d_ff {d_ff}, {activation}", [x, random_ffn_params(rng, d_model, d_ff)], kwargs


def _relu(h):
    return np.maximum(h, 0)


def ffn_model(x, params, activation="relu", *, act_first=True, act_last=False, b1=True, b2=True, relu=True):
    """The FFN with one thing changed: its activation moved, added or left out (``relu=False``: ReLU only, GELU
    kept), a bias left out."""
    act = gelu if activation == "gelu" else _relu
    h = x @ params["w1"] + (params["b1"] if b1 else 0)
    if act_first and (relu or activation == "gelu"):
        h = act(h)
    y = h @ params["w2"] + (params["b2"] if b2 else 0)
    return act(y) if act_last else y


def ffn_reference_model(x, params, activation="relu"):
    hidden = x @ params["w1"] + params["b1"]  # step: expand
    if activation == "gelu":  # step: if_activation
        hidden = gelu(hidden)  # step: gelu
    else:
        hidden = np.maximum(hidden, 0)  # step: relu
    return hidden @ params["w2"] + params["b2"]  # step: project


def ffn_ignores_activation(x, params, activation="relu"):
    return ffn_model(x, params)


def ffn_shape(ev):
    """The FFN maps each position's d_model features back to d_model: (..., d_model) in, the same shape out."""
    got, x, params = ev.got_array(), ev.value("x"), ev.value("params")
    if got is None or got.shape == x.shape:
        return None
    d_ff = params["w1"].shape[-1]
    if got.shape[:-1] == x.shape[:-1] and got.shape[-1] == d_ff:
        return Finding("ffn:hidden-returned",
                       f"{ev.where()} your result has d_ff = {d_ff} features per position, the hidden layer's size; "
                       f"the FFN projects back to d_model = {x.shape[-1]} with w2 (and b2).")
    return None


def ffn_is_positionwise(ev):
    """Each position's output depends on that position's input alone, with the same weights at every position: said
    only where positions were compared, every sequence of a batch right at the same positions and wrong at the others
    (an answer wrong for some values, not positions, is right at scattered ones)."""
    got, x = ev.got_array(), ev.value("x")
    if got is None or got.shape != x.shape or x.ndim < 3:
        return None
    rows_in, rows_out = x.reshape(-1, x.shape[-1]), got.reshape(-1, got.shape[-1])
    # the answer's output for each row against the right output for the same row, computed alone
    alone = np.stack([ev.reference(x=row[None, :])[0] for row in rows_in])
    right = (np.abs(rows_out - alone).max(axis=-1) < 1e-6).reshape(-1, x.shape[-2])  # (sequences, positions)
    if len(right) < 2 or right.all() or not right.any() or not (right == right[0]).all():
        return None
    where = ("positions " if right[0].sum() > 1 else "position ") + ", ".join(map(str, np.flatnonzero(right[0])))
    return Finding("ffn:some-positions",
                   f"{ev.where()} in every one of the {len(right)} sequences the outputs at {where} are right and the "
                   f"others wrong: the same weights apply to every position, one row at a time.")


# --- GELU ------------------------------------------------------------------------


def gelu_cases(rng):
    return cases(("17 points from -4 to 4", [np.linspace(-4, 4, 17)], {}),
                 ("a (2, 3) array", [normal(rng, 2, 3)], {}))


def gelu_draw(rng, point):
    """Values of the point's shape: "ordinary" of about 3, "wide" from -30 to 30 (far tails on both sides)."""
    shape = (*point.lead, point["n"])
    x = rng.uniform(-30, 30, shape) if point.regime == "wide" else normal(rng, *shape) * 3
    return f"x {x.shape}", [x], {}


def gelu_tanh_approximation(x):
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))


def erf(x):
    """SciPy's erf, imported when first called, as the library's gelu does: the grader's plan imports the exercises,
    and scipy.special takes a quarter of a second (a regrade of nothing never calls it)."""
    from scipy.special import erf as scipy_erf

    return scipy_erf(x)


def gelu_erf_of_x(x):
    return 0.5 * x * (1 + erf(x))


def gelu_is_relu(x):
    return np.maximum(x, 0)


def gelu_without_the_half(x):
    return 2 * gelu(x)


def gelu_model(x):
    cdf = 0.5 * (1 + erf(x / np.sqrt(2)))  # step: cdf
    return x * cdf  # step: result


def gelu_sigmoid_approximation(x):
    return x / (1 + np.exp(-1.702 * x))


def gelu_at_zero(ev):
    """GELU(0) = 0: 0 times anything."""
    got, x = ev.got_array(), ev.value("x")
    if got is None or got.shape != x.shape or not np.isfinite(got).all():
        return None
    zero = np.isclose(x, 0)
    if zero.any() and not np.allclose(got[zero], 0, atol=1e-6):
        return Finding("gelu:zero", f"{ev.where()} GELU(0) is 0 (0 times anything); yours gives "
                                    f"{number(got[zero][0])}.")
    return None


def gelu_odd_part(ev):
    """GELU(x) - GELU(-x) = x for every x: the identity of x times the normal CDF."""
    got, x = ev.got_array(), ev.value("x")
    if got is None or got.shape != x.shape or x.ndim != 1 or not np.isfinite(got).all() or ev.case.hidden:
        return None  # (a hidden case's inputs are never quoted)
    mirror = {float(v): i for i, v in enumerate(x)}
    pairs = [(i, mirror[-float(v)]) for i, v in enumerate(x) if v > 0 and -float(v) in mirror]
    for i, j in pairs:
        if abs(got[i] - got[j] - x[i]) > 1e-6:
            return Finding("gelu:odd",
                           f"{ev.where()} GELU(x) - GELU(-x) = x for every x, since Phi(x) + Phi(-x) = 1; yours "
                           f"gives GELU({number(x[i])}) - GELU({number(x[j])}) = {number(got[i] - got[j])}.")
    return None


#: The lesson's exercises, as feed_forward.toml declares them.
EXERCISES = load_exercises(globals())
