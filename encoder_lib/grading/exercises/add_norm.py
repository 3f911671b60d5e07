"""Lesson 04's exercises: layer norm, and Add & Norm in both placements."""

from functools import partial

import numpy as np

from ... import fixtures
from ...norm import layer_norm, post_norm, pre_norm
from ..in_words import span
from ..symptoms import Finding
from ..wire import Call
from ._base import Exercise, Mistake, cases, normal, random_ffn_params

LN_LINK = "[Layer norm on the lesson's input](#Layer-norm-on-the-lesson's-input)"
POST_LINK = "[Inside the post-norm block](#Inside-the-post-norm-block)"
PRE_LINK = "[Inside the pre-norm block](#Inside-the-pre-norm-block)"

# --- layer norm ------------------------------------------------------------------


AFFINE_IDEA = (
    "gamma and beta are layer norm's learned scale and shift, one number per feature: y = gamma * xhat + beta. "
    "Each is optional on its own: gamma=None means a scale of 1, beta=None a shift of 0, so a call may pass "
    "either, both or neither. Test each with its own `if ... is not None:` and apply it by itself. See " +
    "[Add & Norm with learned gamma and beta](../08_inside_a_real_encoder/08_inside_a_real_encoder.ipynb) for "
    "what learned ones look like, and " + LN_LINK + " for the rest.")
AFFINE_STEP = (
    "With xhat = (1.1832, -0.1690, 0.5071, -1.5213), gamma = (2, 2, 1, 1) and beta = (0, 0, 0.5, 0.5): gamma * "
    "xhat is (2.3664, -0.3381, 0.5071, -1.5213), and adding beta gives (2.3664, -0.3381, 1.0071, -1.0213). With "
    "beta alone the result is xhat + beta = (1.1832, -0.1690, 1.0071, -1.0213). Check your function on the "
    "four calls: neither, gamma only, beta only, both.")


def layer_norm_cases(rng, hidden):
    if hidden:
        d = int(rng.integers(3, 9))
        lead = tuple(int(n) for n in rng.integers(1, 4, size=rng.integers(1, 3)))
        eps = float(rng.uniform(0.05, 1.0))
        return cases((f"random x {lead + (d,)} with gamma and beta",
                      [normal(rng, *lead, d) * 3 + 1, rng.uniform(0.5, 2, d), rng.normal(0, 1, d)], {}),
                     ("rows of variance about 1e-5", [normal(rng, 4, d) * 3e-3], {}),
                     (f"random x (3, {d}) with gamma only", [normal(rng, 3, d) + 1, rng.uniform(0.5, 2, d)], {}),
                     (f"random x (3, {d}) with beta only", [normal(rng, 3, d) - 1], {"beta": rng.normal(0, 1, d)}),
                     (f"random x (2, {d}) with gamma, beta and another eps",
                      [normal(rng, 2, d), rng.uniform(0.5, 2, d), rng.normal(0, 1, d)], {"eps": eps}))
    return cases(
        ("the lesson's input (3, 4)", [fixtures.lesson_input()], {}),
        ("(2, 5, 6) with gamma and beta", [normal(rng, 2, 5, 6), rng.uniform(0.5, 2, 6), rng.normal(0, 1, 6)], {}),
        ("rows of variance about 1e-5 (eps matters)", [normal(rng, 3, 6) * 3e-3], {}),
        ("(4, 5) with gamma only", [normal(rng, 4, 5) + 1, rng.uniform(0.5, 2, 5)], {}),
        ("(4, 5) with beta only", [normal(rng, 4, 5) - 1], {"beta": rng.normal(0, 1, 5)}),
        ("(3, 4) with gamma, beta and eps=0.5", [normal(rng, 3, 4), rng.uniform(0.5, 2, 4), rng.normal(0, 1, 4)],
         {"eps": 0.5}),
    )


def layer_norm_model(x, gamma=None, beta=None, eps=1e-5, *, axis=-1, ddof=0, eps_outside=False, affine=True,
                     beta_needs_gamma=False):
    """Layer norm with one thing changed: the axis, the variance's divisor, where eps goes, gamma and beta."""
    mean = x.mean(axis=axis, keepdims=True)
    std = x.std(axis=axis, keepdims=True, ddof=ddof)
    y = (x - mean) / (std + eps if eps_outside else np.sqrt(std ** 2 + eps))
    if beta_needs_gamma:  # as `if gamma is not None: y = y * gamma + beta` computes it (or raises, without beta)
        return y * gamma + beta if gamma is not None else y
    if affine and gamma is not None:
        y = y * gamma
    if affine and beta is not None:
        y = y + beta
    return y


def layer_norm_reference_model(x, gamma=None, beta=None, eps=1e-5):
    mean = x.mean(axis=-1, keepdims=True)  # each row's own mean is taken over its features (the last axis)
    variance = ((x - mean) ** 2).mean(axis=-1, keepdims=True)  # each row's own variance (divided by d, not d - 1) is taken over its features
    y = (x - mean) / np.sqrt(variance + eps)  # each row is centred and divided by sqrt(variance + eps)
    if gamma is not None:  # gamma is applied when it is given
        y = y * gamma  # each feature is scaled by gamma
    if beta is not None:  # beta is applied when it is given
        y = y + beta  # each feature is shifted by beta
    return y  # the normalised rows are returned


def layer_norm_beta_before_gamma(x, gamma=None, beta=None, eps=1e-5):
    y = layer_norm(x, eps=eps)
    if beta is not None:
        y = y + beta
    return y * gamma if gamma is not None else y


def layer_norm_rows(ev):
    """Layer norm without gamma and beta gives rows of mean 0 and variance var / (var + eps): measured on the cases
    that pass neither (where they are given, undoing them would assume the answer applies them right)."""
    got, x = ev.got_array(), ev.value("x")
    if got is None or got.shape != x.shape or not np.isfinite(got).all() or ev.given("gamma") or ev.given("beta"):
        return None
    eps = ev.value("eps")
    means, variances = got.mean(axis=-1), got.var(axis=-1)
    wanted = x.var(axis=-1) / (x.var(axis=-1) + eps)
    if not np.allclose(means, 0, atol=1e-6):
        columns = x.ndim >= 2 and np.allclose(got.mean(axis=-2), 0, atol=1e-6)
        return Finding("ln:means", f"{ev.where()} layer norm's rows (the last axis) have mean 0; yours have means "
                                   f"{span(means, target=0)}" + (", and your columns (axis -2) have mean 0."
                                                                 if columns else "."))
    if not np.allclose(variances, wanted, rtol=1e-5, atol=1e-6):
        return Finding("ln:variances", f"{ev.where()} layer norm's rows have variance var / (var + eps) of each input "
                                       f"row, here {span(wanted)}; yours have {span(variances, target=float(np.median(wanted)))}.")
    return None


LAYER_NORM = Exercise(
    name="layer_norm", lesson="04_add_and_norm", points=2,
    formula=r"\mathrm{LN}(x) = \gamma \odot \frac{x - \mu}{\sqrt{\sigma^2 + \epsilon}} + \beta",
    cases=layer_norm_cases, reference=layer_norm, model=layer_norm_reference_model,
    mistakes=(
        Mistake("layer_norm_over_the_sequence",
                "layer norm over the sequence axis: take the mean and variance over the last axis "
                "(a position's features), not over positions", partial(layer_norm_model, axis=-2), hints=(
                    "Layer norm normalises each position on its own: the mean and the variance are taken over "
                    "that position's d_model features, the last axis, so that every row of the output has mean "
                    "0 and variance 1 whatever the other positions hold. Over the sequence axis instead, each "
                    "feature would be normalised across positions, which is what batch norm does. See "
                    "[Layer norm against batch norm](#Layer-norm-against-batch-norm).",
                    "The lesson's row 0 is (1, 0, 0.5, -1): its mean is 0.125 and its variance 0.5469, both over "
                    "its own four numbers; row 1 gets its own mean and variance. `x.mean(axis=-1, "
                    "keepdims=True)` has shape (3, 1), one mean per row. Print `y.mean(axis=-1)` of your "
                    "result: three numbers near 0.")),
        Mistake("layer_norm_unbiased_variance",
                "layer norm with the unbiased variance: divide by d_model (np.var's default), not d_model - 1",
                partial(layer_norm_model, ddof=1)),
        Mistake("layer_norm_eps_outside_the_root",
                "eps outside the square root: divide by sqrt(var + eps), not sqrt(var) + eps",
                partial(layer_norm_model, eps_outside=True)),
        Mistake("layer_norm_ignores_gamma_and_beta",
                "gamma and beta are ignored: multiply by gamma and add beta when they are given",
                partial(layer_norm_model, affine=False), hints=(AFFINE_IDEA, AFFINE_STEP)),
        Mistake("layer_norm_beta_before_gamma",
                "beta is added before gamma scales: the affine step is gamma * xhat + beta, scale first, then shift",
                layer_norm_beta_before_gamma, hints=(AFFINE_IDEA, AFFINE_STEP)),
        Mistake("layer_norm_beta_only_with_gamma",
                "beta is added only when gamma is given: each of gamma and beta is optional on its own, so multiply "
                "by gamma when it is given, and add beta when it is given", partial(layer_norm_model,
                                                                                   beta_needs_gamma=True),
                hints=(AFFINE_IDEA, AFFINE_STEP)),
    ),
    properties=(layer_norm_rows,),
    hints=(
        "Layer norm rescales each position's row of features to mean 0 and variance 1: subtract the row's mean, "
        "divide by the square root of the row's variance plus eps (eps keeps a nearly constant row from being "
        "divided by 0). Mean and variance run over the last axis, with keepdims=True. Then, where given, gamma "
        "multiplies and beta shifts each feature. The section " + LN_LINK + " prints every step.",
        "The lesson's row (1, 0, 0.5, -1): its mean is 0.125; centred, it is (0.875, -0.125, 0.375, -1.125); its "
        "variance is 0.5469 (divide the sum of squares by 4, not 3); divided by sqrt(0.5469 + 1e-5) = 0.7395 it "
        "becomes (1.1832, -0.1690, 0.5071, -1.5213). Compare your first row with these numbers.",
    ),
)

# --- Add & Norm --------------------------------------------------------------------


def ffn_of(params):
    """The sub-layer: a function; in the grader's sandbox a stand-in for the library's."""
    return Call("feed_forward", params)


def sublayer_cases(rng, hidden):
    if hidden:
        d, d_ff, seq = int(rng.integers(3, 8)), int(rng.integers(8, 14)), int(rng.integers(1, 5))
        eps = float(rng.uniform(0.05, 1.0))
        return cases((f"random x ({seq}, {d}), an FFN sub-layer with d_ff {d_ff}, no gamma or beta",
                      [normal(rng, seq, d) * 2, ffn_of(random_ffn_params(rng, d, d_ff))], {}),
                     (f"random x ({seq}, {d}), an FFN sub-layer with d_ff {d_ff}, gamma and beta",
                      [normal(rng, seq, d) * 2, ffn_of(random_ffn_params(rng, d, d_ff)),
                       rng.uniform(0.5, 2, d), rng.normal(0, 0.5, d)], {}),
                     (f"random x (3, {d}), an FFN sub-layer, gamma only",
                      [normal(rng, 3, d), ffn_of(random_ffn_params(rng, d, d_ff)), rng.uniform(0.5, 2, d)], {}),
                     (f"random x (3, {d}), an FFN sub-layer, beta only",
                      [normal(rng, 3, d), ffn_of(random_ffn_params(rng, d, d_ff))], {"beta": rng.normal(0, 0.5, d)}),
                     (f"random x (2, {d}), an FFN sub-layer, gamma, beta and another eps",
                      [normal(rng, 2, d), ffn_of(random_ffn_params(rng, d, d_ff)), rng.uniform(0.5, 2, d),
                       rng.normal(0, 0.5, d)], {"eps": eps}))
    return cases(
        ("the lesson's input and FFN", [fixtures.lesson_input(), ffn_of(fixtures.lesson_ffn_params())], {}),
        ("(2, 4, 6) with an FFN, gamma and beta", [normal(rng, 2, 4, 6) * 2, ffn_of(random_ffn_params(rng, 6, 10)),
                                                  rng.uniform(0.5, 2, 6), rng.normal(0, 0.5, 6)], {}),
        ("(3, 6) with an FFN and gamma only", [normal(rng, 3, 6), ffn_of(random_ffn_params(rng, 6, 10)),
                                               rng.uniform(0.5, 2, 6)], {}),
        ("(3, 6) with an FFN and beta only", [normal(rng, 3, 6), ffn_of(random_ffn_params(rng, 6, 10))],
         {"beta": rng.normal(0, 0.5, 6)}),
        ("(3, 4) with an FFN, gamma, beta and eps=0.5",
         [normal(rng, 3, 4), ffn_of(random_ffn_params(rng, 4, 8)), rng.uniform(0.5, 2, 4), rng.normal(0, 0.5, 4)],
         {"eps": 0.5}),
    )


PASS_ON_IDEA = (
    "An argument a function takes is for it to use or pass on: post_norm and pre_norm get eps (and gamma and "
    "beta) only to hand them to the layer norm inside. Calling layer_norm without them uses layer_norm's own "
    "defaults (eps = 1e-5, no gamma, no beta), whatever the caller asked for. Every optional argument of the "
    "exercise has a check that passes another value. See " + POST_LINK + ".")
PASS_ON_STEP = (
    "With eps = 0.5 a row (1, -1) has variance 1, and is divided by sqrt(1 + 0.5) = 1.2247: it becomes "
    "(0.8165, -0.8165), where eps = 1e-5 would give (1.0000, -1.0000). So a check with eps=0.5 shows at once "
    "whether eps reached the norm. Print your result on such a row with eps=0.5: (0.8165, -0.8165) means eps "
    "arrived; (1, -1) means the norm used its own.")


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


def add_norm_model(x, sublayer, gamma=None, beta=None, eps=1e-5, *, arrangement, ignore_eps=False):
    """Add & Norm arranged as ``ARRANGEMENTS[arrangement]``, with the library's layer norm (at its own eps, 1e-5,
    with ``ignore_eps``: eps not passed on)."""
    eps = 1e-5 if ignore_eps else eps
    return ARRANGEMENTS[arrangement](x, sublayer, lambda y: layer_norm(y, gamma, beta, eps))


def post_norm_model(x, sublayer, gamma=None, beta=None, eps=1e-5):
    total = x + sublayer(x)  # the sub-layer's output is added to its input x (the residual)
    return layer_norm(total, gamma, beta, eps)  # the sum is layer-normalised, with this call's gamma, beta and eps


def pre_norm_model(x, sublayer, gamma=None, beta=None, eps=1e-5):
    normed = layer_norm(x, gamma, beta, eps)  # the sub-layer's input is layer-normalised, with this call's gamma, beta and eps
    return x + sublayer(normed)  # the sub-layer's output is added to x itself, not normalised (the residual)


def output_rows(ev):
    """``(means, variances)`` of the answer's output rows, on a case without gamma and beta; else None."""
    got = ev.got_array()
    if got is None or got.shape != ev.expected.shape or not np.isfinite(got).all() or ev.given("gamma") or \
            ev.given("beta"):
        return None
    return got.mean(axis=-1), got.var(axis=-1)


def post_norm_output_is_normalised(ev):
    """Post-norm ends with the layer norm: without gamma and beta its output rows have mean 0 and variance near 1."""
    found = output_rows(ev)
    if found is None:
        return None
    means, variances = found
    right_variances = ev.expected.var(axis=-1)
    if np.allclose(means, 0, atol=1e-6) and np.allclose(variances, right_variances, rtol=1e-4, atol=1e-6):
        return None
    return Finding("post:not-normalised",
                   f"{ev.where()} post-norm's output is a layer norm's output, so without gamma and beta its rows have "
                   f"mean 0 and variance {span(right_variances)}; yours have means {span(means, target=0)} and "
                   f"variances {span(variances)}.")


def pre_norm_output_is_not_normalised(ev):
    """Pre-norm's output is x + sublayer(LN(x)), not normalised: rows of mean 0 and variance 1 are a norm's output."""
    found = output_rows(ev)
    if found is None:
        return None
    means, variances = found
    if np.allclose(means, 0, atol=1e-6) and np.allclose(variances, 1, atol=1e-3):
        right = ev.expected
        return Finding("pre:normalised",
                       f"{ev.where()} the rows of your output have mean 0 and variance 1, as a layer norm's output "
                       f"has; pre-norm's output, the sum x + sublayer(LN(x)), has rows of means {span(right.mean(-1))} "
                       f"and variances {span(right.var(-1))} here.")
    return None


POST_NORM = Exercise(
    name="post_norm", lesson="04_add_and_norm", points=1, formula=r"x \mapsto \mathrm{LN}(x + f(x))",
    cases=sublayer_cases, reference=post_norm, model=post_norm_model,
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
        Mistake("post_norm_ignores_eps",
                "eps is not passed on: call the layer norm with this function's eps, layer_norm(y, gamma, beta, eps)",
                partial(add_norm_model, arrangement="post", ignore_eps=True), hints=(PASS_ON_IDEA, PASS_ON_STEP)),
    ),
    uses=("layer_norm",), may_call=("layer_norm",),
    properties=(post_norm_output_is_normalised,),
    hints=(
        "Post-norm, the original Transformer's and BERT's placement: first the sub-layer reads x, then its output "
        "is added to x (the residual), then that sum is layer-normalised, with this call's gamma, beta and eps: "
        "the norm is the last thing that happens. `sublayer` is a function: call it on an array. The section " +
        POST_LINK + " shows each step's rows.",
        "The lesson's row x = (1, 0, 0.5, -1) with its FFN as the sub-layer: the FFN gives (0.4125, -0.1172, "
        "-0.9281, -0.1781); added to x, the residual sum is (1.4125, -0.1172, -0.4281, -1.1781); normalised, "
        "without gamma and beta, it is (1.5805, -0.0418, -0.3716, -1.1671), whose mean is 0 and variance 1. "
        "Print your three steps on that row and compare them with these numbers.",
    ),
)

PRE_NORM = Exercise(
    name="pre_norm", lesson="04_add_and_norm", points=1, formula=r"x \mapsto x + f(\mathrm{LN}(x))",
    cases=sublayer_cases, reference=pre_norm, model=pre_norm_model,
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
        Mistake("pre_norm_ignores_eps",
                "eps is not passed on: call the layer norm with this function's eps, layer_norm(x, gamma, beta, eps)",
                partial(add_norm_model, arrangement="pre", ignore_eps=True), hints=(PASS_ON_IDEA, PASS_ON_STEP)),
    ),
    uses=("layer_norm",), may_call=("layer_norm",),
    properties=(pre_norm_output_is_not_normalised,),
    hints=(
        "Pre-norm, GPT-2's and Whisper's placement: the sub-layer reads the layer-normalised x, and its output is "
        "added to x itself, not normalised. The residual path carries x through untouched, which is what lets very "
        "deep pre-norm stacks train. The norm uses this call's gamma, beta and eps. The section " + PRE_LINK +
        " shows each step's rows.",
        "The lesson's row x = (1, 0, 0.5, -1) with its FFN as the sub-layer: normalised, x is (1.1832, -0.1690, "
        "0.5071, -1.5213); the FFN of that is (0.6089, -0.2571, -1.1230, -0.1475); added to the original x, the "
        "output is (1.6089, -0.2571, -0.6230, -1.1475), whose rows are not normalised. Print your three steps on "
        "that row and compare them with these numbers.",
    ),
)

EXERCISES = (LAYER_NORM, POST_NORM, PRE_NORM)
