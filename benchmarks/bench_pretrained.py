"""all-MiniLM-L6-v2 on 5 texts (4 to 256 tokens): encoder_lib.pretrained against PyTorch on the CPU.

    make bench                               # every benchmark
    .venv/bin/python -m benchmarks.bench_pretrained [--pairs 15]

The texts are tests/data/minilm_reference.npz's, one batch. Two
comparisons, each timing tokenisation and the forward pass:

- ``embed`` (sentence embeddings; it runs texts of equal length together,
  without padding) against sentence-transformers' ``encode`` (one batch
  padded to its longest text);
- ``encode`` (every layer's hidden states and attention weights) against
  transformers' ``BertModel`` with ``output_hidden_states`` and
  ``output_attentions`` (eager attention, which returns the weights).

PyTorch runs in eval mode under ``torch.no_grad()`` with as many threads as
numpy's BLAS (the machine's cores); numpy and PyTorch run alternately in one
process, so both see the same machine load. The table reports each one's
median time and the median of the per-pair ratios numpy / PyTorch (below
1.0: encoder_lib is faster). Without torch, sentence-transformers or
transformers only numpy's times are printed.
"""

import argparse
import os
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the model comes from the installed package, never the hub
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import numpy as np  # noqa: E402

from ._report import alternate, table  # noqa: E402
from encoder_lib.pretrained import embed, encode, load_minilm  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
with np.load(ROOT / "tests" / "data" / "minilm_reference.npz") as _file:
    TEXTS = [str(t) for t in _file["texts"]]


def torch_runners(model):
    """{name: PyTorch function of the texts}, or a note saying why there are none."""
    try:
        import sentence_transformers
        import torch
        import transformers
    except ImportError as exc:
        return None, f"PyTorch side skipped: {exc.name} is not installed (`.ci/run` installs it)"
    torch.set_num_threads(os.cpu_count() or 1)
    path = str(model.path)
    st_model = sentence_transformers.SentenceTransformer(path, device="cpu", local_files_only=True).eval()
    tokenizer = transformers.AutoTokenizer.from_pretrained(path, local_files_only=True)
    bert = transformers.AutoModel.from_pretrained(path, attn_implementation="eager", local_files_only=True).eval()

    def st_encode(texts):
        with torch.no_grad():
            return st_model.encode(texts, batch_size=len(texts), convert_to_numpy=True)

    def bert_outputs(texts):
        with torch.no_grad():
            batch = tokenizer(texts, padding=True, truncation=True, max_length=256, return_tensors="pt")
            return bert(**batch, output_hidden_states=True, output_attentions=True)

    note = (f"torch {torch.__version__} ({torch.get_num_threads()} threads), transformers {transformers.__version__}, "
            f"sentence-transformers {sentence_transformers.__version__}")
    return {"embed": st_encode, "encode": bert_outputs}, note


def timed(function, texts):
    t0 = time.perf_counter()
    function(texts)
    return time.perf_counter() - t0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=15, help="timed numpy/PyTorch pairs (default 15)")
    args = parser.parse_args()

    model = load_minilm()
    ours = {"embed": lambda texts: embed(texts, model), "encode": lambda texts: encode(texts, model)}
    theirs, note = torch_runners(model)
    what = {"embed": "embed vs sentence-transformers encode", "encode": "encode vs BertModel, all states + weights"}
    rows = []
    for name, run_numpy in ours.items():
        if theirs:
            ms_np, ms_pt, ratio = alternate(lambda: run_numpy(TEXTS), lambda: theirs[name](TEXTS), args.pairs)
            rows.append((what[name], f"{ms_np:.1f}", f"{ms_pt:.1f}", f"{ratio:.2f}"))
        else:
            run_numpy(TEXTS)  # warm-up
            ms_np = np.median([timed(run_numpy, TEXTS) for _ in range(args.pairs)]) * 1e3
            rows.append((what[name], f"{ms_np:.1f}", "n/a", ""))
    lengths = (~encode(TEXTS, model).padding_mask).sum(axis=-1).tolist()
    print(note)
    print(f"all-MiniLM-L6-v2 on {len(TEXTS)} texts of {lengths} tokens (one batch), tokenisation included; "
          f"median of {args.pairs} alternating pairs")
    table(rows, ("what", "numpy ms", "pytorch ms", "ratio np/pt (median of pairs)"))


if __name__ == "__main__":
    main()
