"""A hint ladder for when a self-check fails, in words: what is wrong, the idea it needs, then a worked step.

``rungs(verdict)`` gives the three rungs (markdown) for a failing answer:

1. what is wrong: the catalogued mistake or the diagnosis of the failing
   checks (``verdict.Verdict.explanation``), and how to get the failing
   check's inputs (``failing_case``);
2. the idea the answer needs, with a link to the lesson's section or widget
   that shows it;
3. a worked step on a small example, never the whole solution.

Where a catalogued mistake is named, rungs 2 and 3 are that mistake's own
(``Mistake.hints``) if it has them; otherwise the exercise's
(``Exercise.hints``). The ladder only words what it is given; where it is
shown and how many rungs are open is ``hint_area``'s, and ``self_check.hint``
climbs it. After the third rung, a fourth step shows the course's solution where the teacher's setting
opens it (``opening``, ``solution_step``): ``STEPS`` counts it.
"""

import re

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
    """The three rungs (markdown) for an answer judged ``verdict`` (a failing ``verdict.Verdict``)."""
    exercise, name = verdict.exercise, verdict.exercise.name
    failing = verdict.failing
    first = failing[0]
    explanation = verdict.explanation() or f"its output differs from the right one: {first.problem}"
    rung1 = (f"**What is wrong.** Your `{name}` fails {len(failing)} of its {len(verdict.checks)} checks, first "
             f"\u201c{first.description}\u201d. {explanation} To look at that check yourself, run "
             f"`case = grading.failing_case(\"{name}\")`, then compare `{name}(*case.args, **case.kwargs)` "
             f"with `case.expected`.")
    own = getattr(verdict.mistake, "hints", ()) if verdict.mistake is not None else ()
    idea, step = own if own else exercise.hints
    return [_fit(rung1), f"**The idea.** {idea}", f"**A worked step.** {step}"]


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
