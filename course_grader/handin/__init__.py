"""The hand-in service: a learner hands in from the notebook and reads the grader's verdict seconds later.

- ``service``: the JupyterHub service (HTTP), which takes a hand-in under the
  name the hub gives the learner's own token, and answers with its state;
- ``store``: each hand-in on disk before "handed in" is said, with its history;
- ``queue`` and ``grading``: a fair queue (one hand-in in flight per learner)
  graded by the course's grader, as `make grade` grades;
- ``views``: what a learner is shown, before and after the due date;
- ``collect``: `make collect` takes the service's hand-ins, with their times.

The learner's side is ``encoder_lib.grading.handing_in``.
"""
