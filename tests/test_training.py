"""encoder_lib.training: the model's gradients, Adam, the sorting task, a short training run, and the
gradient-flow numbers that lesson 07's text states."""

import numpy as np
import pytest

from encoder_lib import training as T
from encoder_lib.config import BlockConfig
from encoder_lib.params import off_defaults


#: A model with every modern option (lesson 09): peri-norm, RMSNorm, no biases, SwiGLU, rotary positions, QK-norm.
MODERN = BlockConfig(2, norm="peri", norm_kind="rms", bias=False, ffn="gated", activation="silu", rope="half",
                     qk_norm=True, window=4)


def float64_model(norm, seed=0):
    task = T.SortTask(seq_len=5, vocab=6)
    config = MODERN if norm == "modern" else None
    model = T.init_model(task, d_model=8, n_heads=2, d_ff=12, n_layers=2, norm=config.norm if config else norm,
                         rng=np.random.default_rng(seed), dtype=np.float64, config=config)
    off_defaults(model, np.random.default_rng(seed + 1))
    model["b_out"][...] = np.random.default_rng(seed + 2).uniform(-0.2, 0.2, model["b_out"].shape)
    return task, model


@pytest.mark.parametrize("norm", ["post", "pre", "peri", "modern"])
def test_loss_gradients_against_finite_differences(norm):
    task, model = float64_model(norm)
    tokens, targets = task.batch(np.random.default_rng(3), 4)
    _, grads, _ = T.loss_and_grads(model, tokens, targets)
    params = T.trainable(model)
    assert set(grads) == set(params)
    rng = np.random.default_rng(4)
    scale = max(np.abs(g).max() for g in grads.values())
    names = {"post": ("layers/1/ffn/w1", "norm_out/beta"), "pre": ("layers/1/ffn/w1", "norm_out/beta"),
             "peri": ("layers/1/ffn/w1", "layers/0/norm1_out/beta", "layers/1/norm2_out/gamma", "norm_out/beta"),
             "modern": ("layers/1/ffn/w_gate", "layers/0/attn/q_norm/gamma", "layers/1/norm2_out/gamma")}[norm]
    for name in ("embed", "w_out", "b_out", "layers/0/attn/w_q", "layers/0/norm1/gamma", "norm_out/gamma") + names:
        array, analytic = params[name], grads[name]
        assert analytic.shape == array.shape, name
        for _ in range(4):
            i = tuple(int(rng.integers(0, s)) for s in array.shape)
            keep = array[i]
            array[i] = keep + 1e-6
            up = T.loss_and_grads(model, tokens, targets)[0]
            array[i] = keep - 1e-6
            down = T.loss_and_grads(model, tokens, targets)[0]
            array[i] = keep
            numeric = (up - down) / 2e-6
            assert abs(numeric - analytic[i]) < 1e-6 * scale + 1e-8, f"{name}{i}: {numeric} vs {analytic[i]}"
    if norm == "post":  # the final norm is not part of a post-norm model
        assert not grads["norm_out/gamma"].any() and not grads["norm_out/beta"].any()


def test_the_initial_loss_is_about_log_of_the_number_of_classes():
    task = T.SortTask(seq_len=8, vocab=10)
    model = T.init_model(task, d_model=32, n_heads=4, d_ff=64, n_layers=2, norm="pre", rng=np.random.default_rng(0))
    loss, _, accuracy = T.loss_and_grads(model, *task.batch(np.random.default_rng(1), 256))
    assert abs(loss - np.log(10)) < 0.5 and accuracy < 0.25


def test_adam_matches_its_formula_and_warms_up_linearly():
    p = {"w": np.array([1.0, -2.0])}
    adam = T.Adam(p, lr=0.1, betas=(0.9, 0.99), eps=1e-8, warmup=4)
    assert adam.current_lr() == 0.025  # step 1 of 4 of the warm-up
    g = {"w": np.array([0.5, -1.0])}
    adam.step(g)
    # first step: m_hat = g, v_hat = g^2, so each weight moves by lr * sign(g), lr = 0.1 * 1/4
    np.testing.assert_allclose(p["w"], [1.0 - 0.025, -2.0 + 0.025], rtol=1e-7)
    lrs = []
    for _ in range(5):
        lrs.append(adam.current_lr())
        adam.step(g)
    np.testing.assert_allclose(lrs, [0.05, 0.075, 0.1, 0.1, 0.1])


def test_sort_task_targets_are_the_sorted_inputs():
    tokens, targets = T.SortTask(seq_len=7, vocab=5).batch(np.random.default_rng(0), 20)
    assert tokens.shape == targets.shape == (20, 7)
    np.testing.assert_array_equal(targets, np.sort(tokens, axis=1))
    assert tokens.min() >= 0 and tokens.max() < 5


def test_a_tiny_model_learns_to_sort_short_sequences():
    task = T.SortTask(seq_len=4, vocab=5)
    model = T.init_model(task, d_model=32, n_heads=4, d_ff=64, n_layers=1, norm="pre", rng=np.random.default_rng(0))
    history = T.train(task, model, steps=600, lr=3e-3, target=0.95, evaluate_every=50)
    assert history.seconds_to_target is not None, f"held-out accuracy only {history.test_accuracy[-1]}"
    assert history.loss[-1] < history.loss[0] / 3


def test_on_step_sees_every_step_and_a_diverging_run_stops_with_a_clear_error():
    task = T.SortTask(seq_len=4, vocab=5)
    model = T.init_model(task, d_model=16, n_heads=2, d_ff=32, n_layers=1, norm="post", rng=np.random.default_rng(0))
    seen = []
    T.train(task, model, steps=5, on_step=lambda step, history: seen.append((step, len(history.loss))))
    assert seen == [(i, i) for i in range(1, 6)]
    model["w_out"][...] = np.inf
    with pytest.raises(FloatingPointError, match="lower lr or add warmup"):
        T.train(task, model, steps=3)


@pytest.mark.parametrize("mode", ["autograde", "validate"])
def test_under_nbgrader_a_run_stops_after_a_few_steps(monkeypatch, mode):
    task = T.SortTask(seq_len=4, vocab=5)
    model = T.init_model(task, d_model=16, n_heads=2, d_ff=32, n_layers=1, norm="pre", rng=np.random.default_rng(0))
    monkeypatch.setenv("NBGRADER_EXECUTION", mode)
    history = T.train(task, model, steps=500, evaluate_every=100)
    assert len(history.loss) == T.GRADING_STEPS and history.test_accuracy[-1][0] == T.GRADING_STEPS


@pytest.mark.parametrize("call, message", [
    (lambda m: T.loss_and_grads(m, np.array([[0, 1, 9, 2]]), np.array([[0, 1, 2, 3]])),
     r"tokens must lie in 0 \.\. 4"),
    (lambda m: T.loss_and_grads(m, np.array([[0.0, 1, 2, 3]]), np.array([[0, 1, 2, 3]])),
     r"tokens must be a non-empty 2-D array of integers"),
    (lambda m: T.loss_and_grads(m, np.array([[0, 1, 2, 3]]), np.array([[0, 1, 2]])),
     r"targets must have the shape of tokens"),
    (lambda m: T.init_model(T.SortTask(4, 5), d_model=16, n_heads=3, d_ff=32, n_layers=1, norm="pre", rng=np.random.default_rng(0)),
     r"d_model \(16\) must be divisible by n_heads \(3\)"),
    (lambda m: T.init_model(T.SortTask(4, 5), d_model=16, n_heads=2, d_ff=32, n_layers=1, norm="middle", rng=np.random.default_rng(0)),
     r"norm must be 'post' or 'pre'"),
    (lambda m: T.SortTask(4, 5).batch(0, 3), r"rng must be a np.random.Generator"),
    (lambda m: T.Adam(T.trainable(m), lr=-1), r"lr must be a positive number"),
    (lambda m: T.Adam(T.trainable(m), warmup=1.5), r"warmup must be a number of steps"),
    (lambda m: T.train(T.SortTask(4, 5), m, steps=0), r"steps must be at least 1"),
    (lambda m: T.train(T.SortTask(4, 5), m, 2, batch_size=0), r"batch_size must be at least 1"),
    (lambda m: T.train(T.SortTask(4, 5), m, 2, test_size=2.5), r"test_size must be an integer"),
    (lambda m: T.train(T.SortTask(4, 5), m, 2, evaluate_every=0), r"evaluate_every must be at least 1"),
    (lambda m: T.train(T.SortTask(4, 5), m, 2, seed=-1), r"seed must be at least 0"),
    (lambda m: T.train(T.SortTask(4, 5), m, 2, target=95), r"target must be a held-out accuracy in \(0, 1\]"),
    (lambda m: T.train(T.SortTask(4, 5), m, 2, on_step="print"), r"on_step must be a function"),
    (lambda m: T.train(T.SortTask(4, 5), m, 2, 1e-3), r"takes 3 positional arguments but 4 were given"),
    (lambda m: T.init_model(T.SortTask(4, 5), 16, 2, 32, 1, "pre", np.random.default_rng(0)),
     r"takes 1 positional argument but 7 were given"),
    (lambda m: T.gradient_norms(2, "pre", d_model=6, n_heads=4), r"d_model \(6\) must be divisible by n_heads \(4\)"),
])
def test_bad_input_is_named(call, message):
    model = T.init_model(T.SortTask(4, 5), d_model=16, n_heads=2, d_ff=32, n_layers=1, norm="pre", rng=np.random.default_rng(0))
    with pytest.raises((TypeError, ValueError), match=message):
        call(model)


# ---------------------------------------------------------------- what lesson 07 says about gradient flow


@pytest.fixture(scope="module")
def table():
    from encoder_lib.experiments.gradients import gradient_table

    return gradient_table()


def top(table, norm, residual, depth):
    return table[norm, residual][depth - 1]["params"][-1]


def test_post_norm_top_gradient_does_not_shrink_with_depth(table):
    assert 0.9 < top(table, "post", True, 24) / top(table, "post", True, 1) < 1.5


def test_pre_norm_top_gradient_shrinks_steadily_with_depth(table):
    tops = [top(table, "pre", True, d) for d in (1, 6, 12, 18, 24)]
    assert tops == sorted(tops, reverse=True)
    assert tops[-1] < 0.5 * tops[0]
    assert table["pre", True][23]["params"][0] > 3 * tops[-1]  # lower blocks get more than the top


@pytest.mark.parametrize("norm", ["post", "pre"])
def test_without_residuals_the_bottom_gets_less_than_a_twelfth_of_the_top(table, norm):
    grads = table[norm, False][23]["params"]
    assert grads[0] < grads[-1] / 12


def test_a_peri_norm_model_starts_from_the_post_and_pre_norm_models_weights():
    """Lesson 09 re-runs lesson 07's warm-up comparison with the third placement: from one seed, the same weights."""
    task = T.SortTask(seq_len=5, vocab=6)
    models = {norm: T.init_model(task, d_model=8, n_heads=2, d_ff=12, n_layers=2, norm=norm,
                                 rng=np.random.default_rng(0)) for norm in ("post", "pre", "peri")}
    post, peri = T.trainable(models["post"]), T.trainable(models["peri"])
    assert set(peri) - set(post) == {f"layers/{i}/{n}_out/{k}" for i in (0, 1) for n in ("norm1", "norm2")
                                     for k in ("gamma", "beta")}
    assert all(np.array_equal(post[name], peri[name]) for name in post)


def test_compare_runs_trains_the_third_placement_too():
    runs = T.compare_runs(T.SortTask(4, 5), 2, 1e-3, 1, d_model=8, n_heads=2, d_ff=16, n_layers=1,
                          placements=("post", "pre", "peri"))
    assert sorted(runs) == [(n, w) for n in ("peri", "post", "pre") for w in (0, 1)]


def test_a_modern_model_learns_to_sort_short_sequences():
    task = T.SortTask(seq_len=4, vocab=5)
    config = BlockConfig(4, norm="peri", norm_kind="rms", bias=False, ffn="gated", activation="silu", rope="half")
    model = T.init_model(task, d_model=32, n_heads=4, d_ff=64, n_layers=1, norm="peri", rng=np.random.default_rng(0),
                         config=config)
    history = T.train(task, model, steps=600, lr=3e-3, target=0.95, evaluate_every=50)
    assert history.seconds_to_target is not None, f"held-out accuracy only {history.test_accuracy[-1]}"


def test_the_gradient_through_depth_of_a_peri_norm_stack():
    norms = T.gradient_norms(6, "peri", d_model=16, n_heads=2)
    assert norms["params"].shape == norms["inputs"].shape == (6,) and np.isfinite(norms["inputs"]).all()
