"""Lesson 06's exercise: a stack of blocks.

The code of its exercises: stack.toml declares each one (its texts, points and mistakes) and names the functions
here.
"""

import numpy as np

from ...block import encoder, encoder_block
from ..compare import NotApplicable
from .block import norm_and_mask, seq_of
from ._base import cases, load_exercises, normal, random_block


def encoder_cases(rng):
    layers = [random_block(rng, 8, 12) for _ in range(3)]
    return cases(
        ("3 post-norm layers on (2, 4, 8)", [normal(rng, 2, 4, 8), layers, 2], {}),
        ("3 pre-norm layers on (2, 4, 8)", [normal(rng, 2, 4, 8), layers, 2], {"norm": "pre"}),
        ("2 layers with a padding mask", [normal(rng, 2, 4, 8), layers[:2], 2],
         {"padding_mask": np.array([[False] * 4, [False, False, True, True]])}),
    )


def encoder_draw(rng, point):
    """``n_layers`` random blocks of the point's sizes on x, its norm and mask; "large": x of about 30, and the last
    block's norm2 gamma of about 10."""
    n_heads, d = point["n_heads"], point["n_heads"] * point["d_head"]
    layers = [random_block(rng, d, d + 3) for _ in range(point["n_layers"])]
    x = normal(rng, *point.lead, seq_of(point), d)
    if point.regime == "large":  # outputs far larger than the lesson's, post-norm and pre-norm alike
        x = x * 30
        layers[-1]["norm2"]["gamma"] = layers[-1]["norm2"]["gamma"] * 10
    said, kwargs = norm_and_mask(rng, point, x)
    return f"{point['n_layers']} layers of {n_heads} heads on x {x.shape}, {said}", [x, layers, n_heads], kwargs


def encoder_reusing_the_first_layer(x, layers, n_heads, norm="post", padding_mask=None):
    return encoder(x, [layers[0]] * len(layers), n_heads, norm=norm, padding_mask=padding_mask)


def encoder_every_block_reads_the_input(x, layers, n_heads, norm="post", padding_mask=None):
    return encoder_block(x, layers[-1], n_heads, norm=norm, padding_mask=padding_mask)


def encoder_skips_the_first_block(x, layers, n_heads, norm="post", padding_mask=None):
    for params in layers[1:]:  # one layer: x comes back as it came
        x = encoder_block(x, params, n_heads, norm=norm, padding_mask=padding_mask)
    return x


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
