"""The hand-in service: a learner hands in from the notebook and reads the grader's verdict seconds later.

``service`` (HTTP, behind the hub's auth), ``store`` (on disk before "handed in"; what is kept), ``queue`` and
``grading`` (a fair queue, graded as `make grade` grades), ``views`` (what a learner sees), ``page`` (in the
browser), ``collect`` and ``status`` (`make collect`, `make hand-ins`). The learner's side is
``encoder_lib.grading.handing_in``.
"""
