"""The classroom on a JupyterHub, in one place: the commands and settings the teachers' page (docs/teaching/hand-out.md) shows and the test runs.

docs/teaching/hand-out.md's hub section quotes the blocks this module writes
(``readme_blocks()``), and ``tests/test_classroom_hub.py`` checks that each
one appears there verbatim and runs the same commands on a real local
JupyterHub: the page and the test cannot drift apart.

- ``gitpuller_link(hub, repo)``: the one-click link that pulls the published
  student versions (``make publish-student``, branch ``student-versions``)
  into a learner's home folder and opens the start notebook.
- ``exchange_config(...)``: the nbgrader settings `make hub-install` writes into
  the learners' environment (``etc/jupyter/nbgrader_config.py``), so that
  ``nbgrader fetch_assignment`` and ``nbgrader submit`` find the course.
- ``TEACHER``, ``LEARNER_PULLED``, ``LEARNER_FETCHED``, ``LEARNER_FEEDBACK``: the hand-in
  round trip and the feedback handed back, as shell commands (the teacher's in a copy of the course; a learner's in a
  terminal of their JupyterLab).
- ``solutions_config(setting)``: the hub's line that tells every learner's
  server when the hint ladder's fourth step, the course's solution, opens
  (``due``: at each lesson's due date).
- ``TLJH``, ``Z2JH_CONFIG``: a small hub (The Littlest JupyterHub on one
  server) and a large one (Zero to JupyterHub on Kubernetes, whose
  single-user image repo2docker builds from ``binder/``).
"""

import shlex
from urllib.parse import quote, urlencode

from .course import ROOT

def course_setting(name, root=ROOT):
    """A value the course's nbgrader_config.py sets (``course_id``, ``exchange``), read as nbgrader reads it."""
    from traitlets.config.loader import PyFileConfigLoader

    config = PyFileConfigLoader("nbgrader_config.py", path=str(root)).load_config()
    return {"course_id": config.CourseDirectory.course_id, "exchange": config.Exchange.root}[name]


COURSE_ID = "encoder-course"
#: The course's exchange folder: one folder on the hub's disk that every learner's server sees, set once, in
#: nbgrader_config.py (EXCHANGE), for the teacher's commands and the learners' alike.
EXCHANGE = course_setting("exchange")
BRANCH = "student-versions"  # tools.publish_student.BRANCH; tests check they agree
TARGET = "encoder-course"  # the learner's folder the lessons are pulled into
START = "00_start_here/00_start_here.ipynb"
#: the lesson the teachers' page's hand-in example (and the test) uses
LESSON = "01_attention"
#: the hub's extra packages for the learners' servers, installed by `make hub-install`
HUB_REQUIREMENTS = ROOT / "requirements-hub.txt"
#: configurable-http-proxy, the JupyterHub proxy from npm (TLJH and Zero to JupyterHub bring their own)
PROXY_NPM = "configurable-http-proxy@5.3.0"


def gitpuller_link(hub="https://<hub>", repo="<git URL>", branch=BRANCH, target=TARGET, start=START):
    """The nbgitpuller link: the teachers' page's template with ``hub`` and ``repo`` filled in.

    With the placeholders it is the teachers' page's text as written (unquoted, for
    reading); with real values every parameter is URL-quoted.
    """
    params = {"repo": repo, "branch": branch, "targetpath": target, "urlpath": f"lab/tree/{target}/{start}"}
    if hub == "https://<hub>" and repo == "<git URL>":
        query = "&".join(f"{k}={v}" for k, v in params.items())
    else:
        query = urlencode(params, quote_via=quote, safe="/")
    return f"{hub.rstrip('/')}/hub/user-redirect/git-pull?{query}"


def exchange_config(exchange=EXCHANGE, course_id=COURSE_ID, written_by="`make hub-install`"):
    """The learners' nbgrader settings, ``<prefix>/etc/jupyter/nbgrader_config.py``."""
    return (
        f'"""nbgrader for the learners of the Transformer encoder course (written by {written_by})."""\n'
        "import os\n\n"
        "c = get_config()  # noqa: F821\n"
        f"c.CourseDirectory.course_id = {course_id!r}\n"
        f"c.Exchange.root = {str(exchange)!r}\n"
        "# A hand-in is named after the hub's user name. nbgrader would take the system user's, which on\n"
        "# a hub whose servers share one system user (a container's jovyan, a simple spawner) is everyone's.\n"
        'if os.environ.get("JUPYTERHUB_USER"):\n'
        '    c.CourseDirectory.student_id = os.environ["JUPYTERHUB_USER"]\n'
    )


def exchange_setup(exchange=EXCHANGE):
    """Create the exchange folder as nbgrader's documentation says: everyone may write, the sticky bit set."""
    return [f"sudo mkdir -p {exchange}", f"sudo chmod 1777 {exchange}"]


#: The teacher, in a copy of the course on the hub (the folder with nbgrader_config.py).
TEACHER = {
    "publish": ["make publish-student", f"git push origin {BRANCH}"],
    "release": [f".venv/bin/nbgrader release_assignment {LESSON}"],
    "collect": [f"make collect LESSON={LESSON}"],
    "grade": ["make grade"],
    "release-feedback": ["make release-feedback"],
}
#: A learner whose lessons came with the nbgitpuller link: hand in the lesson where it is.
LEARNER_PULLED = [f"cd ~/{TARGET}", f"nbgrader submit {LESSON}"]
#: A learner on a hub without the link: fetch the released lesson first, work on it there, then hand it in.
LEARNER_FETCHED = ["cd ~", f"nbgrader fetch_assignment {LESSON}", f"nbgrader submit {LESSON}"]
#: A learner, after the teacher's `make release-feedback`: their own feedback page, in <lesson>/feedback/<time>/ below
#: the folder they run it in.
LEARNER_FEEDBACK = ["cd ~", f"nbgrader fetch_feedback {LESSON}"]


def split(command):
    """A teachers' page command as an argument list (``~`` is left to the caller)."""
    return shlex.split(command)


# ------------------------------------------------------------------ the hubs

#: The Littlest JupyterHub (one server, up to ~100 learners): run on the server, in a copy of the course.
TLJH = [
    f"git clone https://github.com/OWNER/REPO {TARGET} && cd {TARGET}",
    "sudo make hub-install PREFIX=/opt/tljh/user",
    *exchange_setup(),
    "sudo tljh-config add-item users.admin <your user name>",
    "sudo tljh-config reload",
]

def _indented(text, spaces):
    return "".join(" " * spaces + line if line.strip() else line for line in text.splitlines(keepends=True))


#: Zero to JupyterHub's config.yaml: the image repo2docker built from binder/ (learners arrive through the
#: nbgitpuller link), the learners' nbgrader settings, the same file `make hub-install` writes (every
#: container's user is jovyan: without the hub's user name as student id every hand-in would be jovyan's),
#: and the exchange on a shared volume.
Z2JH_CONFIG = """\
singleuser:
  image:
    name: <registry>/encoder-course   # what repo2docker built from binder/ (below)
    tag: <tag>
  defaultUrl: /lab
  extraFiles:
    nbgrader-config:
      mountPath: /etc/jupyter/nbgrader_config.py
      stringData: |
""" + _indented(exchange_config(written_by="Zero to JupyterHub's config.yaml"), 8) + """\
  storage:
    extraVolumes:
      - name: nbgrader-exchange
        persistentVolumeClaim:
          claimName: nbgrader-exchange   # a ReadWriteMany claim you create once
    extraVolumeMounts:
      - name: nbgrader-exchange
        mountPath: /srv/nbgrader/exchange
"""

#: repo2docker builds from binder/ (the lock, encoder_lib, the settings); its appendix adds nbgitpuller for the link.
Z2JH_COMMANDS = [
    'repo2docker --no-run --user-name jovyan --image-name <registry>/encoder-course:<tag> --push \\\n'
    '    --appendix "RUN python -m pip install --no-cache-dir nbgitpuller==1.3.0" .',
    "helm upgrade --install jhub jupyterhub/jupyterhub --namespace jhub --values config.yaml",
]

BINDER_HAND_IN = [
    "make collect LESSON=01_attention FROM=submissions.zip RECORD=submissions.json",
    "make grade",
]


# ------------------------------------------------------------------ the hand-in service

SERVICE = "encoder-hand-in"
SERVICE_PORT = 10101
#: The variable that tells a learner's kernel where the service is (``encoder_lib.grading.handing_in``).
SERVICE_URL_VARIABLE = "ENCODER_COURSE_HAND_IN_URL"


def hand_in_service_config(course, port=SERVICE_PORT, environment=None, user=None, socket=None):
    """The lines of ``jupyterhub_config.py`` that make the hub start the course's hand-in service (a managed
    service, run with the teacher's copy of the course at ``course`` and its ``.venv``) and tell every learner's
    server where it is: its Unix socket, in a folder of the course only the service's account may write (no other
    account can listen there in its place); the hub's proxy reaches its page at ``port``. ``user``: the system
    account it runs as (the teacher's, where the hub runs as root); ``socket``: another path for the socket (a Unix
    socket's path has at most 100 bytes)."""
    course = str(course).rstrip("/")
    socket = str(socket or f"{course}/.hand-in-service/hand-in.sock")
    spec = {"name": SERVICE, "url": f"http://127.0.0.1:{port}", "cwd": course, "oauth_no_confirm": True,
            "command": [f"{course}/.venv/bin/python", "-m", "course_grader.handin.service", "--root", course,
                        "--socket", socket],
            "environment": dict(environment or {})}
    if user:
        spec["user"] = user
    kernels = f"http+unix://{quote(socket, safe='')}/services/{SERVICE}/"
    return (f"# The course's hand-in service (written by `make hand-in-service-config`): a learner's\n"
            f"# grading.hand_in() sends the notebook to it, and it grades it at once.\n"
            f"c.JupyterHub.services.append({spec!r})\n"
            f"# every learner may open its page (their hand-ins' verdicts), through the hub's login\n"
            f"c.JupyterHub.load_roles.append({{'name': 'user', 'scopes': "
            f"['self', 'access:services!service={SERVICE}']}})\n"
            f"c.Spawner.environment.update({{{SERVICE_URL_VARIABLE!r}: {kernels!r}}})\n")


def roster_problems(root=ROOT):
    """The roster's ids the hub can never give a learner, each with why (JupyterHub's own ``Authenticator``
    lowercases a name and refuses some; it normalises nothing else): a learner with such an id could never hand
    in through the service."""
    from jupyterhub.auth import Authenticator

    from course_grader.gradebook import roster

    hub, problems = Authenticator(), []
    for student in roster(root):
        if not hub.validate_username(student):
            problems.append(f"{student!r}: the hub refuses this name (a /, a space at an end, or only dots)")
        elif hub.normalize_username(student) != student:
            problems.append(f"{student!r}: the hub names this learner {hub.normalize_username(student)!r} (it "
                            f"lowercases every name): give the roster that id")
    return problems


# ------------------------------------------------------------------ when the course's solutions open

#: The variable that tells a learner's kernel when the hint ladder's fourth step, the course's solution, opens
#: (``encoder_lib.grading.opening``; a graded class keeps it closed until the due date).
SOLUTIONS_VARIABLE = "ENCODER_COURSE_SOLUTIONS"
#: ``--solutions due``: each lesson's solutions open at its due date, or at its latest extension if later.
AT_DUE_DATES = "due"


def solutions_at_due_dates(root=ROOT):
    """The setting that opens each lesson's solutions at its due date (nbgrader's, in the gradebook) or its latest
    extension (``extensions.csv``) if later; ``off`` for every lesson without a due date."""
    from course_grader.deadlines import Deadlines

    deadlines = Deadlines.read(root)
    items = []
    for lesson, due in sorted(deadlines.due.items()):
        latest = max([due] + [when for (_, other), when in deadlines.extended.items() if other == lesson])
        items.append(f"{lesson}={latest:%Y-%m-%dT%H:%M:%S}+00:00")
    return ",".join(items + ["off"])


def solutions_config(setting, root=ROOT):
    """The line of ``jupyterhub_config.py`` that tells every learner's server when the course's solutions open:
    ``setting`` as ``ENCODER_COURSE_SOLUTIONS`` reads it, or ``due`` (``solutions_at_due_dates``). ValueError
    naming the setting and what it expects, for a wrong one."""
    from encoder_lib.grading import opening

    setting = solutions_at_due_dates(root) if setting == AT_DUE_DATES else setting
    opening.parse(setting)
    return (f"# When the hint ladder's fourth step, the course's solution, opens for every learner (written by\n"
            f"# `make solutions-config`; docs/teaching/hand-out.md): {'self-study' if not setting else setting}\n"
            f"c.Spawner.environment.update({{{SOLUTIONS_VARIABLE!r}: {setting!r}}})\n")


def _fence(lang, lines):
    body = lines if isinstance(lines, str) else "\n".join(lines) + "\n"
    return f"```{lang}\n{body}```"


def readme_blocks():
    """{name: the fenced block the teachers' page quotes verbatim}."""
    return {
        "link": _fence("text", [gitpuller_link()]),
        "tljh": _fence("bash", TLJH),
        "z2jh-config": _fence("yaml", Z2JH_CONFIG),
        "z2jh-commands": _fence("bash", Z2JH_COMMANDS),
        "teacher-publish": _fence("bash", TEACHER["publish"]),
        "teacher-release": _fence("bash", TEACHER["release"]),
        "learner-pulled": _fence("bash", LEARNER_PULLED),
        "learner-fetched": _fence("bash", LEARNER_FETCHED),
        "teacher-collect": _fence("bash", TEACHER["collect"] + TEACHER["grade"]),
        "binder-hand-in": _fence("bash", BINDER_HAND_IN),
        "teacher-release-feedback": _fence("bash", TEACHER["release-feedback"]),
        "learner-feedback": _fence("bash", LEARNER_FEEDBACK),
    }


def main(argv=None):
    import argparse

    parser = argparse.ArgumentParser(description="The teachers' page's commands, or the hub's lines for the "
                                                 "hand-in service")
    parser.add_argument("--hand-in-service", action="store_true",
                        help="print the jupyterhub_config.py lines that start the hand-in service for this course")
    parser.add_argument("--user", default=None, help="the system account the service runs as (the teacher's)")
    parser.add_argument("--port", type=int, default=SERVICE_PORT)
    parser.add_argument("--solutions", default=None, metavar="SETTING",
                        help="print the jupyterhub_config.py line that opens the course's solutions at SETTING: "
                             "'due' (each lesson's due date), 'on', 'off', a time, or lesson=time,...")
    args = parser.parse_args(argv)
    if args.hand_in_service:
        import sys

        for problem in roster_problems():
            print(f"make hand-in-service-config: the roster's id {problem}", file=sys.stderr)
        print(hand_in_service_config(ROOT, args.port, user=args.user), end="")
        return
    if args.solutions is not None:
        try:
            print(solutions_config(args.solutions), end="")
        except ValueError as exc:
            parser.error(str(exc))
        return
    for name, block in readme_blocks().items():
        print(f"<!-- {name} -->\n{block}\n")


if __name__ == "__main__":
    main()
