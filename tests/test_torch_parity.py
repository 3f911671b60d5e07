"""encoder_lib against PyTorch's ``nn.TransformerEncoderLayer`` and ``nn.TransformerEncoder``.

PyTorch runs with ``batch_first=True``, ``dropout=0`` and in eval mode, on its
slow path (see tools/make_torch_reference.py for why). Two kinds of test:

- stored: tests/data/torch_reference.npz holds PyTorch's inputs, weights and
  outputs for 32 small cases; these tests need no torch and always run;
- live (``@pytest.mark.torch``): PyTorch layers on random shapes, weights
  exported both ways, and a check that the stored file is still what the
  installed PyTorch computes. Without torch they skip locally and fail in CI.

Every comparison covers all positions, padded ones included, within
``TOLERANCE`` (absolute, or relative for entries larger than 1). The random
weights have the scale of PyTorch's ``nn.Linear`` initialisation: with
weights ~1.7 times larger, a float32 stack of 3 blocks is now and then
ill-conditioned enough that PyTorch and encoder_lib, both correct, differ by
up to ~3e-5 (each about as far from the float64 result). The random test is
derandomized: it runs the same examples every time.
"""

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import encoder_lib as el
from encoder_lib.params import TORCH_KEYS

ROOT = Path(__file__).resolve().parent.parent
REFERENCE_FILE = ROOT / "tests" / "data" / "torch_reference.npz"
REFERENCE_N_HEADS = 2  # as N_HEADS in the tool
TOLERANCE = {np.dtype(np.float32): 5e-6, np.dtype(np.float64): 1e-12}
RANDOM_EXAMPLES = 15  # per parametrization of the live random test; 32 of them take ~3 s

with np.load(REFERENCE_FILE) as _file:
    REFERENCE = {key: _file[key] for key in _file.files}
CASES = [str(name) for name in REFERENCE["cases"]]


# ---------------------------------------------------------------- helpers


def assert_close(actual, expected, what):
    """Every entry within ``tol * max(1, |expected|)``, tol by dtype; the message gives the max error."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.dtype == expected.dtype, f"{what}: dtype {actual.dtype}, expected {expected.dtype}"
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape}, expected {expected.shape}"
    assert np.isfinite(actual).all(), f"{what}: not finite at {np.argwhere(~np.isfinite(actual))[:5].tolist()}"
    tol = TOLERANCE[expected.dtype]
    error = np.abs(actual.astype(np.float64) - expected.astype(np.float64))
    allowed = tol * np.maximum(1.0, np.abs(expected.astype(np.float64)))
    worst = np.unravel_index(np.argmax(error / allowed), error.shape)
    assert (error <= allowed).all(), (
        f"{what}: max abs error {error.max():.3g} (tolerance {tol:g}, relative above 1); "
        f"worst at {tuple(int(i) for i in worst)}: {actual[worst]!r} vs {expected[worst]!r}"
    )


def parse_case(name):
    """``{"norm", "activation", "masking", "depth", "dtype"}`` of ``<norm>-<activation>-<masking>-<depth>-<dtype>``."""
    return dict(zip(("norm", "activation", "masking", "depth", "dtype"), name.split("-"), strict=True))


def stored_state_dicts(group):
    """The per-layer state dicts of ``group`` (e.g. ``stack2-float32``) in the reference file."""
    n_layers = len({key.split("/")[1] for key in REFERENCE if key.startswith(group + "/")})
    return [{key: REFERENCE[f"{group}/layer{i}/{key}"] for key in TORCH_KEYS} for i in range(n_layers)]


def stored_case(name):
    """The input, padding mask (or None), per-layer state dicts and PyTorch's output of one stored case."""
    case = parse_case(name)
    return {
        "x": REFERENCE[f"x/{case['dtype']}"],
        "mask": REFERENCE["mask"] if case["masking"] == "mask" else None,
        "state_dicts": stored_state_dicts(f"{case['depth']}-{case['dtype']}"),
        "output": REFERENCE[f"{name}/output"],
    }


def run_encoder_lib(x, layers, n_heads, norm, activation, mask):
    """``encoder_block`` for one layer's params, ``encoder`` for a list of several."""
    options = dict(n_heads=n_heads, norm=norm, activation=activation, padding_mask=mask)
    if len(layers) == 1:
        return el.encoder_block(x, layers[0], **options)
    return el.encoder(x, layers, **options)


def numpy_state_dict(module):
    """A torch module's state dict with every tensor as a numpy array."""
    return {key: value.detach().numpy() for key, value in module.state_dict().items()}


def flat_params(params):
    """Nested block params as ``{"attn/w_q": array, ...}``."""
    return {f"{group}/{name}": value for group, arrays in params.items() for name, value in arrays.items()}


def assert_same_params(actual, expected, what):
    """Two blocks' params hold the same names, dtypes and values, bit for bit."""
    actual, expected = flat_params(actual), flat_params(expected)
    assert actual.keys() == expected.keys(), what
    for key, value in expected.items():
        assert actual[key].dtype == value.dtype and np.array_equal(actual[key], value), f"{what}: {key} differs"


def jittered(params, rng):
    """A copy of nested params with noise added to every array (so no bias is 0 and no gamma is 1)."""
    if isinstance(params, dict):
        return {key: jittered(value, rng) for key, value in params.items()}
    return params + (0.3 * rng.standard_normal(params.shape)).astype(params.dtype)


# ---------------------------------------------------------------- stored reference (no torch)


def test_stored_reference_covers_every_case_and_the_padding_edge_cases():
    combos = {tuple(parse_case(name).values()) for name in CASES}
    assert len(combos) == len(CASES) == 2 * 2 * 2 * 2 * 2
    mask = REFERENCE["mask"]
    assert not mask[0].any(), "one sequence without padding"
    assert mask[1].any() and not mask[1].all() and (np.diff(mask[1].astype(int)) >= 0).all(), "one padded tail"
    assert mask[2].all(), "one sequence that is all padding"
    assert REFERENCE_FILE.stat().st_size < 150_000


@pytest.mark.parametrize("name", CASES)
def test_encoder_lib_matches_stored_torch_output(name):
    case, stored = parse_case(name), stored_case(name)
    layers = [el.from_torch_state_dict(sd) for sd in stored["state_dicts"]]
    out = run_encoder_lib(stored["x"], layers, REFERENCE_N_HEADS, case["norm"], case["activation"], stored["mask"])
    assert_close(out, stored["output"], name)


@pytest.mark.parametrize("group", ["single-float32", "single-float64", "stack2-float32", "stack2-float64"])
def test_to_torch_state_dict_inverts_from_torch_state_dict_exactly(group):
    for i, state_dict in enumerate(stored_state_dicts(group)):
        back = el.to_torch_state_dict(el.from_torch_state_dict(state_dict))
        assert set(back) == set(state_dict), f"layer {i}"
        for key, value in state_dict.items():
            assert back[key].dtype == value.dtype and back[key].shape == value.shape, f"layer {i} {key}"
            assert np.array_equal(back[key], value), f"layer {i} {key} changed in the round trip"


@pytest.mark.parametrize("layer", [0, 1])
def test_from_torch_state_dict_prefix_selects_one_layer_of_an_encoder_state_dict(layer):
    state_dicts = stored_state_dicts("stack2-float64")
    encoder_sd = {f"layers.{i}.{key}": value for i, sd in enumerate(state_dicts) for key, value in sd.items()}
    from_prefix = el.from_torch_state_dict(encoder_sd, prefix=f"layers.{layer}.")
    assert_same_params(from_prefix, el.from_torch_state_dict(state_dicts[layer]), f"layers.{layer}.")


# ---------------------------------------------------------------- live PyTorch


@st.composite
def random_problems(draw, masked):
    """Shapes, heads, a padding mask (if ``masked``, else None) and a seed for the weights and input.

    Batch shapes have 1 to 3 axes of 1 to 3 (PyTorch sees them flattened into
    one); masks are any pattern, so sequences that are all padding occur.
    """
    d_model = draw(st.sampled_from([4, 8, 12, 16]))
    seq = draw(st.integers(1, 9))
    batch_shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=3))
    return {
        "d_model": d_model,
        "n_heads": draw(st.sampled_from([h for h in range(1, d_model + 1) if d_model % h == 0])),
        "d_ff": draw(st.integers(1, 24).filter(lambda d_ff: d_ff != d_model)),
        "batch_shape": batch_shape,
        "seq": seq,
        "mask": draw(hnp.arrays(np.bool_, batch_shape + (seq,))) if masked else None,
        "seed": draw(st.integers(0, 2**32 - 1)),
    }


def torch_on_flat_batch(torch_reference, module, x, mask):
    """Run ``module`` with the batch axes of ``x`` (and ``mask``) flattened into one, then restore them."""
    seq, d_model = x.shape[-2:]
    flat_mask = None if mask is None else mask.reshape(-1, seq)
    return torch_reference.run_slow_path(module, x.reshape(-1, seq, d_model), flat_mask).reshape(x.shape)


@pytest.mark.torch
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("n_layers", [1, 3], ids=["single", "stack3"])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
@pytest.mark.parametrize("norm", ["post", "pre"])
@pytest.mark.parametrize("masked", [False, True], ids=["nomask", "mask"])
@settings(max_examples=RANDOM_EXAMPLES, deadline=None, derandomize=True)
@given(data=st.data())
def test_encoder_lib_matches_torch_on_random_shapes_and_masks(torch_reference, masked, norm, activation, n_layers, dtype, data):
    problem = data.draw(random_problems(masked), label="problem")
    rng = np.random.default_rng(problem["seed"])
    weights = [torch_reference.random_state_dict(rng, problem["d_model"], problem["d_ff"]) for _ in range(n_layers)]
    module = torch_reference.build_module(norm, activation, weights, problem["n_heads"], dtype)
    layers = [el.from_torch_state_dict(numpy_state_dict(layer)) for layer in torch_reference.layer_modules(module)]
    x = rng.standard_normal(problem["batch_shape"] + (problem["seq"], problem["d_model"])).astype(dtype)
    expected = torch_on_flat_batch(torch_reference, module, x, problem["mask"])
    out = run_encoder_lib(x, layers, problem["n_heads"], norm, activation, problem["mask"])
    assert_close(out, expected, f"{norm} {activation} {n_layers} layer(s) {np.dtype(dtype).name}")


@pytest.mark.torch
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("norm", ["post", "pre"])
def test_init_block_params_load_into_torch_via_to_torch_state_dict(torch, torch_reference, norm, dtype):
    rng = np.random.default_rng(1)
    layers = [jittered(el.init_block_params(8, 20, rng, dtype=dtype), rng) for _ in range(2)]
    module = torch_reference.build_module(norm, "gelu", [el.to_torch_state_dict(p) for p in layers], 4, dtype)
    x = rng.standard_normal((2, 6, 8)).astype(dtype)
    mask = np.array([[False] * 6, [False] * 4 + [True] * 2])
    assert_close(run_encoder_lib(x, layers, 4, norm, "gelu", mask), torch_reference.run_slow_path(module, x, mask), norm)


@pytest.mark.torch
def test_from_torch_state_dict_prefix_reads_a_real_transformer_encoder_state_dict(torch, torch_reference):
    rng = np.random.default_rng(2)
    module = torch_reference.build_module("post", "relu", [torch_reference.random_state_dict(rng, 8, 12) for _ in range(2)], 2, np.float64)
    encoder_sd = numpy_state_dict(module)
    layers = [el.from_torch_state_dict(encoder_sd, prefix=f"layers.{i}.") for i in range(2)]
    for i, layer in enumerate(module.layers):
        assert_same_params(layers[i], el.from_torch_state_dict(numpy_state_dict(layer)), f"layers.{i}.")
    x = rng.standard_normal((3, 5, 8))
    assert_close(run_encoder_lib(x, layers, 2, "post", "relu", None), torch_reference.run_slow_path(module, x), "stack")


@pytest.mark.torch
def test_stored_reference_matches_current_torch(torch, torch_reference):
    rebuilt = torch_reference.build_reference()
    assert set(rebuilt) == set(REFERENCE), "the stored file's arrays differ from the tool's: regenerate it"
    for key, value in rebuilt.items():
        if key.endswith("/output"):
            assert_close(REFERENCE[key], value, f"{key} (torch {torch.__version__})")
        else:
            assert np.array_equal(REFERENCE[key], value), f"{key}: inputs and weights must be identical"
