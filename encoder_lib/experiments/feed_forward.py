"""Lesson 03: the FFN's hidden layer at four widths, and how many of its units an activation silences."""

import numpy as np

import encoder_lib as el


D_MODEL = 16
N_POSITIONS = 12
FACTORS = (1, 2, 4, 8)
SMALL = 1e-3  # |h| below this counts as "nearly silent"


def hidden_activations(d_model=D_MODEL, n_positions=N_POSITIONS, factors=FACTORS, seed=0):
    """``{(factor, activation): hidden (n_positions, factor * d_model)}`` for a seeded batch.

    The positions are random rows put through ``el.layer_norm`` (what the
    FFN sees in a block); each factor gets its own ``el.init_block_params``
    FFN weights with ``d_ff = factor * d_model``.
    """
    rng = np.random.default_rng(seed)
    x = el.layer_norm(rng.standard_normal((n_positions, d_model), dtype=np.float32))  # (positions, d_model)
    hidden = {}
    for factor in factors:
        ffn = el.init_block_params(d_model, factor * d_model, rng)["ffn"]
        pre = x @ ffn["w1"] + ffn["b1"]  # (positions, d_model) -> (positions, d_ff)
        hidden[factor, "relu"] = el.relu(pre)
        hidden[factor, "gelu"] = el.gelu(pre)
    return hidden


def silence_summary(h):
    """Counts over all (position, unit) entries of a hidden layer ``h``."""
    n = h.size
    return {
        "n_values": int(n),
        "n_zero": int(np.count_nonzero(h == 0)),
        "frac_zero": float(np.count_nonzero(h == 0) / n),
        "frac_small": float(np.count_nonzero(np.abs(h) < SMALL) / n),
        "frac_negative": float(np.count_nonzero(h < 0) / n),
        "frac_positive": float(np.count_nonzero(h > 0) / n),
        "dead_units": int(np.count_nonzero((h == 0).all(axis=0))),  # zero at every position
        "min": float(h.min()),
        "max": float(h.max()),
    }
