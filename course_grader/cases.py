"""The cases an answer is graded on: the exercise's visible cases (built once per process, the same for the whole
class) and the hidden ones drawn for each submission from the course's secret, and the time they may take; what
every worker needs built once before it forks (``build_once``, ``share_visible``)."""

import functools

from encoder_lib.grading import contract
from encoder_lib.grading.compare import build_cases, hidden_rngs
from encoder_lib.grading.exercises import EXERCISES
from encoder_lib.grading.variants import singles

#: An exercise's time limit is for its visible cases, as the self-check runs them; its hidden cases get time in
#: proportion, up to this many times the limit in all.
MAX_TIME_FACTOR = 3.0

#: The answers whose hidden cases a worker keeps (at most 400 KB each, bert_block's).
HIDDEN_KEPT = 64


@functools.cache
def visible_cases(name):
    """The exercise's visible cases, its diagnosis's probes (``Case.probe``, never graded) and the contract checks
    derived from them (``contract``, the self-check's own), with their right results: built once per process, the
    same for the whole class."""
    return contract.build(EXERCISES[name], (), True)


@functools.cache
def public_cases(name):
    """The self-check's checks drawn from the exercise's space with the public seed (built once): the hand-in service
    runs an answer on them too, so that what it shows before the due date is the self-check's own verdict."""
    return build_cases(EXERCISES[name], generated=True, visible=False)


def hidden_cases(name, secret, answer):
    """The hidden cases of one answer cell (``answer``: the SHA-256 of its source), drawn from the secret and its
    content: an unchanged answer keeps its hidden cases, and its verdict, whatever else of the notebook changed.

    Kept for the ``HIDDEN_KEPT`` answers graded last in this process: the same answer cell handed in by another
    learner (the course's solution, a catalogued mistake) has the same cases, computed once (bert_block's run
    all-MiniLM-L6-v2's embeddings and block: 25 ms). Its answer still runs on them in its own sandbox."""
    return list(_hidden_cases(name, secret, answer))


@functools.lru_cache(maxsize=HIDDEN_KEPT)
def _hidden_cases(name, secret, answer):
    return tuple(build_cases(EXERCISES[name], hidden_rngs(secret, name, submission=answer), visible=False))


def forget_hidden_cases():
    """Drop the hidden cases kept (``HIDDEN_KEPT``), and the course's secret in their keys: a Dask worker's grader
    process keeps nothing of the secret once its learner is graded."""
    _hidden_cases.cache_clear()


def time_allowed(name, n_cases, limits):
    """The seconds an answer's run may take: the limit for the visible cases, and in proportion for the rest."""
    return limits.seconds * min(MAX_TIME_FACTOR, max(1.0, n_cases / max(1, len(visible_cases(name)))))


def build_once(names=None):
    """What every worker needs and nothing changes, built here before they fork, so that they share it: the visible
    cases and the variant catalogue (``variants.singles``, the diagnosis's single edits) of each exercise of
    ``names`` (default: all). One exercise's take a second or two (bert_block's model calls, 1,300 variants
    compiled for the course), so a run that grades two lessons builds theirs only."""
    for name in EXERCISES if names is None else names:
        exercise = EXERCISES[name]
        visible_cases(name)
        if getattr(exercise, "model", None) is not None:
            singles(exercise, EXERCISES)


def share_visible(session, names=None):
    """The visible cases' large arrays (all-MiniLM-L6-v2's weights, which the hidden cases hold too) of the exercises
    of ``names`` (default: all), shared with every sandbox of ``session`` through files (``sandbox.shared``), not sent
    with each answer's cases."""
    for name in EXERCISES if names is None else names:
        for case in visible_cases(name):
            session.shared.add_large([case.args, case.kwargs])
