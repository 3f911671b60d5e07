"""Where grading time goes: each stage of grading timed where it happens, summed per learner and per exercise.

Every process keeps its ``PROFILE``; a worker returns each learner's with their results, the sandbox's runner
reports its stages in its messages, and the teacher's process sums them (``run.grade_class``'s summary,
``bench_grading`` prints it). Timing a stage costs two ``perf_counter`` calls: it is always on.

    >>> profile = Profile()
    >>> with profile.timed("hidden", "softmax"):
    ...     pass
    >>> profile.count("hidden"), profile.count("hidden", "softmax")
    (1, 1)
"""

import contextlib
import math
import time

#: The stages, in the order grading meets them: ``{key: (where it runs, what it is)}``.
STAGES = {
    "plan": ("teacher", "reading submitted/ and deciding what to grade (the plan)"),
    "catalogue": ("teacher", "the visible cases and each exercise's variant catalogue, built once before the fork"),
    "dispatch": ("teacher", "reading each learner's notebooks and handing them to a worker"),
    "read": ("worker", "reading a notebook's answer cells against its release"),
    "cgroup": ("worker", "a sandbox's cgroup made and removed"),
    "start": ("sandbox", "bubblewrap, the scratch /tmp and Python started in the sandbox"),
    "imports": ("sandbox", "the runner's imports (numpy), before it says it is ready"),
    "close": ("worker", "ending a sandbox"),
    "hidden": ("worker", "building an answer's hidden cases (bert_block's: all-MiniLM-L6-v2's embeddings and block)"),
    "send": ("worker", "encoding and sending the answer cell and its cases' inputs"),
    "seccomp": ("sandbox", "the system-call allow-list compiled (once a worker) and loaded (once an answer)"),
    "child": ("sandbox", "the answer's process forked and limited, before its cell runs"),
    "answer": ("sandbox", "the answer cell and its cases running (without its library calls)"),
    "calls": ("worker", "the library functions the answer calls, computed by the grader"),
    "end": ("sandbox", "the answer's process killed and its scratch folder cleared"),
    "receive": ("worker", "receiving and decoding the answer's results"),
    "judge": ("worker", "judging the results (verdict.judge), without the diagnosis"),
    "diagnosis": ("worker", "the diagnosis: the variant search (causes.find), timed by bench_grading"),
    "learner": ("worker", "a learner graded, start to end: the stages above and the waits between them"),
    "record": ("teacher", "storing each learner's results: grading.json, the notebook, the gradebook"),
    "files": ("teacher", "grades_by_exercise.csv, grades_lms.csv and the feedback pages"),
    "report": ("teacher", "the class report (make report), timed by bench_grading"),
}
#: The most seconds a stage reported by a sandbox may count (a learner's answer shares the sandbox: its numbers are
#: bounded, and only ever shown in a profile).
MAX_REPORTED = 3600.0


class Profile:
    """Seconds and counts by ``(stage, exercise)`` (exercise "" for a stage of no exercise)."""

    def __init__(self, entries=None):
        self.entries = {tuple(key): list(value) for key, value in (entries or {}).items()}

    def add(self, stage, seconds, exercise="", count=1):
        if stage not in STAGES:
            raise ValueError(f"stage must be one of {', '.join(STAGES)}, got {stage!r}")
        entry = self.entries.setdefault((stage, exercise), [0, 0.0])
        entry[0] += count
        entry[1] += seconds

    def reported(self, stage, value, exercise=""):
        """Add a number a sandbox reported, if it is one (finite, from 0 to ``MAX_REPORTED``)."""
        if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) \
                and 0 <= value <= MAX_REPORTED:
            self.add(stage, float(value), exercise)

    @contextlib.contextmanager
    def timed(self, stage, exercise=""):
        started = time.perf_counter()
        try:
            yield
        finally:
            self.add(stage, time.perf_counter() - started, exercise)

    def merge(self, other):
        """Add ``other`` (a ``Profile`` or its ``entries``) into this one."""
        for (stage, exercise), (count, seconds) in getattr(other, "entries", other).items():
            self.add(stage, seconds, exercise, count)
        return self

    def take(self):
        """This profile's entries, and it emptied: what one learner cost, sent back with their results."""
        entries, self.entries = self.entries, {}
        return entries

    def seconds(self, stage, exercise=None):
        """The seconds of ``stage`` (of one exercise, or of all with None)."""
        return sum(s for (st, ex), (_, s) in self.entries.items() if st == stage and exercise in (None, ex))

    def count(self, stage, exercise=None):
        return sum(n for (st, ex), (n, _) in self.entries.items() if st == stage and exercise in (None, ex))

    def exercises(self):
        return sorted({ex for _, ex in self.entries if ex})


#: This process's profile.
PROFILE = Profile()


def timed(stage, exercise=""):
    """Time a block as ``stage`` (of ``exercise``) in this process's profile."""
    return PROFILE.timed(stage, exercise)
