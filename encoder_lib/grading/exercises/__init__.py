"""The course's exercises, one module per lesson, each exercise declared in its lesson's file beside it.

Each exercise asks the learner for a function with the same name and
arguments as the library's (``softmax``, ``layer_norm``, ...). Its
``Exercise`` (``_base``) holds everything about it: the right answer, the
cases it is checked on, its points and formula, what it may call, and the
typical wrong answers (``Mistake``), each one's explanation beside the model
that computes what it computes. The words and numbers are in the lesson's
``.toml`` file (``attention.toml``), which names the code, the functions of
its module (``attention.py``); ``_base.load_exercises`` puts them together.

| lesson | module |
| --- | --- |
| 01_attention | ``attention`` |
| 02_multi_head_attention | ``heads`` |
| 03_feed_forward | ``feed_forward`` |
| 04_add_and_norm | ``add_norm`` |
| 05_encoder_block | ``block`` |
| 06_stacking_blocks | ``stack`` |
| 07_gradients_and_training | ``gradients`` |
| 08_inside_a_real_encoder | ``pretrained`` |
| 09_the_encoder_since_2017 | ``modern`` |

Adding an exercise touches its lesson's module here (its cases, reference,
model and mistakes' models) and its file (a table that names them, with its
texts), its lesson's learner-written mistakes in ``tests/mistakes/``, and its
notebook (answer, self-check and test cells).
"""

from . import add_norm, attention, block, feed_forward, gradients, heads, modern, pretrained, stack
from ._base import Exercise, Mistake

#: The lessons' modules, in course order.
LESSONS = (attention, heads, feed_forward, add_norm, block, stack, gradients, pretrained, modern)

#: Every exercise by name, in course order.
EXERCISES = {exercise.name: exercise for module in LESSONS for exercise in module.EXERCISES}

#: ``{lesson: (exercise names in course order)}``, the lessons in course order.
BY_LESSON = {}
for _name, _exercise in EXERCISES.items():
    BY_LESSON[_exercise.lesson] = BY_LESSON.get(_exercise.lesson, ()) + (_name,)

__all__ = ["BY_LESSON", "EXERCISES", "Exercise", "LESSONS", "Mistake"]
