"""The catalogue of typical mistakes: each a wrong answer, written as a learner would write it.

One file per lesson, as ``encoder_lib/grading/exercises/`` has one module per
lesson. Each ``Wrong`` names the ``Mistake`` of the exercise's definition it
is a version of (``model``, the mistake's name there); a mistake may have
several learners' versions (``variant`` tells them apart).
tests/test_exercises.py checks that every model has a learner's version and
every version a model, that the self-check names each one's mistake and that
the hidden tests fail it; tests/grader/test_grading_pipeline.py checks that the
grader takes exactly that exercise's points and names it too.
"""

from dataclasses import dataclass

from encoder_lib.grading import EXERCISES


def _exercise_with(model):
    found = [e for e in EXERCISES.values() if any(m.name == model for m in e.mistakes)]
    if len(found) != 1:
        raise LookupError(f"{model!r} is the name of {len(found)} exercises' mistakes, not of one")
    return found[0]


@dataclass(frozen=True)
class Wrong:
    """A learner's wrong answer, a version of the catalogued mistake ``model``."""

    model: str
    source: str
    variant: str = ""

    @property
    def id(self):
        return self.model + (f"-{self.variant}" if self.variant else "")

    @property
    def exercise(self):
        return _exercise_with(self.model).name

    @property
    def lesson(self):
        return _exercise_with(self.model).lesson

    @property
    def explanation(self):
        """What the self-check and the grader must say of it: its mistake's explanation."""
        return next(m.explanation for m in _exercise_with(self.model).mistakes if m.name == self.model)


from . import add_norm, attention, block, feed_forward, gradients, heads, modern, pretrained, stack  # noqa: E402

MISTAKES = [wrong for module in (attention, heads, feed_forward, add_norm, block, stack, gradients, pretrained, modern)
            for wrong in module.MISTAKES]
BERT_BLOCK = pretrained.BERT_BLOCK
