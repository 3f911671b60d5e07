"""The hand-in service's fair queue: one hand-in in flight per learner, the rest in arrival order.

A learner's new hand-in of a lesson replaces their one still waiting for that
lesson (which keeps its folder, as history) and goes to the back of the line:
a learner who hands in a hundred times a minute holds at most one place per
lesson and one grader, and delays no one else.

    >>> q = FairQueue(most=10)
    >>> for who, lesson in [("ada", "01"), ("ada", "02"), ("bo", "01")]:
    ...     q.add((who, lesson), f"{who}-{lesson}")
    >>> q.take(), q.take(), q.take()
    ('ada-01', 'bo-01', None)
    >>> q.done("ada"); q.take()
    'ada-02'
"""

import threading
from collections import OrderedDict


class QueueFull(Exception):
    """The queue holds as many hand-ins as it may: said to the learner, nothing stored."""


class FairQueue:
    """``add((learner, lesson), item)``, ``take()`` the next item whose learner has none in flight, ``done(learner)``
    when theirs is graded. Thread-safe; at most ``most`` items wait."""

    def __init__(self, most):
        self.most = most
        self.waiting = OrderedDict()  # (learner, lesson) -> item, in arrival order
        self.in_flight = {}  # learner -> (learner, lesson) being graded
        self.lock = threading.Lock()

    def room(self, key):
        """Whether ``add(key, ...)`` would be taken (a replacement always is)."""
        with self.lock:
            return key in self.waiting or len(self.waiting) < self.most

    def add(self, key, item):
        """Queue ``item`` for ``key``; returns the item it replaced (still waiting), or None. ``QueueFull`` when
        ``most`` wait already."""
        with self.lock:
            replaced = self.waiting.pop(key, None)
            if replaced is None and len(self.waiting) >= self.most:
                raise QueueFull(f"{len(self.waiting)} hand-ins are waiting to be graded, the most the service keeps")
            self.waiting[key] = item
            return replaced

    def take(self):
        """The first waiting item whose learner has nothing in flight (now in flight), or None."""
        with self.lock:
            for key, item in self.waiting.items():
                if key[0] not in self.in_flight:
                    del self.waiting[key]
                    self.in_flight[key[0]] = key
                    return item
            return None

    def done(self, learner):
        with self.lock:
            self.in_flight.pop(learner, None)

    def position(self, key):
        """1 for the next waiting hand-in, ..., or None where ``key`` is not waiting."""
        with self.lock:
            for n, waiting in enumerate(self.waiting, 1):
                if waiting == key:
                    return n
            return None
