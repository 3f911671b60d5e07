"""A hint ladder for when a self-check fails: what is wrong, the idea it needs, then a worked step.

After a self-check fails, ``hint("softmax")`` (or the button under the
self-check's output) shows the next rung of the exercise's ladder:

1. what is wrong, in words: the catalogued mistake or the diagnosis of the
   last self-check (``feedback.Verdict.explanation``), and how to get the
   failing check's inputs (``failing_case``);
2. the idea the answer needs, with a link to the lesson's section or widget
   that shows it;
3. a worked step on a small example, never the whole solution.

Where a catalogued mistake is named, rungs 2 and 3 are that mistake's own
(``Mistake.hints``) if it has them; otherwise the exercise's
(``Exercise.hints``). How many rungs a learner has opened is kept with the
notebook (``ladder``), so it survives a restart and a download; the grader
never reads it: hints cost and earn nothing.
"""

import re

from .exercises import EXERCISES

RUNGS = 3
#: Words a rung may have, first to last: long enough to say something, short enough to read at once.
WORDS = (40, 160)


def words(text):
    """The words of a rung as a reader counts them (a link's text counts, not its address)."""
    plain = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    return len(re.findall(r"[^\s]+", plain))


def ladder(name, verdict):
    """The three rungs (markdown) for ``name``'s answer judged ``verdict`` (a failing ``feedback.Verdict``)."""
    exercise = EXERCISES[name]
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


# ---------------------------------------------------------------- in the notebook


def opened(name):
    """How many rungs of ``name``'s ladder the learner has opened (kept with the notebook, see ``store``)."""
    from . import hint_store

    return hint_store.opened(name)


def hint(name):
    """Show the next rung of the hint ladder for ``name`` (an exercise's name or function), after a failed self-check."""
    from . import hint_store
    from .self_check import LAST  # the module, which the package's self_check function shadows

    name = getattr(name, "__name__", name)
    if name not in EXERCISES:
        raise ValueError(f"hint takes an exercise's name, one of {sorted(EXERCISES)}; got {name!r}")
    verdict = LAST.get(name)
    if verdict is None:
        print(f"Run the self-check of `{name}` first: a hint starts from what it found.")
        return
    if verdict.passed:
        print(f"`{name}` passes its self-check: no hint needed.")
        return
    rungs = ladder(name, verdict)
    count = min(RUNGS, hint_store.opened(name) + 1)
    hint_store.record(name, count)
    hint_store.show(name, rungs[:count], count)


def offer(name):
    """Under a failed self-check: the hint button in a notebook with widgets, else a line saying how to ask."""
    from . import hint_store

    hint_store.offer(name)
