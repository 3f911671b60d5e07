"""The judge: from what an answer gave on each case to one verdict, shared by the self-check and the grader.

``judge(exercise, cases, outcomes)`` compares each case's outcome with the
right result and returns a ``Verdict``: which checks pass and, for a failing
answer, what is wrong, in this order:

1. a result that cannot be the answer (not a numpy array of floats of the
   right shape, or not the tuple asked for) fails its check at once, and an
   answer that changed its inputs in place fails the case, and says so;
2. a cause is stated only when it is verified (``causes``): a catalogued
   mistake or a variant of the right answer reproduces what the answer gave
   on every case it ran on, failing and passing;
3. otherwise only what was measured (``symptoms``): the rule a failing check
   breaks and what the answer gives, and which causes were ruled out.

A verdict says one of the two, never both, so its sentences cannot
contradict each other. The notebook's self-check and the grader's note are
two renderings of the same verdict, so a mistake gets the same sentences in
both.
"""

import builtins
import hashlib
import re
from dataclasses import KW_ONLY, dataclass, field

from . import causes, contract, symptoms
from .wire import arrays_in
from .compare import (CHECK, EVIDENCE, Raised, close, close_but_for_precision, describe_difference, dtype_short,
                      float32_shown, near_at_lower_precision, precision_problem, precision_short, returned_problem)


@dataclass
class Outcome:
    """What an answer did on one case: returned ``value`` or raised ``raised``; ``changed`` names the inputs
    it changed in place (parameter names, as the exercise's signature has them), ``shares`` those its result shares
    memory with (or ``contract.EARLIER``: an earlier call's result), ``random`` whether it drew random numbers."""

    value: object = None
    raised: Raised = None
    changed: tuple = ()
    shares: tuple = ()
    random: bool = False


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

    @property
    def right_values(self):
        """Did it give the right values (whatever else is wrong: its inputs changed in place, or its values kept
        at a lower precision than the right ones)?"""
        return self.outcome.raised is None and returned_problem(self.outcome.value, self.case.expected, False) is None \
            and (close(self.outcome.value, self.case.expected, tolerance=self.case.tolerance)
                 or close_but_for_precision(self.outcome.value, self.case.expected))


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
    """Judge one case: what it returned (or, where the library refuses its inputs, that it raised too), then its
    values (to the case's tolerance), its inputs left alone, and what the call did besides (``contract.problem``)."""
    hidden = getattr(case, "hidden", False)
    if isinstance(case.expected, Raised):
        problem = contract.refusal_problem(case, outcome)
        return Check(case, outcome, problem is None, problem or "")
    if outcome.raised is not None:
        return Check(case, outcome, False, _raised_words(outcome.raised, hidden))
    problem = returned_problem(outcome.value, case.expected, False) or dtype_short(outcome.value, case.expected)
    if problem:
        return Check(case, outcome, False, problem)
    if not close(outcome.value, case.expected, tolerance=case.tolerance):
        return Check(case, outcome, False, precision_short(outcome.value, case.expected) or
                     describe_difference(outcome.value, case.expected, hidden))
    if outcome.changed:
        return Check(case, outcome, False, _changed_words(outcome.changed))
    problem = contract.problem(outcome)
    return Check(case, outcome, problem is None, problem or "")


#: The failing checks drawn from an exercise's input space that the self-check lists one by one; the rest counted.
MOST_DRAWN_SHOWN = 4


@dataclass
class Verdict:
    """An answer's checks and, when it fails, what is wrong: its verified causes, or else what was measured."""

    exercise: object
    checks: list
    _: KW_ONLY
    causes: list = field(default_factory=list)  # causes.Cause, verified
    symptoms: list = field(default_factory=list)  # symptoms.Finding, where no cause is verified
    contract: list = field(default_factory=list)  # symptoms.Finding: the promises beyond the values it breaks
    changed: tuple = ()  # inputs the answer changed in place (on any case)
    ruled_out: str = ""  # what the search for a cause tried, where it found none
    undefined: str = ""  # the name every failing check's NameError names, where that is what is wrong
    answer: str = ""  # what the answer's code is (``self_check.code_digest``): the ladder starts again when it changes

    @property
    def mistakes(self):
        """The catalogued mistakes the verdict names."""
        return [c.mistake for c in self.causes if c.mistake is not None]

    @property
    def mistake(self):
        """The catalogued mistake that explains every failing check, or None."""
        return self.mistakes[0] if len(self.causes) == 1 and self.mistakes else None

    @property
    def passed(self):
        return all(c.ok for c in self.checks)

    @property
    def shown(self):
        """The failing check the hint ladder shows and ``failing_case`` gives: of the fewest input numbers (the easiest
        to read by hand), the first of those."""
        return min(self.failing, key=lambda c: sum(a.size for a in arrays_in([c.case.args, c.case.kwargs])))

    @property
    def failing(self):
        return [c for c in self.checks if not c.ok]

    @property
    def precision(self):
        """What a failing check measured of the result's precision (its dtype, or float32 numbers), or ''."""
        for check in self.failing:
            if check.case.how is not None:
                continue  # a contract check's dtype is the contract's to say
            value = check.outcome.value
            if check.outcome.raised is None and returned_problem(value, check.case.expected, False) is None:
                problem = precision_problem_of(value, check.case.expected)
                if problem:
                    return problem
        return ""

    def explanation(self):
        """What is wrong, in words: the verified causes, or what was measured; '' for a right answer."""
        if self.passed:
            return ""
        parts = []
        if self.changed:
            parts.append(_sentence(_changed_words(self.changed)))
        if self.undefined:
            parts.append(_undefined_words(self.undefined))
        if len(self.causes) == 1:
            parts.append(self.causes[0].sentence)
        elif self.causes:
            parts += [f"On {_checks(c.checks)}: {c.sentence}" for c in self.causes]
        elif self.symptoms:
            parts.append("What the checks measured: " + " ".join(f.sentence for f in self.symptoms))
        elif self.precision:
            parts.append(_sentence(self.precision))
        if not self.causes and self.ruled_out:
            parts.append(self.ruled_out)
        return " ".join(parts + [f.sentence for f in self.contract])  # the values first, then what else it breaks

    def keys(self):
        """What the verdict names, for the class report: each cause's key, else each symptom's."""
        return [f.key for f in self.contract] + ([c.key for c in self.causes] or
                                                 [f"symptom:{f.key}" for f in self.symptoms])

    def failure_key(self):
        """A short name of this failure: the same for the same answer failing the same checks with the same
        explanation, so that the hint ladder's count belongs to one failure (``hint_area``): a changed answer starts
        the ladder again, even where its checks fail with the same words."""
        said = [c.description for c in self.failing] + self.keys() + list(self.changed) + [self.answer]
        return hashlib.sha256("\0".join(said).encode()).hexdigest()[:12]

    def specific(self):
        """Does the learner get more than where and by how much: a cause, a measured fact, or changed inputs?"""
        return bool(self.causes or self.symptoms or self.changed or self.precision or self.undefined or self.contract)

    def report(self):
        """The self-check's printout."""
        passed = sum(c.ok for c in self.checks)
        lines = [f"`{self.exercise.name}`: {passed} of {len(self.checks)} checks passed"]
        name, plain = self.exercise.name, [c for c in self.checks if c.case.how is None]
        lines += _listed([c for c in plain if c.case.point is None], [c for c in plain if c.case.point is not None],
                         f"drawn from all the inputs `{name}` allows", "(batch axes, other sizes, extreme values)",
                         more=any(c.ok for c in plain if c.case.point is None))
        lines += _listed([], [c for c in self.checks if c.case.how is not None],
                         f"of what `{name}` promises beyond its values", "(the same result on every call, any "
                         "memory layout, its dtype, a new array, its arguments' names)", more=any(c.ok for c in plain))
        if self.passed:
            lines.append("Well done.")
        elif self._explanation_beside(self.failing[0].problem):
            lines.append(self._explanation_beside(self.failing[0].problem))
        return "\n".join(lines)

    def _explanation_beside(self, problem):
        """The explanation, without what the check's ``problem`` already says (a changed input, the precision)."""
        explanation = self.explanation()
        for said in (_changed_words(self.changed) if self.changed else "", self.precision):
            if said and said in problem:
                explanation = explanation.replace(_sentence(said), "", 1).strip()
        return explanation

    def note(self):
        """One paragraph for a visible test's AssertionError or the grader's note: the first failing check, then why."""
        if self.passed:
            return ""
        first = self.failing[0]
        explanation = self._explanation_beside(first.problem)  # what the check says is said once
        return f"{first.description}: {first.problem}" + (f". {explanation}" if explanation else "")


def _listed(always, others, kind, which, more):
    """The report's lines for ``always`` (each shown) and ``others`` (the first ``MOST_DRAWN_SHOWN`` failing ones
    shown, the rest counted): ``kind`` says what they are, ``which`` what the passing ones cover."""
    failing = [c for c in others if not c.ok]
    lines = [f"  {'✓' if c.ok else '✗'} {c.description}" + ("" if c.ok else f": {c.problem}")
             for c in always + failing[:MOST_DRAWN_SHOWN]]
    if len(failing) > MOST_DRAWN_SHOWN:
        lines.append(f"  ✗ {len(failing) - MOST_DRAWN_SHOWN} more checks {kind} fail too")
    passing = sum(c.ok for c in others)
    if passing:
        lines.append(f"  ✓ {passing} {'more ' if more or failing else ''}check{'s' * (passing > 1)} {kind} {which}")
    return lines


#: The names an answer finds where it runs: the lessons' first cell imports them, and the grader gives them.
GIVEN_NAMES = {"np": "numpy, as `import numpy as np`", "math": "Python's `math`, as `import math`",
               "erf": "SciPy's erf, as `from scipy.special import erf`", "el": "the library, as `import encoder_lib "
               "as el`"}
_UNDEFINED = re.compile(r"^name '([A-Za-z_][A-Za-z0-9_]*)' is not defined")


def _float32_shown(check):
    outcome, expected = check.outcome, check.case.expected
    return outcome.raised is None and returned_problem(outcome.value, expected, False) is None and \
        float32_shown(outcome.value, expected)


def _near_at_lower_precision(check):
    outcome, expected = check.outcome, check.case.expected
    return outcome.raised is None and returned_problem(outcome.value, expected, False) is None and \
        near_at_lower_precision(outcome.value, expected)


def _undefined_name(checks):
    """The name that every failing check's ``NameError`` names, or ''."""
    names = {m.group(1) for c in checks for m in [_UNDEFINED.match(c.outcome.raised.message)
                                                   if c.outcome.raised is not None and
                                                   c.outcome.raised.kind == "NameError" else None] if m}
    named = all(c.outcome.raised is not None and c.outcome.raised.kind == "NameError" for c in checks)
    return names.pop() if named and len(names) == 1 else ""


def _undefined_words(name):
    if name in GIVEN_NAMES:
        return (f"`{name}` is not defined where your answer ran: it is {GIVEN_NAMES[name]}, which the lesson's "
                f"first code cell imports. Run that cell, then your answer's cell and this one again.")
    return (f"`{name}` is not defined where your answer ran: an answer has `np`, `math`, `erf` and `el`, and what "
            f"its own cell defines or imports. Check the spelling of `{name}`, or define or import it in the answer's "
            f"cell.")


def _sentence(words):
    return words[0].upper() + words[1:] + "."


def precision_problem_of(got, expected):
    """``compare.precision_problem`` of a result, or of the first item of a tuple that has one."""
    if isinstance(expected, tuple):
        return next((p for g, e in zip(got, expected) for p in [precision_problem_of(g, e)] if p), "")
    return precision_problem(got, expected) or ""


def _checks(descriptions):
    quoted = ", ".join(f"\u201c{d}\u201d" for d in descriptions[:3]) + (", ..." if len(descriptions) > 3 else "")
    return f"{len(descriptions)} of your failing checks ({quoted})" if len(descriptions) > 1 else \
        f"your failing check {quoted}"


def judge(exercise, cases, outcomes, calls=causes.CALLS):
    """The ``Verdict`` on an answer that gave ``outcomes`` (one ``Outcome`` per case, in order) on ``cases``.

    Cases that are a diagnosis's probes (``Case.probe``) are not checks: they only add evidence for a cause, and
    say where a failing answer goes wrong."""
    pairs = list(zip(cases, outcomes))
    checks = [check_case(case, outcome) for case, outcome in pairs if case.graded]
    verdict = Verdict(exercise, checks, changed=tuple(dict.fromkeys(n for c in checks for n in c.outcome.changed)))
    verdict.contract = contract.findings(checks)
    checks = [c for c in checks if c.case.how is None]  # a cause or a symptom is read off the plain checks alone
    wrong = [c for c in checks if not c.ok and not c.right_values]
    if not wrong or {f.key for f in verdict.contract} & contract.NOT_A_FUNCTION:
        return verdict  # right values throughout, or values that are not a function of the inputs alone
    verdict.undefined = _undefined_name(wrong)
    if verdict.undefined:  # the answer never ran to a value: there is nothing to find a cause in
        return verdict
    if any(_float32_shown(c) for c in checks if not c.ok) and all(_near_at_lower_precision(c) for c in wrong):
        return verdict  # float32 measured, and every other failing check off by no more than float32 keeps
    probed = [check_case(case, outcome) for case, outcome in pairs if not case.graded]
    seen = [causes.Seen(c.case, c.outcome, c.right_values) for c in checks + probed]
    found = causes.find(exercise, seen, calls)
    verdict.causes = list(found.causes)
    if verdict.causes:
        return verdict
    return _measured(verdict, checks, wrong, probed, found)


def _measured(verdict, checks, wrong, probed, found):
    """``verdict`` with what was measured, where no cause is verified: the symptoms of the ``wrong`` checks, where the
    exercise's probes locate the failure, where its space fails, and what the search for a cause tried (``found``)."""
    exercise = verdict.exercise
    evidence = [symptoms.Evidence(exercise, c.case, c.outcome) for c in wrong]
    located = {c.case.probe: None if c.outcome.raised is not None else c.right_values
               for c in probed if not c.case.probe.startswith(EVIDENCE)}
    verdict.symptoms = symptoms.measure(exercise, evidence, located)
    parted = symptoms.fact_where_the_space_fails([(c.case.point, c.ok or c.right_values) for c in checks])
    if parted is not None:
        verdict.symptoms = [parted] + verdict.symptoms[:1]
    compared = any(c.outcome.raised is not None or returned_problem(c.outcome.value, c.case.expected, False) is None
                   for c in wrong)  # where it returned what cannot be the answer, that is what is wrong
    verdict.ruled_out = symptoms.ruled_out(exercise, found.complete, found.ambiguous, found.pairs) if compared else ""
    return verdict
