"""Every public function, thrown random shapes, dtypes, magnitudes and option values (hypothesis).

Allowed: a result, or a ValueError or TypeError with a message. Never another
exception, never NaN or infinity in a result, never a change to an input
array, never a result that shares memory with an input. A result in float16,
float32 or float64 has the inputs' dtype; at ordinary magnitudes it agrees
with the same call in float64, and each function's own property holds
(softmax rows sum to 1, merge_heads undoes split_heads, ...).

Each function gets ``EXAMPLES`` examples (CI replays a fixed set: conftest).
"""

import copy

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import encoder_lib as el
from encoder_lib import grad as G

EXAMPLES = 60
DTYPES = (np.float16, np.float32, np.float64)
SCALES = (1.0, 1.0, 1.0, 1e-20, 1e-3, 1e3, 1e20, 1e36, 1e300)
JUNK = (None, "abc", 3, 2.5, True, [1, 2], np.array([1, 2]), np.array([[np.nan, 1.0]]), object(), np.zeros((0, 3)),
        np.array([1 + 2j]))
OPTION_JUNK = (None, "no", -1, 0, 1.5, True, "relu", np.inf)


class Draw:
    """Random arguments from hypothesis's ``data``: the dtype and magnitude are drawn once per call."""

    def __init__(self, data):
        self.data = data
        self.dtype = data.draw(st.sampled_from(DTYPES), label="dtype")
        self.scale = data.draw(st.sampled_from(SCALES), label="scale")
        self.rng = np.random.default_rng(data.draw(st.integers(0, 2**16), label="seed"))

    def int(self, low, high, label=None):
        return self.data.draw(st.integers(low, high), label=label)

    def lead(self):
        return tuple(self.int(1, 3) for _ in range(self.int(0, 2)))

    def array(self, shape, scale=None):
        with np.errstate(over="ignore"):
            return (self.rng.standard_normal(shape) * (self.scale if scale is None else scale)).astype(self.dtype)

    def maybe_junk(self, value, junk=JUNK, p=8):
        """``value``, or one time in ``p`` something that is not what the argument wants."""
        if self.int(0, p - 1) == 0:
            return self.data.draw(st.sampled_from(junk), label="junk")
        return value

    def option(self, good):
        return self.maybe_junk(self.data.draw(st.sampled_from(good)), OPTION_JUNK)

    def mask(self, lead, seq):
        if self.int(0, 3) == 0:
            return None
        return self.maybe_junk(self.rng.random(lead + (seq,)) < 0.4)

    def params(self, d, d_ff, scale=None):
        p = el.init_block_params(d, d_ff, self.rng, dtype=self.dtype if self.dtype != np.float16 else np.float32)
        p = el.params.off_defaults(p, self.rng)
        with np.errstate(over="ignore"):
            p = {k: {n: (a * (scale or 1.0)).astype(self.dtype) for n, a in v.items()} for k, v in p.items()}
        if self.int(0, 9) == 0:  # a wrong entry somewhere
            part = self.data.draw(st.sampled_from(sorted(p)))
            key = self.data.draw(st.sampled_from(sorted(p[part])))
            p[part][key] = self.data.draw(st.sampled_from(JUNK + (p[part][key].T, p[part][key][..., :1])))
        return p


def sequence_args(d, heads_ok=True):
    """x (lead, seq, d_model) with d_model a multiple of the heads."""
    lead, seq = d.lead(), d.int(1, 5)
    n_heads = d.int(1, 3)
    d_model = n_heads * d.int(1, 4)
    return lead, seq, n_heads, d_model


def build(name, d):
    """``(function, args, kwargs)`` for the public function ``name``."""
    lead, seq, n_heads, d_model = sequence_args(d)
    x = d.maybe_junk(d.array(lead + (seq, d_model)))
    if name == "softmax":
        shape = tuple(d.int(1, 4) for _ in range(d.int(1, 3)))
        return el.softmax, (d.maybe_junk(d.array(shape)),), {"axis": d.maybe_junk(d.int(-len(shape), len(shape) - 1), OPTION_JUNK)}
    if name == "masked_softmax":
        scores = d.array(lead + (d.int(1, 4), seq))
        if d.int(0, 3) == 0:
            scores[..., 0] = -np.inf
        return el.masked_softmax, (d.maybe_junk(scores), d.mask(lead, seq)), {}
    if name in ("scaled_dot_product_attention", "scaled_dot_product_attention_grad"):
        s_q, d_k, d_v = d.int(1, 4), d.int(1, 4), d.int(1, 3)
        q, k, v = d.array(lead + (s_q, d_k)), d.array(lead + (seq, d_k)), d.array(lead + (seq, d_v))
        args = [d.maybe_junk(q), d.maybe_junk(k), d.maybe_junk(v)]
        if name.endswith("_grad"):
            return G.scaled_dot_product_attention_grad, (*args, d.maybe_junk(d.array(lead + (s_q, d_v), 1.0))), \
                {"padding_mask": d.mask(lead, seq)}
        return el.scaled_dot_product_attention, tuple(args), {"padding_mask": d.mask(lead, seq)}
    if name == "split_heads":
        return el.split_heads, (x, d.maybe_junk(n_heads, OPTION_JUNK + (d_model * 2,))), {}
    if name == "merge_heads":
        return el.merge_heads, (d.maybe_junk(d.array(lead + (n_heads, seq, d.int(1, 3)))),), {}
    if name in ("multi_head_attention", "multi_head_attention_grad"):
        params = None if d.int(0, 3) == 0 else d.params(d_model, d_model + 1)["attn"]
        if name.endswith("_grad"):
            return G.multi_head_attention_grad, (x, d.maybe_junk(n_heads, OPTION_JUNK), d.maybe_junk(d.array(lead + (seq, d_model), 1.0))), \
                {"params": params, "padding_mask": d.mask(lead, seq)}
        return el.multi_head_attention, (x, d.maybe_junk(n_heads, OPTION_JUNK), params), {"padding_mask": d.mask(lead, seq)}
    if name in ("feed_forward", "feed_forward_grad"):
        ffn = d.params(d_model, d.int(1, 6))["ffn"]
        activation = d.option(("relu", "gelu"))
        if name.endswith("_grad"):
            return G.feed_forward_grad, (x, ffn, d.maybe_junk(d.array(lead + (seq, d_model), 1.0))), {"activation": activation}
        return el.feed_forward, (x, ffn), {"activation": activation}
    if name in ("relu", "gelu"):
        shape = tuple(d.int(1, 4) for _ in range(d.int(0, 3)))
        return getattr(el, name), (d.maybe_junk(d.array(shape)),), {}
    if name in ("layer_norm", "layer_norm_grad"):
        gamma = None if d.int(0, 2) == 0 else d.maybe_junk(d.array((d_model,), 1.0))
        beta = None if d.int(0, 2) == 0 else d.maybe_junk(d.array((d_model,), 1.0))
        eps = d.option((1e-5, 1e-12, 1.0))
        if name.endswith("_grad"):
            return G.layer_norm_grad, (x, d.maybe_junk(d.array(lead + (seq, d_model), 1.0)), gamma, beta, eps), {}
        return el.layer_norm, (x, gamma, beta, eps), {}
    if name in ("post_norm", "pre_norm"):
        ffn = d.params(d_model, d.int(1, 6))["ffn"]
        sublayer = d.maybe_junk(lambda h: el.feed_forward(h, ffn), JUNK + (lambda h: None, lambda a, b: a,
                                                                             lambda h: h[..., :1], lambda h: h * np.nan))
        return getattr(el, name), (x, sublayer), {"eps": d.option((1e-5, 1e-6))}
    if name in ("encoder_block", "trace_encoder_block", "encoder_block_grad", "encoder", "trace_encoder", "encoder_grad"):
        stack = name.startswith(("encoder", "trace_encoder")) and not name.endswith("block") and "block" not in name
        p = [d.params(d_model, d.int(1, 6)) for _ in range(d.int(1, 3))] if stack else d.params(d_model, d.int(1, 6))
        options = {"norm": d.option(("post", "pre")), "padding_mask": d.mask(lead, seq),
                   "activation": d.option(("relu", "gelu")), "eps": d.option((1e-5,)),
                   "residual": d.maybe_junk(d.data.draw(st.booleans()), OPTION_JUNK)}
        heads = d.maybe_junk(n_heads, OPTION_JUNK)
        if name.endswith("_grad"):
            function = G.encoder_grad if stack else G.encoder_block_grad
            return function, (x, d.maybe_junk(p), heads, d.maybe_junk(d.array(lead + (seq, d_model), 1.0))), options
        return getattr(el, name), (x, d.maybe_junk(p), heads), options
    if name == "softmax_grad":
        shape = lead + (d.int(1, 5),)
        weights = el.softmax(d.rng.standard_normal(shape)).astype(d.dtype)
        return G.softmax_grad, (d.maybe_junk(weights), d.maybe_junk(d.array(shape, 1.0))), {}
    if name == "positional_encoding":
        return el.positional_encoding, (d.maybe_junk(d.int(1, 30), OPTION_JUNK), d.maybe_junk(d.int(1, 17), OPTION_JUNK)), \
            {"dtype": d.maybe_junk(d.dtype, (None, "foo", np.int32, float))}
    if name == "init_block_params":
        return el.init_block_params, (d.maybe_junk(d.int(1, 9), OPTION_JUNK), d.maybe_junk(d.int(1, 9), OPTION_JUNK),
                                      d.maybe_junk(d.rng, (None, 0, "rng"))), {"dtype": d.maybe_junk(d.dtype, (None, "foo"))}
    if name == "count_params":
        tree = d.data.draw(st.recursive(st.sampled_from([None, np.ones(2), np.zeros((2, 3))]) | st.sampled_from(JUNK),
                                        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
                                        max_leaves=6))
        return el.count_params, (tree,), {}
    if name in ("from_torch_state_dict", "to_torch_state_dict"):
        p = d.params(d_model, d.int(1, 6))
        if name == "to_torch_state_dict":
            return el.to_torch_state_dict, (p,), {"prefix": d.maybe_junk("", (None, 3))}
        try:
            sd = el.to_torch_state_dict(d.params(d_model, d.int(1, 6)))
        except (ValueError, TypeError):
            sd = {}
        if sd and d.int(0, 3) == 0:
            key = d.data.draw(st.sampled_from(sorted(sd)))
            sd[key] = d.data.draw(st.sampled_from(JUNK + (sd[key].T,)))
        return el.from_torch_state_dict, (d.maybe_junk(sd),), {"prefix": d.maybe_junk("", (None, 3))}
    if name == "mean_pool":
        return el.mean_pool, (x, d.mask(lead, seq)), {}
    return build_modern(name, d, x, (lead, seq, n_heads, d_model))


MODERN = el.BlockConfig(1, norm="pre", bias=False, ffn="gated", activation="gelu", rope="half", window=2, qk_norm=True)


def modern_params(d, d_model, n_heads, config=MODERN):
    """A modern block's params in the draw's dtype, off their defaults."""
    config = el.config.BlockConfig(n_heads, **{k: getattr(config, k) for k in ("norm", "bias", "ffn", "activation",
                                                                              "rope", "window", "qk_norm")})
    p = el.init_block_params(d_model, d.int(1, 6), d.rng, np.float32, config=config)
    with np.errstate(over="ignore"):
        return config, {k: v if not isinstance(v, dict) else {n: (a.astype(d.dtype) if isinstance(a, np.ndarray) else
                        {m: b.astype(d.dtype) for m, b in a.items()}) for n, a in v.items()} for k, v in p.items()}


def build_modern(name, d, x, shapes):
    """``(function, args, kwargs)`` for the public functions of the encoder since 2017 (lesson 09)."""
    lead, seq, n_heads, d_model = shapes
    grad_out = d.maybe_junk(d.array(lead + (seq, d_model), 1.0))
    if name in ("rms_norm", "silu", "rms_norm_grad", "rope_grad"):
        gamma = None if d.int(0, 2) == 0 else d.maybe_junk(d.array((d_model,), 1.0))
        return {"rms_norm": (el.rms_norm, (x, gamma), {"eps": d.option((1e-5, 1.0))}), "silu": (el.silu, (x,), {}),
                "rms_norm_grad": (G.rms_norm_grad, (x, grad_out, gamma), {}),
                "rope_grad": (G.rope_grad, (x,), {"layout": d.option(("half", "interleaved"))})}[name]
    if name == "peri_norm":
        ffn = d.params(d_model, d.int(1, 6))["ffn"]
        return el.peri_norm, (x, d.maybe_junk(lambda h: el.feed_forward(h, ffn), JUNK)), {"eps": d.option((1e-5,))}
    if name in ("rope", "rope_pairs", "shift_rotation", "gated_d_ff", "causal_mask", "local_window_mask"):
        n = d.maybe_junk(2 * d.int(1, 4), OPTION_JUNK)
        calls = {"rope": (x, d.option((10000.0, 160000.0)), d.option(("half", "interleaved"))),
                 "rope_pairs": (n, d.option(("half", "interleaved"))), "shift_rotation": (d.int(-9, 9), n),
                 "gated_d_ff": (d.maybe_junk(3 * d.int(1, 9), OPTION_JUNK),), "causal_mask": (n,),
                 "local_window_mask": (n, d.maybe_junk(d.int(1, 9), OPTION_JUNK))}
        return getattr(el, name), calls[name], {}
    if name in ("gated_feed_forward", "geglu", "swiglu", "gated_feed_forward_grad"):
        ffn = d.maybe_junk(modern_params(d, d_model, 1)[1]["ffn"])
        kwargs = {"activation": d.option(("gelu", "silu", "relu"))} if name.startswith("gated") else {}
        return getattr(el, name), (x, ffn) + ((grad_out,) if name.endswith("_grad") else ()), kwargs
    if name in ("mask_conventions", "attention_weights_bytes"):
        return (el.mask_conventions, (), {}) if name == "mask_conventions" else (
            el.attention_weights_bytes, (d.maybe_junk(d.int(1, 9000), OPTION_JUNK),),
            {"heads": d.int(1, 16), "block": d.maybe_junk(d.int(1, 99), OPTION_JUNK)})
    if name in ("blockwise_attention", "blockwise_attention_grad"):
        s_q, d_k, d_v = d.int(1, 4), d.int(1, 4), d.int(1, 3)
        q, k, v = d.array(lead + (s_q, d_k)), d.array(lead + (seq, d_k)), d.array(lead + (seq, d_v))
        g = (d.maybe_junk(d.array(lead + (s_q, d_v), 1.0)),) if name.endswith("_grad") else ()
        return getattr(el, name), (d.maybe_junk(q), k, v, *g, d.mask(lead, seq), d.maybe_junk(d.int(1, 4), OPTION_JUNK)), {}
    if name in ("modern_attention", "modern_attention_grad"):
        config, p = modern_params(d, d_model, n_heads)
        args = (x, d.maybe_junk(p["attn"]), config) + ((grad_out,) if name.endswith("_grad") else ())
        return getattr(el, name), args, {"padding_mask": d.mask(lead, seq)}
    if name in ("local_global_configs", "modernbert_configs"):
        if name == "modernbert_configs":
            return el.modernbert_configs, (d.maybe_junk({"num_hidden_layers": d.int(1, 6), "global_rope_theta": 1e5,
                                                         "local_rope_theta": 1e4}),), {}
        return el.local_global_configs, (MODERN, d.maybe_junk(d.int(1, 6), OPTION_JUNK)), {
            "global_every": d.maybe_junk(d.int(1, 4), OPTION_JUNK), "window": d.int(1, 9)}
    if name in ("from_modernbert_state_dict", "to_modernbert_state_dict"):
        config, p = modern_params(d, d_model, 1, el.BlockConfig(1, norm="pre", bias=False, ffn="gated"))
        if name == "to_modernbert_state_dict":
            return el.to_modernbert_state_dict, (d.maybe_junk(p),), {"prefix": d.maybe_junk("", (None, 3))}
        return el.from_modernbert_state_dict, (d.maybe_junk(el.to_modernbert_state_dict(p)),), {}
    raise KeyError(name)


FUNCTIONS = [name for name in el.__all__ if name != "BlockConfig"]


def arrays_in(value, depth=0):
    if isinstance(value, np.ndarray):
        yield value
    elif isinstance(value, dict) and depth < 8:
        for v in value.values():
            yield from arrays_in(v, depth + 1)
    elif isinstance(value, (list, tuple)) and depth < 8:
        for v in value:
            yield from arrays_in(v, depth + 1)


def float64_of(value):
    if isinstance(value, np.ndarray):
        return value.astype(np.float64) if value.dtype.kind == "f" else value
    if isinstance(value, dict):
        return {k: float64_of(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(float64_of(v) for v in value)
    return value


TOLERANCE = {np.float16: 3e-2, np.float32: 2e-4, np.float64: 1e-9}


def own_property(name, out, args, kwargs):
    """What must hold of a result of ``name`` whatever the inputs."""
    if name == "softmax":
        np.testing.assert_allclose(out.astype(np.float64).sum(axis=kwargs["axis"]), 1.0, atol=5e-3)
    if name == "masked_softmax":
        sums = out.astype(np.float64).sum(axis=-1)
        assert np.all((np.abs(sums - 1) < 5e-3) | (sums == 0))
    if name == "split_heads":
        np.testing.assert_array_equal(el.merge_heads(out), args[0])
    if name == "relu":
        np.testing.assert_array_equal(out, np.maximum(args[0], 0))
    if name == "count_params":
        assert out == sum(a.size for a in arrays_in(args[0]))
    if name == "positional_encoding":
        assert out.shape == (args[0], args[1]) and np.abs(out).max() <= 1


@pytest.mark.parametrize("name", FUNCTIONS)
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_a_right_result_or_a_clear_error(name, data):
    d = Draw(data)
    function, args, kwargs = build(name, d)
    inputs = list(arrays_in((args, kwargs)))
    before = copy.deepcopy(inputs)
    try:
        with np.errstate(all="raise"):  # a warning inside would mean an unhandled overflow
            out = function(*args, **kwargs)
    except (ValueError, TypeError) as exc:
        assert str(exc), f"{name} raised {type(exc).__name__} without a message"
        event(f"refused: {type(exc).__name__}")
        return
    event(f"result ({d.dtype.__name__})")
    for after, kept in zip(inputs, before):
        np.testing.assert_array_equal(after, kept, err_msg=f"{name} changed an input array")
    float_inputs = {a.dtype for a in inputs if a.dtype.kind == "f"}
    for array in arrays_in(out):
        if array.dtype.kind == "f":
            assert np.isfinite(array).all(), f"{name} returned NaN or infinity"
            if len(float_inputs) == 1:
                assert array.dtype in float_inputs, f"{name} returned {array.dtype} for {float_inputs}"
        assert not any(np.shares_memory(array, i) for i in inputs), f"{name} returned a view of its input"
    own_property(name, out, args, kwargs)
    if d.scale == 1.0 and len(float_inputs) == 1 and name not in ("post_norm", "pre_norm", "positional_encoding",
                                                                   "init_block_params", "count_params", "peri_norm"):
        reference = function(*float64_of(args), **float64_of(kwargs))  # the same call, in float64
        tolerance = TOLERANCE[next(iter(float_inputs)).type]
        for got, want in zip(arrays_in(out), arrays_in(reference)):
            if got.dtype.kind == "f":
                np.testing.assert_allclose(got.astype(np.float64), want, rtol=tolerance,
                                           atol=tolerance * max(1.0, float(np.abs(want).max())),
                                           err_msg=f"{name} differs from its float64 result")


class _FirstChoice:
    """Stands in for hypothesis's ``data`` in ``Fixed``: a strategy's first choice, never junk."""

    def draw(self, strategy, label=None):
        elements = getattr(strategy, "elements", None)  # st.sampled_from
        if elements is not None:
            return next(e for e in elements if not any(e is j for j in JUNK))
        return True if "booleans" in repr(strategy) else [np.ones(2), np.zeros((2, 3))]


class Fixed(Draw):
    """A draw with no randomness of hypothesis's and no junk: every argument what the function takes, its arrays of
    one dtype and magnitude (the calls the docstrings' "Extremes:" sentences speak of)."""

    def __init__(self, dtype, scale):
        self.dtype, self.scale, self.rng, self.data = dtype, scale, np.random.default_rng(0), _FirstChoice()

    def int(self, low, high, label=None):
        return min(max(low, 2), high)

    def maybe_junk(self, value, junk=JUNK, p=8):
        return value

    def option(self, good):
        return good[0]

    def mask(self, lead, seq):
        return None

    def params(self, d, d_ff, scale=None):
        p = el.params.off_defaults(el.init_block_params(d, d_ff, self.rng, dtype=np.float64), self.rng)
        return {k: {n: a.astype(self.dtype) for n, a in v.items()} for k, v in p.items()}


def first_float_array(value):
    return next((a for a in arrays_in(value) if a.dtype.kind == "f"), None)


def said(text):
    return " ".join(text.split())


@pytest.mark.parametrize("name", FUNCTIONS)
def test_what_each_docstring_says_of_extremes_holds(name):
    """Each docstring's "Extremes:" paragraph (written by ``_checks.public``) says: arguments must be finite; for
    attention, scores too large for the dtype raise ``Overflow``; for a norm, rows of 1e20 in float32 are normalised
    right. Each is called here as said. The paragraph's other promises (the dtype out, no NaN or infinity out, no
    memory shared) are what ``test_a_right_result_or_a_clear_error`` checks on every call it draws."""
    function, args, kwargs = build(name, Fixed(np.float64, 1.0))
    doc = said(function.__doc__)
    if "Arguments must be finite" not in doc:  # count_params: its own paragraph, held by tests/test_bad_input.py
        assert "Extremes:" in doc
        return
    array = first_float_array((args, kwargs))
    if array is not None and array.size:
        array.flat[0] = np.nan
        with pytest.raises(ValueError, match="finite|NaN"):
            function(*args, **kwargs)
    big = build(name, Fixed(np.float32, 1e20))
    qk_norm = getattr(big[1][2], "qk_norm", False) if "attention" in name and len(big[1]) > 2 else False
    if said(el._checks.ATTENTION_EXTREMES) in doc and not qk_norm:
        with pytest.raises(ValueError, match="overflow|does not fit") as raised:
            big[0](*big[1], **big[2])
        assert type(raised.value).__name__ == "Overflow", raised.value
    elif qk_norm:  # QK-norm puts every query and key on the unit scale first: the scores stay small
        assert all(np.isfinite(a).all() for a in arrays_in(big[0](*big[1], **big[2])))
    elif "1e20 in float32" in doc:  # a norm's rows of any finite size
        small = build(name, Fixed(np.float64, 1.0))
        for got, want in zip(arrays_in(big[0](*big[1], **big[2])), arrays_in(small[0](*small[1], **small[2]))):
            np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-3)
