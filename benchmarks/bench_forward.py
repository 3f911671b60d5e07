"""The six-layer (4, 100, 512) encoder forward: encoder_lib against PyTorch on the CPU.

    make bench                               # every benchmark
    .venv/bin/python -m benchmarks.bench_forward [--pairs 15]

The two run alternately in one process on the same weights (float32, eval,
no grad), so that both see the same machine load; the table reports each
one's median time and the median of the per-pair ratios numpy / PyTorch
(below 1.0: encoder_lib is faster), and the peak memory that one numpy
forward allocates (tracemalloc, numpy's own allocations).
"""

import argparse
import time
import tracemalloc

import numpy as np

import encoder_lib as el
from ._report import alternate, table, torch_stack

SHAPE, N_LAYERS, N_HEADS, D_FF = (4, 100, 512), 6, 8, 2048


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=15, help="timed numpy/PyTorch pairs (default 15)")
    args = parser.parse_args()

    rng = np.random.default_rng(0)
    layers = [el.init_block_params(SHAPE[-1], D_FF, rng) for _ in range(N_LAYERS)]
    x = rng.standard_normal(SHAPE, dtype=np.float32)

    def run_numpy():
        return el.encoder(x, layers, N_HEADS, norm="pre")

    run_numpy()
    tracemalloc.start()
    run_numpy()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()

    try:
        import torch
    except ImportError:
        torch = None

    rows = []
    if torch is None:
        times = []
        for _ in range(args.pairs):
            t0 = time.perf_counter()
            run_numpy()
            times.append(time.perf_counter() - t0)
        rows.append(("encoder_lib.encoder", f"{np.median(times) * 1e3:.1f}", "n/a (PyTorch not installed)", "", f"{peak / 2**20:.1f}"))
    else:
        model = torch_stack(torch, layers, N_HEADS, D_FF, norm="pre")
        xt = torch.from_numpy(x)

        def run_torch():
            with torch.inference_mode():
                return model(xt)

        err = float(np.abs(run_numpy() - run_torch().numpy()).max())
        ms_np, ms_pt, ratio = alternate(run_numpy, run_torch, args.pairs)
        rows.append(("encoder_lib.encoder", f"{ms_np:.1f}", f"{ms_pt:.1f}", f"{ratio:.2f}", f"{peak / 2**20:.1f}"))
        print(f"max |numpy - torch| = {err:.2e}; torch {torch.__version__}, {torch.get_num_threads()} threads")
    print(f"forward of {N_LAYERS} pre-norm blocks on {SHAPE} float32, {N_HEADS} heads, d_ff {D_FF}; "
          f"median of {args.pairs} alternating pairs")
    table(rows, ("what", "numpy ms", "pytorch ms", "ratio np/pt (median of pairs)", "numpy peak MiB"))


if __name__ == "__main__":
    main()
