"""Lesson 03's exercises: the feed-forward network and GELU."""

from functools import partial

import numpy as np

from ... import fixtures
from ...ffn import feed_forward, gelu
from ..compare import NotApplicable
from ._base import Exercise, Mistake, cases, normal, random_ffn_params

# --- the FFN ---------------------------------------------------------------------


def ffn_cases(rng, hidden):
    if hidden:
        d_model, d_ff, seq = int(rng.integers(2, 7)), int(rng.integers(7, 13)), int(rng.integers(1, 5))
        lead = tuple(rng.integers(1, 3, size=rng.integers(0, 2)))
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


def ffn_model(x, params, activation="relu", *, relu_first=True, relu_last=False, b1=True, b2=True):
    """The ReLU FFN with one thing changed (a ReLU moved, added or left out, a bias left out)."""
    if activation != "relu":
        raise NotApplicable  # the models are of ReLU mistakes
    h = x @ params["w1"] + (params["b1"] if b1 else 0)
    if relu_first:
        h = np.maximum(h, 0)
    y = h @ params["w2"] + (params["b2"] if b2 else 0)
    return np.maximum(y, 0) if relu_last else y


def ffn_ignores_activation(x, params, activation="relu"):
    return ffn_model(x, params)


FEED_FORWARD = Exercise(
    name="feed_forward", lesson="03_feed_forward", points=2,
    formula=r"\mathrm{FFN}(x) = \mathrm{act}(x W_1 + b_1)\, W_2 + b_2",
    cases=ffn_cases, reference=feed_forward,
    mistakes=(
        Mistake("relu_after_the_second_layer",
                "ReLU after the second linear layer: the ReLU goes between the two layers only",
                partial(ffn_model, relu_first=False, relu_last=True)),
        Mistake("relu_after_both_layers",
                "a ReLU after the second linear layer too: the FFN's output is not passed through ReLU",
                partial(ffn_model, relu_last=True)),
        Mistake("ffn_without_relu", "the ReLU is missing: apply max(h, 0) to the hidden layer",
                partial(ffn_model, relu_first=False)),
        Mistake("ffn_missing_bias", "a missing bias: add b1 after the first layer", partial(ffn_model, b1=False)),
        Mistake("ffn_missing_second_bias", "a missing bias: add b2 after the second layer",
                partial(ffn_model, b2=False)),
        Mistake("ffn_ignores_activation",
                "`activation` is ignored: with activation=\"gelu\" the hidden layer goes through GELU (el.gelu), "
                "not ReLU", ffn_ignores_activation),
    ),
    uses=("gelu",), may_call=("relu", "gelu"),
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


GELU = Exercise(
    name="gelu", lesson="03_feed_forward", points=1,
    formula=r"\mathrm{GELU}(x) = \tfrac{1}{2}\, x \left(1 + \mathrm{erf}(x / \sqrt{2})\right)",
    cases=gelu_cases, reference=gelu,
    mistakes=(
        Mistake("gelu_tanh_approximation",
                "that is the tanh approximation; the exact GELU is 0.5 x (1 + erf(x / sqrt(2)))",
                gelu_tanh_approximation),
        Mistake("gelu_erf_of_x", "erf needs x / sqrt(2), not x: GELU is x times the normal CDF", gelu_erf_of_x),
        Mistake("gelu_is_relu", "that is ReLU; GELU is 0.5 x (1 + erf(x / sqrt(2)))", gelu_is_relu),
        Mistake("gelu_without_the_half",
                "the factor 1/2 is missing: GELU is 0.5 x (1 + erf(x / sqrt(2))), which is x times the normal CDF",
                gelu_without_the_half),
    ),
)

EXERCISES = (FEED_FORWARD, GELU)
