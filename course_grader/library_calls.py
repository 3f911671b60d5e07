"""The library functions an answer calls from the sandbox, computed here: only those its exercise may call, on
arrays not far larger than its cases', within a share of the grader's time (``CallBudget``)."""

import hashlib
import time
from collections import OrderedDict
from dataclasses import dataclass, field

import numpy as np

from encoder_lib.grading import wire
from encoder_lib.grading.compare import quietly

#: A library call from an answer may take arrays up to this many times the largest its exercise's cases hold.
CALL_GROWTH = 4

def _sizes(value):
    """``(largest dimension, number of elements)`` of the arrays in a value (lists, dicts and ``Call``s too)."""
    dimension, elements, pending = 0, 0, [value]
    while pending:
        item = pending.pop()
        if isinstance(item, np.ndarray):
            dimension, elements = max(dimension, max(item.shape, default=1)), elements + item.size
        elif isinstance(item, dict):
            pending.extend(item.values())
        elif isinstance(item, (list, tuple)):
            pending.extend(item)
        elif isinstance(item, wire.Call):
            pending.extend(item.args)
    return dimension, elements


@dataclass
class CallBudget:
    """What one exercise's library calls may take: arrays at most ``CALL_GROWTH`` times the largest of its cases
    (in elements and in each dimension), and ``seconds`` of the grader's time in all."""

    dimension: int
    elements: int
    seconds: float
    refused: list = field(default_factory=list)

    @classmethod
    def of(cls, cases, limits):
        sizes = [_sizes([case.args, case.kwargs]) for case in cases]
        return cls(CALL_GROWTH * max(d for d, _ in sizes) + 16, CALL_GROWTH * max(n for _, n in sizes) + 4096,
                   float(limits.seconds))

    def refusal_of_sizes(self, name, dimension, elements):
        """Why a call ``el.<name>`` on arrays of these sizes (``_sizes``) is refused, or None."""
        if dimension > self.dimension or elements > self.elements:
            return (f"el.{name} was called on arrays far larger than this exercise's checks use (a dimension of "
                    f"{dimension}, {elements} numbers): the grader refused to compute it")
        if self.seconds <= 0:
            return "its calls to the library took more of the grader's time than the exercise's time limit"
        return None


def serve(message, allowed, budget=None):
    """Compute a library function the answer called through its stand-in, if its exercise may call it and the
    call is within ``budget`` (a ``CallBudget``, which records what it refused). The reply is a message for the
    sandbox (``Sandbox.run`` answers a value that cannot cross with an error)."""
    import encoder_lib

    name, args, kwargs = message.get("name"), message.get("args"), message.get("kwargs")
    if name not in allowed or not isinstance(args, list) or not isinstance(kwargs, dict):
        return {"kind": "error", "type": "TypeError", "message": f"el.{name} is not available to this exercise"}
    why = budget.refusal_of_sizes(name, *_sizes([args, kwargs])) if budget else None
    if why:
        budget.refused.append(why)
        return {"kind": "error", "type": "RuntimeError", "message": why}
    started = time.monotonic()
    try:
        with quietly():
            return {"kind": "value", "value": getattr(encoder_lib, name)(*args, **kwargs)}
    except (ValueError, TypeError, IndexError, KeyError) as exc:
        return {"kind": "error", "type": type(exc).__name__, "message": str(exc)[:2000]}
    except Exception as exc:  # the library refused in another way: the answer's call was wrong
        return {"kind": "error", "type": "RuntimeError", "message": f"{type(exc).__name__}: {exc}"[:2000]}
    finally:
        if budget:
            budget.seconds -= time.monotonic() - started


#: The most bytes of replies a worker keeps for the calls answers make on the visible cases (``CallMemo``).
MEMO_BYTES = 32 * 2**20


class CallMemo:
    """The replies to the library calls answers made on an exercise's visible cases, kept by a worker for the
    next answers (least recently used first out, ``MEMO_BYTES`` in all).

    The visible cases are the same for every answer to an exercise, so a right answer, however it is written,
    makes the same calls on them as every other right answer did: the same pure function of the same bytes
    (computed with one BLAS thread), whose reply is the same bytes. A call is known by its exercise and the
    SHA-256 of its whole message, and kept with its sizes, so that each answer's own ``CallBudget`` refuses
    what it would refuse. Calls on the hidden cases, drawn for each answer cell, are never kept: a class gains
    from this only what every class of right answers gains, however alike its answer cells are."""

    def __init__(self, limit=MEMO_BYTES):
        self.replies, self.bytes, self.limit = OrderedDict(), 0, limit

    def get(self, key):
        entry = self.replies.get(key)
        if entry is not None:
            self.replies.move_to_end(key)
        return entry

    def put(self, key, entry):
        if key in self.replies or len(entry[0]) > self.limit // 64:
            return
        self.replies[key] = entry
        self.bytes += len(entry[0])
        while self.bytes > self.limit:
            _, dropped = self.replies.popitem(last=False)
            self.bytes -= len(dropped[0])


#: This process's ``CallMemo``.
MEMO = CallMemo()


class Calls:
    """One answer's library calls: ``serve``d (what its exercise may call, within its ``CallBudget``), and on its
    first ``shared`` cases (the visible ones) answered from ``memo`` where an earlier answer made the very same
    call (``known``) and kept there when not (``keep``)."""

    def __init__(self, exercise, allowed, budget=None, shared=0, memo=MEMO):
        self.exercise, self.allowed, self.budget, self.shared, self.memo = exercise, allowed, budget, shared, memo
        self.answered = 0  # calls answered from the memo

    def __call__(self, message):
        return serve(message, self.allowed, self.budget)

    def _key(self, data, case):
        """The memo's key of a message on case ``case``, or None where it is not a call on a visible case."""
        if self.memo is None or case >= self.shared or wire.peek(data, "kind") != "call":
            return None
        return self.exercise, hashlib.sha256(data).digest()

    def known(self, data, case):
        """The reply (its bytes) to the call ``data`` made on case ``case``, from the memo; else None."""
        key = self._key(data, case)
        entry = self.memo.get(key) if key else None
        if entry is None:
            return None
        reply, name, dimension, elements = entry
        if name not in self.allowed or (self.budget and self.budget.refusal_of_sizes(name, dimension, elements)):
            return None  # served as any other call: refused there, in words
        self.answered += 1
        return reply

    def keep(self, data, case, message, reply, data_out):
        """Keep the reply ``data_out`` (bytes) to the call ``data`` on case ``case`` (``message``, decoded), where
        the library computed a value (only the library's values are ``"value"`` replies): never an error (a
        MemoryError of the grader's own, say, would be given to every later answer) nor a refusal."""
        key = self._key(data, case)
        if key is None or reply.get("kind") != "value":
            return
        self.memo.put(key, (data_out, message.get("name"), *_sizes([message.get("args"), message.get("kwargs")])))
