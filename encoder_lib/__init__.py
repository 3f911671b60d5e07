"""encoder_lib: the Transformer encoder block in small numpy functions.

The course's shared library. Every function takes arrays of shape
``(..., seq, d_model)`` (any leading batch axes), keeps float32 and float64
as given, and checks its arguments with messages that name the argument.
Importing it loads numpy only; the widgets and plots live in modules of their
own that only the notebooks import.

    >>> import numpy as np, encoder_lib as el
    >>> rng = np.random.default_rng(0)
    >>> layers = [el.init_block_params(16, 64, rng) for _ in range(2)]
    >>> x = rng.standard_normal((2, 5, 16), dtype=np.float32)
    >>> el.encoder(x, layers, n_heads=4, norm="pre").shape
    (2, 5, 16)
"""

from .attention import (attention_weights_bytes, blockwise_attention, causal_mask, local_window_mask, mask_conventions,
                        masked_softmax, merge_heads, multi_head_attention, scaled_dot_product_attention, softmax,
                        split_heads)
from .block import BlockConfig, encoder, encoder_block, trace_encoder, trace_encoder_block
from .ffn import feed_forward, gated_d_ff, gated_feed_forward, geglu, gelu, relu, silu, swiglu
from .grad import (blockwise_attention_grad, encoder_block_grad, encoder_grad, feed_forward_grad, gated_feed_forward_grad,
                   layer_norm_grad,
                   modern_attention_grad, multi_head_attention_grad, rms_norm_grad, rope_grad,
                   scaled_dot_product_attention_grad, softmax_grad)
from .modern import local_global_configs, modern_attention
from .norm import layer_norm, peri_norm, post_norm, pre_norm, rms_norm
from .params import (count_params, from_modernbert_state_dict, from_torch_state_dict, init_block_params,
                     modernbert_configs, to_modernbert_state_dict, to_torch_state_dict)
from .pooling import mean_pool
from .positional import positional_encoding, rope, rope_pairs, shift_rotation

__all__ = [
    "softmax", "masked_softmax", "scaled_dot_product_attention", "split_heads", "merge_heads",
    "multi_head_attention",
    "feed_forward", "relu", "gelu", "layer_norm", "post_norm", "pre_norm", "encoder_block", "encoder",
    "trace_encoder_block", "trace_encoder", "BlockConfig", "positional_encoding", "init_block_params",
    "count_params", "from_torch_state_dict", "to_torch_state_dict",
    # backward passes (encoder_lib.grad)
    "softmax_grad", "scaled_dot_product_attention_grad", "multi_head_attention_grad", "feed_forward_grad",
    "layer_norm_grad", "encoder_block_grad", "encoder_grad",
    # one vector per sequence (encoder_lib.pooling)
    "mean_pool",
    # the encoder since 2017 (lesson 09): norms, positions, gated FFNs, masks, memory, the modern block's parts
    "rms_norm", "peri_norm", "rope", "rope_pairs", "shift_rotation", "silu", "gated_feed_forward", "geglu", "swiglu",
    "gated_d_ff", "causal_mask", "local_window_mask", "mask_conventions", "attention_weights_bytes",
    "blockwise_attention", "modern_attention", "local_global_configs", "modernbert_configs",
    "from_modernbert_state_dict", "to_modernbert_state_dict",
    # and their backward passes (encoder_lib.grad; the modern block's and stack's: encoder_block_grad, encoder_grad)
    "rms_norm_grad", "rope_grad", "gated_feed_forward_grad", "modern_attention_grad", "blockwise_attention_grad",
]
__version__ = "0.1.0"

# in a notebook, figures get a text alternative (an <img> with alt); a no-op outside IPython
from . import _display  # noqa: E402

_display.describe_figures_in_ipython()
