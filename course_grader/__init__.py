"""The course's grader, the teacher's side: what ``make collect``, ``make grade``, ``make report``,
``make release-feedback`` and ``make extension`` run.

A distribution of its own (``pyproject.toml`` in this folder), which ``make
setup`` installs for teachers and contributors and a learner's environment
(``make lab``'s, Binder's, a hub's) never holds. It imports the learner's
side (``encoder_lib.grading``: the exercises, their cases and the judge that
the self-check uses too), never the other way round (``tests/test_layers.py``
holds the line; ``tests/test_install.py`` that a learner's install has none
of it).

Grading, in the order it happens:

- ``collect``: ``make collect``, nbgrader's collect through the course's own collector, which trusts nothing in
  a hand-in; ``exchange``: nbgrader's exchange as the course reads it (a hand-in's name, what it holds, its
  time, the record of what was collected, refused and skipped); ``collect_download``: ``make collect FROM=``, a
  learning platform's download of one assignment's submissions (Canvas's, Moodle's: ``downloads``), matched to the
  roster through the platform's record, each hand-in timed by it;
- ``grade``: ``make grade``, the command: the course's lock, then a plan, then the run, then the report;
- ``plan``: what a run will do, decided before anything runs (``plan_run`` returns a ``Plan``); ``roster``: each
  id found set against the course's roster first (one learner, one name: look-alikes held); ``version``: the
  course's secret and the grader's version, which the plan and the hand-in service both read;
- ``run``: grading a plan (``grade_class``): workers, each learner recorded as it comes in, then the files;
- ``learner``: one learner in a worker (``grade_learner``); ``marking``: one answer run and judged;
  ``cases``: the visible and hidden cases; ``library_calls``: the library functions an answer calls;
- ``sandbox/``: bubblewrap around the runner, the cgroups and the system-call allow-list;
- ``workers``: the worker processes; ``stored``: ``grading.json`` and the history of earlier results;
- ``profile``: where grading time goes, stage by stage, summed per learner and per exercise (``bench_grading``).
- ``handin/``: the hand-in service on a JupyterHub (``handin.service``): a learner's hand-in taken under the hub's
  name for their token, graded at once through a fair queue, its verdict shown as the course's setting allows;
  ``make collect`` takes its hand-ins (``handin.collect``, put in place by ``collect.install_files``, as
  ``collect_download``'s are) and ``make grade`` its verdicts (``plan``); ``collected``: what ``make collect`` says
  last (who on the roster has not handed in).

What it reads and writes:

- ``submissions``: ``submitted/`` and the notebooks in it, read without trusting them; ``ids``: a learner's id,
  kept as it is everywhere, and the one place it becomes a folder name (``autograded/``, ``feedback/``);
- ``deadlines``: due dates, extensions (``make extension``) and nbgrader's late penalty;
- ``gradebook``: nbgrader's ``gradebook.db`` read with sqlite3; ``gradebook_writer``: kept in step through
  nbgrader, and ``grades.csv``; ``course_config``: the course's ``nbgrader_config.py``;
- ``outputs``: ``grades_by_exercise.csv`` (its row, ``Result``), ``grades_lms.csv`` and the summary;
  ``feedback_page``: each learner's page (``lesson_links``: where it sends them); ``release``: ``make
  release-feedback``, the pages handed back through nbgrader's feedback exchange and by mail; ``files``: how every
  file is written (only where its content changed), learners' text as plain text; ``student_versions``: when
  ``make grade`` runs ``make student``'s step;
- ``class_report/``: ``make report``, what the class got wrong and what to re-teach (its inputs bounded, its
  example answers chosen by no learner: ``class_report/examples``; who may have copied: ``class_report/similarity``).
"""
