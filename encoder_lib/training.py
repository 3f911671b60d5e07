"""Training a small encoder in numpy: a toy task, the model around the stack, cross-entropy and Adam.

The model: token embedding + sinusoidal positional encoding -> a stack of
encoder blocks -> (pre- and peri-norm only: a final layer norm, as GPT-2,
Whisper and Gemma have) -> a linear read-out at every position. Its gradients come from
``encoder_lib.grad``; the optimiser is Adam (Kingma & Ba, 2015) with an
optional linear learning-rate warm-up.

    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> task = SortTask(seq_len=6, vocab=8)
    >>> tokens, targets = task.batch(rng, 4)
    >>> model = init_model(task, d_model=16, n_heads=2, d_ff=32, n_layers=2, norm="pre", rng=rng)
    >>> loss, grads, accuracy = loss_and_grads(model, tokens, targets)
    >>> round(float(loss), 1), grads["embed"].shape  # about log(8) at the start
    (2.3, (8, 16))
"""

import dataclasses
import functools
import os
import time

import numpy as np

from . import _checks
from .block import BlockConfig, run_block
from .grad import _layer_norm_grad, run_block_grad
from .grad_parts import _norm_grad
from .norm import _layer_norm, _norm, norm_keys
from .params import flat_arrays, init_block_params
from .positional import positional_encoding
from .threads import single_blas_thread

# ------------------------------------------------------------------ the task


@dataclasses.dataclass(frozen=True)
class SortTask:
    """Sort a sequence of tokens: at position i, predict the i-th smallest token of the input.

    Every output depends on every input token, so no position can be solved
    on its own: the model must compare tokens across positions, which is
    what attention is for. ``batch`` draws tokens uniformly from
    ``0 .. vocab - 1`` (repeats allowed).

    >>> tokens, targets = SortTask(seq_len=5, vocab=10).batch(np.random.default_rng(1), 1)
    >>> tokens, targets
    (array([[4, 5, 7, 9, 0]]), array([[0, 4, 5, 7, 9]]))
    """

    seq_len: int = 8
    vocab: int = 10

    def __post_init__(self):
        _checks.positive_int(self.seq_len, "seq_len")
        _checks.positive_int(self.vocab, "vocab", minimum=2)

    @property
    def n_classes(self):
        return self.vocab

    def batch(self, rng, size):
        """``size`` random sequences: tokens (size, seq_len) and the sorted targets, both int64."""
        if not isinstance(rng, np.random.Generator):
            raise TypeError(f"rng must be a np.random.Generator (e.g. np.random.default_rng(0)), got {type(rng).__name__}")
        size = _checks.positive_int(size, "size")
        tokens = rng.integers(0, self.vocab, size=(size, self.seq_len))
        return tokens, np.sort(tokens, axis=-1)


# ------------------------------------------------------------------ the model


def init_model(task, *, d_model, n_heads, d_ff, n_layers, norm, rng, dtype=np.float32, config=None):
    """Fresh parameters for the task's model, as one dict of arrays and lists; every option by keyword.

    Keys: ``embed`` (vocab, d_model), ``layers`` (block params, PyTorch's
    initialisation), ``norm_out`` (gamma, beta; used in pre- and peri-norm
    only), ``w_out`` (d_model, n_classes) and ``b_out``; and ``block``, the
    ``BlockConfig`` every block runs with (ReLU, eps 1e-5, ``norm`` "post",
    "pre" or "peri"), which the other functions read. ``config``, a whole
    BlockConfig with the modern options, replaces ``n_heads`` and ``norm``
    (which must then agree with it); the final norm is then of its
    ``norm_kind``. From one seed, the post-, pre- and peri-norm models have
    the same weights (peri-norm's norms after each sub-layer start at gamma 1,
    beta 0).

    >>> model = init_model(SortTask(4, 5), d_model=8, n_heads=2, d_ff=16, n_layers=3, norm="post",
    ...                    rng=np.random.default_rng(0))
    >>> len(model["layers"]), model["block"].norm, model["w_out"].shape
    (3, 'post', (8, 5))
    """
    block = BlockConfig(n_heads, norm=norm) if config is None else _same_config(config, n_heads, norm)
    d_model = _checks.positive_int(d_model, "d_model")
    n_layers = _checks.positive_int(n_layers, "n_layers")
    _checks.heads(d_model, block.n_heads)
    _checks.generator(rng)
    bound = 1 / np.sqrt(d_model)
    return {
        "block": block,
        "embed": rng.standard_normal((task.vocab, d_model)).astype(dtype),
        "layers": [init_block_params(d_model, d_ff, rng, dtype, config=block) for _ in range(n_layers)],
        "norm_out": {key: (np.ones if key == "gamma" else np.zeros)(d_model, dtype)
                     for key in norm_keys(block.norm_kind, block.bias)},
        "w_out": rng.uniform(-bound, bound, (d_model, task.n_classes)).astype(dtype),
        "b_out": np.zeros(task.n_classes, dtype),
    }


def _same_config(config, n_heads, norm):
    if not isinstance(config, BlockConfig):
        raise TypeError(f"config must be a BlockConfig or None, got {type(config).__name__}")
    if (config.n_heads, config.norm) != (n_heads, norm):
        raise ValueError(f"config has n_heads={config.n_heads}, norm={config.norm!r} but n_heads={n_heads!r}, "
                         f"norm={norm!r} were given: give the config's")
    return config


#: The placements whose blocks leave the residual stream unnormalised: their models end in a norm of their own.
FINAL_NORM = ("pre", "peri")


def trainable(model):
    """The model's arrays as a flat ``{name: array}`` dict (names like ``layers/0/attn/w_q``)."""
    return flat_arrays(model)


def _forward(model, tokens, tape):
    """The model's logits (batch, seq, n_classes); ``tape`` (a dict) keeps what ``loss_and_grads`` needs."""
    block, embed = model["block"], model["embed"]
    x = embed[tokens] + positional_encoding(tokens.shape[-1], embed.shape[1], embed.dtype)
    tape["blocks"] = []
    for params in model["layers"]:
        tape["blocks"].append({})
        x = run_block(x, params, block, tape=tape["blocks"][-1])
    if block.norm in FINAL_NORM:  # pre- and peri-norm models end in a norm; post-norm blocks end in one already
        tape["norm_out"] = {}
        x = _norm(x, model["norm_out"], block.norm_kind, block.eps, tape["norm_out"])
    tape["features"] = x
    return x @ model["w_out"] + model["b_out"]  # (batch, seq, n_classes)


def _check_ids(ids, name, n, what):
    """``ids`` as a (batch, seq) integer array with every entry in 0 .. n - 1."""
    ids = np.asarray(ids)
    if ids.dtype.kind not in "iu" or ids.ndim != 2 or 0 in ids.shape:
        raise TypeError(f"{name} must be a non-empty 2-D array of integers (batch, seq), got {ids.dtype} {ids.shape}")
    if ids.min() < 0 or ids.max() >= n:
        raise ValueError(f"{name} must lie in 0 .. {n - 1} ({what}), got {ids.min()} .. {ids.max()}")
    return ids


def _check_tokens(model, tokens):
    return _check_ids(tokens, "tokens", model["embed"].shape[0], "the model's vocabulary")


def predict(model, tokens):
    """The predicted class at every position, (batch, seq)."""
    return _forward(model, _check_tokens(model, tokens), {}).argmax(axis=-1)


def accuracy(model, tokens, targets):
    """The fraction of positions predicted right."""
    return float((predict(model, tokens) == np.asarray(targets)).mean())


def _cross_entropy(logits, targets):
    """``(mean softmax cross-entropy, its gradient for the logits)``: (probabilities - one_hot) / n."""
    shifted = logits - logits.max(axis=-1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
    picked = np.take_along_axis(log_probs, targets[..., None], axis=-1)[..., 0]
    grad_logits = np.exp(log_probs)
    np.put_along_axis(grad_logits, targets[..., None], np.take_along_axis(grad_logits, targets[..., None], -1) - 1, -1)
    return float(-picked.mean()), grad_logits / targets.size


def _backward(model, tokens, tape, grad_logits):
    """The gradient of every array of ``trainable(model)``, from the logits' gradient down to the embeddings."""
    features = tape["features"]
    grads = {
        "w_out": features.reshape(-1, features.shape[-1]).T @ grad_logits.reshape(-1, grad_logits.shape[-1]),
        "b_out": grad_logits.reshape(-1, grad_logits.shape[-1]).sum(axis=0),
    }
    grad = grad_logits @ model["w_out"].T
    if "norm_out" in tape:
        grad, norm_grads = _norm_grad(tape["norm_out"], model["norm_out"], model["block"].norm_kind, grad)
    else:  # the final norm is not used in post-norm, whose blocks end in a layer norm already
        norm_grads = {key: np.zeros_like(value) for key, value in model["norm_out"].items()}
    grads.update({f"norm_out/{key}": value for key, value in norm_grads.items()})
    for i in reversed(range(len(model["layers"]))):
        grad, block_grads = run_block_grad(grad, model["layers"][i], model["block"], tape["blocks"][i])
        grads.update({f"layers/{i}/{name}": value for name, value in flat_arrays(block_grads).items()})
    # the positional encoding is a constant added to the embeddings: the gradient passes it unchanged
    grads["embed"] = np.zeros_like(model["embed"])
    np.add.at(grads["embed"], tokens.reshape(-1), grad.reshape(-1, grad.shape[-1]))
    return grads


def loss_and_grads(model, tokens, targets):
    """Mean cross-entropy over all positions, its gradient for every array of ``trainable(model)``, and accuracy."""
    tokens = _check_tokens(model, tokens)
    targets = _check_ids(targets, "targets", model["w_out"].shape[1], "the model's classes")
    if targets.shape != tokens.shape:
        raise ValueError(f"targets must have the shape of tokens {tokens.shape}, got {targets.shape}")
    tape = {}
    logits = _forward(model, tokens, tape)
    loss, grad_logits = _cross_entropy(logits, targets)
    acc = float((logits.argmax(axis=-1) == targets).mean())
    return loss, _backward(model, tokens, tape, grad_logits), acc


# ------------------------------------------------------------------ the optimiser


class Adam:
    """Adam over a flat dict of arrays, updated in place.

    ``m`` and ``v`` are running means of the gradient and of its square; the
    update is ``lr * m_hat / (sqrt(v_hat) + eps)`` with the bias-corrected
    means, so every weight moves by about ``lr`` per step whatever the size
    of its gradient. That is also why a large ``lr`` in the first steps,
    when ``v`` is still a poor estimate, can throw a network off: warm-up
    raises ``lr`` linearly from 0 over the first ``warmup`` steps.

    All arrays are updated as one: ``m``, ``v`` and the gradients live in
    flat vectors, so a step costs a handful of numpy calls whatever the
    number of arrays (the same numbers, entry by entry, as one update per array).
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.98), eps=1e-9, warmup=0):
        if not isinstance(params, dict) or not params:
            raise TypeError("params must be a non-empty dict of arrays, e.g. trainable(model)")
        if isinstance(lr, bool) or not isinstance(lr, (int, float)) or not lr > 0:
            raise ValueError(f"lr must be a positive number, got {lr!r}")
        if isinstance(warmup, bool) or not isinstance(warmup, int) or warmup < 0:
            raise ValueError(f"warmup must be a number of steps, an integer >= 0, got {warmup!r}")
        self.params = params
        self.lr, self.betas, self.eps, self.warmup = lr, betas, eps, warmup
        ends = np.cumsum([a.size for a in params.values()])
        self._slices = {key: slice(end - a.size, end) for (key, a), end in zip(params.items(), ends)}
        dtype = np.result_type(*params.values())
        self.m = np.zeros(int(ends[-1]), dtype)  # every array's running means, end to end
        self.v = np.zeros(int(ends[-1]), dtype)
        self.t = 0

    def current_lr(self):
        """The learning rate of the next step: ``lr``, ramped up linearly during warm-up."""
        if self.warmup and self.t < self.warmup:
            return self.lr * (self.t + 1) / self.warmup
        return self.lr

    def step(self, grads):
        lr = self.current_lr()
        self.t += 1
        b1, b2 = self.betas
        c1, c2 = 1 - b1**self.t, 1 - b2**self.t
        g = np.concatenate([np.ravel(grads[key]) for key in self.params])  # one vector, as m and v
        m, v = self.m, self.v
        m *= b1
        m += (1 - b1) * g
        v *= b2
        v += (1 - b2) * g * g
        update = (lr / c1) * m / (np.sqrt(v / c2) + self.eps)
        for key, p in self.params.items():
            p -= update[self._slices[key]].reshape(p.shape)


# ------------------------------------------------------------------ a training run


#: Steps per training run when nbgrader grades or validates a notebook (see ``train``).
GRADING_STEPS = 5


@dataclasses.dataclass
class History:
    """What a training run recorded: per logged step, the loss and training accuracy; held-out accuracy at the end."""

    steps: list = dataclasses.field(default_factory=list)
    loss: list = dataclasses.field(default_factory=list)
    train_accuracy: list = dataclasses.field(default_factory=list)
    test_accuracy: list = dataclasses.field(default_factory=list)  # (step, accuracy) pairs
    seconds: float = 0.0
    seconds_to_target: float = None


def _target(target):
    """An accuracy to stop at, in (0, 1], or None."""
    if target is None:
        return None
    if isinstance(target, (bool, np.bool_)) or not isinstance(target, (int, float, np.integer, np.floating)) \
            or not 0 < target <= 1:
        raise ValueError(f"target must be a held-out accuracy in (0, 1] to stop at, or None, got {target!r}")
    return float(target)


def _step(model, optimiser, batch, step, history):
    """One Adam step on ``batch`` (tokens, targets), its loss and accuracy added to ``history``."""
    try:
        with np.errstate(over="ignore", invalid="ignore"):  # a diverging run is reported just below, once
            loss, grads, acc = loss_and_grads(model, *batch)
    except _checks.Overflow:  # the attention scores overflowed: the weights have blown up
        loss = float("inf")
    if not np.isfinite(loss):
        raise FloatingPointError(f"the loss became {loss} at step {step}: lower lr or add warmup")
    optimiser.step(grads)
    history.steps.append(step)
    history.loss.append(loss)
    history.train_accuracy.append(acc)


@single_blas_thread
def train(task, model, steps, *, lr=1e-3, warmup=0, batch_size=64, seed=0, test_size=512, target=None,
          evaluate_every=100, on_step=None):
    """Train ``model`` in place on fresh batches of ``task`` for ``steps`` Adam steps; returns a ``History``.

    Every option is a keyword. Adam's learning rate ``lr`` rises linearly
    from 0 over the first ``warmup`` steps; each step draws ``batch_size``
    sequences (seeded by ``seed``). The held-out set (``test_size`` sequences
    from a separate seed) is scored every ``evaluate_every`` steps; with
    ``target`` (an accuracy), training stops as soon as the held-out accuracy
    reaches it. ``on_step(step, history)`` is called after every step, for
    progress bars and live plots.

    When nbgrader runs the notebook (its autograder and the Validate button
    set ``NBGRADER_EXECUTION``), a run stops after ``GRADING_STEPS`` steps:
    grading needs the learner's exercises, not trained models, and a class's
    notebooks then grade in seconds each.

    >>> task = SortTask(seq_len=4, vocab=5)
    >>> model = init_model(task, d_model=8, n_heads=2, d_ff=16, n_layers=1, norm="pre", rng=np.random.default_rng(0))
    >>> history = train(task, model, 3, batch_size=8, test_size=8)
    >>> history.steps, len(history.test_accuracy)
    ([1, 2, 3], 1)
    """
    steps = _checks.positive_int(steps, "steps")
    batch_size = _checks.positive_int(batch_size, "batch_size")
    evaluate_every = _checks.positive_int(evaluate_every, "evaluate_every")
    seed = _checks.positive_int(seed, "seed", minimum=0)
    target = _target(target)
    if on_step is not None and not callable(on_step):
        raise TypeError(f"on_step must be a function on_step(step, history), or None, got {type(on_step).__name__}")
    if os.environ.get("NBGRADER_EXECUTION"):
        steps = min(steps, GRADING_STEPS)
    rng = np.random.default_rng(seed)
    held_out = task.batch(np.random.default_rng(seed + 10_000), _checks.positive_int(test_size, "test_size"))
    optimiser = Adam(trainable(model), lr=lr, warmup=warmup)
    history = History()
    start = time.perf_counter()
    for step in range(1, steps + 1):
        _step(model, optimiser, task.batch(rng, batch_size), step, history)
        if step % evaluate_every == 0 or step == steps:
            history.test_accuracy.append((step, accuracy(model, *held_out)))
            if target is not None and history.test_accuracy[-1][1] >= target:
                history.seconds_to_target = time.perf_counter() - start
                if on_step:
                    on_step(step, history)
                break
        if on_step:
            on_step(step, history)
    history.seconds = time.perf_counter() - start
    return history


# ------------------------------------------------------------------ gradient flow at initialisation


def gradient_norms(depth, norm, residual=True, *, d_model=32, n_heads=4, seed=0, shape=(2, 10)):
    """How large the gradient is at each block of a freshly initialised stack: a dict of arrays.

    The stack has ``depth`` blocks from ``init_block_params`` (PyTorch's initialisation but for ``w_o``; each its
    own weights, seeded); its input is standard normal of ``shape + (d_model,)``;
    the loss is ``sum(out * g)`` for a fixed standard normal ``g``, where
    ``out`` is the last block's output, passed through a final layer norm in
    pre- and peri-norm (as those models have, and ``init_model`` builds).

    Returns ``params`` (depth,), the norm of each block's whole parameter
    gradient, and ``inputs`` (depth,), the norm of the gradient reaching each
    block's input: index 0 is the bottom block, ``depth - 1`` the top.

    >>> norms = gradient_norms(3, "pre", d_model=8, n_heads=2)
    >>> norms["params"].shape, norms["inputs"].shape
    ((3,), (3,))
    """
    return gradient_norms_by_depth(depth, norm, residual, d_model=d_model, n_heads=n_heads, seed=seed, shape=shape,
                                   only_deepest=True)[0]


@single_blas_thread
def gradient_norms_by_depth(max_depth, norm, residual=True, *, d_model=32, n_heads=4, seed=0, shape=(2, 10),
                            only_deepest=False):
    """``[gradient_norms(depth, ...) for depth in 1 .. max_depth]``, with one forward pass for all depths.

    With one seed, a deeper stack is a shallower one with blocks added on top
    (the blocks are drawn after the input and ``g``), so the forward pass of
    the deepest stack holds every shallower stack's; only the backward passes
    differ, one per depth.

    >>> [len(norms["params"]) for norms in gradient_norms_by_depth(3, "post", d_model=8, n_heads=2)]
    [1, 2, 3]
    """
    max_depth = _checks.positive_int(max_depth, "max_depth")
    block = BlockConfig(n_heads, norm=norm, residual=residual)
    d_model = _checks.positive_int(d_model, "d_model")
    _checks.heads(d_model, block.n_heads)
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((*shape, d_model))
    g = rng.standard_normal((*shape, d_model))
    layers = [init_block_params(d_model, 4 * d_model, rng, np.float64, config=block) for _ in range(max_depth)]
    tapes = []
    for params in layers:
        tapes.append({})
        x = run_block(x, params, block, tape=tapes[-1])
    return [_norms_at(depth, layers, tapes, block, g) for depth in
            ([max_depth] if only_deepest else range(1, max_depth + 1))]


def _norms_at(depth, layers, tapes, block, g):
    """The gradient norms of the stack of the first ``depth`` blocks (their forward ``tapes``), loss ``sum(out * g)``."""
    grad = g
    if block.norm in FINAL_NORM:  # through the final layer norm on top of this depth's stack
        top = {}
        _layer_norm(tapes[depth - 1]["output"], None, None, block.eps, top)
        grad, _, _ = _layer_norm_grad(top, None, g)
    params, inputs = [], []
    for i in reversed(range(depth)):
        grad, grad_p = run_block_grad(grad, layers[i], block, tapes[i])
        params.append(np.sqrt(sum(float(np.sum(a * a)) for sub in grad_p.values() if sub for a in sub.values())))
        inputs.append(float(np.linalg.norm(grad)))
    return {"params": np.array(params[::-1]), "inputs": np.array(inputs[::-1])}


COMPARED = ("post", "pre")  # the placements compare_runs trains, each without and with warm-up


def compare_runs(task, steps, lr, warmup, *, seed=0, evaluate_every=50, batch_size=64, on_step=None,
                 placements=COMPARED, **model_options):
    """Train four models from the same seed: post-norm and pre-norm, each without and with ``warmup`` steps.

    ``placements`` trains others: ``("post", "pre", "peri")`` adds the third
    placement (lesson 09). Every run starts from the same weights
    (``init_model`` with ``seed``; the final layer norm exists in all but
    only pre- and peri-norm use it) and sees the same batches. ``model_options`` go to ``init_model`` (d_model, n_heads,
    d_ff, n_layers). ``on_step((norm, warmup), step, history)``, if given, is
    called after every step of every run. Returns ``{(norm, warmup_steps):
    History}``.

    >>> runs = compare_runs(SortTask(4, 5), 2, 1e-3, 1, d_model=8, n_heads=2, d_ff=16, n_layers=1)
    >>> sorted(runs), len(runs["pre", 1].loss)
    ([('post', 0), ('post', 1), ('pre', 0), ('pre', 1)], 2)
    """
    runs = {}
    for norm in placements:
        for w in (0, warmup):
            model = init_model(task, norm=norm, rng=np.random.default_rng(seed), **model_options)
            step_hook = None if on_step is None else functools.partial(on_step, (norm, w))
            runs[norm, w] = train(task, model, steps, lr=lr, warmup=w, seed=seed, evaluate_every=evaluate_every,
                                  batch_size=batch_size, on_step=step_hook)
    return runs
