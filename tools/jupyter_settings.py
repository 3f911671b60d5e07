"""Install the course's JupyterLab settings into a Python environment.

    python -m tools.jupyter_settings PREFIX

The one place that knows where they go, used by `make setup` (.venv),
Binder's postBuild and `make hub-install` (a server's environment):

- ``jupyter/overrides.json`` to ``PREFIX/share/jupyter/lab/settings/``:
  JupyterLab's defaults for everyone using that environment (no news or
  update pop-ups);
- ``jupyter/page_config.json`` to ``PREFIX/etc/jupyter/labconfig/``:
  nbgrader's teacher panels and menu off, so that learners see the lessons.
"""

import shutil
import sys
from pathlib import Path

from .course import ROOT

#: course file -> where it goes, relative to the environment's prefix
SETTINGS = {
    "jupyter/overrides.json": "share/jupyter/lab/settings/overrides.json",
    "jupyter/page_config.json": "etc/jupyter/labconfig/page_config.json",
}


def install(prefix, root=ROOT):
    """Copy the settings into the environment at ``prefix``; returns the paths written."""
    written = []
    for source, target in SETTINGS.items():
        destination = Path(prefix) / target
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(Path(root) / source, destination)
        written.append(destination)
    return written


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit("usage: python -m tools.jupyter_settings PREFIX (the environment: the folder holding bin/python)")
    install(sys.argv[1])
