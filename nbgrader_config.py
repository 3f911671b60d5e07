"""nbgrader's settings for this course (read by every `nbgrader ...` command run from this folder).

The course is this folder: each lesson folder under notebooks/ is one
assignment. The working folders below are created on demand and are not
committed:

    notebooks/<lesson>/             the source, with solutions (what the teacher edits)
    release/<lesson>/               student versions, as `nbgrader generate_assignment` writes them
    submitted/<student>/<lesson>/   what learners handed in (`nbgrader collect`, or copied by hand)
    autograded/<student>/<lesson>/  the submissions as graded, with grading.json (make grade)
    feedback/<student>/index.html   a learner's feedback page (make grade), and <lesson>.html each lesson's alone,
                                    which make release-feedback hands back
    gradebook.db                    the scores; `make grade` exports them to grades.csv
    .grading-secret                 the seed of the grader's hidden cases; never hand it out
"""

import os

# The kernel that grades must be this environment's (.venv's) python3, even
# if the user has another kernel called "python3" installed.
os.environ.setdefault("JUPYTER_PREFER_ENV_PATH", "1")

c = get_config()  # noqa: F821 (provided by traitlets when it reads this file)

ROOT = os.path.dirname(os.path.abspath(__file__))
#: The exchange folder, where `nbgrader release_assignment` puts a lesson and `nbgrader submit` a hand-in: the one
#: setting the teacher's commands (this file) and the learners' (written by `make hub-install` from this line)
#: share. Not nbgrader's own default (/usr/local/share/nbgrader/exchange): change it here, then run
#: `make hub-install` again.
EXCHANGE = "/srv/nbgrader/exchange"

#: The lessons the class is set, the only ones `make grade` grades and counts and `make report` shows (a lesson
#: not set is not shown as missing); `make grade LESSONS=...` overrides it. Unset: the lessons released through the
#: exchange (`nbgrader release_assignment`), else those someone handed in; `make grade` says which it counts.
# c.EncoderCourse.lessons = ["01_attention", "02_multi_head_attention"]

#: Where a learner's feedback page sends them for an exercise they lost points on (its lesson's section): on your
#: hub (found by itself when `make grade` runs in a terminal of the hub), else the course's website (the README
#: Binder badge's GitHub Pages address, `make publish-site`).
# c.EncoderCourse.hub_url = "https://hub.example.org/"
# c.EncoderCourse.site_url = "https://owner.github.io/encoder-course/"

#: A lesson handed in after its due date (`nbgrader db assignment add <lesson> --duedate="..."`) or the learner's
#: extension (`make extension`), by its hand-in time (the exchange's own, which `make collect` records; README: For
#: teachers): `make grade` flags it and takes nbgrader's penalty, "none" (nbgrader's default: no points taken) or
#: "zero" (the lesson's whole score); a plugin of your own: c.AssignLatePenalties.plugin_class = "module.Class".
# c.LateSubmissionPlugin.penalty_method = "zero"

c.CourseDirectory.course_id = "encoder-course"
c.CourseDirectory.root = ROOT
c.CourseDirectory.source_directory = "notebooks"
c.CourseDirectory.release_directory = "release"
c.CourseDirectory.submitted_directory = "submitted"
c.CourseDirectory.autograded_directory = "autograded"
c.CourseDirectory.feedback_directory = "feedback"
c.CourseDirectory.db_url = "sqlite:///" + os.path.join(ROOT, "gradebook.db")
c.Exchange.root = EXCHANGE
# `make collect` and `nbgrader collect` (and formgrader's Collect) collect through the course's own collector,
# which trusts nothing in a hand-in (course_grader/collect.py): a name that does not parse is
# skipped, a hand-in owned by another account than the learner's, or holding a link, is refused; each learner's
# latest by the exchange's own time is collected, and its time recorded for make grade.
c.ExchangeFactory.collect = "course_grader.collect.CourseCollect"
# Never hand out or grade checkpoints and caches.
c.CourseDirectory.ignore = [".ipynb_checkpoints", "*.pyc", "__pycache__", "feedback", ".*"]

# What replaces a solution in the student version (nbgrader's default for Python).
c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE\nraise NotImplementedError()"}

# `make grade` does not use nbgrader's autograder: it runs each answer cell
# alone in a sandbox (course_grader/) and writes the scores into
# this gradebook. The settings below apply when a notebook is executed by
# nbgrader itself (`nbgrader autograde`, the Validate button). Each cell gets at
# most this many seconds; a cell that runs longer is interrupted, and execution
# goes on with the next cell.
c.Execute.timeout = 30
c.Execute.interrupt_on_timeout = True
# How long to wait for a timed-out cell's last outputs after the interrupt
# (nbgrader would otherwise give up on the whole notebook after 4 s).
c.Execute.iopub_timeout = 10
c.Execute.startup_timeout = 60
# An answer that prints a lot: keep the first lines only, in the graded
# notebook and in the feedback.
c.LimitOutput.max_lines = 1000
c.LimitOutput.max_traceback = 100
