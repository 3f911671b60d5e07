"""What the benchmarks share: printing their tables, and the PyTorch stack they compare against."""

import encoder_lib as el


def table(rows, header):
    """Print ``rows`` (tuples) under ``header`` as aligned plain-text columns."""
    rows = [tuple(str(c) for c in r) for r in rows]
    widths = [max(len(r[i]) for r in rows + [tuple(header)]) for i in range(len(header))]
    print("  ".join(h.ljust(w) for h, w in zip(header, widths)).rstrip())
    print("  ".join("-" * w for w in widths))
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
    print()


def torch_stack(torch, layers, n_heads, d_ff, norm="pre"):
    """An eval-mode ``nn.TransformerEncoder`` (dropout 0, batch first) holding encoder_lib's ``layers``."""
    d_model = layers[0]["attn"]["w_q"].shape[0]
    layer = torch.nn.TransformerEncoderLayer(d_model, n_heads, d_ff, dropout=0.0, batch_first=True,
                                             norm_first=norm == "pre")
    model = torch.nn.TransformerEncoder(layer, len(layers), enable_nested_tensor=False).eval()
    state = {}
    for i, p in enumerate(layers):
        state.update({k: torch.from_numpy(v) for k, v in el.to_torch_state_dict(p, f"layers.{i}.").items()})
    model.load_state_dict(state)
    return model
