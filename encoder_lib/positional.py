"""The sinusoidal positional encoding of "Attention Is All You Need"."""

import numpy as np

from . import _checks


@_checks.public
def positional_encoding(seq_len, d_model, dtype=np.float32):
    """(seq_len, d_model) table: sine in the even columns, cosine in the odd ones.

    ``PE[pos, 2i] = sin(pos / 10000^(2i / d_model))`` and
    ``PE[pos, 2i + 1] = cos(pos / 10000^(2i / d_model))``: each pair of
    columns is a clock of its own frequency, from one turn every 2 pi positions
    down to one every 10000 * 2 pi. Add it to the token embeddings.

    >>> positional_encoding(3, 4, dtype=np.float64).round(4)
    array([[ 0.    ,  1.    ,  0.    ,  1.    ],
           [ 0.8415,  0.5403,  0.01  ,  1.    ],
           [ 0.9093, -0.4161,  0.02  ,  0.9998]])
    """
    seq_len = _checks.positive_int(seq_len, "seq_len")
    d_model = _checks.positive_int(d_model, "d_model")
    dtype = _checks.float_dtype(dtype)
    pos = np.arange(seq_len, dtype=np.float64)[:, None]  # (seq_len, 1)
    freq = 10000.0 ** (-np.arange(0, d_model, 2, dtype=np.float64) / d_model)  # (ceil(d/2),)
    angle = pos * freq  # (seq_len, ceil(d_model / 2))
    pe = np.empty((seq_len, d_model))
    pe[:, 0::2] = np.sin(angle)
    pe[:, 1::2] = np.cos(angle[:, : d_model // 2])
    return pe.astype(dtype)
