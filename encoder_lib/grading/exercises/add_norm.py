"""Lesson 04's exercises: layer norm, and Add & Norm in both placements.

The code of its exercises: add_norm.toml declares each one (its texts, points and mistakes) and names the functions
here.
"""

import numpy as np

from ... import fixtures
from ...norm import layer_norm, post_norm, pre_norm  # post_norm and pre_norm: add_norm.toml's references
from ..in_words import span
from ..symptoms import Finding
from ..wire import Call
from ._base import cases, load_exercises, normal, random_ffn_params


# --- layer norm ------------------------------------------------------------------


def layer_norm_cases(rng):
    return cases(
        ("the lesson's input (3, 4)", [fixtures.lesson_input()], {}),
        ("(2, 5, 6) with gamma and beta", [normal(rng, 2, 5, 6), rng.uniform(0.5, 2, 6), rng.normal(0, 1, 6)], {}),
        ("rows of variance about 1e-5 (eps matters)", [normal(rng, 3, 6) * 3e-3], {}),
        ("(4, 5) with gamma only", [normal(rng, 4, 5) + 1, rng.uniform(0.5, 2, 5)], {}),
        ("(4, 5) with beta only", [normal(rng, 4, 5) - 1], {"beta": rng.normal(0, 1, 5)}),
        ("(3, 4) with gamma, beta and eps=0.5", [normal(rng, 3, 4), rng.uniform(0.5, 2, 4), rng.normal(0, 1, 4)],
         {"eps": 0.5}),
    )


def rows_in(rng, regime, shape):
    """Rows of ``shape`` in a regime: "tiny" (variance about 1e-7, where eps outweighs it), "offset" and "far" (means
    of about 1e4 and 1e8, variance about 1: a variance taken as E[x^2] - E[x]^2 loses 8 digits, then all), else about
    1 plus 3 times a normal."""
    if regime == "tiny":
        return normal(rng, *shape) * 3e-4
    if regime in ("offset", "far"):
        return (1e4 if regime == "offset" else 1e8) + normal(rng, *shape)
    return normal(rng, *shape) * 3 + 1


def norm_options(rng, point, d):
    """``(words, args, kwargs)``: gamma and beta as the point's ``affine`` says (in the regime "scaled", gamma of 5
    to 10 either sign and beta of about 10: outputs far larger than the lesson's), and eps as its ``eps``."""
    affine, args, kwargs = point["affine"], [], {}
    scale = 10.0 if point.regime == "scaled" else 1.0
    if affine in ("both", "gamma"):
        gamma = rng.uniform(0.5, 1, d) * (scale if scale == 1 else rng.choice([-1, 1], d) * scale)
        args.append(gamma)
    if affine in ("both", "beta"):
        beta = rng.normal(0, scale, d)
        if affine == "beta":
            kwargs["beta"] = beta
        else:
            args.append(beta)
    if point["eps"] != "default":
        kwargs["eps"] = float(point["eps"])
    words = {"both": "gamma and beta", "gamma": "gamma only", "beta": "beta only", "none": "no gamma or beta"}[affine]
    return words + (f", eps={point['eps']}" if "eps" in kwargs else ""), args, kwargs


def layer_norm_draw(rng, point):
    x = rows_in(rng, point.regime, (*point.lead, point["d"]))
    words, args, kwargs = norm_options(rng, point, point["d"])
    return f"x {x.shape}, {words}", [x, *args], kwargs


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
    mean = x.mean(axis=-1, keepdims=True)  # step: mean
    variance = ((x - mean) ** 2).mean(axis=-1, keepdims=True)  # step: variance
    y = (x - mean) / np.sqrt(variance + eps)  # step: normalised
    if gamma is not None:  # step: if_gamma
        y = y * gamma  # step: scaled
    if beta is not None:  # step: if_beta
        y = y + beta  # step: shifted
    return y  # step: returned


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


# --- Add & Norm --------------------------------------------------------------------


def ffn_of(params):
    """The sub-layer: a function; in the grader's sandbox a stand-in for the library's."""
    return Call("feed_forward", params)


def sublayer_cases(rng):
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


def sublayer_draw(rng, point):
    """x of the point's sizes, an FFN sub-layer, gamma, beta and eps as the point says."""
    d = point["d"]
    x = rows_in(rng, point.regime, (*point.lead, point["seq"], d))
    words, args, kwargs = norm_options(rng, point, d)
    sublayer = ffn_of(random_ffn_params(rng, d, point["d_ff"]))
    return f"x {x.shape}, an FFN sub-layer with d_ff {point['d_ff']}, {words}", [x, sublayer, *args], kwargs


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
    total = x + sublayer(x)  # step: total
    return layer_norm(total, gamma, beta, eps)  # step: result


def pre_norm_model(x, sublayer, gamma=None, beta=None, eps=1e-5):
    normed = layer_norm(x, gamma, beta, eps)  # step: normed
    return x + sublayer(normed)  # step: result


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
                   f"mean 0 and variance {span(right_variances, target=float(np.mean(variances)))}; yours have means "
                   f"{span(means, target=0)} and variances {span(variances, target=float(np.mean(right_variances)))}.")


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


#: The lesson's exercises, as add_norm.toml declares them.
EXERCISES = load_exercises(globals())
