"""From what an answer gave on each case to what the learner reads: one verdict, shared by the self-check and the grader.

``judge(exercise, cases, outcomes)`` compares each case's outcome with the
right result and returns a ``Verdict``: which checks pass, and for a failing
answer what is wrong, in this order:

1. an answer that changed its inputs in place fails the case, and says so;
2. a catalogued mistake (``Exercise.mistakes``) is named only when it explains
   every failing check; one that explains some of them is said to, and
3. the rest is diagnosed from what every right answer must satisfy
   (``diagnosis``): what was measured, where, and what it suggests.

The notebook's self-check and the grader's note are two renderings of the
same verdict, so a mistake gets the same sentences in both.
"""

import builtins
import hashlib
from dataclasses import dataclass, field

from . import diagnosis
from .compare import Raised, close, describe_difference


@dataclass
class Outcome:
    """What an answer did on one case: returned ``value`` or raised ``raised``; ``changed`` names the inputs
    it changed in place (parameter names, as the exercise's signature has them)."""

    value: object = None
    raised: Raised = None
    changed: tuple = ()


@dataclass(eq=False)
class Check:
    """One case, judged."""

    case: object
    outcome: Outcome
    ok: bool
    problem: str = ""

    @property
    def description(self):
        return self.case.description


def _changed_words(names):
    listed = " and ".join(f"`{n}`" for n in names)
    return (f"it changed its input{'s' * (len(names) > 1)} {listed} in place: the caller's arrays must be left as "
            f"they were, so work on a new array (np.where(...), x - m, x.copy()) rather than writing into "
            f"{'them' if len(names) > 1 else 'it'} (x[...] = ..., x -= ...)")


def _raised_words(raised, hidden):
    """The error an answer raised, as a check shows it: on a hidden case its kind only (a message could carry the
    hidden inputs out), and an exception class of the answer's own not by its name."""
    if not hidden:
        return f"it raised {raised.kind}: {raised.message}"[:600]
    kind = raised.kind if raised.kind in _BUILTIN_ERRORS else "an exception"
    return f"it raised {kind} (on a hidden check its message is not shown)"


_BUILTIN_ERRORS = {name for name, value in vars(builtins).items()
                   if isinstance(value, type) and issubclass(value, BaseException)}


def check_case(case, outcome):
    """Judge one case: right value, right shape, inputs left alone."""
    hidden = getattr(case, "hidden", False)
    if outcome.raised is not None:
        return Check(case, outcome, False, _raised_words(outcome.raised, hidden))
    if not close(outcome.value, case.expected):
        return Check(case, outcome, False, describe_difference(outcome.value, case.expected, hidden))
    if outcome.changed:
        return Check(case, outcome, False, _changed_words(outcome.changed))
    return Check(case, outcome, True)


def explains(result, outcome):
    """Does a mistake's result (or error) on a case equal what the answer gave there?"""
    if outcome.raised is not None:
        return outcome.raised.same_as(result)
    return not isinstance(result, Raised) and close(outcome.value, result, equal_nan=True)


@dataclass
class Verdict:
    """An answer's checks and, when it fails, what is wrong."""

    exercise: object
    checks: list
    mistake: object = None  # the catalogued Mistake that explains every failing check, or None
    partly: tuple = None  # ((Mistake, how many failing checks it explains), ...) when none explains them all
    findings: list = field(default_factory=list)  # diagnosis.Finding: what was measured, where no mistake explains
    changed: tuple = ()  # inputs the answer changed in place (on any case)

    @property
    def diagnosis(self):
        """The diagnosis's sentences."""
        return [f.sentence for f in self.findings]

    @property
    def passed(self):
        return all(c.ok for c in self.checks)

    @property
    def failing(self):
        return [c for c in self.checks if not c.ok]

    def explanation(self):
        """What is wrong, in words: the catalogued mistake, or the diagnosis; '' for a right answer."""
        if self.passed:
            return ""
        parts = []
        if self.changed:
            parts.append(_changed_words(self.changed)[0].upper() + _changed_words(self.changed)[1:] + ".")
        if self.mistake is not None:
            parts.append(f"Likely mistake: {self.mistake.explanation}.")
        elif self.partly:
            total = len(self.failing)
            said = [f"{count} of your {total} failing checks behave{'s' * (count == 1)} like this known mistake: "
                    f"{m.explanation}"
                    if i == 0 else f"{count} like this one: {m.explanation}" for i, (m, count) in enumerate(self.partly)]
            lead = "Likely mistakes: " if not self.diagnosis and len(self.partly) > 1 else ""
            parts.append(lead + "; ".join(said) + ".")
        if self.diagnosis and self.mistake is None:
            lead = "What the other checks measured: " if self.partly else "What the checks measured: "
            parts.append(lead + " ".join(self.diagnosis))
        return " ".join(parts)

    def failure_key(self):
        """A short name of this failure: the same for the same checks failing with the same explanation, so that
        the hint ladder's count belongs to one failure (``hint_area``)."""
        said = [self.mistake.name if self.mistake is not None else ""] + [c.description for c in self.failing] + \
            [f.key for f in self.findings] + [m.name for m, _ in self.partly or ()] + list(self.changed)
        return hashlib.sha256("\0".join(said).encode()).hexdigest()[:12]

    def specific(self):
        """Does the learner get more than where and by how much: a mistake, a diagnosis, or changed inputs?"""
        return bool(self.mistake or self.partly or self.diagnosis or self.changed)

    def report(self):
        """The self-check's printout."""
        passed = sum(c.ok for c in self.checks)
        name = self.exercise.name
        lines = [f"`{name}`: {passed} of {len(self.checks)} checks passed"]
        lines += [f"  {'✓' if c.ok else '✗'} {c.description}" + ("" if c.ok else f": {c.problem}")
                  for c in self.checks]
        if self.passed:
            lines.append("Well done.")
        else:
            explanation = self.explanation()
            if explanation:
                lines.append(explanation)
        return "\n".join(lines)

    def note(self):
        """One paragraph for a visible test's AssertionError or the grader's note: the first failing check, then why."""
        if self.passed:
            return ""
        first = self.failing[0]
        explanation = self.explanation()
        said = _changed_words(self.changed)
        if self.changed and first.problem == said:  # said once, by the check
            explanation = explanation.replace(said[0].upper() + said[1:] + ".", "", 1).strip()
        return f"{first.description}: {first.problem}" + (f". {explanation}" if explanation else "")


def judge(exercise, cases, outcomes):
    """The ``Verdict`` on an answer that gave ``outcomes`` (one ``Outcome`` per case, in order) on ``cases``.

    Cases that are a diagnosis's probes (``Case.probe``) are not checks: they only say where a failing answer
    goes wrong."""
    pairs = list(zip(cases, outcomes))
    checks = [check_case(case, outcome) for case, outcome in pairs if case.graded]
    # each probe: right (True), wrong (False), or None where the answer raised (which locates nothing)
    probed = {case.probe: None if outcome.raised is not None else check_case(case, outcome).ok
              for case, outcome in pairs if not case.graded}
    changed = tuple(dict.fromkeys(name for c in checks for name in c.outcome.changed))
    wrong = [c for c in checks if not c.ok and not (c.outcome.raised is None and close(c.outcome.value, c.case.expected))]
    verdict = Verdict(exercise, checks, changed=changed)
    if not wrong:  # right values throughout (failing, if at all, for changing its inputs)
        return verdict
    # a mistake is its explanation: several models may compute it (a -inf or a -1e9 fill, say), and together
    # they explain the checks any of them explains
    explained = {}  # explanation -> (first mistake with it, [checks explained])
    for check in wrong:
        for mistake, result in check.case.mistakes:
            if explains(result, check.outcome):
                covered = explained.setdefault(mistake.explanation, (mistake, []))[1]
                if not any(c is check for c in covered):
                    covered.append(check)
    order = list(dict.fromkeys(m.explanation for m in exercise.mistakes))
    complete = [e for e in order if e in explained and len(explained[e][1]) == len(wrong)]
    if complete:
        verdict.mistake = explained[complete[0]][0]
        return verdict
    # no one mistake explains everything: the fewest that, together, explain the most failing checks
    rest, parts = list(wrong), []
    while explained and rest:
        best = max(explained, key=lambda e: (sum(any(c is r for r in rest) for c in explained[e][1]), -order.index(e)))
        mistake, covered = explained.pop(best)
        newly = [c for c in rest if any(c is d for d in covered)]
        if not newly:
            break
        parts.append((mistake, len(newly)))
        rest = [c for c in rest if not any(c is d for d in newly)]
    verdict.partly = tuple(parts) or None
    if not rest:
        return verdict
    evidence = [diagnosis.Evidence(exercise, c.case, c.outcome) for c in rest]
    verdict.findings = diagnosis.diagnose(exercise, evidence, [(c.case, c.ok) for c in checks], probed)
    return verdict
