"""Lesson 03's exercises: the feed-forward network and GELU."""

from functools import partial

import numpy as np

from ... import fixtures
from scipy.special import erf

from ...ffn import feed_forward, gelu
from ..in_words import number
from ..symptoms import Finding
from ._base import Exercise, Mistake, cases, normal, random_ffn_params

FFN_IDEA_LINK = "[The lesson's FFN, one token by hand](#The-lesson's-FFN,-one-token-by-hand)"

# --- the FFN ---------------------------------------------------------------------


WHERE_IDEA = (
    "The activation sits between the two linear layers, and only there: hidden = act(x @ w1 + b1), output = "
    "hidden @ w2 + b2. Without it the FFN is two linear maps in a row, which is just one linear map; after the "
    "second layer it would cut off every negative output, which the residual stream needs. See " + FFN_IDEA_LINK +
    ", and the widget in [Try it](#Try-it) for what ReLU does to the hidden units.")
WHERE_STEP = (
    "On the lesson's row, x @ w1 + b1 has three negative entries (-0.775, -0.8375, -0.7125), which ReLU sets to "
    "0; the other five pass unchanged. The right output (0.4125, -0.1172, -0.9281, -0.1781) has negative entries: "
    "an activation after the second layer could not produce it. Write the two steps on two lines and print the "
    "hidden layer between them.")
BIAS_IDEA = (
    "Each linear layer is x @ w + b: a matrix product, then a bias vector added to every position's row. The "
    "FFN has two, so two biases: b1 (d_ff entries) inside the activation, b2 (d_model entries) at the end. A "
    "missing bias shifts every row by the same vector (b2) or changes which hidden units the ReLU keeps (b1). "
    "See " + FFN_IDEA_LINK + ", where the lesson's b1 is 0.1 and b2 is -0.1 everywhere.")
BIAS_STEP = (
    "With the lesson's weights, the first hidden unit of the row (1, 0, 0.5, -1) is -0.875 before b1 and "
    "-0.775 after it (b1 = 0.1), and the output's first entry is 0.5125 before b2 and 0.4125 after it (b2 = -0.1). "
    "Print `params[\"b1\"].shape` and `params[\"b2\"].shape`: (8,) and (4,); each is added once, right after its "
    "own matrix product.")


def ffn_cases(rng, hidden):
    if hidden:
        d_model, d_ff, seq = int(rng.integers(2, 7)), int(rng.integers(7, 13)), int(rng.integers(1, 5))
        lead = tuple(int(n) for n in rng.integers(1, 3, size=rng.integers(0, 2)))
        return cases((f"random x {lead + (seq, d_model)}, d_ff {d_ff}",
                      [normal(rng, *lead, seq, d_model), random_ffn_params(rng, d_model, d_ff)], {}),
                     (f"random x ({seq}, {d_model}), d_ff {d_ff}, GELU",
                      [normal(rng, seq, d_model), random_ffn_params(rng, d_model, d_ff)], {"activation": "gelu"}))
    return cases(
        ("the lesson's row (1, 0, 0.5, -1)", [np.array(fixtures.FFN_ROW), fixtures.lesson_ffn_params()], {}),
        ("the lesson's input (3, 4)", [fixtures.lesson_input(), fixtures.lesson_ffn_params()], {}),
        ("(2, 5, 6) with d_ff 10", [normal(rng, 2, 5, 6), random_ffn_params(rng, 6, 10)], {}),
        ("(5, 6) with d_ff 10, GELU", [normal(rng, 5, 6), random_ffn_params(rng, 6, 10)], {"activation": "gelu"}),
    )


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
    hidden = x @ params["w1"] + params["b1"]  # the first layer expands each position's features (times w1, plus b1)
    if activation == "gelu":  # the activation is GELU when activation="gelu"
        hidden = gelu(hidden)  # the hidden layer goes through GELU
    else:
        hidden = np.maximum(hidden, 0)  # the hidden layer goes through ReLU, max(h, 0)
    return hidden @ params["w2"] + params["b2"]  # the second layer projects back to d_model (times w2, plus b2)


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
    """Each position's output depends on that position's input alone: equal input rows give equal output rows."""
    got, x = ev.got_array(), ev.value("x")
    if got is None or got.shape != x.shape or x.ndim < 2:
        return None
    rows_in, rows_out = x.reshape(-1, x.shape[-1]), got.reshape(-1, got.shape[-1])
    # the answer's output for each row against the right output for the same row, computed alone
    alone = np.stack([ev.reference(x=row[None, :])[0] for row in rows_in])
    right_rows = np.abs(rows_out - alone).max(axis=-1) < 1e-6
    if right_rows.any() and not right_rows.all():
        return Finding("ffn:some-positions",
                       f"{ev.where()} {int(right_rows.sum())} of the {len(right_rows)} positions' outputs are right "
                       f"and the others not: the same weights apply to every position, one row at a time.")
    return None


FEED_FORWARD = Exercise(
    name="feed_forward", lesson="03_feed_forward", points=2,
    formula=r"\mathrm{FFN}(x) = \mathrm{act}(x W_1 + b_1)\, W_2 + b_2",
    cases=ffn_cases, reference=feed_forward, model=ffn_reference_model,
    mistakes=(
        Mistake("relu_after_the_second_layer",
                "ReLU after the second linear layer: the ReLU (or GELU) goes between the two layers only",
                partial(ffn_model, act_first=False, act_last=True), hints=(WHERE_IDEA, WHERE_STEP)),
        Mistake("relu_after_both_layers",
                "a ReLU after the second linear layer too: the FFN's output is not passed through the activation",
                partial(ffn_model, act_last=True), hints=(WHERE_IDEA, WHERE_STEP)),
        Mistake("ffn_without_relu", "the ReLU is missing: apply max(h, 0) to the hidden layer (GELU only with "
                                    "activation=\"gelu\")", partial(ffn_model, relu=False),
                hints=(WHERE_IDEA, WHERE_STEP)),
        Mistake("ffn_missing_bias", "a missing bias: add b1 after the first layer", partial(ffn_model, b1=False),
                hints=(BIAS_IDEA, BIAS_STEP)),
        Mistake("ffn_missing_second_bias", "a missing bias: add b2 after the second layer",
                partial(ffn_model, b2=False), hints=(BIAS_IDEA, BIAS_STEP)),
        Mistake("ffn_ignores_activation",
                "`activation` is ignored: with activation=\"gelu\" the hidden layer goes through GELU (el.gelu), "
                "not ReLU", ffn_ignores_activation),
    ),
    uses=("gelu",), may_call=("relu", "gelu"),
    properties=(ffn_shape, ffn_is_positionwise),
    hints=(
        "The FFN works on each position on its own, with the same weights everywhere: expand the d_model "
        "features to d_ff with x @ w1 + b1, pass that hidden layer through the activation (ReLU, max(h, 0), or "
        "GELU with activation=\"gelu\"), and project back to d_model with @ w2 + b2. Nothing comes after the "
        "second layer. The section " + FFN_IDEA_LINK + " works one token through by hand.",
        "The lesson's row (1, 0, 0.5, -1): x @ w1 + b1 is (-0.775, 0.475, 0.6, 0.725, -0.8375, -0.7125, 0.5375, "
        "0.6625); ReLU zeroes the three negative entries; then @ w2 + b2 gives (0.4125, -0.1172, -0.9281, "
        "-0.1781). Print your hidden layer and your output on that row and compare them with these numbers "
        "one step at a time.",
    ),
)

# --- GELU ------------------------------------------------------------------------


def gelu_cases(rng, hidden):
    if hidden:
        return cases(("random (3, 5) values", [normal(rng, 3, 5) * 3], {}))
    return cases(("17 points from -4 to 4", [np.linspace(-4, 4, 17)], {}),
                 ("a (2, 3) array", [normal(rng, 2, 3)], {}))


def gelu_tanh_approximation(x):
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))


def gelu_erf_of_x(x):
    from scipy.special import erf

    return 0.5 * x * (1 + erf(x))


def gelu_is_relu(x):
    return np.maximum(x, 0)


def gelu_without_the_half(x):
    return 2 * gelu(x)


def gelu_model(x):
    cdf = 0.5 * (1 + erf(x / np.sqrt(2)))  # Phi(x), the normal CDF, is one half of 1 + erf(x / sqrt(2))
    return x * cdf  # each input is weighed by Phi(x)


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


GELU = Exercise(
    name="gelu", lesson="03_feed_forward", points=1,
    formula=r"\mathrm{GELU}(x) = \tfrac{1}{2}\, x \left(1 + \mathrm{erf}(x / \sqrt{2})\right)",
    cases=gelu_cases, reference=gelu, model=gelu_model,
    mistakes=(
        Mistake("gelu_tanh_approximation",
                "that is the tanh approximation; the exact GELU is 0.5 x (1 + erf(x / sqrt(2)))",
                gelu_tanh_approximation),
        Mistake("gelu_erf_of_x", "erf needs x / sqrt(2), not x: GELU is x times the normal CDF", gelu_erf_of_x),
        Mistake("gelu_is_relu", "that is ReLU; GELU is 0.5 x (1 + erf(x / sqrt(2)))", gelu_is_relu),
        Mistake("gelu_sigmoid_approximation",
                "that is the sigmoid approximation, x * sigmoid(1.702 x); the exact GELU is 0.5 x (1 + erf(x / sqrt(2)))",
                gelu_sigmoid_approximation),
        Mistake("gelu_without_the_half",
                "the factor 1/2 is missing: GELU is 0.5 x (1 + erf(x / sqrt(2))), which is x times the normal CDF",
                gelu_without_the_half),
    ),
    properties=(gelu_at_zero, gelu_odd_part),
    hints=(
        "GELU weighs each input by how likely a standard normal variable is to be below it: GELU(x) = x Phi(x), "
        "with Phi the normal CDF, 0.5 (1 + erf(x / sqrt(2))). So it is 0 at 0, nearly x for large x, nearly 0 for "
        "very negative x, and dips slightly below 0 in between (to about -0.17). SciPy's `erf` is in every answer "
        "cell's namespace. The section [ReLU or GELU](#ReLU-or-GELU) plots it beside ReLU.",
        "At x = 1: 1 / sqrt(2) = 0.7071, erf(0.7071) = 0.6827, so Phi(1) = 0.5 x 1.6827 = 0.8413 and GELU(1) = "
        "0.8413. At x = -1 the same steps give Phi(-1) = 0.1587 and GELU(-1) = -0.1587, and indeed GELU(1) - "
        "GELU(-1) = 1. Check your function at 0, 1, -1 and 2 (GELU(2) = 1.9545).",
    ),
)

EXERCISES = (FEED_FORWARD, GELU)
