"""One BLAS thread for the course's small computations.

numpy hands every matrix product to OpenBLAS, which by default starts one
thread per core. On the lessons' small matrices (8 x 8 to 64 x 128) the
threads spend more time waking up and spinning than multiplying, and on a
shared machine, where many learners' kernels run at once, they also fight
each other for the cores: lesson 07's four training runs took 62 s with the
default threads and 23 s with one, with three other processes busy.

So what a lesson computes (its widgets' redraws, the training runs, the
exercise checks) runs inside ``one_blas_thread()``, through threadpoolctl.
Large products elsewhere (the benchmarks, a learner's own code) keep every
core. One thread also makes the sums' order, and so the last printed digits,
the same whatever the machine's core count.

    >>> import numpy as np
    >>> with one_blas_thread():
    ...     (np.ones((64, 64)) @ np.ones((64, 64)))[0, 0]
    np.float64(64.0)
"""

import contextlib
import functools


@contextlib.contextmanager
def one_blas_thread():
    """Limit BLAS to one thread inside the ``with`` block; the previous limits come back after it."""
    from threadpoolctl import threadpool_limits  # imported here: `import encoder_lib` stays quick

    with threadpool_limits(limits=1, user_api="blas"):
        yield


def single_blas_thread(fn):
    """Decorator: run ``fn`` inside ``one_blas_thread()``."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with one_blas_thread():
            return fn(*args, **kwargs)

    return wrapper
