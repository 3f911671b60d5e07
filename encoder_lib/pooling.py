"""Mean pooling: one vector per sequence, the average of its real tokens' vectors.

A sentence-embedding model such as all-MiniLM-L6-v2 turns the last block's
``(..., seq, d_model)`` output into one ``(..., d_model)`` vector per text by
averaging over the positions. In a padded batch only the real tokens count:
``padding_mask`` is boolean ``(..., seq)``, True at padding, as everywhere in
encoder_lib.
"""

import numpy as np

from . import _checks


@_checks.public
def mean_pool(hidden, padding_mask=None):
    """The mean of ``hidden`` (..., seq, d) over its real positions: (..., seq, d) -> (..., d).

    ``padding_mask`` is boolean (..., seq), True at padding, or None (every
    position is real). Padded positions are left out of both the sum and the
    count, so a text's vector does not depend on how much padding its batch
    added. A sequence that is all padding has no tokens to average and gives
    zeros, not NaN. The dtype of ``hidden`` is kept; vectors of any finite
    size are averaged without overflow (large ones are divided before they
    are added).

    >>> hidden = np.array([[[1.0, 2.0], [3.0, 4.0], [9.0, 9.0]],
    ...                    [[5.0, 6.0], [7.0, 8.0], [6.0, 7.0]]])   # (2, 3, 2)
    >>> mean_pool(hidden, np.array([[False, False, True], [False, False, False]]))  # 3rd of text 0 is padding
    array([[2., 3.],
           [6., 7.]])
    >>> mean_pool(hidden[0]).round(4)  # no mask: every position counts, the padding's (9, 9) too
    array([4.3333, 5.    ])
    """
    hidden = _checks.sequence(hidden, "hidden")
    mask = _checks.padding_mask(padding_mask, hidden.shape, "padding_mask")
    if mask is None:
        mask = np.zeros(hidden.shape[:-1], dtype=bool)  # every position real
    keep = (~mask)[..., None].astype(hidden.dtype)  # (..., seq, 1): 1 at a real token, 0 at padding
    total = (hidden * keep).sum(axis=-2)  # (..., d): the sum over real tokens
    count = keep.sum(axis=-2)  # (..., 1): how many real tokens each sequence has
    # an all-padding sequence has total 0 and count 0: dividing by 1 instead gives 0, not 0 / 0 = NaN
    mean = total / np.maximum(count, 1)
    if not np.isfinite(mean).all():  # sums too large for the dtype: divide first, then add
        mean = (hidden * (keep / np.maximum(count, 1)[..., None, :])).sum(axis=-2)
    return mean
