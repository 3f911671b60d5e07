"""Lesson 01: random queries and keys, and how scaling and temperature shape the weights."""

import numpy as np

import encoder_lib as el


def random_queries_keys(d_k, seq=6, seed=0):
    """Seeded standard-normal queries and keys, each (seq, d_k); one fixed draw per d_k."""
    rng = np.random.default_rng([seed, d_k])
    return rng.standard_normal((seq, d_k)), rng.standard_normal((seq, d_k))


def attention_weights(q, k, scale=True, temperature=1.0):
    """(seq, seq) weights ``softmax(q k^T / (s T))``, s = sqrt(d_k) if ``scale`` else 1, via el.

    ``el.scaled_dot_product_attention`` always divides by sqrt(d_k); turning the
    scaling off multiplies q by sqrt(d_k) to undo it, and the temperature
    divides q, which divides every score by the same number.
    """
    d_k = q.shape[-1]
    q = q / temperature if scale else q * (np.sqrt(d_k) / temperature)
    seq = k.shape[-2]
    _, weights = el.scaled_dot_product_attention(q, k, np.eye(seq))
    return weights


def score_std(q, k, scale=True, temperature=1.0):
    """The spread (std) of the scores the softmax sees: ``q k^T / (s T)``, s = sqrt(d_k) if ``scale`` else 1.

    Random queries and keys have dot products whose spread grows like sqrt(d_k); the scaling undoes that.

    >>> q, k = random_queries_keys(256)
    >>> round(score_std(q, k, scale=False) / score_std(q, k), 1)  # sqrt(256)
    16.0
    """
    d_k = q.shape[-1]
    return float((q @ np.swapaxes(k, -1, -2)).std() / ((np.sqrt(d_k) if scale else 1.0) * temperature))


def entropy(p):
    """Entropy in nats of the probability rows of ``p`` (0 log 0 counted as 0)."""
    p = np.asarray(p)
    logs = np.log(np.where(p > 0, p, 1.0))
    return -(p * logs).sum(axis=-1)


def largest_weight_by_d_k(d_ks=(1, 4, 16, 64, 256), batch=500, seq=6, seed=3):
    """The largest weight of a query's row, averaged over ``batch`` random sequences, for each ``d_k``.

    Returns ``{"scaled": [...], "not scaled": [...]}``, one mean per ``d_k``:
    with ``el.scaled_dot_product_attention``'s ``1/sqrt(d_k)``, and without it
    (``q`` multiplied by ``sqrt(d_k)`` undoes the library's scaling). An even
    split over ``seq`` keys gives ``1/seq``, a one-hot row 1.
    """
    rng = np.random.default_rng(seed)
    largest = {"scaled": [], "not scaled": []}
    for d_k in d_ks:
        q = rng.standard_normal((batch, seq, d_k))  # (batch, seq, d_k)
        k = rng.standard_normal((batch, seq, d_k))
        v = np.eye(seq)  # (seq, d_v): the values do not matter here
        _, scaled = el.scaled_dot_product_attention(q, k, v)  # (batch, seq, seq)
        _, plain = el.scaled_dot_product_attention(q * np.sqrt(d_k), k, v)  # scores not divided
        largest["scaled"].append(float(scaled.max(axis=-1).mean()))
        largest["not scaled"].append(float(plain.max(axis=-1).mean()))
    return largest
