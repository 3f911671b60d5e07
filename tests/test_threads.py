"""The course's small computations run with one BLAS thread; everything else keeps its threads.

OpenBLAS's threads spin on the lessons' tiny matrices and, on a shared
classroom server, fight each other for the cores (issue: lesson 07 took
62 s with every thread and 23 s with one while three other processes ran).
"""

import numpy as np
import pytest
from threadpoolctl import threadpool_info, threadpool_limits

from encoder_lib.threads import one_blas_thread, single_blas_thread
from encoder_lib.training import SortTask, init_model, train


def blas_threads():
    return {pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"}


@pytest.fixture
def two_threads():
    np.ones((2, 2)) @ np.ones((2, 2))  # BLAS loaded
    if not blas_threads():
        pytest.skip("numpy here uses no BLAS library that threadpoolctl can see")
    with threadpool_limits(limits=2, user_api="blas"):
        yield


def test_one_blas_thread_inside_the_block_and_the_old_limit_after(two_threads):
    with one_blas_thread():
        assert blas_threads() == {1}
    assert blas_threads() == {2}


def test_the_decorator_limits_the_call_only(two_threads):
    seen = single_blas_thread(blas_threads)()
    assert seen == {1} and blas_threads() == {2}


def test_training_runs_with_one_blas_thread(two_threads):
    seen = []
    task = SortTask(seq_len=4, vocab=5)
    model = init_model(task, d_model=8, n_heads=2, d_ff=16, n_layers=1, norm="pre", rng=np.random.default_rng(0))
    train(task, model, steps=2, batch_size=4, test_size=4, on_step=lambda step, history: seen.append(blas_threads()))
    assert seen == [{1}, {1}] and blas_threads() == {2}


def test_a_widget_builds_and_redraws_with_one_blas_thread(two_threads):
    from encoder_lib.widgets.stack import StackScaleExplorer

    seen = []

    class Watched(StackScaleExplorer):
        def __init__(self):
            seen.append(("built", blas_threads()))
            super().__init__()

        def draw(self, **values):
            seen.append(("drawn", blas_threads()))
            return super().draw(**values)

    explorer = Watched()
    explorer.controls["depth"].value = 3
    assert seen == [("built", {1}), ("drawn", {1}), ("drawn", {1})]
    assert blas_threads() == {2}


def test_the_exercise_checks_run_with_one_blas_thread(two_threads):
    from encoder_lib import grading

    seen = []

    def softmax(x, axis=-1):
        seen.append(blas_threads())
        e = np.exp(x - x.max(axis=axis, keepdims=True))
        return e / e.sum(axis=axis, keepdims=True)

    assert grading.check(softmax)[0]
    assert seen and all(s == {1} for s in seen) and blas_threads() == {2}
