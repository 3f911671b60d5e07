"""What the benchmarks share: printing their tables, and the PyTorch stack they compare against."""

import time

import numpy as np

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


def alternate(ours, theirs, pairs, warmup=2):
    """Time ``ours()`` and ``theirs()`` one after the other ``pairs`` times, so both see the same machine load.

    Returns ``(our median ms, their median ms, median of the per-pair ratios ours / theirs)``.
    """
    for _ in range(warmup):
        ours(), theirs()
    t_ours, t_theirs = [], []
    for _ in range(pairs):
        t0 = time.perf_counter()
        ours()
        t1 = time.perf_counter()
        theirs()
        t2 = time.perf_counter()
        t_ours.append(t1 - t0)
        t_theirs.append(t2 - t1)
    ratio = float(np.median(np.array(t_ours) / np.array(t_theirs)))
    return float(np.median(t_ours)) * 1e3, float(np.median(t_theirs)) * 1e3, ratio
