"""What the tools, tests and benchmarks share about the course: where it is, its lessons, Jupyter's environment."""

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def lesson_names(root=ROOT, folder="notebooks"):
    """The lessons, in course order: the folders of ``root/folder`` that hold a notebook (``01_attention``, ...)."""
    return sorted(p.name for p in (Path(root) / folder).iterdir() if p.is_dir() and any(p.glob("*.ipynb")))


def lesson_notebooks(root=ROOT, folder="notebooks"):
    """Each lesson's notebook, ``root/folder/<lesson>/<lesson>.ipynb``, in course order."""
    return [Path(root) / folder / name / f"{name}.ipynb" for name in lesson_names(root, folder)]


def jupyter_env(env=None):
    """An environment in which Jupyter uses this Python's environment: its kernels and extensions
    (JUPYTER_PREFER_ENV_PATH), and its programs first on PATH (nbgrader runs ``alembic`` from PATH)."""
    env = dict(os.environ if env is None else env)
    env["JUPYTER_PREFER_ENV_PATH"] = "1"
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    return env


def use_this_environment():
    """Make Jupyter, started from this process (nbclient, nbval), use this Python's environment."""
    os.environ.update(jupyter_env())
