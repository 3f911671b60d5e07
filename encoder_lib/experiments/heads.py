"""Lesson 02: what each head of multi-head attention reads on the lesson's fixture, for 1, 2 or 4 heads."""

import numpy as np

import encoder_lib as el

HEAD_COUNTS = (1, 2, 4)
TIE = 1e-9  # weights this close to a row's largest count as a tie


def head_weights(x, head_counts=HEAD_COUNTS):
    """``{n_heads: weights (n_heads, seq, seq)}``: every head's weights over ``x`` (seq, d_model), identity projections.

    >>> from encoder_lib import fixtures
    >>> head_weights(fixtures.lesson_input())[2].shape
    (2, 3, 3)
    """
    return {n: el.multi_head_attention(x, n)[1] for n in head_counts}


def top_keys(row):
    """The key positions that hold a row's largest weight (more than one when they tie).

    >>> top_keys([0.2, 0.4, 0.4])
    [1, 2]
    """
    row = np.asarray(row)
    return [int(i) for i in np.flatnonzero(row >= row.max() - TIE)]


def reads_most(weights):
    """``(mean weight per key (seq,), the keys it is largest at)`` of one head's (seq, seq) weights.

    The mean over the queries is how much the head reads each position; the
    tallest bar of the lesson's widget.

    >>> mean, most = reads_most(np.array([[0.5, 0.5], [1.0, 0.0]]))
    >>> mean, most
    (array([0.75, 0.25]), [0])
    """
    mean = np.asarray(weights).mean(axis=0)  # (seq,): the average weight each key receives
    return mean, top_keys(mean)
