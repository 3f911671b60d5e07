"""Lesson 06's exercise: a stack of blocks."""

import numpy as np

from ...block import encoder, encoder_block
from ..compare import NotApplicable
from ._base import Exercise, Mistake, cases, normal, random_block
from .block import BLOCK_PARTS

STACK_LINK = "[Six blocks of the original Transformer's size](#Six-blocks-of-the-original-Transformer's-size)"


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
    for params in layers:  # every block of the stack runs once, in order
        x = encoder_block(x, params, n_heads, norm=norm, padding_mask=padding_mask)  # each block reads x, the previous block's output, with the same options and mask
    return x  # the last block's output is the stack's, with no final layer norm


def encoder_ignores_norm(x, layers, n_heads, norm="post", padding_mask=None):
    return encoder(x, layers, n_heads, padding_mask=padding_mask)


def encoder_without_the_mask(x, layers, n_heads, norm="post", padding_mask=None):
    if padding_mask is None:
        raise NotApplicable
    return encoder(x, layers, n_heads, norm=norm)


ENCODER = Exercise(
    name="encoder", lesson="06_stacking_blocks", points=2,
    formula=r"x_{l+1} = \mathrm{block}_l(x_l),\quad l = 0, \ldots, L - 1",
    cases=encoder_cases, reference=encoder, model=encoder_model,
    mistakes=(
        Mistake("one_set_of_parameters_for_every_layer",
                "one set of parameters reused for every layer of the stack: block i uses layers[i]",
                encoder_reusing_the_first_layer),
        Mistake("encoder_every_block_reads_the_input",
                "every block reads the stack's input, so only the last block counts: the output of each block is "
                "the input of the next (x = block(x, ...) inside the loop)", encoder_every_block_reads_the_input),
        Mistake("encoder_ignores_norm",
                "the norm placement is not passed on to the blocks: call each block with norm=norm",
                encoder_ignores_norm),
        Mistake("encoder_without_the_mask",
                "the padding mask is not passed on to the blocks: call each block with padding_mask=padding_mask, "
                "or the real tokens read the padding", encoder_without_the_mask),
        Mistake("encoder_skips_the_first_block",
                "the first block is skipped: the stack runs every block of layers, layers[0] first",
                encoder_skips_the_first_block),
    ),
    may_call=BLOCK_PARTS + ("encoder_block",),
    hints=(
        "A stack applies its blocks one after the other: block 0 reads the input, block 1 reads block 0's output, "
        "and so on, each block with its own parameters, layers[i]. Everything else, n_heads, the norm placement "
        "and the padding mask, is the same for every block and must reach each call. The section " + STACK_LINK +
        " runs six blocks and prints the shapes.",
        "With three blocks: h0 = x; h1 = block(h0, layers[0]); h2 = block(h1, layers[1]); h3 = block(h2, "
        "layers[2]); the output is h3. In a loop, the variable that receives each block's output is the one the "
        "next block reads: one name for both. Print the shape and the mean of x after each block.",
    ),
)

EXERCISES = (ENCODER,)
