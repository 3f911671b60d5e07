"""Lesson 09's typical mistakes, each written as a learner would write it."""

from . import Wrong

BLOCKWISE_HEAD = '''
def blockwise_attention(q, k, v, padding_mask=None, block=64):
    scale = 1 / math.sqrt(q.shape[-1])
    m = np.full(q.shape[:-1] + (1,), -np.inf, dtype=q.dtype)
    l = np.zeros(q.shape[:-1] + (1,), dtype=q.dtype)
    o = np.zeros(q.shape[:-1] + v.shape[-1:], dtype=q.dtype)
    for start in range(0, k.shape[-2], block):
        s = q @ np.swapaxes(k[..., start:start + block, :], -1, -2) * scale
        if padding_mask is not None:
            s = np.where(padding_mask[..., None, start:start + block], -np.inf, s)
        m_new = np.maximum(m, s.max(axis=-1, keepdims=True))
        safe = np.where(np.isneginf(m_new), 0, m_new)
        p = np.exp(s - safe)
        c = np.exp(m - safe)
'''

MISTAKES = [
    Wrong('rms_norm_takes_the_mean_out', '''
def rms_norm(x, gamma=None, eps=1e-5):
    x = x - x.mean(axis=-1, keepdims=True)
    y = x / np.sqrt((x ** 2).mean(axis=-1, keepdims=True) + eps)
    if gamma is not None:
        y = y * gamma
    return y
'''),
    Wrong('rms_norm_divides_by_the_standard_deviation', '''
def rms_norm(x, gamma=None, eps=1e-5):
    y = x / np.sqrt(x.var(axis=-1, keepdims=True) + eps)
    if gamma is not None:
        y = y * gamma
    return y
'''),
    Wrong('rms_norm_without_the_root', '''
def rms_norm(x, gamma=None, eps=1e-5):
    y = x / (np.mean(x ** 2, axis=-1, keepdims=True) + eps)
    return y if gamma is None else y * gamma
'''),
    Wrong('rms_norm_eps_outside_the_root', '''
def rms_norm(x, gamma=None, eps=1e-5):
    rms = np.sqrt(np.mean(x * x, axis=-1, keepdims=True))
    y = x / (rms + eps)
    if gamma is not None:
        y = y * gamma
    return y
'''),
    Wrong('rms_norm_over_the_sequence', '''
def rms_norm(x, gamma=None, eps=1e-5):
    y = x / np.sqrt(np.mean(x ** 2, axis=-2, keepdims=True) + eps)
    if gamma is not None:
        y = y * gamma
    return y
'''),
    Wrong('rms_norm_ignores_gamma', '''
def rms_norm(x, gamma=None, eps=1e-5):
    return x / np.sqrt(np.mean(x ** 2, axis=-1, keepdims=True) + eps)
'''),
    Wrong('rope_other_layout', '''
def rope(x, base=10000.0, layout="half"):
    if layout not in ("half", "interleaved"):
        raise ValueError(f"layout must be 'half' or 'interleaved', got {layout!r}")
    seq, d = x.shape[-2], x.shape[-1]
    angle = np.arange(seq)[:, None] * base ** (-np.arange(0, d, 2) / d)
    cos, sin = np.cos(angle).astype(x.dtype), np.sin(angle).astype(x.dtype)
    if layout == "half":
        a, b = x[..., 0::2], x[..., 1::2]
        return np.stack([a * cos - b * sin, a * sin + b * cos], axis=-1).reshape(x.shape)
    a, b = x[..., : d // 2], x[..., d // 2:]
    return np.concatenate([a * cos - b * sin, a * sin + b * cos], axis=-1)
'''),
    Wrong('rope_turns_backwards', '''
def rope(x, base=10000.0, layout="half"):
    if layout not in ("half", "interleaved"):
        raise ValueError(f"layout must be 'half' or 'interleaved', got {layout!r}")
    seq, d = x.shape[-2], x.shape[-1]
    angle = np.arange(seq)[:, None] * base ** (-np.arange(0, d, 2) / d)
    cos, sin = np.cos(angle).astype(x.dtype), np.sin(angle).astype(x.dtype)
    if layout == "interleaved":
        a, b = x[..., 0::2], x[..., 1::2]
        return np.stack([a * cos + b * sin, b * cos - a * sin], axis=-1).reshape(x.shape)
    a, b = x[..., : d // 2], x[..., d // 2:]
    return np.concatenate([a * cos + b * sin, b * cos - a * sin], axis=-1)
'''),
    Wrong('rope_frequency_per_column', '''
def rope(x, base=10000.0, layout="half"):
    if layout not in ("half", "interleaved"):
        raise ValueError(f"layout must be 'half' or 'interleaved', got {layout!r}")
    seq, d = x.shape[-2], x.shape[-1]
    theta = base ** (-np.arange(d // 2) / d)
    angle = np.outer(np.arange(seq), theta)
    cos, sin = np.cos(angle).astype(x.dtype), np.sin(angle).astype(x.dtype)
    if layout == "interleaved":
        a, b = x[..., 0::2], x[..., 1::2]
        return np.stack([a * cos - b * sin, a * sin + b * cos], axis=-1).reshape(x.shape)
    a, b = x[..., : d // 2], x[..., d // 2:]
    return np.concatenate([a * cos - b * sin, a * sin + b * cos], axis=-1)
'''),
    Wrong('rope_positions_from_one', '''
def rope(x, base=10000.0, layout="half"):
    if layout not in ("half", "interleaved"):
        raise ValueError(f"layout must be 'half' or 'interleaved', got {layout!r}")
    seq, d = x.shape[-2], x.shape[-1]
    positions = np.arange(1, seq + 1)
    angle = positions[:, None] * base ** (-np.arange(0, d, 2) / d)
    cos, sin = np.cos(angle).astype(x.dtype), np.sin(angle).astype(x.dtype)
    if layout == "interleaved":
        a, b = x[..., 0::2], x[..., 1::2]
        return np.stack([a * cos - b * sin, a * sin + b * cos], axis=-1).reshape(x.shape)
    a, b = x[..., : d // 2], x[..., d // 2:]
    return np.concatenate([a * cos - b * sin, a * sin + b * cos], axis=-1)
'''),
    Wrong('rope_ignores_base', '''
def rope(x, base=10000.0, layout="half"):
    if layout not in ("half", "interleaved"):
        raise ValueError(f"layout must be 'half' or 'interleaved', got {layout!r}")
    seq, d = x.shape[-2], x.shape[-1]
    angle = np.arange(seq)[:, None] * 10000.0 ** (-np.arange(0, d, 2) / d)
    cos, sin = np.cos(angle).astype(x.dtype), np.sin(angle).astype(x.dtype)
    if layout == "interleaved":
        a, b = x[..., 0::2], x[..., 1::2]
        return np.stack([a * cos - b * sin, a * sin + b * cos], axis=-1).reshape(x.shape)
    a, b = x[..., : d // 2], x[..., d // 2:]
    return np.concatenate([a * cos - b * sin, a * sin + b * cos], axis=-1)
'''),
    Wrong('blockwise_without_rescaling', BLOCKWISE_HEAD + '''
        l = l + p.sum(axis=-1, keepdims=True)
        o = o + p @ v[..., start:start + block, :]
        m = m_new
    return o / np.where(l == 0, 1, l)
'''),
    Wrong('blockwise_rescales_only_the_sum', BLOCKWISE_HEAD + '''
        l = l * c + p.sum(axis=-1, keepdims=True)
        o = o + p @ v[..., start:start + block, :]
        m = m_new
    return o / np.where(l == 0, 1, l)
'''),
    Wrong('blockwise_rescales_only_the_output', BLOCKWISE_HEAD + '''
        l = l + p.sum(axis=-1, keepdims=True)
        o = o * c + p @ v[..., start:start + block, :]
        m = m_new
    return o / np.where(l == 0, 1, l)
'''),
    Wrong('blockwise_each_block_alone', '''
def blockwise_attention(q, k, v, padding_mask=None, block=64):
    outs = []
    for start in range(0, k.shape[-2], block):
        s = q @ np.swapaxes(k[..., start:start + block, :], -1, -2) / math.sqrt(q.shape[-1])
        if padding_mask is not None:
            s = np.where(padding_mask[..., None, start:start + block], -np.inf, s)
        e = np.exp(s - s.max(axis=-1, keepdims=True))
        outs.append(e / e.sum(axis=-1, keepdims=True) @ v[..., start:start + block, :])
    return sum(outs) / len(outs)
'''),
    Wrong('blockwise_nan_for_all_padding', '''
def blockwise_attention(q, k, v, padding_mask=None, block=64):
    scale = 1 / math.sqrt(q.shape[-1])
    m = np.full(q.shape[:-1] + (1,), -1e30, dtype=q.dtype)
    l = np.zeros(q.shape[:-1] + (1,), dtype=q.dtype)
    o = np.zeros(q.shape[:-1] + v.shape[-1:], dtype=q.dtype)
    for start in range(0, k.shape[-2], block):
        s = q @ np.swapaxes(k[..., start:start + block, :], -1, -2) * scale
        if padding_mask is not None:
            s = np.where(padding_mask[..., None, start:start + block], -np.inf, s)
        m_new = np.maximum(m, s.max(axis=-1, keepdims=True))
        c = np.exp(m - m_new)
        p = np.exp(s - m_new)
        l = l * c + p.sum(axis=-1, keepdims=True)
        o = o * c + p @ v[..., start:start + block, :]
        m = m_new
    return o / l
'''),
]
