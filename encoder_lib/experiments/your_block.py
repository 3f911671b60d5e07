"""Lesson 08: the learner's own block, run as all-MiniLM-L6-v2's six blocks, against the library's.

``compare_your_block(bert_block, texts)`` runs the texts through the model's
embedding layer (the library's), then through the six blocks twice: once with
the learner's ``bert_block`` and once with ``el.encoder_block``, both in
float64 (so that a right answer agrees to about 1e-15 on any machine), then
mean-pools each and compares the sentence vectors. When they differ, it finds
the first block whose output leaves the library's, running the learner's
block on the library's own input to that block, and inside it the first
sub-layer: every float array the learner's code holds while it runs (the
arguments, local variables and results of the learner's own functions) is
compared with the library's intermediates, in the order the block computes
them.
"""

import dataclasses
import os
import sys

import numpy as np

import encoder_lib as el

#: The library's intermediates, in the order a post-norm block computes them, and the sub-layer each belongs to:
#: x is the block's input, h = LN(x + attention(x)) Add & Norm 1's output, which the FFN and the second sum read.
LOCATED_STEPS = (("attn_out", "attention", "its output"),
         ("sum1", "Add & Norm 1", "the residual sum x + attention(x)"),
         ("norm1", "Add & Norm 1", "the layer norm of that sum, h"),
         ("ffn_hidden", "the FFN", "its hidden layer, GELU(h W1 + b1)"),
         ("ffn_out", "the FFN", "its output, FFN(h)"),
         ("sum2", "Add & Norm 2", "the residual sum h + FFN(h), h being Add & Norm 1's output"),
         ("norm2", "Add & Norm 2", "the layer norm of that sum (the block's output)"))
WITHIN = 1e-5  # what "the same sentence vector" means here
LOCATE = 1e-9  # a right float64 block agrees far closer than this; a mistake does not


@dataclasses.dataclass
class BlockComparison:
    """What ``compare_your_block`` found; ``str()`` of it is the report the lesson prints.

    >>> print(BlockComparison(384, 384, 0.0))
    sentence vectors: 384 of 384 values (100.0%) within 1e-05 of the library's; largest difference below 1e-12
    every block agrees with the library's: your block is all-MiniLM-L6-v2's block.
    """

    n_values: int
    n_within: int  # sentence-vector values within WITHIN of the library's
    largest: float
    _: dataclasses.KW_ONLY
    block: int = None  # the first block (1..6) whose output leaves the library's, if any
    sub_layer: str = None
    step: str = None
    difference: float = None  # how far the learner's value at that step is from the library's
    close: bool = True  # an array of the learner's code is recognisably that step, only off
    before: str = ""  # what still matched before it
    problem: str = ""  # an error or a wrong shape that stopped the comparison
    not_finite: bool = False  # the step's array in the learner's code holds NaN or infinity

    @property
    def share(self):
        return self.n_within / self.n_values if self.n_values else 0.0

    def __str__(self):
        if self.problem:
            return self.problem
        # float64 rounding differs in its last bits from machine to machine: below 1e-12 only its size is said
        largest = "below 1e-12" if self.largest < 1e-12 else "NaN or infinity" if not np.isfinite(self.largest) \
            else f"{self.largest:.1e}"
        lines = [f"sentence vectors: {self.n_within} of {self.n_values} values ({self.share:.1%}) within "
                 f"{WITHIN:g} of the library's; largest difference {largest}"]
        if self.not_finite:
            lines.append(f"your numbers first become NaN or infinity in block {self.block}, at {self.sub_layer}: "
                         f"{self.step}" + (f" ({self.before})" if self.before else ""))
        elif self.block is None:
            lines.append("every block agrees with the library's: your block is all-MiniLM-L6-v2's block.")
        elif self.sub_layer is None:
            lines.append(f"your numbers first leave the library's in block {self.block}, by up to {self.difference:.1e}, "
                         f"although every step inside it matches: check what your block does after its last layer norm")
        elif self.close:
            lines.append(f"your numbers first leave the library's in block {self.block}, at {self.sub_layer}: "
                         f"{self.step}, by up to {self.difference:.1e}" + (f" ({self.before})" if self.before else ""))
        else:
            lines.append(f"your numbers first leave the library's in block {self.block}; the first of its steps that "
                         f"nothing in your code comes close to is {self.sub_layer}: {self.step} (the closest array "
                         f"is off by up to {self.difference:.1e}" + (f"; {self.before})" if self.before else ")"))
        return "\n".join(lines)

    def _repr_pretty_(self, printer, cycle):  # shown as the report when it is a cell's last line
        printer.text(str(self))


def _library_folders():
    """Code that is not the learner's: numpy, encoder_lib, the standard library, installed packages."""
    folders = {os.path.dirname(np.__file__), os.path.dirname(el.__file__), os.path.dirname(os.__file__)}
    folders |= {p for p in sys.path if "site-packages" in p or "dist-packages" in p}
    return tuple(os.path.realpath(f) + os.sep for f in folders if f)


class _Recorder:
    """Every float array the learner's code holds while it runs, each value once (copied when first seen)."""

    def __init__(self):
        self.arrays = []
        self._seen = {}  # id -> the copy last recorded, to notice in-place changes
        self._library = _library_folders()
        self._own = {}

    def _is_learners(self, code):
        mine = self._own.get(code.co_filename)
        if mine is None:
            path = os.path.realpath(code.co_filename)
            mine = self._own[code.co_filename] = not path.startswith(self._library) and code.co_filename != __file__
        return mine

    def _keep(self, value):
        if isinstance(value, (tuple, list)):
            for v in value[:8]:
                self._keep(v)
        elif isinstance(value, np.ndarray) and value.dtype.kind == "f" and 0 < value.size <= 2_000_000:
            last = self._seen.get(id(value))
            if last is None or last.shape != value.shape or not np.array_equal(last, value, equal_nan=True):
                copy = value.copy()
                self._seen[id(value)] = copy
                self.arrays.append(copy)

    def trace(self, frame, event, arg):
        if event != "call" or not self._is_learners(frame.f_code):
            return None

        def local(frame, event, arg):
            for value in list(frame.f_locals.values()):
                self._keep(value)
            if event == "return":
                self._keep(arg)
            return local

        return local(frame, event, arg)

    def run(self, fn, *args, **kwargs):
        previous = sys.gettrace()
        sys.settrace(self.trace)
        try:
            return fn(*args, **kwargs)
        finally:
            sys.settrace(previous)


def _closest(arrays, target):
    """``(difference, close)``: the smallest largest-difference between ``target`` and a recorded array of its
    shape (inf if none), and whether that array is recognisably the learner's version of ``target``: some
    position's row is right, or it is off by less than 5% of the target's size."""
    best, best_array = np.inf, None
    for a in arrays:
        if a.shape == target.shape and np.isfinite(a).all():
            d = float(np.abs(a - target).max())
            if d < best:
                best, best_array = d, a
    if best_array is None:
        return best, False
    size = max(1.0, float(np.abs(target).max()))
    rows = np.abs(best_array - target).reshape(-1, target.shape[-1]).max(axis=-1)
    return best, bool(rows.min() <= LOCATE * size or best <= 0.05 * size)


def _locate(block, x, params, padding_mask, config):
    """``(sub_layer, step, difference, before)`` of the first intermediate where ``block`` on ``x`` leaves the library."""
    trace = el.trace_encoder_block(x, params, config, padding_mask=padding_mask)
    recorder = _Recorder()
    recorder.run(block, x.copy(), params, config.n_heads, padding_mask=padding_mask)
    matched = []
    for key, sub_layer, step in LOCATED_STEPS:
        target = trace[key]
        difference, close = _closest(recorder.arrays, target)
        if difference > LOCATE * max(1.0, float(np.abs(target).max())):
            before = f"before it, these match: {'; '.join(matched)}" if matched else ""
            not_finite = any(a.shape == target.shape and not np.isfinite(a).all() for a in recorder.arrays)
            return sub_layer, step, difference, close, before, not_finite
        matched.append(f"{sub_layer}, {step}" if step != "its output" else f"{sub_layer}'s output")
    return None, None, None, False, "", False


def _params64(params):
    return {part: {name: np.asarray(a, dtype=np.float64) for name, a in values.items()}
            for part, values in params.items()}


def _unit(v):
    return v / np.maximum(np.linalg.norm(v, axis=-1, keepdims=True), 1e-300)


def _run_yours(bert_block, start, layers, n_heads, mask, library):
    """``(the learner's stack's output, problem)``: ``bert_block`` as each block in turn; problem is None, or says
    the block that raised or returned the wrong shape."""
    yours = start
    for k, params in enumerate(layers, start=1):
        try:
            with np.errstate(all="ignore"):
                yours = bert_block(yours.copy(), params, n_heads, padding_mask=mask)
        except NotImplementedError:
            raise
        except Exception as exc:
            return None, f"your bert_block raised {type(exc).__name__} in block {k}: {exc}"
        shape = getattr(yours, "shape", None)
        if shape != library[k].shape:
            return None, (f"your bert_block returned {type(yours).__name__} of shape {shape} in block {k}; it must "
                          f"keep x's shape {library[k].shape}")
        yours = np.asarray(yours, dtype=np.float64)
    return yours, None


def _pooled_difference(yours, theirs, mask):
    """How far the learner's unit sentence vectors are from the library's (``theirs``), each number; inf where
    not finite (the library's mean pooling refuses NaN: where it starts is said instead)."""
    if not np.isfinite(yours).all():
        return np.full(theirs.shape, np.inf)
    with np.errstate(invalid="ignore"):
        difference = np.abs(_unit(el.mean_pool(yours, mask)) - theirs)
    return np.where(np.isfinite(difference), difference, np.inf)


def _locate_first(report, bert_block, library, layers, mask, config):
    """Fill in ``report`` with the first block that leaves the library, each run on the library's own input."""
    for k, params in enumerate(layers, start=1):
        with np.errstate(all="ignore"):
            out = np.asarray(bert_block(library[k - 1].copy(), params, config.n_heads, padding_mask=mask), np.float64)
        gap = float(np.nanmax(np.abs(out - library[k]))) if np.isfinite(out).all() else np.inf
        if gap > LOCATE * max(1.0, float(np.abs(library[k]).max())):
            with np.errstate(all="ignore"):
                sub_layer, step, located, close, before, not_finite = _locate(bert_block, library[k - 1], params,
                                                                              mask, config)
            report.block, report.sub_layer, report.step, report.close, report.before = k, sub_layer, step, close, before
            report.difference = located if sub_layer else gap
            report.not_finite = bool(not_finite and sub_layer)
            return


def compare_your_block(bert_block, texts, model=None):
    """Run ``texts`` through all-MiniLM-L6-v2 with ``bert_block`` as each of its six blocks; compare with the library.

    ``bert_block(x, params, n_heads, padding_mask=None)`` is the learner's
    block (post-norm, exact GELU, eps 1e-12). Returns a ``BlockComparison``;
    print it for the report.
    """
    from encoder_lib.pretrained import encode, load_minilm

    if not callable(bert_block):
        raise TypeError(f"bert_block must be your block function, got {type(bert_block).__name__}")
    model = model or load_minilm()
    config = model.block
    enc = encode(texts, model)
    mask = enc.padding_mask
    layers = [_params64(p) for p in model.layers]
    library = [enc.hidden_states[0].astype(np.float64)]
    for params in layers:
        library.append(el.encoder_block(library[-1], params, config, padding_mask=mask))
    yours, problem = _run_yours(bert_block, library[0], layers, config.n_heads, mask, library)
    if problem:
        return BlockComparison(0, 0, np.inf, problem=problem)
    difference = _pooled_difference(yours, _unit(el.mean_pool(library[-1], mask)), mask)
    report = BlockComparison(int(difference.size), int((difference <= WITHIN).sum()), float(difference.max()))
    _locate_first(report, bert_block, library, layers, mask, config)
    return report
