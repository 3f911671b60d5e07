"""Lesson 08: what all-MiniLM-L6-v2's heads read, its rows after post-norm, and its sentence vectors."""

import numpy as np

import encoder_lib as el

from ..pretrained import encode


#: The two ways lesson 08 makes one vector per sentence from a layer's token vectors.
POOLINGS = {"mean": "mean of the tokens", "cls": "[CLS] vector"}


def similarities(texts):
    """``{(pooling, layer): (n, n)}``: the cosine similarity of every two texts' vectors after each layer.

    The texts run once through all-MiniLM-L6-v2 (``encoder_lib.pretrained.encode``,
    one padded batch); layer 0 is the embedding layer's output, 1 to 6 the
    blocks'. ``pooling`` "mean" is the mean over the real tokens
    (``el.mean_pool`` with the padding mask), "cls" the ``[CLS]`` token's
    vector. Mean pooling after layer 6 is the model's own sentence vector.

    >>> s = similarities(["a cat", "a kitten", "a car"])
    >>> len(s), s["mean", 6].shape, s["mean", 6].diagonal().round(6)
    (14, (3, 3), array([1., 1., 1.], dtype=float32))
    """
    out = encode(list(texts))
    found = {}
    for layer, hidden in enumerate(out.hidden_states):  # (n, seq, d_model) each
        for pooling, vectors in (("mean", el.mean_pool(hidden, out.padding_mask)), ("cls", hidden[:, 0])):
            unit = vectors / np.linalg.norm(vectors, axis=-1, keepdims=True)  # (n, d_model), each of length 1
            found[pooling, layer] = unit @ unit.T
    return found


def paraphrase_gaps(similarity, pairs):
    """``{pooling: (layers + 1,)}``: how far the paraphrases' mean similarity is above the other pairs', by layer.

    ``similarity`` is what ``similarities`` returns, ``pairs`` the
    paraphrases' ``(i, j)`` (see ``pair_gap``).

    >>> s = {("mean", 0): np.eye(3), ("cls", 0): np.eye(3)}
    >>> paraphrase_gaps(s, [(0, 1)])
    {'mean': array([0.]), 'cls': array([0.])}
    """
    layers = 1 + max(layer for _, layer in similarity)
    return {pooling: np.array([np.subtract(*pair_gap(similarity[pooling, k], pairs)) for k in range(layers)])
            for pooling in POOLINGS}


def text_attention(encoding, index):
    """``(tokens, weights)`` of text ``index`` of an ``Encoding``, its padding left out.

    ``tokens`` are its real tokens (``[CLS]`` and ``[SEP]`` included),
    ``weights`` (layers, heads, n, n) every head's weights between them.
    """
    real = np.flatnonzero(~encoding.padding_mask[index])  # the text's own tokens
    tokens = tuple(encoding.tokens[index][i] for i in real)
    weights = np.stack([w[index][:, real][:, :, real] for w in encoding.attention_weights])  # (layers, heads, n, n)
    return tokens, weights


def pair_gap(similarity, pairs):
    """``(mean over the pairs, mean over every other pair of different texts)`` of a cosine-similarity matrix."""
    n = similarity.shape[0]
    chosen = np.zeros((n, n), dtype=bool)
    for i, j in pairs:
        chosen[i, j] = chosen[j, i] = True
    others = ~chosen & ~np.eye(n, dtype=bool)
    return float(similarity[chosen].mean()), float(similarity[others].mean())


#: What lesson 08 asks of every head: how much weight a word piece puts on each of these keys.
PATTERNS = ("previous token", "next token", "[CLS]", "[SEP]", "same word elsewhere")


def head_patterns(encoding):
    """Each head's mean weight on the previous token, the next, [CLS], [SEP] and the same word elsewhere.

    Every word piece of every text of ``encoding`` (every real token but
    ``[CLS]`` and ``[SEP]``) is a query; for "same word elsewhere" only those
    whose token occurs again in their text. Returns ``(means, counts)``:
    ``means[pattern]`` is (layers, heads), ``counts[pattern]`` how many
    queries it averages.
    """
    weights = np.stack(encoding.attention_weights)  # (layers, texts, heads, seq, seq)
    totals = {name: np.zeros(weights.shape[0:1] + weights.shape[2:3]) for name in PATTERNS}  # (layers, heads)
    counts = dict.fromkeys(PATTERNS, 0)
    for i, tokens in enumerate(encoding.tokens):
        n = int((~encoding.padding_mask[i]).sum())  # real tokens: [CLS], the word pieces, [SEP]
        for q in range(1, n - 1):  # each word piece as the query
            row = weights[:, i, :, q, :n]  # (layers, heads, n): what every head reads from it
            keys = {"previous token": [q - 1], "next token": [q + 1], "[CLS]": [0], "[SEP]": [n - 1],
                    "same word elsewhere": [k for k in range(1, n - 1) if k != q and tokens[k] == tokens[q]]}
            for name, where in keys.items():
                if where:
                    totals[name] += row[..., where].sum(axis=-1)
                    counts[name] += 1
    return {name: totals[name] / max(counts[name], 1) for name in PATTERNS}, counts


def top_heads(mean, k=3):
    """The ``k`` (layer, head, value) with the largest values of a (layers, heads) array.

    Layers count from 1, as the blocks do (layer k is block k, whose weights
    are ``attention_weights[k - 1]``); heads count from 0, as in lesson 02 and
    as the arrays index them.

    >>> mean = np.zeros((6, 12)); mean[0, 2] = 1.0
    >>> top_heads(mean, k=1)  # block 1's head 2: attention_weights[0][:, 2]
    [(1, 2, 1.0)]
    """
    order = np.argsort(mean, axis=None)[::-1][:k]
    return [(int(t // mean.shape[1]) + 1, int(t % mean.shape[1]), float(mean.flat[t])) for t in order]


def _formatted(value, fmt):
    shown = format(value, fmt)
    return format(0.0, fmt) if float(shown) == 0 else shown  # no "-0.00"


def _range(values, fmt):
    return f"{_formatted(values.min(), fmt)} to {_formatted(values.max(), fmt)}"


def post_norm_table(traces, layers, real, eps):
    """Lesson 08's two tables of what each block's last layer norm does to the real tokens' rows.

    ``traces`` are ``trace_encoder_block`` dicts of a post-norm model,
    ``layers`` its params, ``real`` the (batch, seq) mask of real tokens.
    First table: the sum ``sum2`` the norm receives, its rows' variances, and
    the same rows normalised without gamma and beta (mean 0, within float32
    rounding; variance 1). Second: the block's output rows, their means and
    variances beside mean(beta), mean(gamma²), gamma's range and the RMS.
    """
    lines = ["block   sum2's rows: variance      normalised rows: largest |mean|   variance"]
    for k, trace in enumerate(traces, start=1):
        sums = trace["sum2"][real]  # (real tokens, d_model)
        plain = el.layer_norm(sums, eps=eps)  # no gamma, no beta
        if np.abs(plain.mean(axis=-1)).max() >= 1e-6:  # float32 rounding, whose digits vary by machine
            raise AssertionError(f"block {k}: normalised rows with a mean of 1e-6 or more")
        lines.append(f"{k:5d}   {_range(sums.var(axis=-1), '6.2f')}        below 1e-6                  "
                     f"{_range(plain.var(axis=-1), '.4f')}")
    lines += ["", "block   output rows: mean     mean(beta)   output rows: variance   mean(gamma²)   gamma's entries   RMS"]
    for k, (trace, params) in enumerate(zip(traces, layers), start=1):
        out = trace["output"][real]
        gamma, beta = params["norm2"]["gamma"], params["norm2"]["beta"]
        lines.append(f"{k:5d}   {_range(out.mean(axis=-1), '+.3f')}   {beta.mean():+.3f}       "
                     f"{_range(out.var(axis=-1), '.2f')}            {np.mean(gamma ** 2):.2f}           "
                     f"{_range(gamma, '.2f')}      {np.sqrt(np.mean(out ** 2)):.2f}")
    return "\n".join(lines)


def head_pattern_table(encoding, k=3):
    """Lesson 08's table: for each pattern, the ``k`` heads that follow it most, and the median head."""
    means, counts = head_patterns(encoding)
    lines = [f"{counts['[CLS]']} word pieces as queries, {counts['same word elsewhere']} of them words that occur again; "
             "layers count from 1, heads from 0", ""]
    for name in PATTERNS:
        best = ",  ".join(f"layer {layer} head {head}: {value:.2f}" for layer, head, value in top_heads(means[name], k))
        lines.append(f"{name:20s} {best};   median {np.median(means[name]):.2f}")
    return "\n".join(lines)


def _special_keys(encoding):
    """``(special, queries)``, both (n, seq): each text's ``[CLS]`` and ``[SEP]``, and its word pieces."""
    real = ~encoding.padding_mask  # (n, seq)
    positions = np.arange(real.shape[1])
    special = (positions == 0) | (positions == real.sum(axis=1, keepdims=True) - 1)  # [CLS] and [SEP]
    return special, real & ~special


def special_token_shares(encoding, layers, n_heads):
    """Each head's share of ``[CLS]`` and ``[SEP]``: in its weights, and in what its keys add to its output.

    For every word piece of ``encoding`` as the query (as ``head_patterns``),
    the weight it puts on ``[CLS]`` and ``[SEP]``, and their share of
    ``sum_j w_j * |f_j|``, where ``f_j`` is what key ``j`` hands the block:
    its value vector through the head's rows of ``w_o`` (Kobayashi et al.,
    2020, "Attention is Not Only a Weight"). ``layers`` are the blocks'
    params, whose attention reads ``encoding.hidden_states[k]`` (post-norm).
    Returns ``(weight, norm)``, each (layers, heads), means over the queries.
    """
    special, queries = _special_keys(encoding)
    weight, norm = [], []
    for hidden, params, w in zip(encoding.hidden_states, layers, encoding.attention_weights):
        p = params["attn"]
        v = el.split_heads(hidden.astype(np.float64) @ p["w_v"] + p["b_v"], n_heads)  # (n, heads, seq, d_head)
        f = v @ p["w_o"].reshape(n_heads, v.shape[-1], -1)  # (n, heads, seq, d_model): what each key adds
        added = w * np.linalg.norm(f, axis=-1)[:, :, None, :]  # (n, heads, seq_q, seq_k): weight * |f|
        keys = special[:, None, None, :]
        shares = [(w * keys).sum(axis=-1), (added * keys).sum(axis=-1) / added.sum(axis=-1)]  # (n, heads, seq_q)
        mean = [(s * queries[:, None, :]).sum(axis=(0, 2)) / queries.sum() for s in shares]  # (heads,) each
        weight.append(mean[0])
        norm.append(mean[1])
    return np.array(weight), np.array(norm)


def sink_table(encoding, layers, n_heads, k=3):
    """Lesson 08's table of ``[CLS]`` and ``[SEP]`` as a sink: each layer's median head by weight and by what
    is added, then the ``k`` heads with the most weight there (layers count from 1, heads from 0)."""
    weight, norm = special_token_shares(encoding, layers, n_heads)
    lines = ["layer   median head: weight on [CLS] and [SEP]   share of what the keys add"]
    lines += [f"{layer:5d}   {np.median(w):24.2f}   {np.median(n):26.2f}"
              for layer, (w, n) in enumerate(zip(weight, norm), start=1)]
    lines += [f"{'all':>5s}   {np.median(weight):24.2f}   {np.median(norm):26.2f}", "",
              f"the {k} heads with the most weight on [CLS] and [SEP]:"]
    lines += [f"  layer {layer} head {head}: weight {value:.2f}, share of what the keys add {norm[layer - 1, head]:.2f}"
              for layer, head, value in top_heads(weight, k)]
    return "\n".join(lines)
