"""Lesson 07: the gradient reaching each block of a stack at initialisation, for depths 1 to 24; loss curves."""

import functools

import numpy as np

from ..threads import single_blas_thread
from ..training import gradient_norms_by_depth


MAX_DEPTH = 24


@functools.lru_cache(maxsize=4)
@single_blas_thread
def gradient_table(max_depth=MAX_DEPTH, seeds=3):
    """``{(norm, residual): [norms for depth in 1..max_depth]}`` for all four settings (a few seconds, then cached).

    Each entry is ``gradient_norms(depth, norm, residual, seed)`` averaged
    over ``seeds`` seeds, so that one unlucky draw of weights does not make
    the curves jump.
    """
    table = {}
    for norm in ("post", "pre"):
        for residual in (True, False):
            by_seed = [gradient_norms_by_depth(max_depth, norm, residual, seed=seed) for seed in range(seeds)]
            table[norm, residual] = [
                {key: np.mean([runs[depth][key] for runs in by_seed], axis=0) for key in ("params", "inputs")}
                for depth in range(max_depth)
            ]
    return table


def smoothed_loss(history, width=10):
    """``(steps, loss)`` of a training run, the loss averaged over ``width`` steps (raw while the run is shorter).

    >>> from encoder_lib.training import History
    >>> smoothed_loss(History(loss=[4.0, 2.0, 3.0, 1.0]), width=2)
    (array([2, 3, 4]), array([3. , 2.5, 2. ]))
    """
    loss = np.asarray(history.loss, dtype=float)
    if len(loss) < width:
        return np.arange(1, len(loss) + 1), loss
    return np.arange(width, len(loss) + 1), np.convolve(loss, np.ones(width) / width, mode="valid")
