"""A hint ladder for when a self-check fails, in words: what is wrong, the idea it needs, then a worked step.

``rungs(verdict)`` gives the three rungs (markdown) for a failing answer:

1. what is wrong on one check, which the self-check's report does not say: the failing check of the smallest
   inputs (``verdict.Verdict.shown``), with its numbers in and out where they are few enough to read, or, for a
   broken promise (``contract``), how to see it for yourself; and how to get that check's inputs
   (``failing_case``);
2. the idea the answer needs, with a link to the lesson's section or widget
   that shows it;
3. a worked step on a small example, never the whole solution.

Where a catalogued mistake is named, rungs 2 and 3 are that mistake's own
(``Mistake.hints``) if it has them; where only a promise beyond the values is broken, that promise's
(``contract.hints``); otherwise the exercise's (``Exercise.hints``). The ladder only words what it is given; where
it is shown and how many rungs are open is ``hint_area``'s, and ``self_check.hint``
climbs it. After the third rung, a fourth step shows the course's solution where the teacher's setting
opens it (``opening``, ``solution_step``): ``STEPS`` counts it.
"""

import inspect
import re

import numpy as np

from .contract.hints import RUNGS as CONTRACT_RUNGS, TRY
from .contract.said import named

RUNGS = 3
#: The rungs and the fourth step, the course's solution beside the learner's code.
STEPS = RUNGS + 1
#: Words a rung may have, first to last: long enough to say something, short enough to read at once.
WORDS = (40, 160)


def words(text):
    """The words of a rung as a reader counts them (a link's text counts, not its address)."""
    plain = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    return len(re.findall(r"[^\s]+", plain))


def rungs(verdict):
    """The three rungs (markdown) for an answer judged ``verdict`` (a failing ``verdict.Verdict``): the first shows one
    failing check, what the self-check's words are about; the idea and the worked step are the named mistake's own,
    else, where only a promise beyond the values is broken, that promise's (``contract.hints``), else the exercise's."""
    exercise, name, shown = verdict.exercise, verdict.exercise.name, verdict.shown
    rung1 = (f"**What is wrong, on one check.** Your `{name}` fails {len(verdict.failing)} of its "
             f"{len(verdict.checks)} checks; of those, {named(shown)} has the smallest inputs. "
             f"{_look(exercise, shown)} To run it yourself: `case = grading.failing_case(\"{name}\")`, then compare "
             f"`{name}(*case.args, **case.kwargs)` with `case.expected`.")
    own = getattr(verdict.mistake, "hints", ()) if verdict.mistake is not None else ()
    kept = [f.key for f in verdict.contract if f.key in CONTRACT_RUNGS] if all(c.case.how is not None or c.right_values
                                                                      for c in verdict.failing) else []
    idea, step = own or (CONTRACT_RUNGS[kept[0]] if kept else exercise.hints)
    return [_fit(rung1), f"**The idea.** {idea}", f"**A worked step.** {step}"]


def _look(exercise, check):
    """What the first rung says of the check it shows: how to see a broken promise for yourself, else, where the
    inputs are few enough to read, the numbers in and out, else what the check says of it."""
    how, value, expected = check.case.how, check.outcome.value, check.case.expected
    if how is not None:
        return TRY[how.kind].format(name=exercise.name, base=how.base.description, words=how.words)
    names = list(inspect.signature(exercise.reference).parameters)
    inputs = [(n, a) for n, a in [*zip(names, check.case.args), *check.case.kwargs.items()] if hasattr(a, "size")]
    if inputs and all(a.size <= 12 for _, a in inputs) and not check.right_values and type(value) is np.ndarray \
            and value.shape == np.shape(expected) and _numbers(value) != _numbers(expected):
        return (f"Its inputs are {'; '.join(f'{n} = {_numbers(a)}' for n, a in inputs)}. The right result is "
                f"{_numbers(expected)}; yours is {_numbers(value)}.")
    return f"There {check.problem}."


def _numbers(array):
    """An array as a rung quotes it: on one line, each number to 4 significant digits."""
    return np.array2string(np.asarray(array), separator=", ", max_line_width=10**6,
                           formatter={"float_kind": "{:.4g}".format, "bool": str})
def _fit(text, most=WORDS[1]):
    """Cut a generated rung at a sentence end so that it keeps to ``most`` words."""
    if words(text) <= most:
        return text
    sentences = re.split(r"(?<=[.?!])\s+", text)
    kept = []
    for sentence in sentences:
        if words(" ".join(kept + [sentence])) > most:
            break
        kept.append(sentence)
    return " ".join(kept)
