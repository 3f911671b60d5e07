"""Lesson 06: how the residual stream's scale changes through a stack, pre-norm against post-norm."""

import numpy as np

import encoder_lib as el

from . import rms


D_MODEL, N_HEADS, D_FF, MAX_DEPTH = 32, 4, 128, 24
BATCH, SEQ = 2, 10


def residual_scale(x, layers, n_heads, norm):
    """``[RMS of x, RMS after block 1, ..., RMS after block N]`` for one stack: length N + 1."""
    traces = el.trace_encoder(x, layers, n_heads, norm=norm)
    return np.array([rms(x)] + [rms(t["output"]) for t in traces])


def toy_stack(seed=0, depth=MAX_DEPTH):
    """``depth`` freshly initialised blocks (each its own params) and an input (BATCH, SEQ, D_MODEL)."""
    rng = np.random.default_rng(seed)
    layers = [el.init_block_params(D_MODEL, D_FF, rng) for _ in range(depth)]
    x = rng.standard_normal((BATCH, SEQ, D_MODEL)).astype(np.float32)
    return layers, x
