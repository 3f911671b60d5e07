"""Lesson 06's exercise: a stack of blocks.

The code of its exercises: stack.toml declares each one (its texts, points and mistakes) and names the functions
here.
"""

import numpy as np

from ...block import encoder, encoder_block
from ..compare import NotApplicable
from ._base import cases, load_exercises, normal, random_block


def encoder_cases(rng, hidden):
    if hidden:
        n_layers, n_heads = int(rng.integers(2, 5)), int(rng.integers(1, 3))
        d = 2 * n_heads * int(rng.integers(1, 3))
        norm = ("post", "pre")[int(rng.integers(2))]
        layers = [random_block(rng, d, d + 3) for _ in range(n_layers)]
        mask = np.array([[False] * 4, [False, False] + [True] * 2])
        return cases((f"{n_layers} random {norm}-norm layers on (2, 4, {d})",
                      [normal(rng, 2, 4, d), layers, n_heads], {"norm": norm}),
                     (f"{n_layers} random layers on (2, 4, {d}) with a padding mask",
                      [normal(rng, 2, 4, d), layers, n_heads], {"padding_mask": mask}))
    layers = [random_block(rng, 8, 12) for _ in range(3)]
    return cases(
        ("3 post-norm layers on (2, 4, 8)", [normal(rng, 2, 4, 8), layers, 2], {}),
        ("3 pre-norm layers on (2, 4, 8)", [normal(rng, 2, 4, 8), layers, 2], {"norm": "pre"}),
        ("2 layers with a padding mask", [normal(rng, 2, 4, 8), layers[:2], 2],
         {"padding_mask": np.array([[False] * 4, [False, False, True, True]])}),
    )


def encoder_reusing_the_first_layer(x, layers, n_heads, norm="post", padding_mask=None):
    return encoder(x, [layers[0]] * len(layers), n_heads, norm=norm, padding_mask=padding_mask)


def encoder_every_block_reads_the_input(x, layers, n_heads, norm="post", padding_mask=None):
    return encoder_block(x, layers[-1], n_heads, norm=norm, padding_mask=padding_mask)


def encoder_skips_the_first_block(x, layers, n_heads, norm="post", padding_mask=None):
    if len(layers) < 2:
        raise NotApplicable
    return encoder(x, layers[1:], n_heads, norm=norm, padding_mask=padding_mask)


def encoder_model(x, layers, n_heads, norm="post", padding_mask=None):
    for params in layers:  # step: for_params
        x = encoder_block(x, params, n_heads, norm=norm, padding_mask=padding_mask)  # step: x
    return x  # step: result


def encoder_ignores_norm(x, layers, n_heads, norm="post", padding_mask=None):
    return encoder(x, layers, n_heads, padding_mask=padding_mask)


def encoder_without_the_mask(x, layers, n_heads, norm="post", padding_mask=None):
    if padding_mask is None:
        raise NotApplicable
    return encoder(x, layers, n_heads, norm=norm)


#: The lesson's exercises, as stack.toml declares them.
EXERCISES = load_exercises(globals())
