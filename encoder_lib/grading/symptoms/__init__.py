"""What was measured on a wrong answer whose cause is not verified: its symptoms, each with the rule it breaks.

When no variant of the right answer reproduces what an answer computed
(``causes``), the feedback says only what was measured, from a failing
case's inputs, the answer's output on them and the right output, never from
the answer's source:

- **the rules of the exercise**, declared beside it (``Exercise.properties``):
  what every right answer satisfies, such as "each row of the weights sums to
  1 along ``axis``". A property is a function of one failing case's
  ``Evidence`` that returns a ``Finding`` when the answer breaks it, else
  None: the rule, and what the answer gives instead;
- **general facts**, which hold for any exercise (``GENERAL``): what its
  error names (shapes set against the case's inputs), the shape and type of
  what it returned, where it is not finite.

A sentence says what was measured and the rule it breaks, never a guess at
the cause: no question, no "is ... missing?". A rule an answer satisfies is
never reported (tests/test_symptoms.py runs every property on right answers).
"""

import re

from .evidence import MOST_CONVERTED, Evidence, Finding, output_names
from .facts import fact_error, fact_not_finite, fact_returned
from .relations import fact_relation, fact_threshold, fact_where_the_space_fails

from ..compare import quietly

#: The facts that hold for every exercise, in the order they are tried: the relations first, then what the
#: exercise's own rules measure (``findings_for``), then the rest.
RELATIONS = (fact_relation, fact_threshold)
GENERAL = (fact_error, fact_returned, fact_not_finite)


# ---------------------------------------------------------------- putting it together


def findings_for(exercise, evidence):
    """The facts measured on one failing case: how it relates to the right one, its exercise's rules, then the
    general facts."""
    found = []
    for probe in RELATIONS + tuple(getattr(exercise, "properties", ())) + GENERAL:
        try:
            with quietly():
                finding = probe(evidence)
        except Exception:  # a rule that cannot read this output says nothing about it
            finding = None
        if finding is not None:
            found.append(finding)
    return found


_DECIMAL = re.compile(r"-?\d+\.\d+(?:e-?\d+)?|-?\d+e-?\d+")


def safe_for_hidden(sentence, case):
    """May a finding on a hidden case be shown? Not if it quotes a number its description does not already say:
    a decimal number could be one of the hidden inputs, or an output an answer made of them."""
    return set(_DECIMAL.findall(sentence)) <= set(_DECIMAL.findall(case.description))


def measure(exercise, failing, probed=None, most=2):
    """Up to ``most`` findings on what the failing checks measured (``failing``: ``[Evidence]``), the one that
    holds on the most failing checks first; a second only where it covers checks the first does not. Then, from
    ``probed`` (``{probe name: right?}``), where the exercise's probes locate the failure (``Exercise.locate``)."""
    found, order = {}, []  # key -> (finding, {indices of the failing checks it holds on})
    for i, ev in enumerate(failing):
        for finding in findings_for(exercise, ev):
            if ev.case.hidden and not safe_for_hidden(finding.sentence, ev.case):
                continue  # it would quote numbers of a hidden case (its inputs, or an output made of them)
            if finding.key not in found:
                found[finding.key] = (finding, set())
                order.append(finding.key)
            found[finding.key][1].add(i)
    ranked = sorted(order, key=lambda k: (-len(found[k][1]), order.index(k)))
    sentences, covered = [], set()
    for key in ranked:
        finding, holds = found[key]
        if len(sentences) == most or (sentences and not holds - covered):
            continue
        others = len(holds) - 1
        said = finding.sentence + (f" The same holds on {others} other failing check{'s' * (others > 1)}."
                                   if others else "")
        sentences.append(Finding(finding.key, said))
        covered |= holds
    located = exercise.locate(probed) if probed and exercise.locate is not None else None
    if located is not None and len(sentences) < most:
        sentences.append(located)
    return sentences


def ruled_out(exercise, complete=True, ambiguous=False, pairs=True):
    """The sentence that says which causes the search tried, none of which gives the answer's outputs exactly (all
    it knows, or as many as its budget allowed); or that several unrelated ones each give the answer's outputs, so
    that none is named. Without ``pairs`` (no failing check returned a result of the right shape), two slips
    together were not tried."""
    if ambiguous:
        return ("Several unrelated slips each give exactly what your answer gives, so the checks cannot tell which "
                "one is yours: compare your steps with the rule above, one at a time.")
    # what was verified, and no more: none of these gives the answer's outputs exactly (an answer near one of them, a
    # known mistake with a constant mistyped, is not told that its mistake is ruled out)
    tried = "Tried, and none gives exactly what your answer gives" if complete else \
        "Tried as far as the checker's budget went, and none gives exactly what your answer gives"
    kinds = ["every single slip the checker knows (another axis, a dropped keepdims or transpose, an operator, term, "
             "call, argument or constant changed, a parameter ignored or swapped)"]
    kinds += ["two of them together"] if pairs else []
    kinds += ["the known mistakes of this exercise"] if exercise.mistakes else []
    said = f"{tried}: {', '.join(kinds[:-1])}{' and ' if len(kinds) > 1 else ''}{kinds[-1]}."
    if not pairs:
        said += (" Two slips together are not tried where no failing check returned a result of the right shape: "
                 "an error says too little.")
    return said


__all__ = ["GENERAL", "MOST_CONVERTED", "RELATIONS", "Evidence", "Finding", "fact_where_the_space_fails",
           "findings_for", "measure", "output_names", "ruled_out", "safe_for_hidden"]
