"""Regenerate tests/data/torch_reference.npz: PyTorch's outputs that encoder_lib must reproduce.

Run it from the repository root (it needs torch; the tests that read the file do not):

    .venv/bin/python -m tools.make_torch_reference

Every case runs ``nn.TransformerEncoderLayer`` (a single block) or an
``nn.TransformerEncoder`` of 2 blocks (``enable_nested_tensor=False``, no
final norm), with ``batch_first=True``, ``dropout=0`` and in eval mode, over
the full product of

    norm        post (norm_first=False), pre (norm_first=True)
    activation  relu, gelu
    masking     nomask, mask (``src_key_padding_mask``, True = padding)
    depth       single, stack2
    dtype       float32, float64

and a case is named ``<norm>-<activation>-<masking>-<depth>-<dtype>``, e.g.
``pre-gelu-mask-stack2-float64``. Shapes are small: batch 3, seq 5,
d_model 8, 2 heads, d_ff 12 (d_ff != d_model, so a transposed weight fails).

PyTorch's fast path (eval mode without gradients) returns NaN for a
sequence whose positions are all padding, so the outputs are computed on the
slow path (gradients enabled, parameters requiring grad), where such a
sequence's attention output is the output projection's bias.

Inputs and weights come from a seeded numpy generator (drawn in float64; the
float32 cases use the same values rounded), so they do not depend on the
torch version; only the outputs are PyTorch's. Cases that differ only
in norm, activation or masking share their input and weights, which are
stored once (a zip member costs ~300 bytes, and one set of arrays per case
would make the file ~400 kB). The file holds:

    cases                                  the case names, in order
    x/<dtype>                              input, (3, 5, 8)
    mask                                   padding mask, (3, 5) bool: sequence 0
                                           unpadded, 1 padded after 3 positions,
                                           2 all padding
    <depth>-<dtype>/layer<i>/<torch key>   layer i's state dict, e.g.
                                           stack2-float32/layer1/linear1.weight
    <case>/output                          PyTorch's output, (3, 5, 8)

The live test ``test_stored_reference_matches_current_torch`` rebuilds these
arrays with ``build_reference`` and compares them with the stored file.
"""

import itertools

import numpy as np
import torch

from .course import ROOT
OUTPUT = ROOT / "tests" / "data" / "torch_reference.npz"

SEED = 0
BATCH, SEQ, D_MODEL, N_HEADS, D_FF = 3, 5, 8, 2, 12
NORMS = ("post", "pre")
ACTIVATIONS = ("relu", "gelu")
MASKINGS = ("nomask", "mask")
DEPTHS = {"single": 1, "stack2": 2}
DTYPES = ("float32", "float64")
STATE_DICT_KEYS = (
    "self_attn.in_proj_weight", "self_attn.in_proj_bias",
    "self_attn.out_proj.weight", "self_attn.out_proj.bias",
    "linear1.weight", "linear1.bias", "linear2.weight", "linear2.bias",
    "norm1.weight", "norm1.bias", "norm2.weight", "norm2.bias",
)


def case_name(norm, activation, masking, depth, dtype):
    """``post-relu-mask-single-float32`` and so on; ``parse_case_name`` undoes it."""
    return f"{norm}-{activation}-{masking}-{depth}-{dtype}"


def parse_case_name(name):
    """``{"norm", "activation", "masking", "depth", "dtype"}`` of a case name."""
    return dict(zip(("norm", "activation", "masking", "depth", "dtype"), name.split("-")))


def all_cases():
    """Every case name, in a fixed order."""
    return [case_name(*combo) for combo in itertools.product(NORMS, ACTIVATIONS, MASKINGS, DEPTHS, DTYPES)]


def random_state_dict(rng, d_model, d_ff):
    """One layer's weights under PyTorch's names and (out, in) layout, as float64 numpy arrays.

    Weights have the scale of PyTorch's ``nn.Linear`` initialisation,
    ``U(-1/sqrt(fan_in), 1/sqrt(fan_in))``. Unlike PyTorch's initialisation,
    every bias is nonzero and every layer norm has a gamma other than 1 and
    a beta other than 0, so a mixed-up bias, gamma or beta cannot go
    unnoticed. (With larger weights a float32 stack of blocks is now and then
    ill-conditioned enough that two correct implementations differ by more
    than the tests' 5e-6.)
    """

    def weight(n_out, n_in):
        bound = 1 / np.sqrt(n_in)
        return rng.uniform(-bound, bound, (n_out, n_in))

    def uniform(bound, n):
        return rng.uniform(-bound, bound, n)

    return {
        "self_attn.in_proj_weight": weight(3 * d_model, d_model),
        "self_attn.in_proj_bias": uniform(0.5, 3 * d_model),
        "self_attn.out_proj.weight": weight(d_model, d_model),
        "self_attn.out_proj.bias": uniform(0.5, d_model),
        "linear1.weight": weight(d_ff, d_model),
        "linear1.bias": uniform(0.5, d_ff),
        "linear2.weight": weight(d_model, d_ff),
        "linear2.bias": uniform(0.5, d_model),
        "norm1.weight": 1 + uniform(0.2, d_model),
        "norm1.bias": uniform(0.2, d_model),
        "norm2.weight": 1 + uniform(0.2, d_model),
        "norm2.bias": uniform(0.2, d_model),
    }


def build_module(norm, activation, state_dicts, n_heads, dtype):
    """An eval-mode ``TransformerEncoderLayer`` (one state dict) or ``TransformerEncoder`` (several).

    Block i's weights are loaded from ``state_dicts[i]`` (numpy arrays, cast to
    ``dtype``, a numpy dtype or its name); d_model and d_ff are read off them.
    """
    torch_dtype = getattr(torch, np.dtype(dtype).name)
    d_ff, d_model = state_dicts[0]["linear1.weight"].shape
    layer = torch.nn.TransformerEncoderLayer(
        d_model, n_heads, dim_feedforward=d_ff, dropout=0.0, activation=activation,
        batch_first=True, norm_first={"post": False, "pre": True}[norm], dtype=torch_dtype,
    )
    if len(state_dicts) == 1:
        module = layer
    else:
        module = torch.nn.TransformerEncoder(
            layer, num_layers=len(state_dicts), norm=None, enable_nested_tensor=False
        )
    for target, state_dict in zip(layer_modules(module), state_dicts, strict=True):
        target.load_state_dict({key: torch.from_numpy(np.asarray(value)) for key, value in state_dict.items()})
    return module.eval()


def layer_modules(module):
    """The blocks of a ``TransformerEncoder``, or ``[module]`` for a single layer."""
    return list(module.layers) if isinstance(module, torch.nn.TransformerEncoder) else [module]


def run_slow_path(module, x, mask=None):
    """``module(x, src_key_padding_mask=mask)`` on PyTorch's slow path, as a numpy array.

    The fast path is taken only without gradients, so enabling them (with
    parameters that require grad) forces the slow path, which is defined for
    a sequence that is all padding.
    """
    if module.training:
        raise ValueError("the module must be in eval mode, so that dropout and the training path are off")
    module.requires_grad_(True)
    mask_t = None if mask is None else torch.from_numpy(np.asarray(mask, dtype=bool))
    with torch.enable_grad():
        out = module(torch.from_numpy(x), src_key_padding_mask=mask_t)
    out = out.detach().numpy()
    if not np.isfinite(out).all():
        raise RuntimeError("PyTorch's output is not finite: did the fast path run?")
    return out


def reference_mask():
    """(BATCH, SEQ): sequence 0 unpadded, 1 padded after 3 positions, 2 all padding."""
    mask = np.zeros((BATCH, SEQ), dtype=bool)
    mask[1, 3:] = True
    mask[2, :] = True
    return mask


def stored_state_dicts(arrays, depth, dtype):
    """The per-layer state dicts of ``<depth>-<dtype>`` in the reference arrays."""
    return [
        {key: arrays[f"{depth}-{dtype}/layer{i}/{key}"] for key in STATE_DICT_KEYS}
        for i in range(DEPTHS[depth])
    ]


def build_reference(seed=SEED):
    """Every array of the reference file, keyed as the module docstring describes."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((BATCH, SEQ, D_MODEL))
    weights = {depth: [random_state_dict(rng, D_MODEL, D_FF) for _ in range(n)] for depth, n in DEPTHS.items()}
    arrays = {"cases": np.array(all_cases()), "mask": reference_mask()}
    for dtype in DTYPES:
        arrays[f"x/{dtype}"] = x.astype(dtype)
        for depth, layers in weights.items():
            for i, state_dict in enumerate(layers):
                for key, value in state_dict.items():
                    arrays[f"{depth}-{dtype}/layer{i}/{key}"] = value.astype(dtype)
    for name in all_cases():
        case = parse_case_name(name)
        state_dicts = stored_state_dicts(arrays, case["depth"], case["dtype"])
        module = build_module(case["norm"], case["activation"], state_dicts, N_HEADS, case["dtype"])
        mask = arrays["mask"] if case["masking"] == "mask" else None
        arrays[f"{name}/output"] = run_slow_path(module, arrays[f"x/{case['dtype']}"], mask)
    return arrays


def main():
    arrays = build_reference()
    OUTPUT.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(OUTPUT, **arrays)
    n_cases = len(arrays["cases"])
    print(f"wrote {OUTPUT.relative_to(ROOT)}: {n_cases} cases, {len(arrays)} arrays, "
          f"{OUTPUT.stat().st_size / 1000:.1f} kB (torch {torch.__version__}, numpy {np.__version__})")
    for name in arrays["cases"]:
        print(f"  {name}")


if __name__ == "__main__":
    main()
