"""The course's exercises, in the notebook and in the grader.

In a lesson, under each answer cell:

- ``grading.self_check(fn)`` runs the exercise's visible cases on your
  function and prints which pass; when one fails, it names the likely
  mistake (it compares your result with what typical wrong answers give);
- ``grading.visible_tests(fn)``, in the locked test cell, runs the same
  cases and stops with an ``AssertionError`` that says, in words, what was
  checked and what came out.

Both run your function on its own: the earlier exercises it calls are the
library's versions while it runs (so one mistake costs one exercise), and
the library functions this exercise may not use are blocked.

The scores a teacher records come from somewhere else: ``make grade``
(``course_grader.grade``) runs each answer cell alone in a sandbox, on
these cases and on hidden ones drawn from a secret seed, and compares the
results outside it. Each exercise is defined once, in its lesson's module of ``exercises``.
"""

from .exercises import EXERCISES
from .handing_in import hand_in, hand_in_button
from .self_check import (UsedTheLibrary, VisibleTestFailed, check, failing_case, friendly_not_implemented, hint,
                         on_its_own, self_check, visible_tests)

__all__ = ["EXERCISES", "hand_in", "hand_in_button", "self_check", "visible_tests", "check", "on_its_own", "friendly_not_implemented",
           "failing_case", "hint", "UsedTheLibrary", "VisibleTestFailed"]
