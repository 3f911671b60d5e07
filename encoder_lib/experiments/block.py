"""Lesson 05: a toy block (d_model 16, 4 heads, d_ff 64), its steps, padding, and word order."""

import numpy as np

import encoder_lib as el


D_MODEL, N_HEADS, D_FF, SEQ = 16, 4, 64, 6


def toy_block(seed=0, dtype=np.float32):
    """The lesson's toy block and input: ``params`` and ``x`` (SEQ, D_MODEL), embeddings plus positions.

    Drawn in this order from ``np.random.default_rng(seed)``, which the
    notebook repeats with ``el`` calls to get the same numbers.
    """
    rng = np.random.default_rng(seed)
    params = el.init_block_params(D_MODEL, D_FF, rng, dtype=dtype)
    x = rng.standard_normal((SEQ, D_MODEL)).astype(dtype) + el.positional_encoding(SEQ, D_MODEL, dtype)
    return params, x


#: The block's steps in the order they are computed: (trace key, what it is).
STEPS = {
    "post": (
        ("input", "x, the block's input"),
        ("attn_out", "a = MHA(x)"),
        ("sum1", "x + a"),
        ("norm1", "h = LN(x + a)"),
        ("ffn_hidden", "relu(h W1 + b1), width d_ff"),
        ("ffn_out", "f = FFN(h)"),
        ("sum2", "h + f"),
        ("norm2", "output = LN(h + f)"),
    ),
    "pre": (
        ("input", "x, the block's input"),
        ("norm1", "LN(x)"),
        ("attn_out", "a = MHA(LN(x))"),
        ("sum1", "x1 = x + a"),
        ("norm2", "LN(x1)"),
        ("ffn_hidden", "relu(LN(x1) W1 + b1), width d_ff"),
        ("ffn_out", "f = FFN(LN(x1))"),
        ("sum2", "output = x1 + f"),
    ),
}


def step_traces(x, params, n_heads=N_HEADS):
    """``{norm: trace}``: the block's intermediates (``el.trace_encoder_block``) in post-norm and in pre-norm.

    >>> params, x = toy_block()
    >>> traces = step_traces(x, params)
    >>> [key for key, _ in STEPS["pre"]] == [key for key in traces["pre"] if key in dict(STEPS["pre"])]
    True
    """
    return {norm: el.trace_encoder_block(x, params, n_heads, norm=norm) for norm in STEPS}


REAL, MAX_PAD = 3, 5


def padding_experiment(seed=0, n_heads=N_HEADS, dtype=np.float32):
    """Three real tokens followed by 0 to MAX_PAD padding slots of random junk, with and without the mask.

    The model and the three tokens are the lesson's toy block and the first
    three rows of its input (``toy_block(seed)``). Returns
    ``(reference, inputs, runs)``: ``reference`` (REAL, D_MODEL) is the block's
    output for the three tokens alone; ``inputs[n_pad]`` the (REAL + n_pad,
    D_MODEL) input; ``runs[n_pad, use_mask]`` the pair (the real tokens' outputs
    (REAL, D_MODEL), the attention weights (n_heads, seq, seq)).
    """
    rng = np.random.default_rng(seed)
    params = el.init_block_params(D_MODEL, D_FF, rng, dtype=dtype)
    real = rng.standard_normal((REAL, D_MODEL)).astype(dtype)  # the sentence's three tokens
    reference = el.encoder_block(real + el.positional_encoding(REAL, D_MODEL, dtype), params, n_heads)
    inputs, runs = {}, {}
    for n_pad in range(MAX_PAD + 1):
        # different junk for every amount of padding: whatever a padding slot holds must not matter
        junk = 3 * np.random.default_rng(100 + n_pad).standard_normal((n_pad, D_MODEL)).astype(dtype)
        seq = REAL + n_pad
        inputs[n_pad] = x = np.concatenate([real, junk]) + el.positional_encoding(seq, D_MODEL, dtype)
        mask = np.arange(seq) >= REAL  # (seq,): True = padding
        for use_mask in (True, False):
            trace = el.trace_encoder_block(x, params, n_heads, padding_mask=mask if use_mask else None)
            runs[n_pad, use_mask] = (trace["output"][:REAL], trace["attn_weights"])
    return reference, inputs, runs


#: shuffle 0 is the original order
N_SHUFFLES = 3


def permutations(seq=SEQ, count=N_SHUFFLES):
    """``range(seq)`` itself, then ``count`` distinct seeded shuffles of it (none of them the identity)."""
    perms = [np.arange(seq)]
    seed = 0
    while len(perms) <= count:
        perm = np.random.default_rng(seed).permutation(seq)
        seed += 1
        if not any(np.array_equal(perm, p) for p in perms):
            perms.append(perm)
    return perms


def shuffle_experiment(seed=0, n_heads=N_HEADS):
    """The toy block on shuffled tokens: does ``block(shuffle(x))`` equal ``shuffle(block(x))``?

    The tokens are the toy input without its positions (``toy_block(seed)``
    draws the same numbers). Returns ``(perms, runs)``: ``perms`` from
    ``permutations()``, and ``runs[k, use_pe]`` the pair (block(shuffled
    tokens [+ PE]), shuffled block(tokens [+ PE])), each (SEQ, D_MODEL).
    """
    rng = np.random.default_rng(seed)
    params = el.init_block_params(D_MODEL, D_FF, rng)
    tokens = rng.standard_normal((SEQ, D_MODEL)).astype(np.float32)  # embeddings only, no positions
    pe = el.positional_encoding(SEQ, D_MODEL)
    perms, runs = permutations(), {}
    for k, perm in enumerate(perms):
        for use_pe in (False, True):
            add = pe if use_pe else 0  # positions belong to the slots, so they are added after shuffling
            of_shuffled = el.encoder_block(tokens[perm] + add, params, n_heads)
            shuffled_out = el.encoder_block(tokens + add, params, n_heads)[perm]
            runs[k, use_pe] = (of_shuffled, shuffled_out)
    return perms, runs
