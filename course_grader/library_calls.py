"""The library functions an answer calls from the sandbox, computed here: only those its exercise may call, on
arrays not far larger than its cases', within a share of the grader's time (``CallBudget``)."""

import time
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

    def refusal(self, name, args, kwargs):
        """Why the call ``el.<name>(*args, **kwargs)`` is refused, or None."""
        dimension, elements = _sizes([args, kwargs])
        if dimension > self.dimension or elements > self.elements:
            return (f"el.{name} was called on arrays far larger than this exercise's checks use (a dimension of "
                    f"{dimension}, {elements} numbers): the grader refused to compute it")
        if self.seconds <= 0:
            return "its calls to the library took more of the grader's time than the exercise's time limit"
        return None


def _library_value(name, args, kwargs):
    import encoder_lib

    with quietly():
        return getattr(encoder_lib, name)(*args, **kwargs)


def serve(message, allowed, budget=None):
    """Compute a library function the answer called through its stand-in, if its exercise may call it and the
    call is within ``budget`` (a ``CallBudget``, which records what it refused). The reply is a message for the
    sandbox (``Sandbox.run`` answers a value that cannot cross with an error)."""
    name, args, kwargs = message.get("name"), message.get("args"), message.get("kwargs")
    if name not in allowed or not isinstance(args, list) or not isinstance(kwargs, dict):
        return {"kind": "error", "type": "TypeError", "message": f"el.{name} is not available to this exercise"}
    why = budget.refusal(name, args, kwargs) if budget else None
    if why:
        budget.refused.append(why)
        return {"kind": "error", "type": "RuntimeError", "message": why}
    started = time.monotonic()
    try:
        return {"kind": "value", "value": _library_value(name, args, kwargs)}
    except (ValueError, TypeError, IndexError, KeyError) as exc:
        return {"kind": "error", "type": type(exc).__name__, "message": str(exc)[:2000]}
    except Exception as exc:  # the library refused in another way: the answer's call was wrong
        return {"kind": "error", "type": "RuntimeError", "message": f"{type(exc).__name__}: {exc}"[:2000]}
    finally:
        if budget:
            budget.seconds -= time.monotonic() - started

