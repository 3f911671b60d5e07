"""The parts of the encoder since 2017, each computed by encoder_lib and by a reference nobody here wrote.

Shared by ``tests/test_modern_parity.py`` (which holds each part to its tolerance) and
``benchmarks/bench_parity.py`` (which prints the table of errors). Every reference is
built in the test from its configuration, with random weights (nothing is downloaded):

- Hugging Face ``transformers``' ModernBERT (``ModernBertConfig``, small sizes, eval mode):
  its rotary embedding and ``apply_rotary_pos_emb``, its GeGLU MLP, its attention, global
  and local, its layers (layer 0, whose attention norm is an ``nn.Identity``, a local layer
  and a global layer with its norm) and the whole ``ModernBertModel``;
- ``transformers``' LLaMA MLP (SwiGLU) and GPT-J's ``apply_rotary_pos_emb`` (the interleaved
  layout, its ``rotate_every_two``);
- PyTorch's ``nn.RMSNorm``, ``nn.LayerNorm(bias=False)`` and
  ``F.scaled_dot_product_attention`` (for blockwise attention).

float64: ModernBERT's own code computes the rotary angles in float32 (its rotary
embedding's ``position_ids.float() * inv_freq.float()``), rotates q and k in float32
(``q.float()`` in ``apply_rotary_pos_emb``) and, with eager attention, takes the softmax
in float32; so a float64 ModernBERT is float32-accurate there. In float64 the references
therefore run with ``sdpa`` attention, LLaMA's ``apply_rotary_pos_emb`` (ModernBERT's
without the cast; ``transformers.models.llama``) and cos/sin tables of RoFormer's angles
``p * base ** (-2i / d)`` computed in float64 by torch here. ``MODERNBERT_OWN_ROPE``
measures what ModernBERT's own float32 angles give, for the table.
"""

import contextlib
from functools import partial

import numpy as np

import encoder_lib as el

D_MODEL, N_HEADS, D_FF, N_LAYERS, LOCAL_ATTENTION, SEQ = 32, 4, 24, 4, 6, 9
D_HEAD = D_MODEL // N_HEADS


def hf_config(transformers, attn):
    """A small ModernBERT: 4 layers (0 and 3 global, 1 and 2 local, a window of +-3), 4 heads of 8, d_ff 24."""
    return transformers.ModernBertConfig(
        vocab_size=64, hidden_size=D_MODEL, intermediate_size=D_FF, num_hidden_layers=N_LAYERS,
        num_attention_heads=N_HEADS, local_attention=LOCAL_ATTENTION, max_position_embeddings=64, pad_token_id=0,
        bos_token_id=1, eos_token_id=2, cls_token_id=1, sep_token_id=2, attn_implementation=attn)


def randomised(torch, module, seed=0):
    """``module`` with every weight drawn as ``nn.Linear``'s default and every norm's weight in [0.5, 1.5] (the
    model's own initialisation, std 0.02, would leave the sub-layers' part of each output small)."""
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in module.named_parameters():
            bound = 1 / np.sqrt(p.shape[-1]) if p.ndim == 2 else 0.5
            centre = 1.0 if "norm" in name and name.endswith("weight") else 0.0
            p.copy_(centre + bound * (2 * torch.rand(p.shape, generator=generator, dtype=p.dtype) - 1))
    return module.eval()


class References:
    """Everything one dtype's comparisons need: the modules, an input, a padding mask, the float64 patches."""

    def __init__(self, torch, transformers, dtype):
        self.torch, self.transformers, self.dtype = torch, transformers, np.dtype(dtype)
        self.tdtype = torch.float32 if self.dtype == np.float32 else torch.float64
        self.attn = "eager" if self.dtype == np.float32 else "sdpa"
        self.config = hf_config(transformers, self.attn)
        torch.manual_seed(0)
        self.model = randomised(torch, transformers.ModernBertModel(self.config)).to(self.tdtype)
        rng = np.random.default_rng(0)
        self.x = rng.standard_normal((2, SEQ, D_MODEL)).astype(self.dtype)
        self.padding = np.zeros((2, SEQ), dtype=bool)
        self.padding[1, -2:] = True  # a padded tail; every query still sees a real key in its window
        self.state = {k: v.detach().numpy() for k, v in self.model.state_dict().items()}
        self.configs = el.modernbert_configs(self.config.to_dict())
        self.layers = [el.from_modernbert_state_dict(self.state, f"layers.{i}.") for i in range(N_LAYERS)]

    def tensor(self, array):
        return self.torch.from_numpy(np.ascontiguousarray(array))

    def rope_tables(self, layer_type, seq=SEQ):
        """(cos, sin), each (1, seq, d_head), as ModernBERT's rotary embedding makes them: its own in float32, the
        same formula in float64 otherwise."""
        torch = self.torch
        positions = torch.arange(seq).unsqueeze(0)
        if self.dtype == np.float32:
            return self.model.rotary_emb(self.tensor(self.x), positions, layer_type)
        base = self.config.rope_parameters[layer_type]["rope_theta"]
        inv_freq = 1.0 / base ** (torch.arange(0, D_HEAD, 2, dtype=torch.float64) / D_HEAD)
        angles = positions[..., None].to(torch.float64) * inv_freq
        emb = torch.cat((angles, angles), dim=-1)
        return emb.cos(), emb.sin()

    @contextlib.contextmanager
    def float64_rope(self):
        """In float64, ModernBERT's layers rotate with LLaMA's apply_rotary_pos_emb (no cast to float32) and its
        model takes float64 tables; in float32, nothing changes."""
        if self.dtype == np.float32:
            yield
            return
        from unittest import mock

        from transformers.models.llama import modeling_llama
        from transformers.models.modernbert import modeling_modernbert

        with mock.patch.object(modeling_modernbert, "apply_rotary_pos_emb", modeling_llama.apply_rotary_pos_emb), \
                mock.patch.object(self.model.rotary_emb, "forward",
                                  lambda x, position_ids, layer_type: self.rope_tables(layer_type, x.shape[1])):
            yield

    def mask(self, layer_type, padding=None):
        """The 4-D mask ModernBERT's own code makes for a layer type from the padding (Hugging Face's 1 = keep)."""
        masking = self.transformers.masking_utils
        make = (masking.create_bidirectional_sliding_window_mask if layer_type == "sliding_attention"
                else masking.create_bidirectional_mask)
        keep = self.tensor((~(self.padding if padding is None else padding)).astype(np.int64))
        return make(config=self.config, inputs_embeds=self.tensor(self.x), attention_mask=keep)

    def run(self, module, *args, **kwargs):
        with self.torch.no_grad(), self.float64_rope():
            out = module(*args, **kwargs)
        return (out[0] if isinstance(out, tuple) else out).numpy()


# ---------------------------------------------------------------- the parts: each returns (ours, theirs)


def rms_norm(r):
    norm = r.torch.nn.RMSNorm(D_MODEL, eps=1e-6, dtype=r.tdtype)
    randomised(r.torch, norm)
    return el.rms_norm(r.x, norm.weight.detach().numpy(), eps=1e-6), r.run(norm, r.tensor(r.x))


def bias_free_layer_norm(r):
    norm = r.model.layers[1].mlp_norm  # ModernBERT's: nn.LayerNorm(bias=False)
    return el.layer_norm(r.x, norm.weight.detach().numpy()), r.run(norm, r.tensor(r.x))


def _heads(r):
    """Random queries and keys (2, n_heads, seq, d_head)."""
    rng = np.random.default_rng(1)
    return rng.standard_normal((2, 2, N_HEADS, SEQ, D_HEAD)).astype(r.dtype)


def rope_half(r):
    from transformers.models.llama import modeling_llama
    from transformers.models.modernbert import modeling_modernbert

    q, k = _heads(r)
    apply = modeling_modernbert.apply_rotary_pos_emb if r.dtype == np.float32 else modeling_llama.apply_rotary_pos_emb
    cos, sin = r.rope_tables("full_attention")
    with r.torch.no_grad():
        theirs = apply(r.tensor(q), r.tensor(k), cos, sin, unsqueeze_dim=1)
    ours = [el.rope(a, base=r.configs[0].rope_base, layout="half") for a in (q, k)]
    return np.stack(ours), np.stack([t.numpy() for t in theirs])


def rope_interleaved(r):
    """Against GPT-J's apply_rotary_pos_emb (its rotate_every_two), whose tensors are (batch, seq, heads, d_head)."""
    from transformers.models.gptj import modeling_gptj

    torch = r.torch
    q = _heads(r)[0]
    angles = torch.arange(SEQ, dtype=torch.float64)[:, None] * 10000.0 ** (
        -torch.arange(0, D_HEAD, 2, dtype=torch.float64) / D_HEAD)
    sin, cos = (f(angles).to(r.tdtype)[None].expand(2, SEQ, D_HEAD // 2) for f in (torch.sin, torch.cos))
    with torch.no_grad():
        theirs = modeling_gptj.apply_rotary_pos_emb(r.tensor(q.transpose(0, 2, 1, 3)), sin, cos)
    return el.rope(q, layout="interleaved"), theirs.numpy().transpose(0, 2, 1, 3)


def geglu(r):
    mlp = r.model.layers[1].mlp  # ModernBertMLP: Wi chunked into (input, gate), GELU on the input half
    return el.geglu(r.x, r.layers[1]["ffn"]), r.run(mlp, r.tensor(r.x))


def swiglu(r):
    from transformers.models.llama import modeling_llama

    config = r.transformers.LlamaConfig(hidden_size=D_MODEL, intermediate_size=D_FF, hidden_act="silu")
    r.torch.manual_seed(0)
    mlp = randomised(r.torch, modeling_llama.LlamaMLP(config)).to(r.tdtype)
    w = {name: getattr(mlp, name).weight.detach().numpy().T for name in ("gate_proj", "up_proj", "down_proj")}
    params = {"w_in": w["gate_proj"], "w_gate": w["up_proj"], "w_out": w["down_proj"]}  # LLaMA activates gate_proj
    return el.swiglu(r.x, params), r.run(mlp, r.tensor(r.x))


def attention(r, i, layer_type):
    ours, _ = el.modern_attention(r.x, r.layers[i]["attn"], r.configs[i], r.padding)
    theirs = r.run(r.model.layers[i].attn, r.tensor(r.x), position_embeddings=r.rope_tables(layer_type),
                   attention_mask=r.mask(layer_type))
    return ours, theirs


def layer(r, i, layer_type):
    ours = el.encoder_block(r.x, r.layers[i], config=r.configs[i], padding_mask=r.padding)
    theirs = r.run(r.model.layers[i], r.tensor(r.x), attention_mask=r.mask(layer_type),
                   position_embeddings=r.rope_tables(layer_type))
    return ours, theirs


def whole_model(r):
    """ModernBertModel from its input embeddings: its embeddings' norm, the 4 layers, its final norm."""
    gamma = {name: r.state[f"{name}.weight"] for name in ("embeddings.norm", "final_norm")}
    x = el.layer_norm(r.x, gamma["embeddings.norm"], eps=r.config.norm_eps)
    x = el.encoder(x, r.layers, config=r.configs, padding_mask=r.padding)
    ours = el.layer_norm(x, gamma["final_norm"], eps=r.config.norm_eps)
    keep = r.tensor((~r.padding).astype(np.int64))
    with r.torch.no_grad(), r.float64_rope():
        theirs = r.model(inputs_embeds=r.tensor(r.x), attention_mask=keep).last_hidden_state
    return ours, theirs.numpy()


def blockwise_attention(r):
    torch = r.torch
    q, k = _heads(r)
    v = np.random.default_rng(2).standard_normal(q.shape).astype(r.dtype)
    padding = np.broadcast_to(r.padding[:, None, :], (2, N_HEADS, SEQ))
    with torch.no_grad():
        theirs = torch.nn.functional.scaled_dot_product_attention(
            r.tensor(q), r.tensor(k), r.tensor(v), attn_mask=r.tensor(~padding[..., None, :]))  # True = takes part
    return el.blockwise_attention(q, k, v, padding, block=4), theirs.numpy()


#: Each part: its function and the reference it is held to.
PARTS = {
    "rms_norm": (rms_norm, "torch.nn.RMSNorm"),
    "layer_norm without beta": (bias_free_layer_norm, "ModernBERT's mlp_norm, nn.LayerNorm(bias=False)"),
    "rope, half": (rope_half, "ModernBERT's rotary embedding + apply_rotary_pos_emb (float64: LLaMA's)"),
    "rope, interleaved": (rope_interleaved, "GPT-J's apply_rotary_pos_emb (rotate_every_two)"),
    "geglu": (geglu, "ModernBertMLP"),
    "swiglu": (swiglu, "LlamaMLP (silu)"),
    "blockwise_attention": (blockwise_attention, "F.scaled_dot_product_attention"),
    "attention, global": (partial(attention, i=0, layer_type="full_attention"), "ModernBertAttention, layer 0"),
    "attention, local (+-3)": (partial(attention, i=1, layer_type="sliding_attention"),
                               "ModernBertAttention, layer 1, sliding window"),
    "layer 0 (global, no attn norm)": (partial(layer, i=0, layer_type="full_attention"), "ModernBertEncoderLayer 0"),
    "layer 1 (local)": (partial(layer, i=1, layer_type="sliding_attention"), "ModernBertEncoderLayer 1"),
    "layer 3 (global)": (partial(layer, i=3, layer_type="full_attention"), "ModernBertEncoderLayer 3"),
    "whole model (4 layers)": (whole_model, "ModernBertModel, last_hidden_state"),
}
TOLERANCE = {np.dtype(np.float32): 1e-6, np.dtype(np.float64): 1e-12}


def error(ours, theirs):
    """The largest error, relative where the reference's entry is above 1 (as tests/test_torch_parity.py)."""
    ours, theirs = np.asarray(ours, dtype=np.float64), np.asarray(theirs, dtype=np.float64)
    assert ours.shape == theirs.shape, f"shapes differ: ours {ours.shape}, the reference's {theirs.shape}"
    return float(np.max(np.abs(ours - theirs) / np.maximum(1.0, np.abs(theirs))))


def modernbert_own_rope_error(torch, transformers):
    """rope in float64 against ModernBERT's own rotary embedding and apply_rotary_pos_emb run in float64 mode (angles
    and the rotation in float32 inside): what a float64 comparison without the patches would see."""
    from transformers.models.modernbert import modeling_modernbert

    r = References(torch, transformers, np.float64)
    q, k = _heads(r)
    with torch.no_grad():
        cos, sin = r.model.rotary_emb(r.tensor(r.x), torch.arange(SEQ).unsqueeze(0), "full_attention")
        theirs = modeling_modernbert.apply_rotary_pos_emb(r.tensor(q), r.tensor(k), cos, sin)[0]
    return error(el.rope(q, base=r.configs[0].rope_base), theirs.numpy())
