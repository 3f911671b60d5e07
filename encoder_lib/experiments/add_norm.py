"""Lesson 04: the fixture block's output rows, post-norm or pre-norm, with or without residuals."""

import encoder_lib as el
from encoder_lib import fixtures


def block_outputs():
    """``{(norm, residual): output (3, 4)}`` of the lesson's fixture block, for the four variants."""
    x, params = fixtures.lesson_input(), fixtures.lesson_block_params()
    return {(norm, residual): el.encoder_block(x, params, fixtures.N_HEADS, norm=norm, residual=residual)
            for norm in ("post", "pre") for residual in (True, False)}


def row_stats(out):
    """Each row's mean and (biased) variance over its features, the statistics layer norm uses."""
    return out.mean(axis=-1), out.var(axis=-1)
