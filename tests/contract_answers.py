"""Forty wrong answers and ten right ones, written for issue 49 before its change to the checks, each wrong along one
dimension of the contract an exercise's library function keeps beyond its values on one call (issue 49, item 1), or
along one that item 1 does not list:

- ``state``: the result depends on earlier calls (a cache keyed by shape or by ``id``, a setting kept from the
  first call);
- ``random``: random numbers drawn inside (dropout, stochastic depth, LayerDrop, a random tie-break);
- ``view``: the result shares memory with an input, or with something kept between calls;
- ``dtype``: a float32 or float16 input does not come back in its own dtype;
- ``layout``: Fortran-ordered, transposed, step-sliced or read-only inputs go wrong;
- ``smallest``: the smallest inputs the docstring allows (0-d, seq 1, one head, d_model 1, a fully masked row);
- ``refusal``: an input the library refuses (naming the argument) gets a result instead;
- ``magnitude``: inputs far from the lessons' (row means of 1e4 and 1e8, 600 positions) lose precision or fail;
- ``string``: a string argument compared with ``is``: right for a literal, wrong for the same string built at run
  time;
- found beyond item 1: ``names`` (the arguments renamed, so that a call by the library's argument names fails) and
  ``type`` (a numpy subclass returned, a masked array whose hidden entries hold garbage).

Every wrong answer is right in float64, on C-contiguous writable inputs, called once, at the lessons' sizes: only
its dimension is wrong. The right ones are written unlike the lessons' solutions (einsum, a log-sum-exp, np.split and
np.stack, functools.reduce) and keep every dimension.

``CAUSES[key]`` lists the words an accurate explanation may contain, written from the answer's own ``cause``
sentence before the feedback on these answers was read (its sentences were read only to spell the words); a verified
cause without any of them counts as misleading. ``tests/test_contract_answers.py`` holds the measures;
``benchmarks/bench_feedback.py`` prints the table.
"""

from dataclasses import dataclass

DIMENSIONS = ("state", "random", "view", "dtype", "layout", "smallest", "refusal", "magnitude", "string", "names",
              "type")


@dataclass(frozen=True)
class Contract:
    exercise: str
    key: str
    dimension: str
    cause: str
    source: str


WRONG = [
    # ---------------------------------------------------------------- lesson 01
    Contract("softmax", "softmax_cache_by_shape", "state",
             "It keeps the weights of the first input of each shape and axis, and returns a copy of them for every "
             "later input of that shape.", '''
_weights = {}


def softmax(x, axis=-1):
    key = (x.shape, axis)
    if key not in _weights:  # computed once per shape
        e = np.exp(x - x.max(axis=axis, keepdims=True))
        _weights[key] = e / e.sum(axis=axis, keepdims=True)
    return _weights[key].copy()
'''),
    Contract("softmax", "softmax_random_tie_break", "random",
             "It adds random noise of 1e-12 to the scores to break ties: the same input gives other weights on every "
             "call.", '''
def softmax(x, axis=-1):
    x = x + np.random.uniform(-1e-12, 1e-12, x.shape).astype(x.dtype)  # break ties at random
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)
'''),
    Contract("softmax", "softmax_into_zeros", "dtype",
             "It writes the weights into np.zeros(x.shape), float64 whatever the input's dtype.", '''
def softmax(x, axis=-1):
    out = np.zeros(x.shape)
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    out[...] = e / e.sum(axis=axis, keepdims=True)
    return out
'''),
    Contract("scaled_dot_product_attention", "sdpa_divides_by_np_sqrt", "dtype",
             "It divides by np.sqrt(d_k), a numpy float64 number: NumPy 2 then computes float32 scores in float64, "
             "and both results come back float64.", '''
def scaled_dot_product_attention(q, k, v):
    scores = np.matmul(q, np.swapaxes(k, -1, -2)) / np.sqrt(q.shape[-1])
    weights = softmax(scores)
    return weights @ v, weights
'''),
    # ---------------------------------------------------------------- lesson 02
    Contract("split_heads", "split_heads_returns_a_view", "view",
             "It returns x.reshape(...) with two axes swapped, a view of x: writing into the heads writes into x.",
             '''
def split_heads(x, n_heads):
    *lead, seq, d_model = x.shape
    if d_model % n_heads:
        raise ValueError(f"d_model {d_model} is not divisible by n_heads {n_heads}")
    return x.reshape(*lead, seq, n_heads, d_model // n_heads).swapaxes(-2, -3)
'''),
    Contract("split_heads", "split_heads_as_strided_c_order", "layout",
             "It builds the heads with as_strided from strides computed for a C-ordered x: a Fortran-ordered, "
             "transposed or sliced x is read at the wrong places.", '''
def split_heads(x, n_heads):
    *lead, seq, d_model = x.shape
    if d_model % n_heads:
        raise ValueError(f"d_model {d_model} is not divisible by n_heads {n_heads}")
    d_head, size = d_model // n_heads, x.itemsize
    lead_strides = [size * int(np.prod(x.shape[i + 1:])) for i in range(len(lead))]
    strides = (*lead_strides, d_head * size, d_model * size, size)  # as C order lays x out
    heads = np.lib.stride_tricks.as_strided(x, (*lead, n_heads, seq, d_head), strides)
    return heads.copy()
'''),
    Contract("split_heads", "split_heads_drops_leftover_columns", "refusal",
             "It drops the columns left over when d_model is not divisible by n_heads, where the library refuses.",
             '''
def split_heads(x, n_heads):
    *lead, seq, d_model = x.shape
    d_head = d_model // n_heads
    x = x[..., : n_heads * d_head]  # whatever does not fill a head is left out
    return np.swapaxes(x.reshape(*lead, seq, n_heads, d_head), -2, -3).copy()
'''),
    Contract("merge_heads", "merge_heads_view_at_one_head", "view",
             "It swaps the axes and reshapes, which is a copy in general but a view of x where a head or a position "
             "is alone (one head, seq 1).", '''
def merge_heads(x):
    *lead, n_heads, seq, d_head = x.shape
    return np.reshape(np.swapaxes(x, -3, -2), (*lead, seq, n_heads * d_head))
'''),
    Contract("merge_heads", "merge_heads_frombuffer", "layout",
             "It reads x's memory as a buffer (np.frombuffer), which holds x's numbers in C order only for a "
             "C-contiguous x.", '''
def merge_heads(x):
    *lead, n_heads, seq, d_head = x.shape
    flat = np.frombuffer(x, dtype=x.dtype).reshape(x.shape)  # x's numbers as they lie in memory
    return np.swapaxes(flat, -3, -2).reshape(*lead, seq, n_heads * d_head).copy()
'''),
    Contract("multi_head_attention", "mha_one_head_shortcut", "smallest",
             "With one head it returns lesson 01's attention directly, whose weights have no head axis: (..., seq, "
             "seq) instead of (..., 1, seq, seq).", '''
def multi_head_attention(x, n_heads, params=None):
    if params is None:
        q = k = v = x
    else:
        q, k, v = (x @ params["w_" + n] + params["b_" + n] for n in "qkv")
    if n_heads == 1:  # one head is plain attention
        out, weights = el.scaled_dot_product_attention(q, k, v)
    else:
        out, weights = el.scaled_dot_product_attention(split_heads(q, n_heads), split_heads(k, n_heads),
                                                       split_heads(v, n_heads))
        out = merge_heads(out)
    if params is not None:
        out = out @ params["w_o"] + params["b_o"]
    return out, weights
'''),
    Contract("multi_head_attention", "mha_uneven_heads", "refusal",
             "It splits d_model into heads with np.array_split, which gives heads of unequal widths where d_model "
             "is not divisible by n_heads, where the library refuses.", '''
def multi_head_attention(x, n_heads, params=None):
    if params is None:
        q = k = v = x
    else:
        q, k, v = (x @ params["w_" + n] + params["b_" + n] for n in "qkv")
    outs, weights = [], []
    for qh, kh, vh in zip(*(np.array_split(t, n_heads, axis=-1) for t in (q, k, v))):
        out, w = el.scaled_dot_product_attention(qh, kh, vh)
        outs.append(out)
        weights.append(w)
    out = np.concatenate(outs, axis=-1)
    if params is not None:
        out = out @ params["w_o"] + params["b_o"]
    return out, np.stack(weights, axis=-3)
'''),
    # ---------------------------------------------------------------- lesson 03
    Contract("feed_forward", "ffn_unknown_activation_is_relu", "refusal",
             "Any activation but \"gelu\" gets ReLU: an unknown one (\"swish\", a typo) is not refused.", '''
def feed_forward(x, params, activation="relu"):
    hidden = x @ params["w1"] + params["b1"]
    hidden = el.gelu(hidden) if activation == "gelu" else np.maximum(hidden, 0)
    return hidden @ params["w2"] + params["b2"]
'''),
    Contract("feed_forward", "ffn_activation_is_gelu", "string",
             "It compares the activation with `is \"gelu\"`: a \"gelu\" built at run time is not that object, and "
             "gets ReLU.", '''
def feed_forward(x, params, activation="relu"):
    hidden = x @ params["w1"] + params["b1"]
    hidden = el.gelu(hidden) if activation is "gelu" else np.maximum(hidden, 0)
    return hidden @ params["w2"] + params["b2"]
'''),
    Contract("feed_forward", "ffn_params_renamed", "names",
             "Its second argument is called `weights`, not `params`: a call by the statement's argument names "
             "(params=...) fails.", '''
def feed_forward(x, weights, activation="relu"):
    hidden = x @ weights["w1"] + weights["b1"]
    hidden = np.maximum(hidden, 0) if activation == "relu" else el.gelu(hidden)
    return hidden @ weights["w2"] + weights["b2"]
'''),
    Contract("gelu", "gelu_float16_through_erf", "dtype",
             "It keeps float32 (a Python float for sqrt 2) but not float16: SciPy's erf returns float32 for a "
             "float16 input.", '''
def gelu(x):
    return 0.5 * x * (1 + erf(x / math.sqrt(2)))
'''),
    Contract("gelu", "gelu_atleast_1d", "smallest",
             "It makes its input at least 1-D, so a 0-d input comes back with shape (1,).", '''
def gelu(x):
    x = np.atleast_1d(x)
    return 0.5 * x * (1 + erf(x / np.sqrt(2)))
'''),
    # ---------------------------------------------------------------- lesson 04
    Contract("layer_norm", "layer_norm_cache_by_id", "state",
             "It keeps its last result under the ids of its inputs: a new array that Python puts at a freed array's "
             "address, or the same array with new values, gets the old result.", '''
_last = {}


def layer_norm(x, gamma=None, beta=None, eps=1e-5):
    key = (id(x), id(gamma), id(beta), eps)
    if key not in _last:  # the same arrays as last time: the same result
        _last.clear()
        y = (x - x.mean(axis=-1, keepdims=True)) / np.sqrt(x.var(axis=-1, keepdims=True) + eps)
        if gamma is not None:
            y = y * gamma
        if beta is not None:
            y = y + beta
        _last[key] = y
    return _last[key].copy()
'''),
    Contract("layer_norm", "layer_norm_rows_into_empty_like", "layout",
             "It writes each row into out.reshape(-1, d) of out = np.empty_like(x): for a Fortran-ordered x, "
             "empty_like is Fortran-ordered too, the reshape is a copy, and out is returned unwritten.", '''
def layer_norm(x, gamma=None, beta=None, eps=1e-5):
    d = x.shape[-1]
    out = np.empty_like(x)
    rows, out_rows = x.reshape(-1, d), out.reshape(-1, d)
    for i, row in enumerate(rows):
        y = (row - row.mean()) / np.sqrt(row.var() + eps)
        out_rows[i] = y * (1 if gamma is None else gamma) + (0 if beta is None else beta)
    return out
'''),
    Contract("layer_norm", "layer_norm_one_pass_variance", "magnitude",
             "It takes the variance as E[x^2] - E[x]^2 in one pass: at a row mean of 1e4 the subtraction loses 8 "
             "digits, at 1e8 all of them.", '''
def layer_norm(x, gamma=None, beta=None, eps=1e-5):
    mean = x.mean(axis=-1, keepdims=True)
    var = (x * x).mean(axis=-1, keepdims=True) - mean * mean
    y = (x - mean) / np.sqrt(var + eps)
    if gamma is not None:
        y = y * gamma
    if beta is not None:
        y = y + beta
    return y
'''),
    Contract("post_norm", "post_norm_sublayer_cached_by_shape", "state",
             "It keeps the sub-layer's output for the first x of each shape and reuses it for every later x of "
             "that shape.", '''
_sub = {}


def post_norm(x, sublayer, gamma=None, beta=None, eps=1e-5):
    if x.shape not in _sub:  # the sub-layer is the expensive part: once per shape
        _sub[x.shape] = sublayer(x)
    return layer_norm(x + _sub[x.shape], gamma, beta, eps)
'''),
    Contract("pre_norm", "pre_norm_float_result", "dtype",
             "It returns np.asarray(..., dtype=float), float64 whatever the input's dtype.", '''
def pre_norm(x, sublayer, gamma=None, beta=None, eps=1e-5):
    return np.asarray(x + sublayer(layer_norm(x, gamma, beta, eps)), dtype=float)
'''),
    # ---------------------------------------------------------------- lesson 05
    Contract("masked_softmax", "masked_softmax_writes_then_restores", "layout",
             "It writes -inf into the caller's scores, computes, then writes the scores back: nothing changes in the "
             "end, but a read-only scores array raises.", '''
def masked_softmax(scores, padding_mask=None):
    if padding_mask is None:
        return softmax(scores)
    padded = np.broadcast_to(padding_mask[..., None, :], scores.shape)
    kept = scores[padded]
    scores[padded] = -np.inf  # for the softmax only: put back below
    top = scores.max(axis=-1, keepdims=True)
    e = np.exp(scores - np.where(np.isfinite(top), top, 0.0))
    scores[padded] = kept
    total = e.sum(axis=-1, keepdims=True)
    return e / np.where(total == 0, 1.0, total)
'''),
    Contract("masked_softmax", "masked_softmax_returns_masked_array", "type",
             "It returns numpy's MaskedArray: its padded entries are masked, not 0, and hold the scores' "
             "numbers underneath.", '''
def masked_softmax(scores, padding_mask=None):
    if padding_mask is None:
        return softmax(scores)
    s = np.ma.masked_array(scores, mask=np.broadcast_to(padding_mask[..., None, :], scores.shape))
    e = np.ma.exp(s - s.max(axis=-1, keepdims=True).filled(0.0))
    w = e / e.sum(axis=-1, keepdims=True)
    return np.ma.where(np.ma.getmaskarray(w), 0.0, w)
'''),
    Contract("positional_encoding", "positional_same_table_object", "view",
             "It keeps each table it made and returns that same array again: a caller who adds the embeddings in "
             "place changes every later result.", '''
_tables = {}


def positional_encoding(seq_len, d_model):
    if (seq_len, d_model) not in _tables:
        pos = np.arange(seq_len)[:, None]
        angle = pos / 10000 ** (np.arange(0, d_model, 2) / d_model)
        pe = np.zeros((seq_len, d_model))
        pe[:, 0::2] = np.sin(angle)
        pe[:, 1::2] = np.cos(angle[:, : d_model // 2])
        _tables[seq_len, d_model] = pe
    return _tables[seq_len, d_model]
'''),
    Contract("positional_encoding", "positional_table_of_512", "magnitude",
             "It computes a table of 512 positions once per d_model and returns a copy of its first seq_len rows: "
             "past 512 positions the table is too short.", '''
_tables = {}


def positional_encoding(seq_len, d_model):
    if d_model not in _tables:  # BERT's 512 positions, once
        pos = np.arange(512)[:, None]
        angle = pos / 10000 ** (np.arange(0, d_model, 2) / d_model)
        pe = np.zeros((512, d_model))
        pe[:, 0::2] = np.sin(angle)
        pe[:, 1::2] = np.cos(angle[:, : d_model // 2])
        _tables[d_model] = pe
    return _tables[d_model][:seq_len].copy()
'''),
    Contract("positional_encoding", "positional_arguments_renamed", "names",
             "Its arguments are called n_positions and dim: a call by the statement's names (seq_len=..., "
             "d_model=...) fails.", '''
def positional_encoding(n_positions, dim):
    angle = np.arange(n_positions)[:, None] / 10000 ** (np.arange(0, dim, 2) / dim)
    pe = np.zeros((n_positions, dim))
    pe[:, 0::2] = np.sin(angle)
    pe[:, 1::2] = np.cos(angle[:, : dim // 2])
    return pe
'''),
    Contract("encoder_block", "block_keeps_its_first_n_heads", "state",
             "It keeps the number of heads of its first call in a module-level setting and uses it for every later "
             "call.", '''
SETTINGS = {}


def encoder_block(x, params, n_heads, norm="post", padding_mask=None):
    SETTINGS.setdefault("n_heads", n_heads)  # set once, like a config

    def attention(h):
        return el.multi_head_attention(h, SETTINGS["n_heads"], params["attn"], padding_mask=padding_mask)[0]

    def ffn(h):
        return el.feed_forward(h, params["ffn"])

    add_norm = el.post_norm if norm == "post" else el.pre_norm
    x = add_norm(x, attention, params["norm1"]["gamma"], params["norm1"]["beta"])
    return add_norm(x, ffn, params["norm2"]["gamma"], params["norm2"]["beta"])
'''),
    Contract("encoder_block", "block_stochastic_depth", "random",
             "It skips the FFN sub-layer at random one time in ten (stochastic depth, a training trick) with a fresh "
             "np.random.default_rng().", '''
def encoder_block(x, params, n_heads, norm="post", padding_mask=None):
    rng = np.random.default_rng()

    def attention(h):
        return el.multi_head_attention(h, n_heads, params["attn"], padding_mask=padding_mask)[0]

    def ffn(h):
        return el.feed_forward(h, params["ffn"])

    add_norm = el.post_norm if norm == "post" else el.pre_norm
    x = add_norm(x, attention, params["norm1"]["gamma"], params["norm1"]["beta"])
    if rng.random() < 0.1:  # stochastic depth: this block's FFN is skipped
        return x
    return add_norm(x, ffn, params["norm2"]["gamma"], params["norm2"]["beta"])
'''),
    Contract("encoder_block", "block_unknown_norm_is_pre", "refusal",
             "Any norm but \"post\" is taken as pre-norm: an unknown one (\"sandwich\", a typo) is not refused.", '''
def encoder_block(x, params, n_heads, norm="post", padding_mask=None):
    def attention(h):
        return el.multi_head_attention(h, n_heads, params["attn"], padding_mask=padding_mask)[0]

    def ffn(h):
        return el.feed_forward(h, params["ffn"])

    add_norm = el.post_norm if norm == "post" else el.pre_norm
    x = add_norm(x, attention, params["norm1"]["gamma"], params["norm1"]["beta"])
    return add_norm(x, ffn, params["norm2"]["gamma"], params["norm2"]["beta"])
'''),
    Contract("encoder_block", "block_norm_is_pre", "string",
             "It compares the norm with `is \"pre\"`: a \"pre\" built at run time is not that object, and gets "
             "post-norm.", '''
def encoder_block(x, params, n_heads, norm="post", padding_mask=None):
    if norm not in ("post", "pre"):
        raise ValueError(f"norm must be 'post' or 'pre', got {norm!r}")

    def attention(h):
        return el.multi_head_attention(h, n_heads, params["attn"], padding_mask=padding_mask)[0]

    def ffn(h):
        return el.feed_forward(h, params["ffn"])

    add_norm = el.pre_norm if norm is "pre" else el.post_norm
    x = add_norm(x, attention, params["norm1"]["gamma"], params["norm1"]["beta"])
    return add_norm(x, ffn, params["norm2"]["gamma"], params["norm2"]["beta"])
'''),
    # ---------------------------------------------------------------- lesson 06
    Contract("encoder", "encoder_layerdrop", "random",
             "It skips each block with probability 0.1 (LayerDrop, a training trick), drawn from np.random.", '''
def encoder(x, layers, n_heads, norm="post", padding_mask=None):
    for params in layers:
        if np.random.random() < 0.1:  # LayerDrop
            continue
        x = el.encoder_block(x, params, n_heads, norm=norm, padding_mask=padding_mask)
    return x
'''),
    Contract("encoder", "encoder_norm_is_post", "string",
             "It turns the norm into \"post\" or \"pre\" with `norm is \"post\"`: a \"post\" built at run time "
             "becomes \"pre\".", '''
def encoder(x, layers, n_heads, norm="post", padding_mask=None):
    placement = "post" if norm is "post" else "pre"
    for params in layers:
        x = el.encoder_block(x, params, n_heads, norm=placement, padding_mask=padding_mask)
    return x
'''),
    # ---------------------------------------------------------------- lesson 07
    Contract("softmax_grad", "softmax_grad_renormalises", "smallest",
             "It divides the weights by their row's sum first, to be safe: a fully masked row (all zeros), which the "
             "statement names, becomes 0 / 0 = NaN.", '''
def softmax_grad(weights, grad_weights):
    w = weights / weights.sum(axis=-1, keepdims=True)  # rows that sum to exactly 1
    return w * (grad_weights - (grad_weights * w).sum(axis=-1, keepdims=True))
'''),
    Contract("layer_norm_grad", "layer_norm_grad_one_pass_variance", "magnitude",
             "It takes the variance as E[x^2] - E[x]^2: at a row mean of 1e4 it loses 8 digits, at 1e8 all.", '''
def layer_norm_grad(x, grad_out, gamma=None, beta=None, eps=1e-5):
    d = x.shape[-1]
    mean = x.mean(axis=-1, keepdims=True)
    sigma = np.sqrt((x * x).mean(axis=-1, keepdims=True) - mean * mean + eps)
    xhat = (x - mean) / sigma
    g = grad_out if gamma is None else grad_out * gamma
    grad_x = (g - g.mean(axis=-1, keepdims=True) - xhat * (g * xhat).mean(axis=-1, keepdims=True)) / sigma
    return grad_x, (grad_out * xhat).reshape(-1, d).sum(axis=0), grad_out.reshape(-1, d).sum(axis=0)
'''),
    Contract("layer_norm_grad", "layer_norm_grad_beta_is_grad_out", "view",
             "For a single row (x of shape (d_model,)) it returns grad_out itself as grad_beta: the caller's array, "
             "not a new one.", '''
def layer_norm_grad(x, grad_out, gamma=None, beta=None, eps=1e-5):
    d = x.shape[-1]
    c = x - x.mean(axis=-1, keepdims=True)
    sigma = np.sqrt((c * c).mean(axis=-1, keepdims=True) + eps)
    xhat = c / sigma
    g = grad_out if gamma is None else grad_out * gamma
    grad_x = (g - g.mean(axis=-1, keepdims=True) - xhat * (g * xhat).mean(axis=-1, keepdims=True)) / sigma
    grad_beta = grad_out if grad_out.ndim == 1 else grad_out.reshape(-1, d).sum(axis=0)  # one row: nothing to sum
    return grad_x, (grad_out * xhat).reshape(-1, d).sum(axis=0), grad_beta
'''),
    # ---------------------------------------------------------------- lesson 08
    Contract("mean_pool", "mean_pool_counts_cached_by_shape", "state",
             "It keeps the count of real positions of the first mask of each shape and divides every later batch of "
             "that shape by it.", '''
_counts = {}


def mean_pool(hidden, padding_mask=None):
    if padding_mask is None:
        return hidden.mean(axis=-2)
    if padding_mask.shape not in _counts:  # the real tokens of each sequence, counted once
        _counts[padding_mask.shape] = np.maximum((~padding_mask).sum(axis=-1, keepdims=True), 1).astype(hidden.dtype)
    return np.where(padding_mask[..., None], 0.0, hidden).sum(axis=-2) / _counts[padding_mask.shape]
'''),
    Contract("mean_pool", "mean_pool_reuses_its_output", "view",
             "It writes every result into one array per shape that it keeps (a default argument) and returns it: "
             "the next call of that shape overwrites what an earlier call returned.", '''
def mean_pool(hidden, padding_mask=None, _out={}):
    shape = hidden.shape[:-2] + hidden.shape[-1:]
    out = _out.setdefault((shape, hidden.dtype), np.empty(shape, hidden.dtype))
    keep = np.ones(hidden.shape[:-1], bool) if padding_mask is None else ~padding_mask
    total = (hidden * keep[..., None]).sum(axis=-2)
    out[...] = total / np.maximum(keep.sum(axis=-1), 1)[..., None]
    return out
'''),
    Contract("mean_pool", "mean_pool_divides_by_int_count", "dtype",
             "It divides by the count of real positions, an int64 array: NumPy 2 then makes a float32 sum float64.",
             '''
def mean_pool(hidden, padding_mask=None):
    if padding_mask is None:
        return hidden.mean(axis=-2)
    keep = ~padding_mask[..., None]
    count = np.maximum(keep.sum(axis=-2), 1)
    return np.where(keep, hidden, 0).sum(axis=-2) / count
'''),
    Contract("mean_pool", "mean_pool_one_position_shortcut", "smallest",
             "For a sequence of one position it returns that position's vector, without looking at the mask: a "
             "single padded position should give zeros.", '''
def mean_pool(hidden, padding_mask=None):
    if hidden.shape[-2] == 1:  # one position: its own vector is the mean
        return hidden[..., 0, :].copy()
    if padding_mask is None:
        return hidden.mean(axis=-2)
    keep = (~padding_mask)[..., None].astype(hidden.dtype)
    return (hidden * keep).sum(axis=-2) / np.maximum(keep.sum(axis=-2), 1)
'''),
    Contract("bert_block", "bert_block_one_pass_variance", "magnitude",
             "Its layer norms take the variance as E[h^2] - E[h]^2: rows far from 0 lose their digits.", '''
def bert_block(x, params, n_heads, padding_mask=None):
    def layer_norm(h, norm):
        mean = h.mean(axis=-1, keepdims=True)
        variance = (h * h).mean(axis=-1, keepdims=True) - mean * mean
        return (h - mean) / np.sqrt(variance + 1e-12) * norm["gamma"] + norm["beta"]

    def attention(h, p):
        *lead, seq, d_model = h.shape
        d_head = d_model // n_heads

        def heads(t):
            return np.swapaxes(t.reshape(*lead, seq, n_heads, d_head), -2, -3)

        q, k, v = (heads(h @ p["w_" + n] + p["b_" + n]) for n in "qkv")
        scores = q @ np.swapaxes(k, -1, -2) / math.sqrt(d_head)
        if padding_mask is not None:
            scores = np.where(padding_mask[..., None, None, :], -np.inf, scores)
        top = scores.max(axis=-1, keepdims=True)
        weights = np.exp(scores - np.where(np.isfinite(top), top, 0.0))
        total = weights.sum(axis=-1, keepdims=True)
        weights = weights / np.where(total > 0, total, 1.0)
        out = np.swapaxes(weights @ v, -2, -3).reshape(*lead, seq, d_model)
        return out @ p["w_o"] + p["b_o"]

    def feed_forward(h, p):
        hidden = h @ p["w1"] + p["b1"]
        return 0.5 * hidden * (1 + erf(hidden / math.sqrt(2))) @ p["w2"] + p["b2"]

    x = layer_norm(x + attention(x, params["attn"]), params["norm1"])
    return layer_norm(x + feed_forward(x, params["ffn"]), params["norm2"])
'''),
]


RIGHT = [
    Contract("softmax", "softmax_log_sum_exp_any_dtype", "right", "", '''
def softmax(x, axis=-1):
    top = np.max(x, axis=axis, keepdims=True)
    log_total = top + np.log(np.sum(np.exp(x - top), axis=axis, keepdims=True))
    return np.exp(x - log_total)
'''),
    Contract("scaled_dot_product_attention", "sdpa_einsum_python_scale", "right", "", '''
def scaled_dot_product_attention(q, k, v):
    scores = np.einsum("...qd,...kd->...qk", q, k) * (1 / math.sqrt(q.shape[-1]))
    weights = softmax(scores, axis=-1)
    return np.einsum("...qk,...kv->...qv", weights, v), weights
'''),
    Contract("split_heads", "split_heads_split_and_stack", "right", "", '''
def split_heads(x, n_heads):
    return np.stack(np.split(x, n_heads, axis=-1), axis=-3)  # np.split refuses an uneven split
'''),
    Contract("merge_heads", "merge_heads_concatenate", "right", "", '''
def merge_heads(x):
    return np.concatenate([x[..., h, :, :] for h in range(x.shape[-3])], axis=-1)
'''),
    Contract("feed_forward", "ffn_einsum_table_of_activations", "right", "", '''
ACTIVATIONS = {"relu": lambda h: np.maximum(h, 0), "gelu": lambda h: el.gelu(h)}


def feed_forward(x, params, activation="relu"):
    if activation not in ACTIVATIONS:
        raise ValueError(f"activation must be 'relu' or 'gelu', got {activation!r}")
    hidden = ACTIVATIONS[activation](np.einsum("...i,ij->...j", x, params["w1"]) + params["b1"])
    return np.einsum("...j,ji->...i", hidden, params["w2"]) + params["b2"]
'''),
    Contract("gelu", "gelu_half_plus_half_erf_in_its_dtype", "right", "", '''
def gelu(x):
    return (x * (0.5 + 0.5 * erf(x * math.sqrt(0.5)))).astype(np.result_type(x), copy=False)
'''),
    Contract("layer_norm", "layer_norm_einsum_two_pass", "right", "", '''
def layer_norm(x, gamma=None, beta=None, eps=1e-5):
    d = x.shape[-1]
    centred = x - np.einsum("...i->...", x)[..., None] / d
    variance = np.einsum("...i,...i->...", centred, centred)[..., None] / d
    y = centred / np.sqrt(variance + eps)
    return y * (1 if gamma is None else gamma) + (0 if beta is None else beta)
'''),
    Contract("masked_softmax", "masked_softmax_divide_where", "right", "", '''
def masked_softmax(scores, padding_mask=None):
    keep = np.ones(scores.shape[-1:], bool) if padding_mask is None else ~padding_mask[..., None, :]
    top = np.max(scores, axis=-1, keepdims=True, where=keep, initial=-np.inf)
    e = np.exp(scores - np.where(np.isfinite(top), top, 0), where=keep, out=np.zeros(np.broadcast_shapes(
        scores.shape, keep.shape), scores.dtype))
    total = e.sum(axis=-1, keepdims=True)
    return np.divide(e, total, where=total > 0, out=np.zeros_like(e))
'''),
    Contract("mean_pool", "mean_pool_einsum_weights", "right", "", '''
def mean_pool(hidden, padding_mask=None):
    seq = hidden.shape[-2]
    keep = np.ones(hidden.shape[:-1], hidden.dtype) if padding_mask is None else (~padding_mask).astype(hidden.dtype)
    share = keep / np.maximum(keep.sum(axis=-1, keepdims=True), 1)
    return np.einsum("...s,...sd->...d", share, hidden)
'''),
    Contract("encoder", "encoder_functools_reduce", "right", "", '''
import functools


def encoder(x, layers, n_heads, norm="post", padding_mask=None):
    def block(h, params):
        return el.encoder_block(h, params, n_heads, norm=norm, padding_mask=padding_mask)
    return functools.reduce(block, layers, x)
'''),
]


#: The words an accurate explanation of each wrong answer may contain (see the module's docstring).
CAUSES = {
    "softmax_cache_by_shape": ("earlier call", "between calls", "keeps", "kept"),
    "softmax_random_tie_break": ("random",),
    "softmax_into_zeros": ("float64",),
    "sdpa_divides_by_np_sqrt": ("float64",),
    "split_heads_returns_a_view": ("view",),
    "split_heads_as_strided_c_order": ("contiguous", "Fortran", "layout", "strides"),
    "split_heads_drops_leftover_columns": ("refuses", "divisible"),
    "merge_heads_view_at_one_head": ("view",),
    "merge_heads_frombuffer": ("contiguous", "Fortran", "layout"),
    "mha_one_head_shortcut": ("one head", "1 head", "n_heads 1", "(1, "),
    "mha_uneven_heads": ("refuses", "divisible"),
    "ffn_unknown_activation_is_relu": ("refuses", "activation"),
    "ffn_activation_is_gelu": ("`is`", "built at run time", "=="),
    "ffn_params_renamed": ("params", "argument names", "keyword"),
    "gelu_float16_through_erf": ("float16",),
    "gelu_atleast_1d": ("shape ()", "0-d"),
    "layer_norm_cache_by_id": ("earlier call", "between calls", "kept", "same array", "new values"),
    "layer_norm_rows_into_empty_like": ("contiguous", "Fortran", "layout"),
    "layer_norm_one_pass_variance": ("1e4", "1e8", "precision", "digits", "E[x"),
    "post_norm_sublayer_cached_by_shape": ("earlier call", "between calls", "keeps", "kept"),
    "pre_norm_float_result": ("float64",),
    "masked_softmax_writes_then_restores": ("read-only", "writes into"),
    "masked_softmax_returns_masked_array": ("MaskedArray", "masked array", "subclass"),
    "positional_same_table_object": ("shares memory", "same array", "earlier call", "kept", "view"),
    "positional_table_of_512": ("512", "seq_len 600", "600", "1000"),
    "positional_arguments_renamed": ("seq_len", "argument names", "keyword"),
    "block_keeps_its_first_n_heads": ("earlier call", "between calls", "kept", "first call"),
    "block_stochastic_depth": ("random",),
    "block_unknown_norm_is_pre": ("refuses", "norm"),
    "block_norm_is_pre": ("`is`", "built at run time", "=="),
    "encoder_layerdrop": ("random",),
    "encoder_norm_is_post": ("`is`", "built at run time", "=="),
    "softmax_grad_renormalises": ("fully masked", "all zeros", "all-zero", "a row of zeros"),
    "layer_norm_grad_one_pass_variance": ("1e4", "1e8", "precision", "digits", "E[x"),
    "layer_norm_grad_beta_is_grad_out": ("view", "shares memory", "grad_out"),
    "mean_pool_counts_cached_by_shape": ("earlier call", "between calls", "keeps", "kept"),
    "mean_pool_reuses_its_output": ("shares memory", "earlier call", "kept", "view"),
    "mean_pool_divides_by_int_count": ("float64",),
    "mean_pool_one_position_shortcut": ("seq 1", "one position", "all padding", "padded"),
    "bert_block_one_pass_variance": ("1e4", "1e8", "precision", "digits", "E[x"),
}
