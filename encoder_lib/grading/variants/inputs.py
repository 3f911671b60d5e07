"""Variants of the right answer run on changed inputs: what an answer computes when it reads its parameters wrong.

``transformed(model, inputs, make)`` lists, for the parameter dicts among a
case's inputs: every weight matrix transposed (PyTorch stores them (out,
in)), one bias (or shift) left out, or all of them, and one array read in
place of another of its shape in the same dict (``params['w_q']`` for
``params['w_k']``, norm1's gamma for norm2's). Each is the model with a
``transform`` of its inputs in front, named by the paths a learner writes.
"""

import functools
import inspect

import numpy as np


def arrays_in(value, prefix):
    """``{"params['ffn']['b2']": array, ...}``: every array inside an input, by the path a learner writes."""
    found = {}
    if isinstance(value, np.ndarray):
        found[prefix] = value
    elif isinstance(value, dict):
        for key, sub in value.items():
            found.update(arrays_in(sub, f"{prefix}[{key!r}]"))
    elif isinstance(value, (list, tuple)):
        for i, sub in enumerate(value):
            found.update(arrays_in(sub, f"{prefix}[{i}]"))
    return found


def _with_change(value, prefix, change, every):
    """A copy of the input ``value`` (named ``prefix``) with each array inside replaced by ``change(path, array,
    every)``; ``every`` holds all of that input's arrays by path."""
    if isinstance(value, np.ndarray):
        return change(prefix, value, every)
    if isinstance(value, dict):
        return {k: _with_change(v, f"{prefix}[{k!r}]", change, every) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_with_change(v, f"{prefix}[{i}]", change, every) for i, v in enumerate(value))
    return value


def _transform(change, names):
    """A ``transform``: a function of the model that gives it the inputs named in ``names`` with ``change``."""
    def wrap(function):
        signature = inspect.signature(function)

        @functools.wraps(function)
        def variant(*args, **kwargs):
            bound = signature.bind(*args, **kwargs)
            for name in names:
                if isinstance(bound.arguments.get(name), dict):
                    value = bound.arguments[name]
                    bound.arguments[name] = _with_change(value, name, change, arrays_in(value, name))
            return function(*bound.args, **bound.kwargs)
        return variant
    return wrap


def _transposed(matrices):
    return lambda path, a, every: a.T if path in matrices else a


def _zeroed(paths):
    return lambda path, a, every: np.zeros_like(a) if path in paths else a


def _read_for(source, target):
    return lambda path, a, every: every.get(source, a) if path == target else a


def _edits(arrays):
    """``[(key, words, change)]`` for the arrays of a case's parameter dicts (``{path: array}``)."""
    found = []
    matrices = {p for p, a in arrays.items() if a.ndim == 2 and a.dtype.kind == "f"}
    if matrices:
        found.append(("transposed:all", "every weight matrix is used transposed (w.T, the way PyTorch stores them)",
                      _transposed(matrices)))
    holders = sorted({p.rsplit("[", 1)[0] for p in matrices})
    for holder in holders if len(holders) > 1 else ():
        these = {p for p in matrices if p.rsplit("[", 1)[0] == holder}
        found.append((f"transposed:{holder}", f"every weight matrix of {holder} is used transposed (w.T, the way "
                                              f"PyTorch stores them)", _transposed(these)))
    shifts = [p for p, a in arrays.items() if a.ndim == 1 and a.dtype.kind == "f" and np.abs(a).max() > 1e-12]
    found += [(f"zero:{p}", f"{p} is left out", _zeroed({p})) for p in shifts]
    if len(shifts) > 1:
        found.append(("zero:all", "every bias and shift is left out", _zeroed(set(shifts))))
    for source in arrays:
        for target in arrays:
            if source != target and source.rsplit("[", 1)[0] == target.rsplit("[", 1)[0] and \
                    arrays[source].shape == arrays[target].shape:
                found.append((f"read:{source}:{target}", f"{source} is read in place of {target}",
                              _read_for(source, target)))
    return found


def transformed(model, inputs, make):
    """The input variants of ``model`` for inputs shaped as ``inputs`` (``{name: value}``, one case's), each
    ``make(key, words, function, transform)``; none where no input is a dict of parameters."""
    names = [n for n, v in inputs.items() if isinstance(v, dict)]
    arrays = {}
    for name in names:
        arrays.update(arrays_in(inputs[name], name))
    made = []
    for key, words, change in _edits(arrays):
        transform = _transform(change, names)
        made.append(make(f"input:{key}", words, transform(model), transform))
    return made
