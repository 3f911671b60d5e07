"""Natural wrong answers, written from how learners get these functions wrong, before and without reading the
course's feedback engine or its catalogue of mistakes: the held-out set the feedback is measured on."""

from dataclasses import dataclass


@dataclass(frozen=True)
class Natural:
    exercise: str   # the exercise's name
    key: str        # a short unique id, e.g. "softmax_sums_over_axis_0"
    cause: str      # what the learner got wrong, one sentence in plain words: the cause the feedback should name, if it names one
    source: str     # the whole answer cell: it defines the function (np and erf are given; it may import numpy itself)
    bugs: int = 1   # how many separate mistakes it holds


NATURAL = [
    # ------------------------------------------------------------------ 01 softmax
    Natural("softmax", "softmax_no_max_shift",
            "It exponentiates the raw scores without subtracting the maximum first, so large scores overflow "
            "to inf and the weights come out NaN.", '''
def softmax(x, axis=-1):
    e = np.exp(x)
    return e / e.sum(axis=axis, keepdims=True)
'''),
    Natural("softmax", "softmax_sum_without_keepdims",
            "The sum along the axis drops that axis (no keepdims=True), so the sums broadcast against the "
            "wrong axis, or not at all.", '''
def softmax(x, axis=-1):
    shifted = x - x.max(axis=axis, keepdims=True)
    e = np.exp(shifted)
    return e / e.sum(axis=axis)
'''),
    Natural("softmax", "softmax_max_without_keepdims",
            "The maximum is taken without keepdims=True, so each score has another row's (or column's) "
            "maximum subtracted, which changes the weights.", '''
def softmax(x, axis=-1):
    e = np.exp(x - np.max(x, axis=axis))
    return e / np.sum(e, axis=axis, keepdims=True)
'''),
    Natural("softmax", "softmax_over_whole_array",
            "It takes the maximum and the sum over the whole array instead of along the axis, so only the "
            "entire array sums to 1, not each row.", '''
def softmax(x, axis=-1):
    e = np.exp(x - np.max(x))
    return e / np.sum(e)
'''),
    Natural("softmax", "softmax_ignores_axis_argument",
            "It always works along the last axis and ignores the axis argument.", '''
def softmax(x, axis=-1):
    shifted = x - x.max(axis=-1, keepdims=True)
    e = np.exp(shifted)
    return e / e.sum(axis=-1, keepdims=True)
'''),
    Natural("softmax", "softmax_shifts_by_minimum",
            "It subtracts the minimum instead of the maximum, which does not stop exp from overflowing "
            "(and turns a -inf score into NaN).", '''
def softmax(x, axis=-1):
    # shift the scores so that exp stays well behaved
    shifted = x - x.min(axis=axis, keepdims=True)
    e = np.exp(shifted)
    return e / e.sum(axis=axis, keepdims=True)
'''),
    Natural("softmax", "softmax_overwrites_input",
            "It shifts, exponentiates and normalises in place, overwriting the caller's array of scores.", '''
def softmax(x, axis=-1):
    x -= x.max(axis=axis, keepdims=True)
    np.exp(x, out=x)
    x /= x.sum(axis=axis, keepdims=True)
    return x
'''),
    Natural("softmax", "softmax_no_shift_no_keepdims",
            "No maximum is subtracted (large scores overflow) and the sum drops the axis (no keepdims), so "
            "it broadcasts wrongly.", '''
def softmax(x, axis=-1):
    e = np.exp(x)
    return e / np.sum(e, axis=axis)
''', bugs=2),

    # ------------------------------------------------------------------ 01 scaled_dot_product_attention
    Natural("scaled_dot_product_attention", "sdpa_no_scaling",
            "It forgets to divide the scores by sqrt(d_k).", '''
def scaled_dot_product_attention(q, k, v):
    scores = q @ np.swapaxes(k, -1, -2)
    weights = softmax(scores, axis=-1)
    return weights @ v, weights
'''),
    Natural("scaled_dot_product_attention", "sdpa_divides_by_d_k",
            "It divides the scores by d_k instead of by its square root.", '''
def scaled_dot_product_attention(q, k, v):
    d_k = q.shape[-1]
    scores = q @ np.swapaxes(k, -1, -2) / d_k
    weights = softmax(scores, axis=-1)
    return weights @ v, weights
'''),
    Natural("scaled_dot_product_attention", "sdpa_transpose_with_T",
            "It transposes k with .T, which reverses every axis, batch axes included, instead of swapping "
            "only the last two.", '''
def scaled_dot_product_attention(q, k, v):
    d_k = q.shape[-1]
    scores = q @ k.T / np.sqrt(d_k)
    weights = softmax(scores)
    return weights @ v, weights
'''),
    Natural("scaled_dot_product_attention", "sdpa_softmax_over_queries",
            "It takes the softmax over the queries' axis (-2) instead of over the keys (-1).", '''
def scaled_dot_product_attention(q, k, v):
    d_k = q.shape[-1]
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(d_k)
    weights = softmax(scores, axis=-2)
    return weights @ v, weights
'''),
    Natural("scaled_dot_product_attention", "sdpa_returns_weights_first",
            "It returns (weights, out) instead of (out, weights).", '''
def scaled_dot_product_attention(q, k, v):
    d_k = q.shape[-1]
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(d_k)
    weights = softmax(scores, axis=-1)
    out = weights @ v
    return weights, out
'''),
    Natural("scaled_dot_product_attention", "sdpa_d_k_from_first_axis",
            "It reads d_k from the first axis of k (the number of keys, or a batch axis) instead of the "
            "last one.", '''
def scaled_dot_product_attention(q, k, v):
    d_k = k.shape[0]
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(d_k)
    weights = softmax(scores, axis=-1)
    return weights @ v, weights
'''),
    Natural("scaled_dot_product_attention", "sdpa_scales_weights_not_scores",
            "It divides by sqrt(d_k) after the softmax instead of before it, so the weights no longer sum "
            "to 1.", '''
def scaled_dot_product_attention(q, k, v):
    d_k = q.shape[-1]
    weights = softmax(q @ np.swapaxes(k, -1, -2)) / np.sqrt(d_k)
    return weights @ v, weights
'''),
    Natural("scaled_dot_product_attention", "sdpa_unscaled_and_T",
            "It forgets the 1 / sqrt(d_k) scale and transposes k with .T, which breaks with batch axes.", '''
def scaled_dot_product_attention(q, k, v):
    weights = softmax(q @ k.T)
    return weights @ v, weights
''', bugs=2),

    # ------------------------------------------------------------------ 02 split_heads
    Natural("split_heads", "split_heads_reshape_only",
            "It reshapes straight to (..., n_heads, seq, d_head) without the transpose, so the numbers "
            "land in the wrong heads and positions.", '''
def split_heads(x, n_heads):
    *lead, seq, d_model = x.shape
    return x.reshape(*lead, n_heads, seq, d_model // n_heads)
'''),
    Natural("split_heads", "split_heads_interleaved_columns",
            "It reshapes to (..., seq, d_head, n_heads), so each head gets every n_heads-th column instead "
            "of a contiguous block of columns.", '''
def split_heads(x, n_heads):
    *lead, seq, d_model = x.shape
    d_head = d_model // n_heads
    x = x.reshape(*lead, seq, d_head, n_heads)
    return np.moveaxis(x, -1, -3)            # (..., n_heads, seq, d_head)
'''),
    Natural("split_heads", "split_heads_assumes_3d",
            "It assumes exactly one batch axis (batch, seq, d_model), so it fails without a batch axis or "
            "with more than one.", '''
def split_heads(x, n_heads):
    batch, seq, d_model = x.shape
    x = x.reshape(batch, seq, n_heads, d_model // n_heads)
    return x.transpose(0, 2, 1, 3)
'''),
    Natural("split_heads", "split_heads_stack_puts_heads_first",
            "It stacks the column blocks on a new first axis, so with batch axes the heads come before the "
            "batch axes instead of just before seq.", '''
def split_heads(x, n_heads):
    heads = np.split(x, n_heads, axis=-1)    # n_heads arrays (..., seq, d_head)
    return np.stack(heads)
'''),
    Natural("split_heads", "split_heads_swaps_wrong_axes",
            "After the reshape it swaps the head axis with d_head (-1 and -3) instead of with seq.", '''
def split_heads(x, n_heads):
    *lead, seq, d_model = x.shape
    x = x.reshape(*lead, seq, n_heads, d_model // n_heads)
    return np.swapaxes(x, -1, -3)
'''),
    Natural("split_heads", "split_heads_reshape_drops_batch",
            "It reshapes without the transpose and folds every batch axis into one with -1.", '''
def split_heads(x, n_heads):
    seq, d_model = x.shape[-2], x.shape[-1]
    d_head = d_model // n_heads
    return x.reshape(-1, n_heads, seq, d_head)
''', bugs=2),

    # ------------------------------------------------------------------ 02 merge_heads
    Natural("merge_heads", "merge_heads_reshape_only",
            "It reshapes to (..., seq, n_heads * d_head) without first moving the head axis next to d_head.", '''
def merge_heads(x):
    *lead, n_heads, seq, d_head = x.shape
    return x.reshape(*lead, seq, n_heads * d_head)
'''),
    Natural("merge_heads", "merge_heads_heads_moved_last",
            "It moves the head axis to the end, (..., seq, d_head, n_heads), so the heads' columns come out "
            "interleaved instead of head 0's block first.", '''
def merge_heads(x):
    *lead, n_heads, seq, d_head = x.shape
    x = np.moveaxis(x, -3, -1)                    # (..., seq, d_head, n_heads)
    return x.reshape(*lead, seq, n_heads * d_head)
'''),
    Natural("merge_heads", "merge_heads_concatenate_first_axis",
            "It concatenates along the first axis of x, which is the head axis only when there is no batch "
            "axis.", '''
def merge_heads(x):
    # glue the heads side by side, head 0's columns first
    return np.concatenate(x, axis=-1)
'''),
    Natural("merge_heads", "merge_heads_assumes_4d",
            "It assumes exactly one batch axis (batch, n_heads, seq, d_head), so it fails on other shapes.", '''
def merge_heads(x):
    batch, n_heads, seq, d_head = x.shape
    return x.transpose(0, 2, 1, 3).reshape(batch, seq, n_heads * d_head)
'''),
    Natural("merge_heads", "merge_heads_swaps_last_two",
            "It swaps seq with d_head (the last two axes) instead of the head axis with seq before the "
            "reshape.", '''
def merge_heads(x):
    *lead, n_heads, seq, d_head = x.shape
    x = np.swapaxes(x, -1, -2)
    return x.reshape(*lead, seq, n_heads * d_head)
'''),
    Natural("merge_heads", "merge_heads_flattens_batch",
            "It reshapes to (-1, d_model), folding the batch axes into the positions.", '''
def merge_heads(x):
    n_heads, seq, d_head = x.shape[-3:]
    x = np.swapaxes(x, -2, -3)
    return x.reshape(-1, n_heads * d_head)
'''),

    # ------------------------------------------------------------------ 02 multi_head_attention
    Natural("multi_head_attention", "mha_no_output_projection",
            "It forgets the output projection w_o, b_o after merging the heads.", '''
def multi_head_attention(x, n_heads, params=None):
    if params is None:
        q = k = v = x
    else:
        q = x @ params["w_q"] + params["b_q"]
        k = x @ params["w_k"] + params["b_k"]
        v = x @ params["w_v"] + params["b_v"]
    q, k, v = split_heads(q, n_heads), split_heads(k, n_heads), split_heads(v, n_heads)
    out, weights = el.scaled_dot_product_attention(q, k, v)
    return merge_heads(out), weights
'''),
    Natural("multi_head_attention", "mha_no_biases",
            "It leaves out the biases b_q, b_k, b_v and b_o of the projections.", '''
def multi_head_attention(x, n_heads, params=None):
    if params is None:
        q = k = v = x
    else:
        q = x @ params["w_q"]
        k = x @ params["w_k"]
        v = x @ params["w_v"]
    q, k, v = split_heads(q, n_heads), split_heads(k, n_heads), split_heads(v, n_heads)
    out, weights = el.scaled_dot_product_attention(q, k, v)
    out = merge_heads(out)
    if params is not None:
        out = out @ params["w_o"]
    return out, weights
'''),
    Natural("multi_head_attention", "mha_keys_use_query_weights",
            "A copy-and-paste slip projects the keys with w_q and b_q instead of w_k and b_k.", '''
def multi_head_attention(x, n_heads, params=None):
    if params is None:
        q = k = v = x
    else:
        q = x @ params["w_q"] + params["b_q"]
        k = x @ params["w_q"] + params["b_q"]
        v = x @ params["w_v"] + params["b_v"]
    q, k, v = split_heads(q, n_heads), split_heads(k, n_heads), split_heads(v, n_heads)
    out, weights = el.scaled_dot_product_attention(q, k, v)
    out = merge_heads(out)
    if params is not None:
        out = out @ params["w_o"] + params["b_o"]
    return out, weights
'''),
    Natural("multi_head_attention", "mha_no_head_split",
            "It never splits into heads: one attention over all d_model columns, with weights "
            "(..., seq, seq) instead of (..., n_heads, seq, seq).", '''
def multi_head_attention(x, n_heads, params=None):
    if params is None:
        q = k = v = x
    else:
        q = x @ params["w_q"] + params["b_q"]
        k = x @ params["w_k"] + params["b_k"]
        v = x @ params["w_v"] + params["b_v"]
    out, weights = el.scaled_dot_product_attention(q, k, v)
    if params is not None:
        out = out @ params["w_o"] + params["b_o"]
    return out, weights
'''),
    Natural("multi_head_attention", "mha_weights_transposed",
            "It uses the weights as PyTorch stores them, x @ w.T, though here they are (in, out) and used as "
            "x @ w.", '''
def multi_head_attention(x, n_heads, params=None):
    if params is None:
        q = k = v = x
    else:
        q = x @ params["w_q"].T + params["b_q"]
        k = x @ params["w_k"].T + params["b_k"]
        v = x @ params["w_v"].T + params["b_v"]
    q, k, v = split_heads(q, n_heads), split_heads(k, n_heads), split_heads(v, n_heads)
    out, weights = el.scaled_dot_product_attention(q, k, v)
    out = merge_heads(out)
    if params is not None:
        out = out @ params["w_o"].T + params["b_o"]
    return out, weights
'''),
    Natural("multi_head_attention", "mha_weights_averaged_over_heads",
            "It averages the attention weights over the heads and returns (..., seq, seq) instead of each "
            "head's weights.", '''
def multi_head_attention(x, n_heads, params=None):
    if params is None:
        q = k = v = x
    else:
        q = x @ params["w_q"] + params["b_q"]
        k = x @ params["w_k"] + params["b_k"]
        v = x @ params["w_v"] + params["b_v"]
    q, k, v = split_heads(q, n_heads), split_heads(k, n_heads), split_heads(v, n_heads)
    out, weights = el.scaled_dot_product_attention(q, k, v)
    out = merge_heads(out)
    if params is not None:
        out = out @ params["w_o"] + params["b_o"]
    return out, weights.mean(axis=-3)
'''),
    Natural("multi_head_attention", "mha_scale_by_d_model",
            "Writing the attention by hand, it divides the scores by sqrt(d_model) instead of sqrt(d_head).", '''
def multi_head_attention(x, n_heads, params=None):
    if params is None:
        q = k = v = x
    else:
        q = x @ params["w_q"] + params["b_q"]
        k = x @ params["w_k"] + params["b_k"]
        v = x @ params["w_v"] + params["b_v"]
    q, k, v = (split_heads(t, n_heads) for t in (q, k, v))
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(x.shape[-1])
    weights = el.softmax(scores, axis=-1)
    out = merge_heads(weights @ v)
    if params is not None:
        out = out @ params["w_o"] + params["b_o"]
    return out, weights
'''),
    Natural("multi_head_attention", "mha_reshape_merge_no_b_o",
            "It merges the heads with a plain reshape (no transpose back) and forgets the output bias b_o.", '''
def multi_head_attention(x, n_heads, params=None):
    if params is None:
        q = k = v = x
    else:
        q = x @ params["w_q"] + params["b_q"]
        k = x @ params["w_k"] + params["b_k"]
        v = x @ params["w_v"] + params["b_v"]
    q, k, v = split_heads(q, n_heads), split_heads(k, n_heads), split_heads(v, n_heads)
    out, weights = el.scaled_dot_product_attention(q, k, v)
    out = out.reshape(x.shape)              # back to (..., seq, d_model)
    if params is not None:
        out = out @ params["w_o"]
    return out, weights
''', bugs=2),

    # ------------------------------------------------------------------ 03 feed_forward
    Natural("feed_forward", "ffn_forgets_b2",
            "It leaves out the second layer's bias b2.", '''
def feed_forward(x, params, activation="relu"):
    hidden = x @ params["w1"] + params["b1"]
    hidden = np.maximum(hidden, 0) if activation == "relu" else el.gelu(hidden)
    return hidden @ params["w2"]
'''),
    Natural("feed_forward", "ffn_relu_on_output",
            "It applies the activation after the second linear layer as well.", '''
def feed_forward(x, params, activation="relu"):
    act = (lambda h: np.maximum(h, 0)) if activation == "relu" else el.gelu
    hidden = act(x @ params["w1"] + params["b1"])
    return act(hidden @ params["w2"] + params["b2"])
'''),
    Natural("feed_forward", "ffn_ignores_activation",
            "It always uses ReLU and ignores activation='gelu'.", '''
def feed_forward(x, params, activation="relu"):
    hidden = np.maximum(x @ params["w1"] + params["b1"], 0)
    return hidden @ params["w2"] + params["b2"]
'''),
    Natural("feed_forward", "ffn_python_max",
            "It uses Python's built-in max(h, 0), which cannot compare an array with 0 elementwise, instead "
            "of np.maximum.", '''
def feed_forward(x, params, activation="relu"):
    hidden = x @ params["w1"] + params["b1"]
    if activation == "relu":
        hidden = max(hidden, 0)
    else:
        hidden = el.gelu(hidden)
    return hidden @ params["w2"] + params["b2"]
'''),
    Natural("feed_forward", "ffn_second_layer_reads_preactivation",
            "The second layer multiplies the hidden layer before the activation: the activated variable is "
            "computed but never used.", '''
def feed_forward(x, params, activation="relu"):
    hidden = x @ params["w1"] + params["b1"]
    if activation == "relu":
        activated = np.maximum(hidden, 0)
    else:
        activated = el.gelu(hidden)
    return hidden @ params["w2"] + params["b2"]
'''),
    Natural("feed_forward", "ffn_b1_after_activation",
            "It adds the bias b1 after the activation instead of before it.", '''
def feed_forward(x, params, activation="relu"):
    hidden = x @ params["w1"]
    hidden = np.maximum(hidden, 0) if activation == "relu" else el.gelu(hidden)
    hidden = hidden + params["b1"]
    return hidden @ params["w2"] + params["b2"]
'''),
    Natural("feed_forward", "ffn_tanh_gelu",
            "For activation='gelu' it writes GELU's tanh approximation instead of the exact erf GELU.", '''
def feed_forward(x, params, activation="relu"):
    hidden = x @ params["w1"] + params["b1"]
    if activation == "relu":
        hidden = np.maximum(hidden, 0)
    else:
        hidden = 0.5 * hidden * (1 + np.tanh(np.sqrt(2 / np.pi) * (hidden + 0.044715 * hidden ** 3)))
    return hidden @ params["w2"] + params["b2"]
'''),
    Natural("feed_forward", "ffn_no_b1_relu_only",
            "It leaves out the bias b1 and always uses ReLU, whatever activation says.", '''
def feed_forward(x, params, activation="relu"):
    hidden = np.maximum(x @ params["w1"], 0)
    return hidden @ params["w2"] + params["b2"]
''', bugs=2),

    # ------------------------------------------------------------------ 03 gelu
    Natural("gelu", "gelu_tanh_approximation",
            "It uses the tanh approximation of GELU instead of the exact erf form.", '''
def gelu(x):
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))
'''),
    Natural("gelu", "gelu_sigmoid_approximation",
            "It uses the sigmoid approximation x * sigmoid(1.702 x) instead of the exact erf form.", '''
def gelu(x):
    return x / (1 + np.exp(-1.702 * x))
'''),
    Natural("gelu", "gelu_missing_half",
            "It forgets the factor 0.5.", '''
def gelu(x):
    return x * (1 + erf(x / np.sqrt(2)))
'''),
    Natural("gelu", "gelu_divides_by_two",
            "It divides x by 2 inside erf instead of by sqrt(2).", '''
def gelu(x):
    return 0.5 * x * (1 + erf(x / 2))
'''),
    Natural("gelu", "gelu_returns_cdf",
            "It returns the normal CDF Phi(x) and forgets to multiply it by x.", '''
def gelu(x):
    return 0.5 * (1 + erf(x / np.sqrt(2)))
'''),
    Natural("gelu", "gelu_multiplies_by_sqrt2",
            "It multiplies x by sqrt(2) inside erf instead of dividing by it.", '''
def gelu(x):
    return 0.5 * x * (1 + erf(x * np.sqrt(2)))
'''),
    Natural("gelu", "gelu_tanh_wrong_constant",
            "It uses the tanh approximation instead of erf, and with the cubic coefficient mistyped "
            "(0.44715 for 0.044715).", '''
def gelu(x):
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.44715 * x ** 3)))
''', bugs=2),

    # ------------------------------------------------------------------ 04 layer_norm
    Natural("layer_norm", "layer_norm_unbiased_variance",
            "It uses the unbiased variance (ddof=1, divide by d_model - 1) instead of the biased one.", '''
def layer_norm(x, gamma=None, beta=None, eps=1e-5):
    mean = x.mean(axis=-1, keepdims=True)
    var = x.var(axis=-1, ddof=1, keepdims=True)
    y = (x - mean) / np.sqrt(var + eps)
    if gamma is not None:
        y = y * gamma
    if beta is not None:
        y = y + beta
    return y
'''),
    Natural("layer_norm", "layer_norm_eps_outside_sqrt",
            "It adds eps to the standard deviation instead of to the variance under the square root.", '''
def layer_norm(x, gamma=None, beta=None, eps=1e-5):
    mean = x.mean(axis=-1, keepdims=True)
    std = x.std(axis=-1, keepdims=True)
    y = (x - mean) / (std + eps)
    if gamma is not None:
        y = y * gamma
    if beta is not None:
        y = y + beta
    return y
'''),
    Natural("layer_norm", "layer_norm_no_keepdims",
            "The mean and variance drop the feature axis (no keepdims=True), so they broadcast against the "
            "wrong axis.", '''
def layer_norm(x, gamma=None, beta=None, eps=1e-5):
    mean = np.mean(x, axis=-1)
    var = np.var(x, axis=-1)
    y = (x - mean) / np.sqrt(var + eps)
    if gamma is not None:
        y = y * gamma
    if beta is not None:
        y = y + beta
    return y
'''),
    Natural("layer_norm", "layer_norm_whole_array_statistics",
            "It takes one mean and variance over the whole array instead of one per row (position).", '''
def layer_norm(x, gamma=None, beta=None, eps=1e-5):
    y = (x - x.mean()) / np.sqrt(x.var() + eps)
    if gamma is not None:
        y = y * gamma
    if beta is not None:
        y = y + beta
    return y
'''),
    Natural("layer_norm", "layer_norm_shift_before_scale",
            "It adds beta before multiplying by gamma, so beta gets scaled too.", '''
def layer_norm(x, gamma=None, beta=None, eps=1e-5):
    mean = x.mean(axis=-1, keepdims=True)
    var = x.var(axis=-1, keepdims=True)
    y = (x - mean) / np.sqrt(var + eps)
    if beta is not None:
        y = y + beta
    if gamma is not None:
        y = y * gamma
    return y
'''),
    Natural("layer_norm", "layer_norm_truthiness_of_gamma",
            "It tests `if gamma:` on an array, which raises instead of checking whether gamma was given.", '''
def layer_norm(x, gamma=None, beta=None, eps=1e-5):
    mean = x.mean(axis=-1, keepdims=True)
    var = x.var(axis=-1, keepdims=True)
    y = (x - mean) / np.sqrt(var + eps)
    if gamma:
        y = y * gamma
    if beta:
        y = y + beta
    return y
'''),
    Natural("layer_norm", "layer_norm_ignores_eps_argument",
            "It writes the default 1e-5 into the formula, so a different eps passed in is ignored.", '''
def layer_norm(x, gamma=None, beta=None, eps=1e-5):
    mean = x.mean(axis=-1, keepdims=True)
    var = x.var(axis=-1, keepdims=True)
    y = (x - mean) / np.sqrt(var + 1e-5)
    if gamma is not None:
        y = y * gamma
    if beta is not None:
        y = y + beta
    return y
'''),
    Natural("layer_norm", "layer_norm_gamma_beta_swapped",
            "It multiplies by beta and adds gamma: the scale and the shift are swapped.", '''
def layer_norm(x, gamma=None, beta=None, eps=1e-5):
    mean = x.mean(axis=-1, keepdims=True)
    var = x.var(axis=-1, keepdims=True)
    y = (x - mean) / np.sqrt(var + eps)
    if gamma is None:
        gamma = np.zeros(x.shape[-1])
    if beta is None:
        beta = np.ones(x.shape[-1])
    return y * beta + gamma
'''),
    Natural("layer_norm", "layer_norm_over_positions",
            "It normalises each feature over the positions (axis -2, as batch norm does) instead of each "
            "position over its features.", '''
def layer_norm(x, gamma=None, beta=None, eps=1e-5):
    mean = x.mean(axis=-2, keepdims=True)
    var = x.var(axis=-2, keepdims=True)
    y = (x - mean) / np.sqrt(var + eps)
    if gamma is not None:
        y = y * gamma
    if beta is not None:
        y = y + beta
    return y
'''),
    Natural("layer_norm", "layer_norm_unbiased_std_plus_eps",
            "It divides by the unbiased standard deviation (ddof=1) plus eps: the wrong variance and eps "
            "outside the square root.", '''
def layer_norm(x, gamma=None, beta=None, eps=1e-5):
    mean = np.mean(x, axis=-1, keepdims=True)
    std = np.std(x, axis=-1, ddof=1, keepdims=True)
    out = (x - mean) / (std + eps)
    if gamma is not None:
        out = out * gamma
    if beta is not None:
        out = out + beta
    return out
''', bugs=2),

    # ------------------------------------------------------------------ 04 post_norm
    Natural("post_norm", "post_norm_written_as_pre_norm",
            "It normalises before the sub-layer, x + sublayer(LN(x)), which is pre-norm.", '''
def post_norm(x, sublayer, gamma=None, beta=None, eps=1e-5):
    return x + sublayer(layer_norm(x, gamma, beta, eps))
'''),
    Natural("post_norm", "post_norm_no_residual",
            "It forgets the residual: LN(sublayer(x)) instead of LN(x + sublayer(x)).", '''
def post_norm(x, sublayer, gamma=None, beta=None, eps=1e-5):
    return layer_norm(sublayer(x), gamma, beta, eps)
'''),
    Natural("post_norm", "post_norm_norms_sublayer_only",
            "It normalises only the sub-layer's output and adds x afterwards, x + LN(sublayer(x)).", '''
def post_norm(x, sublayer, gamma=None, beta=None, eps=1e-5):
    return x + layer_norm(sublayer(x), gamma, beta, eps)
'''),
    Natural("post_norm", "post_norm_drops_gamma_beta",
            "It calls layer_norm without passing gamma, beta and eps on.", '''
def post_norm(x, sublayer, gamma=None, beta=None, eps=1e-5):
    return layer_norm(x + sublayer(x))
'''),
    Natural("post_norm", "post_norm_ignores_eps",
            "It passes gamma and beta on but not eps, so the layer norm always uses the default eps.", '''
def post_norm(x, sublayer, gamma=None, beta=None, eps=1e-5):
    return layer_norm(x + sublayer(x), gamma, beta)
'''),
    Natural("post_norm", "post_norm_adds_in_place",
            "It adds the sub-layer's output into x in place, overwriting the caller's input.", '''
def post_norm(x, sublayer, gamma=None, beta=None, eps=1e-5):
    x += sublayer(x)
    return layer_norm(x, gamma, beta, eps)
'''),
    Natural("post_norm", "post_norm_gamma_beta_swapped",
            "It passes beta and gamma to layer_norm in the wrong order.", '''
def post_norm(x, sublayer, gamma=None, beta=None, eps=1e-5):
    return layer_norm(x + sublayer(x), beta, gamma, eps)
'''),
    Natural("post_norm", "post_norm_extra_norm_before",
            "It adds a layer norm too many: it also normalises x before the sub-layer and the residual.", '''
def post_norm(x, sublayer, gamma=None, beta=None, eps=1e-5):
    h = layer_norm(x, gamma, beta, eps)
    return layer_norm(h + sublayer(h), gamma, beta, eps)
'''),

    # ------------------------------------------------------------------ 04 pre_norm
    Natural("pre_norm", "pre_norm_written_as_post_norm",
            "It normalises after the sum, LN(x + sublayer(x)), which is post-norm.", '''
def pre_norm(x, sublayer, gamma=None, beta=None, eps=1e-5):
    return layer_norm(x + sublayer(x), gamma, beta, eps)
'''),
    Natural("pre_norm", "pre_norm_residual_from_normalised",
            "The residual adds the normalised x, LN(x) + sublayer(LN(x)), instead of the original x.", '''
def pre_norm(x, sublayer, gamma=None, beta=None, eps=1e-5):
    x = layer_norm(x, gamma, beta, eps)
    return x + sublayer(x)
'''),
    Natural("pre_norm", "pre_norm_no_residual",
            "It forgets the residual: sublayer(LN(x)) instead of x + sublayer(LN(x)).", '''
def pre_norm(x, sublayer, gamma=None, beta=None, eps=1e-5):
    return sublayer(layer_norm(x, gamma, beta, eps))
'''),
    Natural("pre_norm", "pre_norm_extra_final_norm",
            "It adds a layer norm too many, normalising the sum at the end as well.", '''
def pre_norm(x, sublayer, gamma=None, beta=None, eps=1e-5):
    out = x + sublayer(layer_norm(x, gamma, beta, eps))
    return layer_norm(out)
'''),
    Natural("pre_norm", "pre_norm_norms_sublayer_output",
            "It normalises the sub-layer's output instead of its input, x + LN(sublayer(x)).", '''
def pre_norm(x, sublayer, gamma=None, beta=None, eps=1e-5):
    return x + layer_norm(sublayer(x), gamma, beta, eps)
'''),
    Natural("pre_norm", "pre_norm_drops_gamma_beta",
            "It calls layer_norm without passing gamma, beta and eps on.", '''
def pre_norm(x, sublayer, gamma=None, beta=None, eps=1e-5):
    return x + sublayer(layer_norm(x))
'''),
    Natural("pre_norm", "pre_norm_eps_in_beta_slot",
            "It leaves beta out of the positional arguments, so eps lands in beta's place and beta is "
            "never used.", '''
def pre_norm(x, sublayer, gamma=None, beta=None, eps=1e-5):
    normed = layer_norm(x, gamma, eps)
    return x + sublayer(normed)
'''),

    # ------------------------------------------------------------------ 05 masked_softmax
    Natural("masked_softmax", "masked_softmax_no_guard_el_softmax",
            "It sets padded keys to -inf but has no guard for a sequence that is all padding, so "
            "el.softmax refuses the all -inf rows.", '''
def masked_softmax(scores, padding_mask=None):
    if padding_mask is not None:
        scores = np.where(padding_mask[..., None, :], -np.inf, scores)
    return el.softmax(scores, axis=-1)
'''),
    Natural("masked_softmax", "masked_softmax_no_guard_nan",
            "Its own softmax has no guard for a row whose keys are all padding, so that row comes out NaN "
            "(-inf minus -inf) instead of zeros.", '''
def masked_softmax(scores, padding_mask=None):
    if padding_mask is not None:
        scores = np.where(padding_mask[..., None, :], -np.inf, scores)
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)
'''),
    Natural("masked_softmax", "masked_softmax_masks_queries",
            "It broadcasts the mask as (..., seq, 1), masking the padded queries' rows instead of the padded "
            "keys' columns.", '''
def masked_softmax(scores, padding_mask=None):
    if padding_mask is None:
        return el.softmax(scores)
    scores = np.where(padding_mask[..., :, None], -np.inf, scores)
    peak = scores.max(axis=-1, keepdims=True)
    peak = np.where(np.isfinite(peak), peak, 0.0)
    e = np.exp(scores - peak)
    total = e.sum(axis=-1, keepdims=True)
    return e / np.where(total == 0, 1.0, total)
'''),
    Natural("masked_softmax", "masked_softmax_fill_zero",
            "It sets the padded keys' scores to 0 instead of -inf, so they still get weight.", '''
def masked_softmax(scores, padding_mask=None):
    if padding_mask is None:
        return el.softmax(scores)
    scores = np.where(padding_mask[..., None, :], 0.0, scores)
    return el.softmax(scores)
'''),
    Natural("masked_softmax", "masked_softmax_large_negative_no_guard",
            "It fills padded keys with -1e9 instead of -inf and adds no guard, so a sequence that is all "
            "padding gets equal weights 1/seq_k instead of zeros.", '''
def masked_softmax(scores, padding_mask=None):
    if padding_mask is not None:
        scores = np.where(padding_mask[..., None, :], -1e9, scores)
    return el.softmax(scores, axis=-1)
'''),
    Natural("masked_softmax", "masked_softmax_zeroes_after_softmax",
            "It zeroes the padded keys' weights after the softmax without renormalising, so the rows no "
            "longer sum to 1.", '''
def masked_softmax(scores, padding_mask=None):
    weights = el.softmax(scores, axis=-1)
    if padding_mask is not None:
        weights = weights * ~padding_mask[..., None, :]
    return weights
'''),
    Natural("masked_softmax", "masked_softmax_mask_inverted",
            "It treats True as a real token, masking the real keys and keeping the padding.", '''
def masked_softmax(scores, padding_mask=None):
    if padding_mask is None:
        return el.softmax(scores)
    keep = padding_mask[..., None, :]
    scores = np.where(keep, scores, -np.inf)
    peak = scores.max(axis=-1, keepdims=True)
    peak = np.where(np.isfinite(peak), peak, 0.0)
    e = np.exp(scores - peak)
    total = e.sum(axis=-1, keepdims=True)
    return e / np.where(total == 0, 1.0, total)
'''),
    Natural("masked_softmax", "masked_softmax_none_not_handled",
            "It indexes padding_mask without checking for None, so a call without a mask fails.", '''
def masked_softmax(scores, padding_mask=None):
    scores = np.where(padding_mask[..., None, :], -np.inf, scores)
    all_padding = padding_mask.all(axis=-1)[..., None, None]
    scores = np.where(all_padding, 0.0, scores)
    weights = el.softmax(scores)
    return np.where(all_padding, 0.0, weights)
'''),
    Natural("masked_softmax", "masked_softmax_mask_without_query_axis",
            "It uses the (..., seq_k) mask without adding the query axis, so with batch axes the mask's "
            "batch axis lines up with the queries.", '''
def masked_softmax(scores, padding_mask=None):
    if padding_mask is None:
        return el.softmax(scores)
    scores = np.where(padding_mask, -np.inf, scores)
    peak = scores.max(axis=-1, keepdims=True)
    peak = np.where(np.isfinite(peak), peak, 0.0)
    e = np.exp(scores - peak)
    total = e.sum(axis=-1, keepdims=True)
    return e / np.where(total == 0, 1.0, total)
'''),
    Natural("masked_softmax", "masked_softmax_guard_whole_batch",
            "Its guard checks whether the whole mask is padding (padding_mask.all()) instead of each "
            "sequence, so one all-padding sequence in a batch still breaks the softmax.", '''
def masked_softmax(scores, padding_mask=None):
    if padding_mask is None:
        return el.softmax(scores)
    if padding_mask.all():
        return np.zeros_like(scores)
    scores = np.where(padding_mask[..., None, :], -np.inf, scores)
    return el.softmax(scores)
'''),

    # ------------------------------------------------------------------ 05 positional_encoding
    Natural("positional_encoding", "pe_column_index_exponent",
            "Each column gets its own exponent j / d_model, so an odd column's cosine uses a different "
            "frequency from its sine partner's instead of sharing 2i / d_model.", '''
def positional_encoding(seq_len, d_model):
    pos = np.arange(seq_len)[:, None]
    j = np.arange(d_model)[None, :]
    angle = pos / 10000 ** (j / d_model)
    pe = np.zeros((seq_len, d_model))
    pe[:, 0::2] = np.sin(angle[:, 0::2])
    pe[:, 1::2] = np.cos(angle[:, 1::2])
    return pe
'''),
    Natural("positional_encoding", "pe_sin_cos_swapped",
            "It puts the cosine in the even columns and the sine in the odd ones.", '''
def positional_encoding(seq_len, d_model):
    pos = np.arange(seq_len)[:, None]
    two_i = np.arange(0, d_model, 2)
    angle = pos / 10000 ** (two_i / d_model)
    pe = np.zeros((seq_len, d_model))
    pe[:, 0::2] = np.cos(angle)
    pe[:, 1::2] = np.sin(angle[:, : d_model // 2])
    return pe
'''),
    Natural("positional_encoding", "pe_concatenated_halves",
            "It puts all the sines in the first half of the columns and all the cosines in the second half "
            "instead of interleaving them.", '''
def positional_encoding(seq_len, d_model):
    pos = np.arange(seq_len)[:, None]
    i = np.arange(d_model // 2)
    angle = pos / 10000 ** (2 * i / d_model)
    return np.concatenate([np.sin(angle), np.cos(angle)], axis=-1)
'''),
    Natural("positional_encoding", "pe_odd_d_model_fails",
            "It assigns every angle's cosine to the odd columns, which fails when d_model is odd (one fewer "
            "odd column than angles).", '''
def positional_encoding(seq_len, d_model):
    pos = np.arange(seq_len)[:, None]
    two_i = np.arange(0, d_model, 2)
    angle = pos / np.power(10000, two_i / d_model)
    pe = np.zeros((seq_len, d_model))
    pe[:, 0::2] = np.sin(angle)
    pe[:, 1::2] = np.cos(angle)
    return pe
'''),
    Natural("positional_encoding", "pe_positions_from_one",
            "It counts positions from 1 instead of 0.", '''
def positional_encoding(seq_len, d_model):
    pos = np.arange(1, seq_len + 1)[:, None]
    two_i = np.arange(0, d_model, 2)
    angle = pos / 10000 ** (two_i / d_model)
    pe = np.zeros((seq_len, d_model))
    pe[:, 0::2] = np.sin(angle)
    pe[:, 1::2] = np.cos(angle[:, : d_model // 2])
    return pe
'''),
    Natural("positional_encoding", "pe_exponent_missing_factor_two",
            "It uses i / d_model as the exponent instead of 2i / d_model, and makes only d_model // 2 "
            "angles, so an odd d_model fails.", '''
def positional_encoding(seq_len, d_model):
    pe = np.zeros((seq_len, d_model))
    pos = np.arange(seq_len)[:, None]
    i = np.arange(d_model // 2)
    angle = pos / 10000 ** (i / d_model)
    pe[:, 0::2] = np.sin(angle)
    pe[:, 1::2] = np.cos(angle)
    return pe
''', bugs=2),
    Natural("positional_encoding", "pe_multiplies_by_frequency_power",
            "It multiplies the position by 10000^(2i/d_model) instead of dividing by it.", '''
def positional_encoding(seq_len, d_model):
    pos = np.arange(seq_len)[:, None]
    two_i = np.arange(0, d_model, 2)
    angle = pos * 10000 ** (two_i / d_model)
    pe = np.zeros((seq_len, d_model))
    pe[:, 0::2] = np.sin(angle)
    pe[:, 1::2] = np.cos(angle[:, : d_model // 2])
    return pe
'''),
    Natural("positional_encoding", "pe_transposed",
            "It builds the table as (d_model, seq_len), one row per column index, instead of one row per "
            "position.", '''
def positional_encoding(seq_len, d_model):
    two_i = np.arange(0, d_model, 2)[:, None]
    pos = np.arange(seq_len)[None, :]
    angle = pos / 10000 ** (two_i / d_model)       # (d_model / 2, seq_len)
    pe = np.zeros((d_model, seq_len))
    pe[0::2] = np.sin(angle)
    pe[1::2] = np.cos(angle[: d_model // 2])
    return pe
'''),

    # ------------------------------------------------------------------ 05 encoder_block
    Natural("encoder_block", "block_forgets_padding_mask",
            "It never passes padding_mask to the attention, so real tokens attend to the padding.", '''
def encoder_block(x, params, n_heads, norm="post", padding_mask=None):
    def attention(h):
        return el.multi_head_attention(h, n_heads, params["attn"])[0]

    def ffn(h):
        return el.feed_forward(h, params["ffn"])

    add_norm = el.post_norm if norm == "post" else el.pre_norm
    x = add_norm(x, attention, params["norm1"]["gamma"], params["norm1"]["beta"])
    return add_norm(x, ffn, params["norm2"]["gamma"], params["norm2"]["beta"])
'''),
    Natural("encoder_block", "block_norm1_twice",
            "It uses norm1's gamma and beta for both Add & Norm steps; norm2 is never used.", '''
def encoder_block(x, params, n_heads, norm="post", padding_mask=None):
    def attention(h):
        return el.multi_head_attention(h, n_heads, params["attn"], padding_mask=padding_mask)[0]

    def ffn(h):
        return el.feed_forward(h, params["ffn"])

    add_norm = el.post_norm if norm == "post" else el.pre_norm
    gamma, beta = params["norm1"]["gamma"], params["norm1"]["beta"]
    x = add_norm(x, attention, gamma, beta)
    return add_norm(x, ffn, gamma, beta)
'''),
    Natural("encoder_block", "block_norms_swapped",
            "It wraps the attention with norm2 and the FFN with norm1.", '''
def encoder_block(x, params, n_heads, norm="post", padding_mask=None):
    def attention(h):
        return el.multi_head_attention(h, n_heads, params["attn"], padding_mask=padding_mask)[0]

    def ffn(h):
        return el.feed_forward(h, params["ffn"])

    add_norm = el.post_norm if norm == "post" else el.pre_norm
    x = add_norm(x, attention, params["norm2"]["gamma"], params["norm2"]["beta"])
    return add_norm(x, ffn, params["norm1"]["gamma"], params["norm1"]["beta"])
'''),
    Natural("encoder_block", "block_ignores_norm_argument",
            "It always uses post-norm, whatever norm says.", '''
def encoder_block(x, params, n_heads, norm="post", padding_mask=None):
    def attention(h):
        return el.multi_head_attention(h, n_heads, params["attn"], padding_mask=padding_mask)[0]

    def ffn(h):
        return el.feed_forward(h, params["ffn"])

    x = el.post_norm(x, attention, params["norm1"]["gamma"], params["norm1"]["beta"])
    return el.post_norm(x, ffn, params["norm2"]["gamma"], params["norm2"]["beta"])
'''),
    Natural("encoder_block", "block_ffn_reads_block_input",
            "In the post-norm branch the FFN reads the block's input x instead of the output of the first "
            "Add & Norm.", '''
def encoder_block(x, params, n_heads, norm="post", padding_mask=None):
    def attention(h):
        return el.multi_head_attention(h, n_heads, params["attn"], padding_mask=padding_mask)[0]

    def ffn(h):
        return el.feed_forward(h, params["ffn"])

    n1, n2 = params["norm1"], params["norm2"]
    if norm == "post":
        h = el.layer_norm(x + attention(x), n1["gamma"], n1["beta"])
        return el.layer_norm(h + ffn(x), n2["gamma"], n2["beta"])
    h = x + attention(el.layer_norm(x, n1["gamma"], n1["beta"]))
    return h + ffn(el.layer_norm(h, n2["gamma"], n2["beta"]))
'''),
    Natural("encoder_block", "block_forgets_index_zero",
            "It passes multi_head_attention's whole (out, weights) tuple on instead of taking [0], the "
            "output.", '''
def encoder_block(x, params, n_heads, norm="post", padding_mask=None):
    def attention(h):
        return el.multi_head_attention(h, n_heads, params["attn"], padding_mask=padding_mask)

    def ffn(h):
        return el.feed_forward(h, params["ffn"])

    add_norm = el.post_norm if norm == "post" else el.pre_norm
    x = add_norm(x, attention, params["norm1"]["gamma"], params["norm1"]["beta"])
    return add_norm(x, ffn, params["norm2"]["gamma"], params["norm2"]["beta"])
'''),
    Natural("encoder_block", "block_pre_norm_extra_final_norm",
            "Its pre-norm branch ends with an extra layer norm on the output.", '''
def encoder_block(x, params, n_heads, norm="post", padding_mask=None):
    def attention(h):
        return el.multi_head_attention(h, n_heads, params["attn"], padding_mask=padding_mask)[0]

    def ffn(h):
        return el.feed_forward(h, params["ffn"])

    if norm == "post":
        x = el.post_norm(x, attention, params["norm1"]["gamma"], params["norm1"]["beta"])
        return el.post_norm(x, ffn, params["norm2"]["gamma"], params["norm2"]["beta"])
    x = el.pre_norm(x, attention, params["norm1"]["gamma"], params["norm1"]["beta"])
    x = el.pre_norm(x, ffn, params["norm2"]["gamma"], params["norm2"]["beta"])
    return el.layer_norm(x)
'''),
    Natural("encoder_block", "block_post_norm_residual_outside",
            "Writing post-norm by hand, it adds the residual after the layer norm, x + LN(sublayer(x)), "
            "instead of normalising the sum.", '''
def encoder_block(x, params, n_heads, norm="post", padding_mask=None):
    def attention(h):
        return el.multi_head_attention(h, n_heads, params["attn"], padding_mask=padding_mask)[0]

    def ffn(h):
        return el.feed_forward(h, params["ffn"])

    n1, n2 = params["norm1"], params["norm2"]
    if norm == "post":
        x = x + el.layer_norm(attention(x), n1["gamma"], n1["beta"])
        return x + el.layer_norm(ffn(x), n2["gamma"], n2["beta"])
    x = el.pre_norm(x, attention, n1["gamma"], n1["beta"])
    return el.pre_norm(x, ffn, n2["gamma"], n2["beta"])
'''),
    Natural("encoder_block", "block_norm_choice_inverted",
            "It picks pre_norm for norm='post' and post_norm for norm='pre'.", '''
def encoder_block(x, params, n_heads, norm="post", padding_mask=None):
    def attention(h):
        return el.multi_head_attention(h, n_heads, params["attn"], padding_mask=padding_mask)[0]

    def ffn(h):
        return el.feed_forward(h, params["ffn"])

    add_norm = el.pre_norm if norm == "post" else el.post_norm
    x = add_norm(x, attention, params["norm1"]["gamma"], params["norm1"]["beta"])
    return add_norm(x, ffn, params["norm2"]["gamma"], params["norm2"]["beta"])
'''),
    Natural("encoder_block", "block_no_mask_norm1_twice",
            "It never passes padding_mask to the attention, and uses norm1's gamma and beta for the FFN's "
            "Add & Norm too.", '''
def encoder_block(x, params, n_heads, norm="post", padding_mask=None):
    add_norm = el.post_norm if norm == "post" else el.pre_norm
    gamma, beta = params["norm1"]["gamma"], params["norm1"]["beta"]
    x = add_norm(x, lambda h: el.multi_head_attention(h, n_heads, params["attn"])[0], gamma, beta)
    x = add_norm(x, lambda h: el.feed_forward(h, params["ffn"]), gamma, beta)
    return x
''', bugs=2),

    # ------------------------------------------------------------------ 06 encoder
    Natural("encoder", "encoder_every_block_reads_input",
            "Every block reads the encoder's input x instead of the previous block's output, so only the "
            "last block counts.", '''
def encoder(x, layers, n_heads, norm="post", padding_mask=None):
    for params in layers:
        out = el.encoder_block(x, params, n_heads, norm=norm, padding_mask=padding_mask)
    return out
'''),
    Natural("encoder", "encoder_forgets_norm",
            "It does not pass norm on to the blocks, so every block runs post-norm.", '''
def encoder(x, layers, n_heads, norm="post", padding_mask=None):
    for params in layers:
        x = el.encoder_block(x, params, n_heads, padding_mask=padding_mask)
    return x
'''),
    Natural("encoder", "encoder_forgets_padding_mask",
            "It does not pass padding_mask on to the blocks.", '''
def encoder(x, layers, n_heads, norm="post", padding_mask=None):
    for params in layers:
        x = el.encoder_block(x, params, n_heads, norm=norm)
    return x
'''),
    Natural("encoder", "encoder_skips_last_block",
            "An off-by-one loop, range(len(layers) - 1), leaves out the last block.", '''
def encoder(x, layers, n_heads, norm="post", padding_mask=None):
    for i in range(len(layers) - 1):
        x = el.encoder_block(x, layers[i], n_heads, norm=norm, padding_mask=padding_mask)
    return x
'''),
    Natural("encoder", "encoder_final_layer_norm",
            "It adds a final layer norm after the last block, which this encoder does not have.", '''
def encoder(x, layers, n_heads, norm="post", padding_mask=None):
    for params in layers:
        x = el.encoder_block(x, params, n_heads, norm=norm, padding_mask=padding_mask)
    return el.layer_norm(x)
'''),
    Natural("encoder", "encoder_positional_options",
            "It passes norm and padding_mask to encoder_block by position, but they are keyword-only there.", '''
def encoder(x, layers, n_heads, norm="post", padding_mask=None):
    for params in layers:
        x = el.encoder_block(x, params, n_heads, norm, padding_mask)
    return x
'''),
    Natural("encoder", "encoder_residual_around_block",
            "It adds another residual around each whole block, x + block(x), though the block already has "
            "its own.", '''
def encoder(x, layers, n_heads, norm="post", padding_mask=None):
    for params in layers:
        x = x + el.encoder_block(x, params, n_heads, norm=norm, padding_mask=padding_mask)
    return x
'''),
    Natural("encoder", "encoder_returns_every_output",
            "It returns the list of every block's output instead of the last block's output.", '''
def encoder(x, layers, n_heads, norm="post", padding_mask=None):
    outputs = []
    for params in layers:
        x = el.encoder_block(x, params, n_heads, norm=norm, padding_mask=padding_mask)
        outputs.append(x)
    return outputs
'''),
    Natural("encoder", "encoder_input_each_block_no_mask",
            "Every block reads the original input instead of the previous block's output, and padding_mask "
            "is not passed on.", '''
def encoder(x, layers, n_heads, norm="post", padding_mask=None):
    out = x
    for layer in layers:
        out = el.encoder_block(x, layer, n_heads, norm=norm)
    return out
''', bugs=2),

    # ------------------------------------------------------------------ 07 softmax_grad
    Natural("softmax_grad", "softmax_grad_diagonal_only",
            "It keeps only the Jacobian's diagonal, w (1 - w), and drops the -w_i w_j terms that couple the "
            "row.", '''
def softmax_grad(weights, grad_weights):
    return weights * (1 - weights) * grad_weights
'''),
    Natural("softmax_grad", "softmax_grad_sum_without_keepdims",
            "The row sum drops the last axis (no keepdims=True), so it broadcasts against the wrong axis.", '''
def softmax_grad(weights, grad_weights):
    return weights * (grad_weights - np.sum(grad_weights * weights, axis=-1))
'''),
    Natural("softmax_grad", "softmax_grad_sum_over_everything",
            "It sums grad_weights * weights over the whole array instead of over each row.", '''
def softmax_grad(weights, grad_weights):
    return weights * (grad_weights - np.sum(grad_weights * weights))
'''),
    Natural("softmax_grad", "softmax_grad_missing_outer_weights",
            "It forgets the outer multiplication by the weights.", '''
def softmax_grad(weights, grad_weights):
    return grad_weights - np.sum(grad_weights * weights, axis=-1, keepdims=True)
'''),
    Natural("softmax_grad", "softmax_grad_sign_flipped",
            "It subtracts the other way round, giving the gradient with the wrong sign.", '''
def softmax_grad(weights, grad_weights):
    return weights * (np.sum(weights * grad_weights, axis=-1, keepdims=True) - grad_weights)
'''),
    Natural("softmax_grad", "softmax_grad_jacobian_one_row",
            "It builds the Jacobian with np.diag and np.outer, which only works for a single row, not for "
            "batches of rows.", '''
def softmax_grad(weights, grad_weights):
    jacobian = np.diag(weights) - np.outer(weights, weights)
    return jacobian @ grad_weights
'''),
    Natural("softmax_grad", "softmax_grad_sum_forgets_weights",
            "The subtracted row sum leaves out the weights: sum(g) instead of sum(g * w).", '''
def softmax_grad(weights, grad_weights):
    return weights * (grad_weights - grad_weights.sum(axis=-1, keepdims=True))
'''),
    Natural("softmax_grad", "softmax_grad_sum_over_axis_0",
            "It sums over axis 0 instead of over each row's last axis.", '''
def softmax_grad(weights, grad_weights):
    dot = np.sum(weights * grad_weights, axis=0, keepdims=True)
    return weights * (grad_weights - dot)
'''),

    # ------------------------------------------------------------------ 07 layer_norm_grad
    Natural("layer_norm_grad", "layer_norm_grad_forgets_gamma",
            "It never multiplies grad_out by gamma before the normalisation's backward pass.", '''
def layer_norm_grad(x, grad_out, gamma=None, beta=None, eps=1e-5):
    mean = x.mean(axis=-1, keepdims=True)
    sigma = np.sqrt(x.var(axis=-1, keepdims=True) + eps)
    xhat = (x - mean) / sigma
    g = grad_out
    grad_x = (g - g.mean(axis=-1, keepdims=True) - xhat * (g * xhat).mean(axis=-1, keepdims=True)) / sigma
    d = x.shape[-1]
    grad_gamma = (grad_out * xhat).reshape(-1, d).sum(axis=0)
    grad_beta = grad_out.reshape(-1, d).sum(axis=0)
    return grad_x, grad_gamma, grad_beta
'''),
    Natural("layer_norm_grad", "layer_norm_grad_sums_axis_0_only",
            "It sums grad_gamma and grad_beta over axis 0 only, which is every position only when x has "
            "exactly two axes.", '''
def layer_norm_grad(x, grad_out, gamma=None, beta=None, eps=1e-5):
    mean = x.mean(axis=-1, keepdims=True)
    sigma = np.sqrt(x.var(axis=-1, keepdims=True) + eps)
    xhat = (x - mean) / sigma
    g = grad_out if gamma is None else grad_out * gamma
    grad_x = (g - g.mean(axis=-1, keepdims=True) - xhat * (g * xhat).mean(axis=-1, keepdims=True)) / sigma
    grad_gamma = (grad_out * xhat).sum(axis=0)
    grad_beta = grad_out.sum(axis=0)
    return grad_x, grad_gamma, grad_beta
'''),
    Natural("layer_norm_grad", "layer_norm_grad_returns_beta_before_gamma",
            "It returns (grad_x, grad_beta, grad_gamma) instead of (grad_x, grad_gamma, grad_beta).", '''
def layer_norm_grad(x, grad_out, gamma=None, beta=None, eps=1e-5):
    mean = x.mean(axis=-1, keepdims=True)
    sigma = np.sqrt(x.var(axis=-1, keepdims=True) + eps)
    xhat = (x - mean) / sigma
    g = grad_out if gamma is None else grad_out * gamma
    grad_x = (g - g.mean(axis=-1, keepdims=True) - xhat * (g * xhat).mean(axis=-1, keepdims=True)) / sigma
    d = x.shape[-1]
    grad_beta = grad_out.reshape(-1, d).sum(axis=0)
    grad_gamma = (grad_out * xhat).reshape(-1, d).sum(axis=0)
    return grad_x, grad_beta, grad_gamma
'''),
    Natural("layer_norm_grad", "layer_norm_grad_missing_variance_term",
            "It leaves out the xhat * mean(g * xhat) term, which comes from the variance depending on x.", '''
def layer_norm_grad(x, grad_out, gamma=None, beta=None, eps=1e-5):
    mean = x.mean(axis=-1, keepdims=True)
    sigma = np.sqrt(x.var(axis=-1, keepdims=True) + eps)
    xhat = (x - mean) / sigma
    g = grad_out if gamma is None else grad_out * gamma
    grad_x = (g - g.mean(axis=-1, keepdims=True)) / sigma
    d = x.shape[-1]
    grad_gamma = (grad_out * xhat).reshape(-1, d).sum(axis=0)
    grad_beta = grad_out.reshape(-1, d).sum(axis=0)
    return grad_x, grad_gamma, grad_beta
'''),
    Natural("layer_norm_grad", "layer_norm_grad_missing_mean_term",
            "It leaves out the mean(g) term, which comes from the mean depending on x.", '''
def layer_norm_grad(x, grad_out, gamma=None, beta=None, eps=1e-5):
    mean = x.mean(axis=-1, keepdims=True)
    sigma = np.sqrt(x.var(axis=-1, keepdims=True) + eps)
    xhat = (x - mean) / sigma
    g = grad_out if gamma is None else grad_out * gamma
    grad_x = (g - xhat * (g * xhat).mean(axis=-1, keepdims=True)) / sigma
    d = x.shape[-1]
    grad_gamma = (grad_out * xhat).reshape(-1, d).sum(axis=0)
    grad_beta = grad_out.reshape(-1, d).sum(axis=0)
    return grad_x, grad_gamma, grad_beta
'''),
    Natural("layer_norm_grad", "layer_norm_grad_sigma_without_eps",
            "It takes sigma as the plain standard deviation, leaving eps out of sqrt(var + eps).", '''
def layer_norm_grad(x, grad_out, gamma=None, beta=None, eps=1e-5):
    centred = x - x.mean(axis=-1, keepdims=True)
    sigma = x.std(axis=-1, keepdims=True)
    xhat = centred / sigma
    g = grad_out if gamma is None else grad_out * gamma
    grad_x = (g - g.mean(axis=-1, keepdims=True) - xhat * (g * xhat).mean(axis=-1, keepdims=True)) / sigma
    d = x.shape[-1]
    grad_gamma = (grad_out * xhat).reshape(-1, d).sum(axis=0)
    grad_beta = grad_out.reshape(-1, d).sum(axis=0)
    return grad_x, grad_gamma, grad_beta
'''),
    Natural("layer_norm_grad", "layer_norm_grad_gamma_uses_x",
            "grad_gamma multiplies grad_out by the raw x instead of the normalised xhat.", '''
def layer_norm_grad(x, grad_out, gamma=None, beta=None, eps=1e-5):
    mean = x.mean(axis=-1, keepdims=True)
    sigma = np.sqrt(x.var(axis=-1, keepdims=True) + eps)
    xhat = (x - mean) / sigma
    g = grad_out if gamma is None else grad_out * gamma
    grad_x = (g - g.mean(axis=-1, keepdims=True) - xhat * (g * xhat).mean(axis=-1, keepdims=True)) / sigma
    d = x.shape[-1]
    grad_gamma = (grad_out * x).reshape(-1, d).sum(axis=0)
    grad_beta = grad_out.reshape(-1, d).sum(axis=0)
    return grad_x, grad_gamma, grad_beta
'''),
    Natural("layer_norm_grad", "layer_norm_grad_sums_over_features",
            "It sums grad_gamma and grad_beta over the feature axis (-1) instead of over the positions, "
            "giving one number per position instead of one per feature.", '''
def layer_norm_grad(x, grad_out, gamma=None, beta=None, eps=1e-5):
    mean = x.mean(axis=-1, keepdims=True)
    sigma = np.sqrt(x.var(axis=-1, keepdims=True) + eps)
    xhat = (x - mean) / sigma
    g = grad_out if gamma is None else grad_out * gamma
    grad_x = (g - g.mean(axis=-1, keepdims=True) - xhat * (g * xhat).mean(axis=-1, keepdims=True)) / sigma
    grad_gamma = np.sum(grad_out * xhat, axis=-1)
    grad_beta = np.sum(grad_out, axis=-1)
    return grad_x, grad_gamma, grad_beta
'''),
    Natural("layer_norm_grad", "layer_norm_grad_no_gamma_no_variance_term",
            "It forgets to multiply grad_out by gamma and leaves out the xhat * mean(g * xhat) term.", '''
def layer_norm_grad(x, grad_out, gamma=None, beta=None, eps=1e-5):
    mu = np.mean(x, axis=-1, keepdims=True)
    sigma = np.sqrt(np.var(x, axis=-1, keepdims=True) + eps)
    xhat = (x - mu) / sigma
    grad_x = (grad_out - np.mean(grad_out, axis=-1, keepdims=True)) / sigma
    grad_gamma = np.sum((grad_out * xhat).reshape(-1, x.shape[-1]), axis=0)
    grad_beta = np.sum(grad_out.reshape(-1, x.shape[-1]), axis=0)
    return grad_x, grad_gamma, grad_beta
''', bugs=2),

    # ------------------------------------------------------------------ 08 mean_pool
    Natural("mean_pool", "mean_pool_divides_by_full_length",
            "It leaves the padding out of the sum but divides by the full length seq instead of the number "
            "of real tokens.", '''
def mean_pool(hidden, padding_mask=None):
    if padding_mask is None:
        return hidden.mean(axis=-2)
    keep = (~padding_mask)[..., None]
    return (hidden * keep).sum(axis=-2) / hidden.shape[-2]
'''),
    Natural("mean_pool", "mean_pool_mask_inverted",
            "It treats True as a real token, averaging the padding and leaving out the real tokens.", '''
def mean_pool(hidden, padding_mask=None):
    if padding_mask is None:
        return hidden.mean(axis=-2)
    keep = padding_mask[..., None].astype(hidden.dtype)
    count = keep.sum(axis=-2)
    return (hidden * keep).sum(axis=-2) / np.maximum(count, 1)
'''),
    Natural("mean_pool", "mean_pool_no_all_padding_guard",
            "It divides by the count of real tokens with no guard, so a sequence that is all padding gives "
            "0 / 0 = NaN.", '''
def mean_pool(hidden, padding_mask=None):
    if padding_mask is None:
        return hidden.mean(axis=-2)
    keep = (~padding_mask)[..., None].astype(hidden.dtype)
    return (hidden * keep).sum(axis=-2) / keep.sum(axis=-2)
'''),
    Natural("mean_pool", "mean_pool_axis_1",
            "It averages over axis 1, which is the sequence axis only when there is exactly one batch axis.", '''
def mean_pool(hidden, padding_mask=None):
    if padding_mask is None:
        return hidden.mean(axis=1)
    keep = (~padding_mask)[..., None].astype(hidden.dtype)
    return (hidden * keep).sum(axis=1) / np.maximum(keep.sum(axis=1), 1)
'''),
    Natural("mean_pool", "mean_pool_mask_without_feature_axis",
            "It multiplies hidden by the (..., seq) mask without adding the feature axis, so the mask "
            "broadcasts against the features instead of the positions.", '''
def mean_pool(hidden, padding_mask=None):
    if padding_mask is None:
        return hidden.mean(axis=-2)
    keep = ~padding_mask
    count = np.maximum(keep.sum(axis=-1, keepdims=True), 1)
    return (hidden * keep).sum(axis=-2) / count
'''),
    Natural("mean_pool", "mean_pool_boolean_index_whole_batch",
            "Boolean indexing with the mask flattens the batch, so it averages the real tokens of every "
            "sequence together into one vector.", '''
def mean_pool(hidden, padding_mask=None):
    if padding_mask is None:
        return hidden.mean(axis=-2)
    real = hidden[~padding_mask]            # the real tokens' vectors
    return real.mean(axis=0)
'''),
    Natural("mean_pool", "mean_pool_none_not_handled",
            "It uses padding_mask without checking for None, so a call without a mask fails.", '''
def mean_pool(hidden, padding_mask=None):
    keep = (~padding_mask)[..., None].astype(hidden.dtype)
    count = keep.sum(axis=-2)
    return (hidden * keep).sum(axis=-2) / np.maximum(count, 1)
'''),
    Natural("mean_pool", "mean_pool_zeroes_padding_in_place",
            "It zeroes the padded positions of hidden in place, overwriting the caller's array.", '''
def mean_pool(hidden, padding_mask=None):
    if padding_mask is None:
        return hidden.mean(axis=-2)
    hidden[padding_mask] = 0.0
    count = (~padding_mask).sum(axis=-1)[..., None]
    return hidden.sum(axis=-2) / np.maximum(count, 1)
'''),
    Natural("mean_pool", "mean_pool_padding_summed_no_guard",
            "It sums every position, padding included, and divides by the real count with no guard for an "
            "all-padding sequence.", '''
def mean_pool(hidden, padding_mask=None):
    if padding_mask is None:
        return hidden.mean(axis=-2)
    lengths = (~padding_mask).sum(axis=-1, keepdims=True)
    return hidden.sum(axis=-2) / lengths
''', bugs=2),
    # ------------------------------------------------------------------ 08 bert_block
    Natural("bert_block", "bert_block_eps_1e-5",
            "Its layer norms use eps 1e-5 (the course's default) instead of BERT's 1e-12.", '''
def bert_block(x, params, n_heads, padding_mask=None):
    def layer_norm(h, norm):
        mean = h.mean(axis=-1, keepdims=True)
        var = h.var(axis=-1, keepdims=True)
        return (h - mean) / np.sqrt(var + 1e-5) * norm["gamma"] + norm["beta"]

    def attention(h, p):
        *lead, seq, d_model = h.shape
        d_head = d_model // n_heads

        def split(t):                       # (..., seq, d_model) -> (..., n_heads, seq, d_head)
            return np.swapaxes(t.reshape(*lead, seq, n_heads, d_head), -2, -3)

        q = split(h @ p["w_q"] + p["b_q"])
        k = split(h @ p["w_k"] + p["b_k"])
        v = split(h @ p["w_v"] + p["b_v"])
        scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(d_head)
        if padding_mask is not None:
            scores = scores + np.where(padding_mask, -1e9, 0.0)[..., None, None, :]
        scores = scores - scores.max(axis=-1, keepdims=True)
        weights = np.exp(scores)
        weights = weights / weights.sum(axis=-1, keepdims=True)
        out = np.swapaxes(weights @ v, -2, -3).reshape(*lead, seq, d_model)
        return out @ p["w_o"] + p["b_o"]

    def feed_forward(h, p):
        hidden = h @ p["w1"] + p["b1"]
        hidden = 0.5 * hidden * (1 + erf(hidden / np.sqrt(2)))
        return hidden @ p["w2"] + p["b2"]

    h = layer_norm(x + attention(x, params["attn"]), params["norm1"])
    return layer_norm(h + feed_forward(h, params["ffn"]), params["norm2"])
'''),
    Natural("bert_block", "bert_block_tanh_gelu",
            "The FFN uses GELU's tanh approximation instead of the exact erf GELU.", '''
def bert_block(x, params, n_heads, padding_mask=None):
    def layer_norm(h, norm):
        mean = h.mean(axis=-1, keepdims=True)
        var = h.var(axis=-1, keepdims=True)
        return (h - mean) / np.sqrt(var + 1e-12) * norm["gamma"] + norm["beta"]

    def attention(h, p):
        *lead, seq, d_model = h.shape
        d_head = d_model // n_heads

        def split(t):                       # (..., seq, d_model) -> (..., n_heads, seq, d_head)
            return np.swapaxes(t.reshape(*lead, seq, n_heads, d_head), -2, -3)

        q = split(h @ p["w_q"] + p["b_q"])
        k = split(h @ p["w_k"] + p["b_k"])
        v = split(h @ p["w_v"] + p["b_v"])
        scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(d_head)
        if padding_mask is not None:
            scores = scores + np.where(padding_mask, -1e9, 0.0)[..., None, None, :]
        scores = scores - scores.max(axis=-1, keepdims=True)
        weights = np.exp(scores)
        weights = weights / weights.sum(axis=-1, keepdims=True)
        out = np.swapaxes(weights @ v, -2, -3).reshape(*lead, seq, d_model)
        return out @ p["w_o"] + p["b_o"]

    def feed_forward(h, p):
        hidden = h @ p["w1"] + p["b1"]
        hidden = 0.5 * hidden * (1 + np.tanh(np.sqrt(2 / np.pi) * (hidden + 0.044715 * hidden ** 3)))
        return hidden @ p["w2"] + p["b2"]

    h = layer_norm(x + attention(x, params["attn"]), params["norm1"])
    return layer_norm(h + feed_forward(h, params["ffn"]), params["norm2"])
'''),
    Natural("bert_block", "bert_block_relu",
            "The FFN uses ReLU instead of BERT's GELU.", '''
def bert_block(x, params, n_heads, padding_mask=None):
    def layer_norm(h, norm):
        mean = h.mean(axis=-1, keepdims=True)
        var = h.var(axis=-1, keepdims=True)
        return (h - mean) / np.sqrt(var + 1e-12) * norm["gamma"] + norm["beta"]

    def attention(h, p):
        *lead, seq, d_model = h.shape
        d_head = d_model // n_heads

        def split(t):                       # (..., seq, d_model) -> (..., n_heads, seq, d_head)
            return np.swapaxes(t.reshape(*lead, seq, n_heads, d_head), -2, -3)

        q = split(h @ p["w_q"] + p["b_q"])
        k = split(h @ p["w_k"] + p["b_k"])
        v = split(h @ p["w_v"] + p["b_v"])
        scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(d_head)
        if padding_mask is not None:
            scores = scores + np.where(padding_mask, -1e9, 0.0)[..., None, None, :]
        scores = scores - scores.max(axis=-1, keepdims=True)
        weights = np.exp(scores)
        weights = weights / weights.sum(axis=-1, keepdims=True)
        out = np.swapaxes(weights @ v, -2, -3).reshape(*lead, seq, d_model)
        return out @ p["w_o"] + p["b_o"]

    def feed_forward(h, p):
        hidden = h @ p["w1"] + p["b1"]
        hidden = np.maximum(hidden, 0)
        return hidden @ p["w2"] + p["b2"]

    h = layer_norm(x + attention(x, params["attn"]), params["norm1"])
    return layer_norm(h + feed_forward(h, params["ffn"]), params["norm2"])
'''),
    Natural("bert_block", "bert_block_pre_norm",
            "It arranges the block as pre-norm, x + f(LN(x)), instead of BERT's post-norm LN(x + f(x)).", '''
def bert_block(x, params, n_heads, padding_mask=None):
    def layer_norm(h, norm):
        mean = h.mean(axis=-1, keepdims=True)
        var = h.var(axis=-1, keepdims=True)
        return (h - mean) / np.sqrt(var + 1e-12) * norm["gamma"] + norm["beta"]

    def attention(h, p):
        *lead, seq, d_model = h.shape
        d_head = d_model // n_heads

        def split(t):                       # (..., seq, d_model) -> (..., n_heads, seq, d_head)
            return np.swapaxes(t.reshape(*lead, seq, n_heads, d_head), -2, -3)

        q = split(h @ p["w_q"] + p["b_q"])
        k = split(h @ p["w_k"] + p["b_k"])
        v = split(h @ p["w_v"] + p["b_v"])
        scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(d_head)
        if padding_mask is not None:
            scores = scores + np.where(padding_mask, -1e9, 0.0)[..., None, None, :]
        scores = scores - scores.max(axis=-1, keepdims=True)
        weights = np.exp(scores)
        weights = weights / weights.sum(axis=-1, keepdims=True)
        out = np.swapaxes(weights @ v, -2, -3).reshape(*lead, seq, d_model)
        return out @ p["w_o"] + p["b_o"]

    def feed_forward(h, p):
        hidden = h @ p["w1"] + p["b1"]
        hidden = 0.5 * hidden * (1 + erf(hidden / np.sqrt(2)))
        return hidden @ p["w2"] + p["b2"]

    h = x + attention(layer_norm(x, params["norm1"]), params["attn"])
    return h + feed_forward(layer_norm(h, params["norm2"]), params["ffn"])
'''),
    Natural("bert_block", "bert_block_mask_missing_head_axis",
            'The mask gets only the query axis, (..., 1, seq), not the head axis too, so its batch axis lines up '
            'with the heads.', '''
def bert_block(x, params, n_heads, padding_mask=None):
    def layer_norm(h, norm):
        mean = h.mean(axis=-1, keepdims=True)
        var = h.var(axis=-1, keepdims=True)
        return (h - mean) / np.sqrt(var + 1e-12) * norm["gamma"] + norm["beta"]

    def attention(h, p):
        *lead, seq, d_model = h.shape
        d_head = d_model // n_heads

        def split(t):                       # (..., seq, d_model) -> (..., n_heads, seq, d_head)
            return np.swapaxes(t.reshape(*lead, seq, n_heads, d_head), -2, -3)

        q = split(h @ p["w_q"] + p["b_q"])
        k = split(h @ p["w_k"] + p["b_k"])
        v = split(h @ p["w_v"] + p["b_v"])
        scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(d_head)
        if padding_mask is not None:
            scores = scores + np.where(padding_mask, -1e9, 0.0)[..., None, :]
        scores = scores - scores.max(axis=-1, keepdims=True)
        weights = np.exp(scores)
        weights = weights / weights.sum(axis=-1, keepdims=True)
        out = np.swapaxes(weights @ v, -2, -3).reshape(*lead, seq, d_model)
        return out @ p["w_o"] + p["b_o"]

    def feed_forward(h, p):
        hidden = h @ p["w1"] + p["b1"]
        hidden = 0.5 * hidden * (1 + erf(hidden / np.sqrt(2)))
        return hidden @ p["w2"] + p["b2"]

    h = layer_norm(x + attention(x, params["attn"]), params["norm1"])
    return layer_norm(h + feed_forward(h, params["ffn"]), params["norm2"])
'''),
    Natural("bert_block", "bert_block_scale_by_d_model",
            'It scales the scores by sqrt(d_model) instead of sqrt(d_head).', '''
def bert_block(x, params, n_heads, padding_mask=None):
    def layer_norm(h, norm):
        mean = h.mean(axis=-1, keepdims=True)
        var = h.var(axis=-1, keepdims=True)
        return (h - mean) / np.sqrt(var + 1e-12) * norm["gamma"] + norm["beta"]

    def attention(h, p):
        *lead, seq, d_model = h.shape
        d_head = d_model // n_heads

        def split(t):                       # (..., seq, d_model) -> (..., n_heads, seq, d_head)
            return np.swapaxes(t.reshape(*lead, seq, n_heads, d_head), -2, -3)

        q = split(h @ p["w_q"] + p["b_q"])
        k = split(h @ p["w_k"] + p["b_k"])
        v = split(h @ p["w_v"] + p["b_v"])
        scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(d_model)
        if padding_mask is not None:
            scores = scores + np.where(padding_mask, -1e9, 0.0)[..., None, None, :]
        scores = scores - scores.max(axis=-1, keepdims=True)
        weights = np.exp(scores)
        weights = weights / weights.sum(axis=-1, keepdims=True)
        out = np.swapaxes(weights @ v, -2, -3).reshape(*lead, seq, d_model)
        return out @ p["w_o"] + p["b_o"]

    def feed_forward(h, p):
        hidden = h @ p["w1"] + p["b1"]
        hidden = 0.5 * hidden * (1 + erf(hidden / np.sqrt(2)))
        return hidden @ p["w2"] + p["b2"]

    h = layer_norm(x + attention(x, params["attn"]), params["norm1"])
    return layer_norm(h + feed_forward(h, params["ffn"]), params["norm2"])
'''),
    Natural("bert_block", "bert_block_hf_mask_inverted",
            "It writes Hugging Face's additive mask (1 - mask) * -10000, which expects 1 at real tokens, with "
            "this course's mask that is True at padding, so the real tokens are masked.", '''
def bert_block(x, params, n_heads, padding_mask=None):
    def layer_norm(h, norm):
        mean = h.mean(axis=-1, keepdims=True)
        var = h.var(axis=-1, keepdims=True)
        return (h - mean) / np.sqrt(var + 1e-12) * norm["gamma"] + norm["beta"]

    def attention(h, p):
        *lead, seq, d_model = h.shape
        d_head = d_model // n_heads

        def split(t):                       # (..., seq, d_model) -> (..., n_heads, seq, d_head)
            return np.swapaxes(t.reshape(*lead, seq, n_heads, d_head), -2, -3)

        q = split(h @ p["w_q"] + p["b_q"])
        k = split(h @ p["w_k"] + p["b_k"])
        v = split(h @ p["w_v"] + p["b_v"])
        scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(d_head)
        if padding_mask is not None:
            scores = scores + (1.0 - padding_mask[..., None, None, :]) * -10000.0
        scores = scores - scores.max(axis=-1, keepdims=True)
        weights = np.exp(scores)
        weights = weights / weights.sum(axis=-1, keepdims=True)
        out = np.swapaxes(weights @ v, -2, -3).reshape(*lead, seq, d_model)
        return out @ p["w_o"] + p["b_o"]

    def feed_forward(h, p):
        hidden = h @ p["w1"] + p["b1"]
        hidden = 0.5 * hidden * (1 + erf(hidden / np.sqrt(2)))
        return hidden @ p["w2"] + p["b2"]

    h = layer_norm(x + attention(x, params["attn"]), params["norm1"])
    return layer_norm(h + feed_forward(h, params["ffn"]), params["norm2"])
'''),
    Natural("bert_block", "bert_block_ffn_residual_from_input",
            "The second residual adds the block's input x instead of h, the output of the first Add & Norm.", '''
def bert_block(x, params, n_heads, padding_mask=None):
    def layer_norm(h, norm):
        mean = h.mean(axis=-1, keepdims=True)
        var = h.var(axis=-1, keepdims=True)
        return (h - mean) / np.sqrt(var + 1e-12) * norm["gamma"] + norm["beta"]

    def attention(h, p):
        *lead, seq, d_model = h.shape
        d_head = d_model // n_heads

        def split(t):                       # (..., seq, d_model) -> (..., n_heads, seq, d_head)
            return np.swapaxes(t.reshape(*lead, seq, n_heads, d_head), -2, -3)

        q = split(h @ p["w_q"] + p["b_q"])
        k = split(h @ p["w_k"] + p["b_k"])
        v = split(h @ p["w_v"] + p["b_v"])
        scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(d_head)
        if padding_mask is not None:
            scores = scores + np.where(padding_mask, -1e9, 0.0)[..., None, None, :]
        scores = scores - scores.max(axis=-1, keepdims=True)
        weights = np.exp(scores)
        weights = weights / weights.sum(axis=-1, keepdims=True)
        out = np.swapaxes(weights @ v, -2, -3).reshape(*lead, seq, d_model)
        return out @ p["w_o"] + p["b_o"]

    def feed_forward(h, p):
        hidden = h @ p["w1"] + p["b1"]
        hidden = 0.5 * hidden * (1 + erf(hidden / np.sqrt(2)))
        return hidden @ p["w2"] + p["b2"]

    h = layer_norm(x + attention(x, params["attn"]), params["norm1"])
    return layer_norm(x + feed_forward(h, params["ffn"]), params["norm2"])
'''),
    Natural("bert_block", "bert_block_merge_by_reshape",
            'It merges the heads with a plain reshape, without moving the head axis back next to d_head.', '''
def bert_block(x, params, n_heads, padding_mask=None):
    def layer_norm(h, norm):
        mean = h.mean(axis=-1, keepdims=True)
        var = h.var(axis=-1, keepdims=True)
        return (h - mean) / np.sqrt(var + 1e-12) * norm["gamma"] + norm["beta"]

    def attention(h, p):
        *lead, seq, d_model = h.shape
        d_head = d_model // n_heads

        def split(t):                       # (..., seq, d_model) -> (..., n_heads, seq, d_head)
            return np.swapaxes(t.reshape(*lead, seq, n_heads, d_head), -2, -3)

        q = split(h @ p["w_q"] + p["b_q"])
        k = split(h @ p["w_k"] + p["b_k"])
        v = split(h @ p["w_v"] + p["b_v"])
        scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(d_head)
        if padding_mask is not None:
            scores = scores + np.where(padding_mask, -1e9, 0.0)[..., None, None, :]
        scores = scores - scores.max(axis=-1, keepdims=True)
        weights = np.exp(scores)
        weights = weights / weights.sum(axis=-1, keepdims=True)
        out = (weights @ v).reshape(*lead, seq, d_model)
        return out @ p["w_o"] + p["b_o"]

    def feed_forward(h, p):
        hidden = h @ p["w1"] + p["b1"]
        hidden = 0.5 * hidden * (1 + erf(hidden / np.sqrt(2)))
        return hidden @ p["w2"] + p["b2"]

    h = layer_norm(x + attention(x, params["attn"]), params["norm1"])
    return layer_norm(h + feed_forward(h, params["ffn"]), params["norm2"])
'''),
    Natural("bert_block", "bert_block_no_output_projection",
            'The attention leaves out the output projection w_o, b_o.', '''
def bert_block(x, params, n_heads, padding_mask=None):
    def layer_norm(h, norm):
        mean = h.mean(axis=-1, keepdims=True)
        var = h.var(axis=-1, keepdims=True)
        return (h - mean) / np.sqrt(var + 1e-12) * norm["gamma"] + norm["beta"]

    def attention(h, p):
        *lead, seq, d_model = h.shape
        d_head = d_model // n_heads

        def split(t):                       # (..., seq, d_model) -> (..., n_heads, seq, d_head)
            return np.swapaxes(t.reshape(*lead, seq, n_heads, d_head), -2, -3)

        q = split(h @ p["w_q"] + p["b_q"])
        k = split(h @ p["w_k"] + p["b_k"])
        v = split(h @ p["w_v"] + p["b_v"])
        scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(d_head)
        if padding_mask is not None:
            scores = scores + np.where(padding_mask, -1e9, 0.0)[..., None, None, :]
        scores = scores - scores.max(axis=-1, keepdims=True)
        weights = np.exp(scores)
        weights = weights / weights.sum(axis=-1, keepdims=True)
        out = np.swapaxes(weights @ v, -2, -3).reshape(*lead, seq, d_model)
        return out

    def feed_forward(h, p):
        hidden = h @ p["w1"] + p["b1"]
        hidden = 0.5 * hidden * (1 + erf(hidden / np.sqrt(2)))
        return hidden @ p["w2"] + p["b2"]

    h = layer_norm(x + attention(x, params["attn"]), params["norm1"])
    return layer_norm(h + feed_forward(h, params["ffn"]), params["norm2"])
'''),
    Natural("bert_block", "bert_block_attention_weights_transposed",
            "It transposes the attention's weight matrices as if they were PyTorch's (out, in), though "
            'model.layers stores them (in, out) for x @ w.', '''
def bert_block(x, params, n_heads, padding_mask=None):
    def layer_norm(h, norm):
        mean = h.mean(axis=-1, keepdims=True)
        var = h.var(axis=-1, keepdims=True)
        return (h - mean) / np.sqrt(var + 1e-12) * norm["gamma"] + norm["beta"]

    def attention(h, p):
        *lead, seq, d_model = h.shape
        d_head = d_model // n_heads

        def split(t):                       # (..., seq, d_model) -> (..., n_heads, seq, d_head)
            return np.swapaxes(t.reshape(*lead, seq, n_heads, d_head), -2, -3)

        q = split(h @ p["w_q"].T + p["b_q"])
        k = split(h @ p["w_k"].T + p["b_k"])
        v = split(h @ p["w_v"].T + p["b_v"])
        scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(d_head)
        if padding_mask is not None:
            scores = scores + np.where(padding_mask, -1e9, 0.0)[..., None, None, :]
        scores = scores - scores.max(axis=-1, keepdims=True)
        weights = np.exp(scores)
        weights = weights / weights.sum(axis=-1, keepdims=True)
        out = np.swapaxes(weights @ v, -2, -3).reshape(*lead, seq, d_model)
        return out @ p["w_o"].T + p["b_o"]

    def feed_forward(h, p):
        hidden = h @ p["w1"] + p["b1"]
        hidden = 0.5 * hidden * (1 + erf(hidden / np.sqrt(2)))
        return hidden @ p["w2"] + p["b2"]

    h = layer_norm(x + attention(x, params["attn"]), params["norm1"])
    return layer_norm(h + feed_forward(h, params["ffn"]), params["norm2"])
'''),
    Natural("bert_block", "bert_block_ignores_padding_mask",
            'It never applies the padding mask, so real tokens attend to the padding.', '''
def bert_block(x, params, n_heads, padding_mask=None):
    def layer_norm(h, norm):
        mean = h.mean(axis=-1, keepdims=True)
        var = h.var(axis=-1, keepdims=True)
        return (h - mean) / np.sqrt(var + 1e-12) * norm["gamma"] + norm["beta"]

    def attention(h, p):
        *lead, seq, d_model = h.shape
        d_head = d_model // n_heads

        def split(t):                       # (..., seq, d_model) -> (..., n_heads, seq, d_head)
            return np.swapaxes(t.reshape(*lead, seq, n_heads, d_head), -2, -3)

        q = split(h @ p["w_q"] + p["b_q"])
        k = split(h @ p["w_k"] + p["b_k"])
        v = split(h @ p["w_v"] + p["b_v"])
        scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(d_head)
        scores = scores - scores.max(axis=-1, keepdims=True)
        weights = np.exp(scores)
        weights = weights / weights.sum(axis=-1, keepdims=True)
        out = np.swapaxes(weights @ v, -2, -3).reshape(*lead, seq, d_model)
        return out @ p["w_o"] + p["b_o"]

    def feed_forward(h, p):
        hidden = h @ p["w1"] + p["b1"]
        hidden = 0.5 * hidden * (1 + erf(hidden / np.sqrt(2)))
        return hidden @ p["w2"] + p["b2"]

    h = layer_norm(x + attention(x, params["attn"]), params["norm1"])
    return layer_norm(h + feed_forward(h, params["ffn"]), params["norm2"])
'''),
    Natural("bert_block", "bert_block_lesson_defaults",
            "It keeps the course's earlier defaults: ReLU instead of GELU and eps 1e-5 instead of 1e-12.", '''
def bert_block(x, params, n_heads, padding_mask=None):
    def layer_norm(h, norm):
        mean = h.mean(axis=-1, keepdims=True)
        var = h.var(axis=-1, keepdims=True)
        return (h - mean) / np.sqrt(var + 1e-5) * norm["gamma"] + norm["beta"]

    def attention(h, p):
        *lead, seq, d_model = h.shape
        d_head = d_model // n_heads

        def split(t):                       # (..., seq, d_model) -> (..., n_heads, seq, d_head)
            return np.swapaxes(t.reshape(*lead, seq, n_heads, d_head), -2, -3)

        q = split(h @ p["w_q"] + p["b_q"])
        k = split(h @ p["w_k"] + p["b_k"])
        v = split(h @ p["w_v"] + p["b_v"])
        scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(d_head)
        if padding_mask is not None:
            scores = scores + np.where(padding_mask, -1e9, 0.0)[..., None, None, :]
        scores = scores - scores.max(axis=-1, keepdims=True)
        weights = np.exp(scores)
        weights = weights / weights.sum(axis=-1, keepdims=True)
        out = np.swapaxes(weights @ v, -2, -3).reshape(*lead, seq, d_model)
        return out @ p["w_o"] + p["b_o"]

    def feed_forward(h, p):
        hidden = h @ p["w1"] + p["b1"]
        hidden = np.maximum(hidden, 0)
        return hidden @ p["w2"] + p["b2"]

    h = layer_norm(x + attention(x, params["attn"]), params["norm1"])
    return layer_norm(h + feed_forward(h, params["ffn"]), params["norm2"])
''', bugs=2),
    # ------------------------------------------------------------------ 09 rms_norm
    Natural("rms_norm", "rms_norm_norm_over_sqrt_d_no_eps",
            "It divides by the vector norm over sqrt(d), the root mean square without eps, so a row of zeros "
            "gives 0 / 0 and tiny rows are blown up instead of damped.", '''
def rms_norm(x, gamma=None, eps=1e-5):
    rms = np.linalg.norm(x, axis=-1, keepdims=True) / np.sqrt(x.shape[-1])
    y = x / rms
    return y if gamma is None else y * gamma
''', bugs=2),
    Natural("rms_norm", "rms_norm_root_of_the_sum",
            "It takes the square root of the sum of squares, not of their mean, so every row is d times too "
            "small in square (sqrt(d) too small).", '''
def rms_norm(x, gamma=None, eps=1e-5):
    out = x / np.sqrt(np.sum(x ** 2, axis=-1, keepdims=True) + eps)
    if gamma is not None:
        out = out * gamma
    return out
'''),
    Natural("rms_norm", "rms_norm_adds_gamma",
            "It adds gamma instead of multiplying by it.", '''
def rms_norm(x, gamma=None, eps=1e-5):
    out = x / np.sqrt(np.mean(np.square(x), axis=-1, keepdims=True) + eps)
    if gamma is not None:
        out = out + gamma
    return out
'''),
    Natural("rms_norm", "rms_norm_one_rms_for_everything",
            "It takes one mean square over the whole array instead of one per row.", '''
def rms_norm(x, gamma=None, eps=1e-5):
    out = x / np.sqrt(np.mean(x * x) + eps)
    return out * gamma if gamma is not None else out
'''),
    Natural("rms_norm", "rms_norm_variance",
            "It divides by the standard deviation (the mean square of the centred row) instead of the root mean "
            "square of the row itself.", '''
def rms_norm(x, gamma=None, eps=1e-5):
    var = np.var(x, axis=-1, keepdims=True)
    out = x / np.sqrt(var + eps)
    if gamma is not None:
        out *= gamma
    return out
'''),
    # ------------------------------------------------------------------ 09 rope
    Natural("rope", "rope_interleaved_not_put_back",
            "In the interleaved layout it turns the right pairs but returns the turned halves side by side, as "
            "the half layout does, instead of putting each pair back into columns 2i and 2i + 1.", '''
def rope(x, base=10000.0, layout="half"):
    if layout not in ("half", "interleaved"):
        raise ValueError(f"layout must be 'half' or 'interleaved', got {layout!r}")
    n, d = x.shape[-2], x.shape[-1]
    freqs = base ** (-np.arange(0, d, 2) / d)
    ang = np.arange(n)[:, None] * freqs[None, :]
    c, s = np.cos(ang).astype(x.dtype), np.sin(ang).astype(x.dtype)
    if layout == "half":
        x1, x2 = x[..., : d // 2], x[..., d // 2:]
    else:
        x1, x2 = x[..., ::2], x[..., 1::2]
    return np.concatenate([x1 * c - x2 * s, x1 * s + x2 * c], axis=-1)
'''),
    Natural("rope", "rope_ignores_layout",
            "It always uses the half layout, whatever layout asks for.", '''
def rope(x, base=10000.0, layout="half"):
    if layout not in ("half", "interleaved"):
        raise ValueError(f"layout must be 'half' or 'interleaved', got {layout!r}")
    n, d = x.shape[-2], x.shape[-1]
    theta = base ** (-np.arange(0, d, 2) / d)
    ang = np.arange(n)[:, None] * theta
    c, s = np.cos(ang).astype(x.dtype), np.sin(ang).astype(x.dtype)
    x1, x2 = x[..., : d // 2], x[..., d // 2:]
    return np.concatenate([x1 * c - x2 * s, x1 * s + x2 * c], axis=-1)
'''),
    Natural("rope", "rope_floor_division_in_exponent",
            "It computes the exponent -2i / d_head with floor division, so every pair but the first turns at the "
            "speed base^-1 (or all at the same speed) instead of its own.", '''
def rope(x, base=10000.0, layout="half"):
    if layout not in ("half", "interleaved"):
        raise ValueError(f"layout must be 'half' or 'interleaved', got {layout!r}")
    n, d = x.shape[-2], x.shape[-1]
    theta = base ** (-(2 * np.arange(d // 2)) // d)
    ang = np.outer(np.arange(n), theta)
    c, s = np.cos(ang).astype(x.dtype), np.sin(ang).astype(x.dtype)
    if layout == "interleaved":
        x1, x2 = x[..., 0::2], x[..., 1::2]
        return np.stack([x1 * c - x2 * s, x1 * s + x2 * c], axis=-1).reshape(x.shape)
    x1, x2 = x[..., : d // 2], x[..., d // 2:]
    return np.concatenate([x1 * c - x2 * s, x1 * s + x2 * c], axis=-1)
'''),
    Natural("rope", "rope_float64_out",
            "It builds the cosines and sines in float64 and does not cast them, so a float32 input comes back as "
            "float64.", '''
def rope(x, base=10000.0, layout="half"):
    if layout not in ("half", "interleaved"):
        raise ValueError(f"layout must be 'half' or 'interleaved', got {layout!r}")
    n, d = x.shape[-2], x.shape[-1]
    ang = np.arange(n)[:, None] * base ** (-np.arange(0, d, 2) / d)
    c, s = np.cos(ang), np.sin(ang)
    if layout == "interleaved":
        x1, x2 = x[..., 0::2], x[..., 1::2]
        return np.stack([x1 * c - x2 * s, x1 * s + x2 * c], axis=-1).reshape(x.shape)
    x1, x2 = x[..., : d // 2], x[..., d // 2:]
    return np.concatenate([x1 * c - x2 * s, x1 * s + x2 * c], axis=-1)
'''),
    Natural("rope", "rope_sequence_from_the_first_axis",
            "It takes the number of positions from x's first axis, which is a batch axis when x has one.", '''
def rope(x, base=10000.0, layout="half"):
    if layout not in ("half", "interleaved"):
        raise ValueError(f"layout must be 'half' or 'interleaved', got {layout!r}")
    n, d = len(x), x.shape[-1]
    ang = np.arange(n)[:, None] * base ** (-np.arange(0, d, 2) / d)
    c, s = np.cos(ang).astype(x.dtype), np.sin(ang).astype(x.dtype)
    if layout == "interleaved":
        x1, x2 = x[..., 0::2], x[..., 1::2]
        return np.stack([x1 * c - x2 * s, x1 * s + x2 * c], axis=-1).reshape(x.shape)
    x1, x2 = x[..., : d // 2], x[..., d // 2:]
    return np.concatenate([x1 * c - x2 * s, x1 * s + x2 * c], axis=-1)
'''),
    # ------------------------------------------------------------------ 09 blockwise_attention
    Natural("blockwise_attention", "blockwise_no_scaling",
            "It never divides the scores by sqrt(d_k).", '''
def blockwise_attention(q, k, v, padding_mask=None, block=64):
    m = np.full(q.shape[:-1] + (1,), -np.inf, dtype=q.dtype)
    l = np.zeros(q.shape[:-1] + (1,), dtype=q.dtype)
    acc = np.zeros(q.shape[:-1] + (v.shape[-1],), dtype=q.dtype)
    for i in range(0, k.shape[-2], block):
        s = q @ np.swapaxes(k[..., i:i + block, :], -1, -2)
        if padding_mask is not None:
            s = np.where(padding_mask[..., None, i:i + block], -np.inf, s)
        m2 = np.maximum(m, s.max(axis=-1, keepdims=True))
        m_safe = np.where(np.isinf(m2), 0, m2)
        corr = np.exp(m - m_safe)
        p = np.exp(s - m_safe)
        l = l * corr + p.sum(axis=-1, keepdims=True)
        acc = acc * corr + p @ v[..., i:i + block, :]
        m = m2
    return acc / np.where(l == 0, 1, l)
'''),
    Natural("blockwise_attention", "blockwise_drops_the_last_short_block",
            "Its loop stops before a last block shorter than block, so the last keys are never read.", '''
def blockwise_attention(q, k, v, padding_mask=None, block=64):
    scale = 1 / math.sqrt(q.shape[-1])
    n = k.shape[-2]
    m = np.full(q.shape[:-1] + (1,), -np.inf, dtype=q.dtype)
    l = np.zeros(q.shape[:-1] + (1,), dtype=q.dtype)
    acc = np.zeros(q.shape[:-1] + (v.shape[-1],), dtype=q.dtype)
    for i in range(0, max(n - block + 1, 1), block):
        s = scale * (q @ np.swapaxes(k[..., i:i + block, :], -1, -2))
        if padding_mask is not None:
            s = np.where(padding_mask[..., None, i:i + block], -np.inf, s)
        m2 = np.maximum(m, s.max(axis=-1, keepdims=True))
        m_safe = np.where(np.isinf(m2), 0, m2)
        corr = np.exp(m - m_safe)
        p = np.exp(s - m_safe)
        l = l * corr + p.sum(axis=-1, keepdims=True)
        acc = acc * corr + p @ v[..., i:i + block, :]
        m = m2
    return acc / np.where(l == 0, 1, l)
'''),
    Natural("blockwise_attention", "blockwise_mask_sets_zero",
            "It puts the padded keys' scores at 0 instead of -inf, so padded keys still get weight.", '''
def blockwise_attention(q, k, v, padding_mask=None, block=64):
    scale = 1 / math.sqrt(q.shape[-1])
    m = np.full(q.shape[:-1] + (1,), -np.inf, dtype=q.dtype)
    l = np.zeros(q.shape[:-1] + (1,), dtype=q.dtype)
    acc = np.zeros(q.shape[:-1] + (v.shape[-1],), dtype=q.dtype)
    for i in range(0, k.shape[-2], block):
        s = scale * (q @ np.swapaxes(k[..., i:i + block, :], -1, -2))
        if padding_mask is not None:
            s = np.where(padding_mask[..., None, i:i + block], 0.0, s)
        m2 = np.maximum(m, s.max(axis=-1, keepdims=True))
        corr = np.exp(m - m2)
        p = np.exp(s - m2)
        l = l * corr + p.sum(axis=-1, keepdims=True)
        acc = acc * corr + p @ v[..., i:i + block, :]
        m = m2
    return acc / l
'''),
    Natural("blockwise_attention", "blockwise_ignores_the_mask",
            "It never applies padding_mask, so padded keys are read like real ones.", '''
def blockwise_attention(q, k, v, padding_mask=None, block=64):
    scale = 1 / math.sqrt(q.shape[-1])
    m = np.full(q.shape[:-1] + (1,), -np.inf, dtype=q.dtype)
    l = np.zeros(q.shape[:-1] + (1,), dtype=q.dtype)
    acc = np.zeros(q.shape[:-1] + (v.shape[-1],), dtype=q.dtype)
    for i in range(0, k.shape[-2], block):
        s = scale * (q @ np.swapaxes(k[..., i:i + block, :], -1, -2))
        m2 = np.maximum(m, s.max(axis=-1, keepdims=True))
        corr = np.exp(m - m2)
        p = np.exp(s - m2)
        l = l * corr + p.sum(axis=-1, keepdims=True)
        acc = acc * corr + p @ v[..., i:i + block, :]
        m = m2
    return acc / l
'''),
    Natural("blockwise_attention", "blockwise_correction_inverted",
            "It multiplies the old sums by exp(new maximum - old maximum), the inverse of the right factor.", '''
def blockwise_attention(q, k, v, padding_mask=None, block=64):
    scale = 1 / math.sqrt(q.shape[-1])
    m = np.full(q.shape[:-1] + (1,), -np.inf, dtype=q.dtype)
    l = np.zeros(q.shape[:-1] + (1,), dtype=q.dtype)
    acc = np.zeros(q.shape[:-1] + (v.shape[-1],), dtype=q.dtype)
    for i in range(0, k.shape[-2], block):
        s = scale * (q @ np.swapaxes(k[..., i:i + block, :], -1, -2))
        if padding_mask is not None:
            s = np.where(padding_mask[..., None, i:i + block], -np.inf, s)
        m2 = np.maximum(m, s.max(axis=-1, keepdims=True))
        m_safe = np.where(np.isinf(m2), 0, m2)
        corr = np.exp(np.where(np.isinf(m), -np.inf, m_safe - m))
        p = np.exp(s - m_safe)
        l = l * corr + p.sum(axis=-1, keepdims=True)
        acc = acc * corr + p @ v[..., i:i + block, :]
        m = m2
    return acc / np.where(l == 0, 1, l)
'''),
]
