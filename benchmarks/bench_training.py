"""Backward passes and training: encoder_lib.grad against PyTorch autograd, and lesson 07's runs.

    make bench                               # every benchmark
    .venv/bin/python -m benchmarks.bench_training [--pairs 10] [--skip-training]

1. One forward and backward pass of the six-layer pre-norm (4, 100, 512)
   stack (8 heads, d_ff 2048, float32), with the loss ``sum(out * g)``:
   ``el.encoder_grad`` (which runs the forward pass too) against PyTorch
   autograd on the same weights, alternating in one process. Target: numpy
   within 2x of PyTorch.
2. Lesson 07's sorting task, trained to 95% held-out accuracy: the
   notebook's small model (2 pre-norm blocks of 64) and the comparison's
   deeper one (8 blocks of 32, lr 1e-2) in all four settings, post-norm and
   pre-norm, without and with 100 warm-up steps, up to 1500 steps each.
   Target: 95% within 30 s in the best setting.
"""

import argparse
import time

import numpy as np

import encoder_lib as el
from ._report import alternate, table, torch_stack
from encoder_lib.training import SortTask, init_model, train

SHAPE, N_LAYERS, N_HEADS, D_FF = (4, 100, 512), 6, 8, 2048


def backward_table(pairs):
    rng = np.random.default_rng(0)
    layers = [el.init_block_params(SHAPE[-1], D_FF, rng) for _ in range(N_LAYERS)]
    x = rng.standard_normal(SHAPE, dtype=np.float32)
    g = rng.standard_normal(SHAPE, dtype=np.float32)

    def run_numpy():
        return el.encoder_grad(x, layers, N_HEADS, g, norm="pre")

    def forward_numpy():
        return el.encoder(x, layers, N_HEADS, norm="pre")

    try:
        import torch
    except ImportError:
        torch = None
    if torch is None:
        times = []
        for _ in range(pairs):
            t0 = time.perf_counter()
            run_numpy()
            times.append(time.perf_counter() - t0)
        print("PyTorch is not installed: numpy only")
        table([("forward + backward", f"{np.median(times) * 1e3:.1f}", "n/a", "")],
              ("what", "numpy ms", "pytorch ms", "ratio np/pt"))
        return

    model = torch_stack(torch, layers, N_HEADS, D_FF, norm="pre")
    gt = torch.from_numpy(g)

    def run_torch():
        xt = torch.from_numpy(x).requires_grad_(True)
        model.zero_grad(set_to_none=True)
        (model(xt) * gt).sum().backward()
        return xt.grad

    def forward_torch():
        with torch.no_grad():
            return model(torch.from_numpy(x))

    grad_x, grad_layers = run_numpy()
    expected = run_torch().numpy()
    w1 = model.layers[0].linear1.weight.grad.numpy().T
    print(f"max |numpy - torch| relative: grad_x {np.abs(grad_x - expected).max() / np.abs(expected).max():.1e}, "
          f"layer 0 w1 {np.abs(grad_layers[0]['ffn']['w1'] - w1).max() / np.abs(w1).max():.1e}; "
          f"torch {torch.__version__}, {torch.get_num_threads()} threads")
    rows = []
    for what, ours, theirs in (("forward only", forward_numpy, forward_torch),
                               ("forward + backward", run_numpy, run_torch)):
        ms_np, ms_pt, ratio = alternate(ours, theirs, pairs)
        rows.append((what, f"{ms_np:.1f}", f"{ms_pt:.1f}", f"{ratio:.2f}"))
    print(f"{N_LAYERS} pre-norm blocks on {SHAPE} float32, {N_HEADS} heads, d_ff {D_FF}, loss sum(out * g); "
          f"median of {pairs} alternating pairs (PyTorch: autograd, dropout 0)")
    table(rows, ("what", "numpy ms", "pytorch ms", "ratio np/pt (median of pairs)"))


def training_table(max_steps):
    task = SortTask(seq_len=10, vocab=16)
    settings = [("lesson model: 2 x 64, lr 1e-3", dict(d_model=64, n_heads=4, d_ff=128, n_layers=2), "pre", 1e-3, 0)]
    for norm in ("post", "pre"):
        for warmup in (0, 100):
            settings.append((f"8 x 32, lr 1e-2, warm-up {warmup}", dict(d_model=32, n_heads=4, d_ff=64, n_layers=8),
                             norm, 1e-2, warmup))
    rows = []
    for what, shape, norm, lr, warmup in settings:
        model = init_model(task, norm=norm, rng=np.random.default_rng(0), **shape)
        history = train(task, model, max_steps, lr=lr, warmup=warmup, target=0.95, evaluate_every=25)
        step, accuracy = history.test_accuracy[-1]
        reached = history.seconds_to_target is not None
        rows.append((what, f"{norm}-norm", f"{step}" if reached else f"not in {max_steps}",
                     f"{history.seconds_to_target:.1f}" if reached else "-", f"{accuracy:.1%}",
                     f"{history.seconds / len(history.loss) * 1e3:.1f}"))
    print(f"lesson 07's sorting task (10 tokens from 16), batches of 64, held-out accuracy every 25 steps; "
          f"stop at 95% or {max_steps} steps")
    table(rows, ("model", "placement", "steps to 95%", "seconds to 95%", "held-out accuracy", "ms per step"))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=10, help="timed numpy/PyTorch pairs (default 10)")
    parser.add_argument("--max-steps", type=int, default=1500, help="training steps at most per run (default 1500)")
    parser.add_argument("--skip-training", action="store_true", help="only the forward/backward table")
    args = parser.parse_args()
    backward_table(args.pairs)
    if not args.skip_training:
        training_table(args.max_steps)


if __name__ == "__main__":
    main()
