"""Shared test helpers.

Reference packages (PyTorch) are optional on a learner's machine: tests that
need one skip with a printed reason when it is missing. In CI (the ``CI``
environment variable set, as `.ci/run` runs) a missing reference package is
a failure, so a check skipped locally always runs there.
"""

import importlib
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def in_ci():
    return os.environ.get("CI", "").lower() not in ("", "0", "false", "no")


def require(module, why):
    """Import ``module``, or skip (locally) / fail (in CI) with ``why`` in the message."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        message = f"{module} is not installed ({exc}); {why}"
        if in_ci():
            pytest.fail(f"CI must run this test: {message}. `.ci/run` installs it.", pytrace=False)
        pytest.skip(message)


def load_tool(name):
    """The tool ``tools.<name>`` (the course's folder is on sys.path: tests run from it)."""
    return importlib.import_module(f"tools.{name}")


@pytest.fixture(scope="session")
def server_env(tmp_path_factory):
    """A fresh virtual environment with the course installed as a JupyterHub admin installs it:
    `make hub-install PREFIX=...` (the lock, the model, encoder_lib's wheel, the settings). Minutes."""
    import subprocess
    import sys

    prefix = tmp_path_factory.mktemp("server") / "env"
    subprocess.run([sys.executable, "-m", "venv", str(prefix)], check=True)
    result = subprocess.run(["make", "-C", str(ROOT), "hub-install", f"PREFIX={prefix}"],
                            capture_output=True, text=True, timeout=1200)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return prefix


def chromium_or_skip(why):
    """Playwright's Chromium for a module's browser tests (``tests/browser.py``), or a skip (locally) or a failure
    (in CI) that says what is missing; ``why`` says what the browser is for. A generator: use it in a fixture."""
    require("playwright.sync_api", f"{why}; `make setup` installs it")
    import browser as lab  # tests/browser.py

    reason = lab.missing_browser()  # no Chromium at ENCODER_COURSE_CHROMIUM or /usr/bin/chromium
    if reason:
        if in_ci():
            pytest.fail(f"CI must run the browser tests: {reason}", pytrace=False)
        pytest.skip(reason)
    with lab.chromium() as chromium:
        yield chromium


@pytest.fixture(scope="session")
def torch():
    torch = require("torch", "install it with `.venv/bin/pip install torch==2.13.0` to compare against PyTorch")
    torch.manual_seed(0)
    return torch


@pytest.fixture(scope="session")
def torch_reference(torch):
    """tools/make_torch_reference.py (it imports torch): PyTorch layers built from numpy state dicts."""
    return load_tool("make_torch_reference")


# Hypothesis explores new random examples on every local run; CI replays a
# fixed set, so a red CI run always means a change broke something.
from hypothesis import settings  # noqa: E402

settings.register_profile("ci", derandomize=True, database=None)
if in_ci():
    settings.load_profile("ci")


# ---- the markers make check leaves out (pyproject.toml): given here by what a test needs, so that no test can
# forget its marker: a browser (a fixture that starts Chromium, or a module that drives one itself), a hub, or
# minutes of set-up (a grading run, the website's build, a server's environment)
BROWSER_FIXTURES = {"browser", "chromium"}
BROWSER_MODULES = {"test_present.py"}
HUB_MODULES = {"test_classroom_hub.py"}
#: Set-ups of seconds to minutes: a server's environment, the website, the student versions (``make student``).
SLOW_FIXTURES = {"server_env", "site", "student_versions"}
#: Modules whose every test runs the real grader, or ``make student``, or nbgrader's exchange.
SLOW_MODULES = {"test_grader_resilience.py", "test_publish_student.py", "test_release_feedback.py"}


def pytest_collection_modifyitems(items):
    for item in items:
        needs = set(getattr(item, "fixturenames", ()))
        module = item.path.name
        if needs & BROWSER_FIXTURES or module in BROWSER_MODULES:
            item.add_marker(pytest.mark.browser)
        if module in HUB_MODULES:
            item.add_marker(pytest.mark.hub)
        if item.get_closest_marker("grading") or needs & SLOW_FIXTURES or module in SLOW_MODULES:
            item.add_marker(pytest.mark.slow)
