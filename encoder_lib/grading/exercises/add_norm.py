"""Lesson 04's exercises: layer norm, and Add & Norm in both placements."""

from functools import partial

import numpy as np

from ... import fixtures
from ...norm import layer_norm, post_norm, pre_norm
from ..wire import Call
from ._base import Exercise, Mistake, cases, normal, random_ffn_params

# --- layer norm ------------------------------------------------------------------


def layer_norm_cases(rng, hidden):
    if hidden:
        d = int(rng.integers(3, 9))
        lead = tuple(rng.integers(1, 4, size=rng.integers(1, 3)))
        return cases((f"random x {lead + (d,)} with gamma and beta",
                      [normal(rng, *lead, d) * 3 + 1, rng.uniform(0.5, 2, d), rng.normal(0, 1, d)], {}),
                     ("rows of variance about 1e-5", [normal(rng, 4, d) * 3e-3], {}))
    return cases(
        ("the lesson's input (3, 4)", [fixtures.lesson_input()], {}),
        ("(2, 5, 6) with gamma and beta", [normal(rng, 2, 5, 6), rng.uniform(0.5, 2, 6), rng.normal(0, 1, 6)], {}),
        ("rows of variance about 1e-5 (eps matters)", [normal(rng, 3, 6) * 3e-3], {}),
    )


def layer_norm_model(x, gamma=None, beta=None, eps=1e-5, *, axis=-1, ddof=0, eps_outside=False, affine=True):
    """Layer norm with one thing changed: the axis, the variance's divisor, where eps goes, gamma and beta."""
    mean = x.mean(axis=axis, keepdims=True)
    std = x.std(axis=axis, keepdims=True, ddof=ddof)
    y = (x - mean) / (std + eps if eps_outside else np.sqrt(std ** 2 + eps))
    if affine and gamma is not None:
        y = y * gamma
    if affine and beta is not None:
        y = y + beta
    return y


LAYER_NORM = Exercise(
    name="layer_norm", lesson="04_add_and_norm", points=2,
    formula=r"\mathrm{LN}(x) = \gamma \odot \frac{x - \mu}{\sqrt{\sigma^2 + \epsilon}} + \beta",
    cases=layer_norm_cases, reference=layer_norm,
    mistakes=(
        Mistake("layer_norm_over_the_sequence",
                "layer norm over the sequence axis: take the mean and variance over the last axis "
                "(a position's features), not over positions", partial(layer_norm_model, axis=-2)),
        Mistake("layer_norm_unbiased_variance",
                "layer norm with the unbiased variance: divide by d_model (np.var's default), not d_model - 1",
                partial(layer_norm_model, ddof=1)),
        Mistake("layer_norm_eps_outside_the_root",
                "eps outside the square root: divide by sqrt(var + eps), not sqrt(var) + eps",
                partial(layer_norm_model, eps_outside=True)),
        Mistake("layer_norm_ignores_gamma_and_beta",
                "gamma and beta are ignored: multiply by gamma and add beta when they are given",
                partial(layer_norm_model, affine=False)),
    ),
)

# --- Add & Norm --------------------------------------------------------------------


def sublayer_cases(rng, hidden):
    def ffn_of(params):  # the sub-layer: a function; in the grader's sandbox a stand-in for the library's
        return Call("feed_forward", params)

    if hidden:
        d, d_ff, seq = int(rng.integers(3, 8)), int(rng.integers(8, 14)), int(rng.integers(1, 5))
        return cases((f"random x ({seq}, {d}), an FFN sub-layer with d_ff {d_ff}, gamma and beta",
                      [normal(rng, seq, d) * 2, ffn_of(random_ffn_params(rng, d, d_ff)),
                       rng.uniform(0.5, 2, d), rng.normal(0, 0.5, d)], {}))
    return cases(
        ("the lesson's input and FFN", [fixtures.lesson_input(), ffn_of(fixtures.lesson_ffn_params())], {}),
        ("(2, 4, 6) with an FFN, gamma and beta", [normal(rng, 2, 4, 6) * 2, ffn_of(random_ffn_params(rng, 6, 10)),
                                                  rng.uniform(0.5, 2, 6), rng.normal(0, 0.5, 6)], {}),
    )


#: Where the norm and the residual go, as each placement a learner might write computes them.
ARRANGEMENTS = {
    "post": lambda x, f, ln: ln(x + f(x)),
    "pre": lambda x, f, ln: x + f(ln(x)),
    "no_residual": lambda x, f, ln: ln(f(x)),
    "norm_input": lambda x, f, ln: ln(x) + f(x),
    "double": lambda x, f, ln: ln(x + f(ln(x))),
    "norm_output": lambda x, f, ln: x + ln(f(x)),
    "pre_no_residual": lambda x, f, ln: f(ln(x)),
    "residual_of_norm": lambda x, f, ln: ln(x) + f(ln(x)),
}


def add_norm_model(x, sublayer, gamma=None, beta=None, eps=1e-5, *, arrangement):
    """Add & Norm arranged as ``ARRANGEMENTS[arrangement]``, with the library's layer norm."""
    return ARRANGEMENTS[arrangement](x, sublayer, lambda y: layer_norm(y, gamma, beta, eps))


POST_NORM = Exercise(
    name="post_norm", lesson="04_add_and_norm", points=1, formula=r"x \mapsto \mathrm{LN}(x + f(x))",
    cases=sublayer_cases, reference=post_norm,
    mistakes=(
        Mistake("post_norm_written_as_pre_norm",
                "post-norm and pre-norm swapped: post-norm is LN(x + sublayer(x))",
                partial(add_norm_model, arrangement="pre")),
        Mistake("post_norm_without_residual",
                "the residual connection is missing: add x to the sub-layer's output before the norm",
                partial(add_norm_model, arrangement="no_residual")),
        Mistake("post_norm_on_the_sublayer_input",
                "in post-norm the norm goes on the sum x + sublayer(x), not on the sub-layer's input",
                partial(add_norm_model, arrangement="norm_input")),
        Mistake("post_norm_normalised_twice", "the norm is applied twice; post-norm normalises once, after the sum",
                partial(add_norm_model, arrangement="double")),
    ),
    uses=("layer_norm",), may_call=("layer_norm",),
)

PRE_NORM = Exercise(
    name="pre_norm", lesson="04_add_and_norm", points=1, formula=r"x \mapsto x + f(\mathrm{LN}(x))",
    cases=sublayer_cases, reference=pre_norm,
    mistakes=(
        Mistake("pre_norm_written_as_post_norm",
                "post-norm and pre-norm swapped: pre-norm is x + sublayer(LN(x))",
                partial(add_norm_model, arrangement="post")),
        Mistake("pre_norm_without_residual", "the residual connection is missing: add x to sublayer(LN(x))",
                partial(add_norm_model, arrangement="pre_no_residual")),
        Mistake("pre_norm_on_the_sublayer_output",
                "the norm is on the sub-layer's output; in pre-norm it goes on the sub-layer's input",
                partial(add_norm_model, arrangement="norm_output")),
        Mistake("pre_norm_normalised_twice", "a norm after the sum as well: pre-norm leaves the sum un-normalised",
                partial(add_norm_model, arrangement="double")),
        Mistake("pre_norm_adds_the_normalised_input",
                "the residual adds LN(x); it must add x itself: pre-norm is x + sublayer(LN(x)), so the "
                "un-normalised x passes the block untouched", partial(add_norm_model, arrangement="residual_of_norm")),
    ),
    uses=("layer_norm",), may_call=("layer_norm",),
)

EXERCISES = (LAYER_NORM, POST_NORM, PRE_NORM)
