"""The cause of a wrong answer, stated only when it is verified.

A cause is verified when a variant of the right answer that embodies it
(a catalogued ``Mistake``, or one of the error model's ``variants``)
reproduces what the answer computed on every case it ran on: the same
values, within the comparison's tolerance, or the same error, on the failing
checks and on the passing ones (where both are right), and on the
diagnosis's probes; and values were compared somewhere (a passing check, or
a failing one that returned a value): two answers that only raise the same
errors are not known to compute the same thing. ``find`` searches the catalogue first, then the single
variants, then two causes that each reproduce a part of the failing checks,
then the pairs of single variants, within a budget counted in calls (so that
the same answer always gets the same verdict, however busy the machine is).
What it does not verify it does not say.
"""

import re
from dataclasses import dataclass, field

import numpy as np

from .. import _checks
from . import variants
from .compare import Raised, close, returned_problem
from .exercises import EXERCISES

#: What one search may spend: ``CALLS`` calls of variants on a case of at most ``UNIT`` input numbers (a larger
#: case counts for as many calls as it has units: all-MiniLM-L6-v2's block costs about 90), and ``PAIRS`` pairs.
CALLS, UNIT, PAIRS = 8000, 20_000, 800
#: The failing cases every candidate is tried on first, the smallest: what a pair is chosen from.
FEW = 3


@dataclass(frozen=True)
class Seen:
    """One case an answer ran on: the case, what the answer gave (an ``Outcome``), and whether that was right."""

    case: object
    outcome: object
    ok: bool


@dataclass(frozen=True)
class Cause:
    """A verified cause: its ``key`` (``mistake:<name>`` or ``variant:<key>``), the sentence a learner reads,
    the catalogued ``mistake`` where it is one, and the failing checks it reproduces (all of them unless it
    shares them with another cause)."""

    key: str
    sentence: str
    mistake: object = None
    checks: tuple = ()
    candidate: object = field(default=None, compare=False)  # the Mistake or Variant that reproduces the answer
    alternatives: tuple = field(default=(), compare=False)  # every candidate the sentence names (two it cannot tell apart)


@dataclass(frozen=True)
class Found:
    """What the search found: the verified ``causes`` (empty when none is), and whether it tried every candidate
    it knows (``complete``) or stopped at its budget."""

    causes: tuple
    complete: bool
    ambiguous: bool = False  # several unrelated causes each reproduce everything: none is named
    pairs: bool = True  # whether pairs were tried (not where no failing case returned a value of the right shape)


# ---------------------------------------------------------------- reproducing


_SHAPES = re.compile(r"\(\s*\d*(?:\s*,\s*\d+)*\s*,?\s*\)")


def _error_signature(raised):
    """An error as the cause's test compares it: its kind, its words and numbers without its shapes, and the
    shapes it names in any order (numpy names a broadcast's two shapes in the order of the operands). The numbers
    count: "size 4 is different from 8" and "size 6 is different from 8" are two different products."""
    message = " ".join(str(raised.message).split())
    shapes = sorted(re.sub(r"\s", "", s).rstrip(",)") + ")" for s in _SHAPES.findall(message))
    return raised.kind, _SHAPES.sub("()", message), shapes


def same(result, outcome):
    """Does ``result`` (a variant's value or ``Raised``) equal what the answer gave (``outcome``)?"""
    if outcome.raised is not None:
        return isinstance(result, Raised) and _error_signature(result) == _error_signature(outcome.raised)
    return not isinstance(result, Raised) and close(outcome.value, result, equal_nan=True)


def _size(case):
    return sum(np.size(v) for v in _checks.arrays_of((case.args, case.kwargs)))


def _key(candidate):
    return candidate.key if isinstance(candidate, variants.Variant) else f"mistake:{candidate.name}"


def _run(candidate, case):
    """What a candidate (a Mistake or a Variant) gives on a case: a mistake's model raises ``NotApplicable`` for
    inputs it does not describe, which count as the right answer's."""
    if isinstance(candidate, variants.Variant):
        return variants.run(candidate, case.args, case.kwargs)
    result = variants.run(variants.Variant("", "", candidate.model), case.args, case.kwargs)
    return case.expected if isinstance(result, Raised) and result.kind == "NotApplicable" else result


def _entries(result, outcome):
    """Which entries of the answer's output ``result`` reproduces, flattened (for an error: one entry)."""
    if outcome.raised is not None:
        return np.array([same(result, outcome)])
    got = outcome.value
    if isinstance(got, tuple):
        if not isinstance(result, tuple) or len(result) != len(got):
            return np.zeros(sum(np.size(g) for g in got) or 1, dtype=bool)
        return np.concatenate([_entries(r, type(outcome)(value=g)) for r, g in zip(result, got)])
    if not isinstance(got, np.ndarray) or not isinstance(result, np.ndarray) or got.shape != result.shape or \
            got.dtype.kind not in "fiub" or result.dtype.kind not in "fiub":
        return np.zeros(max(1, np.size(got) if isinstance(got, np.ndarray) else 1), dtype=bool)
    with np.errstate(all="ignore"):
        return np.isclose(got, result, rtol=1e-6, atol=1e-6, equal_nan=True).ravel()


def _valued(one):
    """Did the answer return a value of the right type and shape on this case (not an error, nor a shape that
    only a broadcast by accident made)?"""
    return one.outcome.raised is None and returned_problem(one.outcome.value, one.case.expected, False) is None


def _distance(result, outcome):
    """How far a result on a case is from the answer's there: 0 for the same error, else the largest difference
    (inf where it cannot be compared)."""
    if outcome.raised is not None:
        return 0.0 if same(result, outcome) else np.inf
    entries = _entries(result, outcome)
    return float(1 - entries.mean())


class Search:
    """One search for an answer's cause: its candidates, and every result computed, within one budget."""

    def __init__(self, exercise, seen, calls=CALLS):
        self.exercise = exercise
        self.failing = sorted((s for s in seen if not s.ok), key=lambda s: _size(s.case))
        self.passing = [s for s in seen if s.ok]
        self.left, self.results, self.agrees = calls, {}, {}
        self.singles = list(variants.singles(exercise, EXERCISES)) + \
            list(variants.input_variants(exercise, self.failing[0].case))
        self.candidates = list(exercise.mistakes) + self.singles

    @property
    def spent(self):
        return self.left < 0

    def result(self, candidate, case):
        """What ``candidate`` gives on ``case``, computed once; None when the budget is spent."""
        key = (_key(candidate), id(case))
        if key not in self.results:
            if self.spent:
                return None
            self.left -= 1 + _size(case) // UNIT
            self.results[key] = _run(candidate, case)
        return self.results[key]

    def reproduces(self, candidate, one):
        result = self.result(candidate, one.case)
        return result is not None and same(result, one.outcome)

    def right_where_right(self, candidate):
        """Does the candidate give what the answer gives where the answer is right (the passing cases)?"""
        key = _key(candidate)
        if key not in self.agrees:
            self.agrees[key] = all(self.reproduces(candidate, one) for one in self.passing)
        return self.agrees[key]

    def whole(self, candidate):
        """Does the candidate reproduce every case, failing (the smallest first) and passing?"""
        return all(self.reproduces(candidate, one) for one in self.failing) and self.right_where_right(candidate)

    def each_seen(self, a, b):
        """Is each edit of the pair (a, b) seen in a value the answer returned, not only in its errors: on some
        failing case where it returned a value of the right shape, the other edit alone does not give that value?
        (An error's words cannot tell which of several lines raised it, nor can numbers that a broadcast over an
        axis of length 1 made by accident.)"""
        values = [one for one in self.failing if _valued(one)]
        return all(any(not self.reproduces(other, one) for one in values) for other in (a, b))

    def reproduced(self, candidate, among):
        return [i for i, one in enumerate(among) if self.reproduces(candidate, one)]

    def extend(self, most):
        """A pair made of a single edit that reproduces some of the smallest failing cases, and another that makes
        the pair reproduce the first of the rest; verified on everything. Most two-slip answers show one slip
        alone somewhere."""
        few = self.failing[:FEW]
        partial = [(len(found), v) for v in self.singles if (v.mutations or v.transform)
                   for found in [self.reproduced(v, few)] if found and len(found) < len(self.failing)]
        tried = 0
        for _, a in sorted(partial, key=lambda item: -item[0]):
            if not self.right_where_right(a):
                continue
            rest = next(one for one in self.failing if not self.reproduces(a, one))
            for b in self.singles:
                if tried >= most or self.spent:
                    return None
                both = variants.pair(self.exercise, a, b)
                if both is None:
                    continue
                tried += 1
                if self.reproduces(both, rest) and self.whole(both) and self.each_seen(a, b):
                    return both
        return None

    def cover(self, most):
        """Two single edits that each reproduce a part of the entries of the smallest failing cases and together
        all of them, the most covering first: a pair only if it then reproduces everything."""
        few = self.failing[:FEW]
        covered = []
        for v in self.singles:
            if not (v.mutations or v.transform):
                continue
            results = [self.result(v, one.case) for one in few]
            if any(r is None for r in results):
                return None
            masks = [_entries(r, one.outcome) for r, one in zip(results, few)]
            if any(m.any() for m in masks):
                covered.append((v, masks))
        covered.sort(key=lambda item: -sum(m.mean() for m in item[1]))
        tried = 0
        for i, (a, masks_a) in enumerate(covered):
            for b, masks_b in covered[i + 1:]:
                if not all((ma | mb).all() for ma, mb in zip(masks_a, masks_b)):
                    continue
                if tried >= most or self.spent:
                    return None
                tried += 1
                if self.right_where_right(a) and self.right_where_right(b):
                    both = variants.pair(self.exercise, a, b)
                    if both is not None and self.whole(both) and self.each_seen(a, b):
                        return both
        return None

    def parts(self):
        """``[(candidate, [failing cases it reproduces])]`` of the candidates that reproduce one of the smallest
        failing cases and are right where the answer is."""
        few = self.failing[:FEW]
        found = []
        for candidate in self.candidates:
            if self.reproduced(candidate, few) and self.right_where_right(candidate):
                found.append((candidate, self.reproduced(candidate, self.failing)))
            if self.spent:
                break
        return found

    def rank(self, most):
        """A pair of single edits that change the smallest failing case, the ones that bring it closest to the
        answer's (by the sum of their ranks); ``(pair or None, whether every pair was tried)``."""
        first = self.failing[0]
        movers = []
        for v in self.singles:
            result = self.result(v, first.case)
            if result is None:
                return None, False
            if (v.mutations or v.transform) and \
                    not (not isinstance(result, Raised) and close(result, first.case.expected)):
                movers.append((_distance(result, first.outcome), len(movers), v))
        movers = [v for _, _, v in sorted(movers)]
        tried = 0
        for a, b in _by_rank_sum(movers):
            if tried >= most or self.spent:
                return None, False
            if not (self.right_where_right(a) and self.right_where_right(b)):
                continue
            both = variants.pair(self.exercise, a, b)
            tried += 1
            if both is not None and self.whole(both) and self.each_seen(a, b):
                return both, True
        return None, True


# ---------------------------------------------------------------- words


#: Where a cause is verified: every case the answer ran on, or (one of two causes) its own failing checks.
EVERYWHERE, THERE = "on every case it was run on", "there"


#: The most candidates a sentence names as alternatives the cases cannot tell apart.
MOST_ALTERNATIVES = 3
_WORDS = {2: "two", 3: "three"}


def _sentence(exercise, candidate, others=(), where=EVERYWHERE):
    name = exercise.name
    if others:
        count = "either of two changes" if len(others) == 1 else f"any of {_WORDS[len(others) + 1]} changes"
        parts = "; or ".join(_part(c) for c in (candidate, *others))
        return (f"Your `{name}` gives exactly what a right `{name}` gives with {count}, {where}, which the cases "
                f"cannot tell apart: {parts}.")
    if isinstance(candidate, variants.Variant):
        count = "one change" if candidate.count == 1 else "two changes"
        return f"Your `{name}` gives exactly what a right `{name}` gives with {count}, {where}: {candidate.words}."
    return f"Your `{name}` gives exactly what this known mistake gives, {where}: {candidate.explanation}."


def _part(candidate):
    return candidate.words if isinstance(candidate, variants.Variant) else candidate.explanation


def _cause(exercise, candidate, checks=(), others=()):
    """The cause that names ``candidate`` (and the ``others`` the cases cannot tell from it)."""
    said = _sentence(exercise, candidate, others, THERE if checks else EVERYWHERE)
    key = "|".join(f"variant:{c.key}" if isinstance(c, variants.Variant) else _key(c) for c in (candidate, *others))
    mistake = None if isinstance(candidate, variants.Variant) else candidate
    return Cause(key, said, mistake, checks, candidate, (candidate, *others))


# ---------------------------------------------------------------- the search


def _distinct(candidates):
    """The candidates with different words (several models may compute one mistake), in order."""
    found = {}
    for candidate in candidates:
        found.setdefault(_part(candidate), candidate)
    return list(found.values())


def _in_steps(exercise, chosen):
    """One cause for several edits that each reproduce everything, where they all change one or two steps: the
    steps are verified, which edit of them is not."""
    ideas = list(dict.fromkeys(idea for c in chosen if isinstance(c, variants.Variant) for idea in c.ideas))
    if not ideas or len(ideas) > 2 or any(not isinstance(c, variants.Variant) or not c.ideas for c in chosen):
        return None
    name = exercise.name
    where = " or ".join(f"in the step where {idea}" for idea in ideas)
    said = (f"Your `{name}` gives exactly what a right `{name}` gives with one change {where}, {EVERYWHERE}: "
            f"{len(chosen)} different changes there give what yours gives, for example: {chosen[0].words}.")
    return Cause("steps:" + "|".join(ideas), said, candidate=chosen[0], alternatives=tuple(chosen))


def _most_telling(whole):
    """Of the candidates that each reproduce everything, the ones to name: the catalogue's, else the edits of the
    model (which say the step), else the changed inputs."""
    mistakes = [c for c in whole if not isinstance(c, variants.Variant)]
    edits = [c for c in whole if isinstance(c, variants.Variant) and c.mutations]
    return mistakes or edits or whole


def find(exercise, seen, calls=CALLS, pairs=PAIRS):
    """What an answer that gave ``seen`` (``[Seen]``: every case it ran on) is verified to have done wrong: one
    cause that explains every failing check (a catalogued mistake, a single edit of the right answer, or two
    edits at once), or two that each explain their part of the failing checks, or two that the checks cannot
    tell apart, both said. Searched in that order, within ``calls`` and ``pairs``."""
    if all(s.ok for s in seen):
        return Found((), True)
    search = Search(exercise, seen, calls)
    if not search.passing and all(one.outcome.raised is not None for one in search.failing):
        return Found((), True, pairs=False)  # errors alone, no value compared anywhere: two errors alike prove nothing
    whole = _distinct([c for c in search.candidates if search.whole(c)])
    if whole:
        chosen = _most_telling(whole)
        if len(chosen) <= 2:
            return Found((_cause(exercise, chosen[0], others=tuple(chosen[1:])),), True)
        steps = _in_steps(exercise, chosen)
        if steps or len(chosen) <= MOST_ALTERNATIVES:
            return Found((steps or _cause(exercise, chosen[0], others=tuple(chosen[1:])),), True)
        return Found((), True, ambiguous=True)
    if not any(_valued(one) for one in search.failing):
        return Found((), not search.spent, pairs=False)  # two edits, or two parts, on errors alone: too weak
    both = search.extend(pairs) or search.cover(pairs)
    if both:
        return Found((_cause(exercise, both),), True)
    shared = _from_parts(exercise, search)
    if shared.causes:
        return shared
    both, tried_all = search.rank(pairs)
    if both:
        return Found((_cause(exercise, both),), True)
    return Found((), tried_all and not search.spent)


def _from_parts(exercise, search):
    """Two candidates that each reproduce their part of the failing checks, if there are; else nothing found."""
    shared = _two_that_share(exercise, search.failing, search.parts()) if len(search.failing) > 1 else []
    return Found(tuple(shared), not search.spent)


def _two_that_share(exercise, failing, parts):
    """Two candidates that are each right where the answer is, and that together reproduce every failing check,
    each on its own part, and each on a value the answer returned there (not only its errors)."""
    everything = set(range(len(failing)))
    valued = {j for j, one in enumerate(failing) if _valued(one)}
    for i, (a, found_a) in enumerate(parts):
        for b, found_b in parts[i + 1:]:
            own_a, own_b = set(found_a) - set(found_b), set(found_b) - set(found_a)
            if set(found_a) | set(found_b) == everything and own_a & valued and own_b & valued and \
                    _part(a) != _part(b):
                only_b = sorted(set(found_b) - set(found_a))
                said_a = tuple(failing[j].case.description for j in found_a if failing[j].case.graded)
                said_b = tuple(failing[j].case.description for j in only_b if failing[j].case.graded)
                if not (said_a and said_b):
                    continue  # a part seen only on the diagnosis's probes: no check of the learner's to say it on
                return [_cause(exercise, a, said_a), _cause(exercise, b, said_b)]
    return []


def _by_rank_sum(items):
    """Every pair (a, b) of ``items``, a before b, in order of the sum of their positions."""
    n = len(items)
    for total in range(1, 2 * n - 2):
        for i in range(max(0, total - n + 1), (total + 1) // 2):
            yield items[i], items[total - i]
