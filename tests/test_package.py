"""The package as a whole: light import, runnable docstrings, environment files in step with the lock."""

import doctest
import importlib
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import course_grader
import encoder_lib

ROOT = Path(__file__).resolve().parent.parent
# every module of the library and of the grader: their docstring examples must run (runner.py and answer.py are
# the sandbox's scripts)
SANDBOX_SCRIPTS = ("course_grader.sandbox.runner", "course_grader.sandbox.answer")
MODULES = sorted(m.name for package in (encoder_lib, course_grader)
                 for m in pkgutil.walk_packages(package.__path__, package.__name__ + ".")
                 if m.name not in SANDBOX_SCRIPTS and not m.name.endswith(".__main__")) + ["encoder_lib", "course_grader"]


def test_import_loads_numpy_only():
    code = ("import sys, encoder_lib; "
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'scipy', 'matplotlib', 'ipywidgets', 'torch', 'IPython'}))")
    heavy = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert heavy == "[]", f"import encoder_lib also imported {heavy}"


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples in {name} failed (run with -s to see them)"


def test_every_public_function_has_a_docstring():
    import encoder_lib

    for name in encoder_lib.__all__:
        doc = getattr(encoder_lib, name).__doc__ or ""
        assert doc.strip(), f"encoder_lib.{name} has no docstring"


def test_environment_files_match_the_lock():
    result = subprocess.run([sys.executable, "-m", "tools.sync_envs", "--check"],
                            capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
