"""The parity table of lesson 09's parts: each part, float32 and float64, its largest error against its reference.

The references are built from their configurations with random weights (Hugging Face ModernBERT, LLaMA's MLP,
GPT-J's rotary, PyTorch's RMSNorm and scaled_dot_product_attention): ``tests/modern_reference.py`` says which and
how; ``tests/test_modern_parity.py`` holds each to 1e-6 (float32) and 1e-12 (float64). The error is relative where
the reference's entry is above 1. It measures accuracy, not speed: the machine's load does not change it.

    .venv/bin/python -m benchmarks.bench_parity
"""

import numpy as np

from benchmarks._report import table
from tests import modern_reference as M


def main():
    import torch
    import transformers

    rows = []
    by_dtype = {dtype: M.References(torch, transformers, dtype) for dtype in (np.float32, np.float64)}
    for part, (function, reference) in M.PARTS.items():
        errors = [M.error(*function(r)) for r in by_dtype.values()]
        rows.append((part, f"{errors[0]:.1e}", f"{errors[1]:.1e}", reference))
    print(f"torch {torch.__version__}, transformers {transformers.__version__}; ModernBERT d_model {M.D_MODEL}, "
          f"{M.N_HEADS} heads, d_ff {M.D_FF}, {M.N_LAYERS} layers, local window +-{M.LOCAL_ATTENTION // 2}, "
          f"batch 2 x seq {M.SEQ} (one padded tail of 2)\n")
    table(rows, ("part", "float32", "float64", "reference"))
    print(f"tolerance: {M.TOLERANCE[np.dtype(np.float32)]:g} (float32), {M.TOLERANCE[np.dtype(np.float64)]:g} "
          f"(float64). float32: ModernBERT as it is (eager attention). float64: sdpa attention, LLaMA's "
          f"apply_rotary_pos_emb and rotary tables computed in float64, since ModernBERT's own rotary works in "
          f"float32 inside; without them, rope's float64 error against it: "
          f"{M.modernbert_own_rope_error(torch, transformers):.1e}")


if __name__ == "__main__":
    main()
