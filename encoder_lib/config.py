"""``BlockConfig``: how a block runs, one frozen object that the block functions take whole.

The original block's options (``n_heads``, ``norm`` "post" or "pre",
``activation``, ``eps``, ``residual``, ``dropout``) and those of the encoder
since 2017, whose defaults leave the original block as it was:

- ``norm="peri"``: a norm before each sub-layer and one after it (Gemma 2 and 3);
- ``norm_kind``: ``"layer"`` (layer norm) or ``"rms"`` (RMSNorm);
- ``bias=False``: no bias in any projection, FFN or norm (ModernBERT);
- ``ffn``: ``"plain"`` (``act(x W1 + b1) W2 + b2``) or ``"gated"``
  (``(act(x W_in) * x W_gate) W_out``: GeGLU with "gelu", SwiGLU with "silu");
- ``rope``: None, or rotary positions in the ``"half"`` or ``"interleaved"``
  layout, with ``rope_base``;
- ``window``: None (global attention) or a local window (``local_window_mask``);
- ``qk_norm``: each head's queries and keys normalised (``norm_kind``).
"""

import dataclasses

from . import _checks
from .ffn import ACTIVATIONS, GATED_ACTIVATIONS
from .positional import LAYOUTS

NORMS = ("post", "pre", "peri")
NORM_KINDS = ("layer", "rms")
FFNS = ("plain", "gated")
#: The original block's fields: a config shows the others only where they differ from their defaults.
ORIGINAL_FIELDS = ("n_heads", "norm", "activation", "eps", "residual", "dropout", "rng")


@dataclasses.dataclass(frozen=True, repr=False)
class BlockConfig:
    """How a block runs, the same for every block of a stack (``local_global_configs`` makes one per layer).

    ``n_heads``; ``norm`` "post", "pre" or "peri"; ``activation`` "relu" or
    "gelu" ("silu" too for a gated FFN); ``eps`` of the norms;
    ``residual=False`` drops the skip connections (to see what they do);
    ``dropout`` on each sub-layer's output, which needs ``rng``, a
    ``np.random.Generator`` (0, the default, is the identity). The modern
    options (this module's docstring): ``norm_kind``, ``bias``, ``ffn``,
    ``rope``, ``rope_base``, ``window``, ``qk_norm``.

    ``n_heads`` may be given by position, every other field by keyword only.

    >>> BlockConfig(12, activation="gelu", eps=1e-12)
    BlockConfig(n_heads=12, norm='post', activation='gelu', eps=1e-12, residual=True, dropout=0.0, rng=None)
    >>> BlockConfig(12, norm="pre", activation="gelu", bias=False, ffn="gated", rope="half", window=128)
    BlockConfig(n_heads=12, norm='pre', activation='gelu', eps=1e-05, residual=True, dropout=0.0, rng=None, bias=False, ffn='gated', rope='half', window=128)
    """

    n_heads: int
    _: dataclasses.KW_ONLY
    norm: str = "post"
    activation: str = "relu"
    eps: float = 1e-5
    residual: bool = True
    dropout: float = 0.0
    rng: object = None
    norm_kind: str = "layer"
    bias: bool = True
    ffn: str = "plain"
    rope: str = None
    rope_base: float = 10000.0
    window: int = None
    qk_norm: bool = False

    def __post_init__(self):
        set_ = object.__setattr__  # frozen: the checked values replace the given ones once, here
        set_(self, "n_heads", _checks.positive_int(self.n_heads, "n_heads"))
        _checks.choice(self.norm, "norm", NORMS)
        _checks.choice(self.ffn, "ffn", FFNS)
        _checks.choice(self.activation, "activation", ACTIVATIONS if self.ffn == "plain" else GATED_ACTIVATIONS)
        set_(self, "eps", _checks.positive_number(self.eps, "eps"))
        set_(self, "residual", _checks.boolean(self.residual, "residual"))
        set_(self, "dropout", _checks.probability(self.dropout, "dropout"))
        if self.dropout > 0:
            _checks.generator(self.rng, why=f" for dropout={self.dropout}")
        _checks.choice(self.norm_kind, "norm_kind", NORM_KINDS)
        set_(self, "bias", _checks.boolean(self.bias, "bias"))
        if self.rope is not None:
            _checks.choice(self.rope, "rope", LAYOUTS + (None,))
        set_(self, "rope_base", _checks.positive_number(self.rope_base, "rope_base"))
        if self.window is not None:
            set_(self, "window", _checks.positive_int(self.window, "window"))
        set_(self, "qk_norm", _checks.boolean(self.qk_norm, "qk_norm"))

    def __repr__(self):
        shown = [field for field in dataclasses.fields(self) if field.name in ORIGINAL_FIELDS
                 or getattr(self, field.name) != field.default]
        return f"BlockConfig({', '.join(f'{f.name}={getattr(self, f.name)!r}' for f in shown)})"
