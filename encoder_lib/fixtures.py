"""The lesson's worked fixture: seq 3, d_model 4, 2 heads, d_ff 8.

The numbers come from the lesson this course was first described from; they
are small enough to check by hand, and the tests and notebooks pin them.
The block uses identity attention projections and layer norms without a
learned scale or shift (gamma 1, beta 0).
"""

import numpy as np

SEQ, D_MODEL, N_HEADS, D_FF = 3, 4, 2, 8

#: The three input rows (one token each).
INPUT_ROWS = ((1.0, 0.0, 0.5, -1.0), (0.0, 1.0, -0.5, 2.0), (1.0, 1.0, 0.0, 0.0))

#: The FFN applied to the first input row, worked out by hand in the lesson.
FFN_ROW = INPUT_ROWS[0]
FFN_ROW_OUTPUT = (0.4125, -0.1171875, -0.928125, -0.178125)

#: The tie case: two equal keys split the attention evenly, so each query gets
#: the mean of the values (4 + 10) / 2 = 7.
TIE_Q, TIE_K, TIE_V, TIE_OUTPUT = ((1.0,), (1.0,)), ((2.0,), (2.0,)), ((4.0,), (10.0,)), 7.0


def lesson_input(dtype=np.float64):
    """The fixture's input, shape (3, 4)."""
    return np.array(INPUT_ROWS, dtype=dtype)


def lesson_tie_case(dtype=np.float64):
    """``(q, k, v)`` of the tie case, each shape (2, 1)."""
    return tuple(np.array(a, dtype=dtype) for a in (TIE_Q, TIE_K, TIE_V))


def lesson_ffn_params(dtype=np.float64):
    """The lesson's FFN weights in (in, out) orientation: w1 (4, 8), b1 (8,), w2 (8, 4), b2 (4,).

    The lesson fills its (out, in) matrices entry by entry, k = 0..31:
    ``W1[k] = ((5k + 1) mod 9) / 8 - 0.5`` and ``W2[k] = ((7k + 2) mod 9) / 8 - 0.5``,
    with ``b1 = 0.1`` and ``b2 = -0.1`` everywhere.
    """
    k = np.arange(D_MODEL * D_FF)
    w1_out_in = (((5 * k + 1) % 9) / 8 - 0.5).reshape(D_FF, D_MODEL)
    w2_out_in = (((7 * k + 2) % 9) / 8 - 0.5).reshape(D_MODEL, D_FF)
    return {
        "w1": w1_out_in.T.astype(dtype),  # (d_model, d_ff)
        "b1": np.full(D_FF, 0.1, dtype=dtype),
        "w2": w2_out_in.T.astype(dtype),  # (d_ff, d_model)
        "b2": np.full(D_MODEL, -0.1, dtype=dtype),
    }


def lesson_block_params(dtype=np.float64, identity_attention=None):
    """The whole fixture block: identity attention (``attn`` None), the lesson's FFN, plain norms.

    ``identity_attention=True`` spells the identity projections out as arrays
    (eye weights, zero biases), which computes the same numbers and can be
    converted to PyTorch's layout.
    """
    attn = None
    if identity_attention:
        eye, zero = np.eye(D_MODEL, dtype=dtype), np.zeros(D_MODEL, dtype=dtype)
        attn = {k: (eye.copy() if k[0] == "w" else zero.copy()) for k in
                ("w_q", "b_q", "w_k", "b_k", "w_v", "b_v", "w_o", "b_o")}
    norm = {"gamma": np.ones(D_MODEL, dtype=dtype), "beta": np.zeros(D_MODEL, dtype=dtype)}
    return {"attn": attn, "ffn": lesson_ffn_params(dtype), "norm1": norm,
            "norm2": {k: v.copy() for k, v in norm.items()}}
