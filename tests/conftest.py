"""Shared test helpers.

Reference packages (PyTorch) are optional on a learner's machine: tests that
need one skip with a printed reason when it is missing. In CI (the ``CI``
environment variable set, as `.ci/run` runs) a missing reference package is
a failure, so a check skipped locally always runs there.
"""

import importlib.util
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


def need_bubblewrap(why):
    """Skip (locally) or fail (in CI) where bubblewrap, the grader's sandbox, is missing; ``why`` says what needs
    it. Every test that starts a sandbox calls it first, so that `make test` passes where bubblewrap is not."""
    import shutil

    if shutil.which("bwrap") is None:
        if in_ci():
            pytest.fail(f"CI must run this test: bubblewrap is missing ({why}); .ci/run installs it", pytrace=False)
        pytest.skip(f"bubblewrap (bwrap) is not installed: {why}")


def need_node(why):
    """Skip (locally) or fail (in CI) where Node.js or the MiniSearch that `npm ci` installs is missing (the
    website's search index is built by it); ``why`` says what needs it."""
    from tools.site.search import SiteError, node

    try:
        node()
    except SiteError as exc:
        if in_ci():
            pytest.fail(f"CI must run this test: {exc} ({why}); .ci/run installs it", pytrace=False)
        pytest.skip(f"Node.js and MiniSearch (npm ci) are missing: {why}")


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


#: The session's one Chromium (per pytest-xdist worker): started by the first test that needs a browser, closed
#: when the session ends. One Playwright at a time: a second sync_playwright() in the same thread refuses to start.
_ONE_CHROMIUM = []


def chromium_or_skip(why):
    """The session's Chromium for a module's browser tests (``tests/browser.py``), or a skip (locally) or a failure
    (in CI) that says what is missing; ``why`` says what the browser is for. A generator: use it in a fixture
    (``yield from``); the browser outlives the fixture, and a module closes the pages and contexts it opens."""
    require("playwright.sync_api", f"{why}; `make setup` installs it")
    import browser as lab  # tests/browser.py

    reason = lab.missing_browser()  # no Chromium at ENCODER_COURSE_CHROMIUM or /usr/bin/chromium
    if reason:
        if in_ci():
            pytest.fail(f"CI must run the browser tests: {reason}", pytrace=False)
        pytest.skip(reason)
    if not _ONE_CHROMIUM:
        started = lab.chromium()
        _ONE_CHROMIUM.append((started, started.__enter__()))
    yield _ONE_CHROMIUM[0][1]


@pytest.fixture(scope="session")
def chromium():
    """The session's Chromium, for every module's browser tests (a skip or a CI failure where it is missing)."""
    yield from chromium_or_skip("the browser tests drive Chromium with Playwright")


#: What a skipped test lacked, told by its reason's words: (the words, what is missing).
MISSING = [(("bubblewrap", "bwrap"), "bubblewrap, the grader's sandbox"),
           (("Chromium", "playwright"), "Chromium, for the browser tests"),
           (("torch", "sentence_transformers", "transformers"), "PyTorch and sentence-transformers, the references"),
           (("configurable-http-proxy",), "configurable-http-proxy, the JupyterHub's proxy"),
           (("Node.js",), "Node.js and MiniSearch, the website's search"),
           (("repo2docker",), "repo2docker, Binder's builder")]
#: The one command that installs everything a skipped test lacked (``.ci/install``, which ``.ci/run`` runs).
INSTALL_COMMAND = "make test-tools"


def skipped_summary(reasons):
    """The lines that end a run with skips: how many tests each missing tool left out, and how to install them.

    >>> print("\\n".join(skipped_summary(["bubblewrap (bwrap) is not installed: x", "no Chromium at /usr/bin/chromium",
    ...                                    "bubblewrap (bwrap) is not installed: y", "make is not installed"])))
    3 skipped tests did not run here, for what this machine lacks:
      2  bubblewrap, the grader's sandbox
      1  Chromium, for the browser tests
    1 skipped for another reason: make is not installed
    `make test-tools` installs what is missing (through sudo where you are not root); then `make test` again.
    In CI (CI=true) none of these skip: they fail.
    """
    counts, other = {}, {}
    for reason in reasons:
        what = next((name for words, name in MISSING if any(word in reason for word in words)), None)
        if what:
            counts[what] = counts.get(what, 0) + 1
        else:
            other[reason] = other.get(reason, 0) + 1
    lines = []
    if counts:
        lines.append(f"{sum(counts.values())} skipped tests did not run here, for what this machine lacks:")
        lines += [f"  {n}  {what}" for what, n in counts.items()]
    lines += [f"{n} skipped for another reason: {reason}" for reason, n in other.items()]
    if counts:
        lines.append(f"`{INSTALL_COMMAND}` installs what is missing (through sudo where you are not root); then "
                     f"`make test` again.")
    if lines:
        lines.append("In CI (CI=true) none of these skip: they fail.")
    return lines


def pytest_terminal_summary(terminalreporter):
    """The run's last lines: what was skipped and why, grouped, and the command that installs what is missing (also
    written to ``$ENCODER_SKIPPED_FILE``, which `make test` prints after its notebook re-runs)."""
    reasons = []
    for report in terminalreporter.stats.get("skipped", []):
        longrepr = report.longrepr
        reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
        reasons.append(reason.removeprefix("Skipped: "))
    lines = skipped_summary(reasons)
    if lines:
        terminalreporter.section("skipped")
        for line in lines:
            terminalreporter.write_line(line)
    if os.environ.get("ENCODER_SKIPPED_FILE"):
        Path(os.environ["ENCODER_SKIPPED_FILE"]).write_text("".join(f"{line}\n" for line in lines))


def pytest_sessionfinish(session):
    while _ONE_CHROMIUM:
        started, _ = _ONE_CHROMIUM.pop()
        started.__exit__(None, None, None)


@pytest.fixture(autouse=True)
def _numpy_print_options_kept():
    """numpy's print options as they were before each test: a test that runs a lesson's cells in this process sets
    the lessons' (4 digits), which would change what the next test's doctests print."""
    import numpy as np

    saved = np.get_printoptions()
    yield
    np.set_printoptions(**saved)


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
SLOW_FIXTURES = {"server_env", "site", "student_versions", "fork_student_versions"}
#: Modules whose every test runs the real grader, or ``make student``, or nbgrader's exchange.
SLOW_MODULES = {"test_grader_resilience.py", "test_publish_student.py", "test_release_feedback.py",
                "test_hand_in_service.py"}


#: Files that share a session's set-up of a minute or more, and so run in one pytest-xdist worker: the website's
#: build, and the server's environment of `make hub-install`.
SHARED_SET_UP = {"test_site.py": "site", "test_site_reading.py": "site", "test_site_questions.py": "site",
                 "test_site_offline.py": "site",
                 "test_install.py": "server_env", "test_classroom_hub.py": "server_env"}
#: Handed to the workers first, the longest first, so that no long file starts last and runs alone.
LONGEST_FIRST = ("test_site.py", "test_site_reading.py", "test_browser_lab.py", "test_classroom_hub.py",
                 "test_install.py", "test_colab.py", "test_grading_pipeline.py", "test_grading_cluster.py",
                 "test_grader_resilience.py", "test_feedback.py", "test_hand_in_attacks.py", "test_grade_selection.py",
                 "test_regrade_costs.py")


if importlib.util.find_spec("xdist") is not None:
    def pytest_xdist_make_scheduler(config, log):
        """With ``--dist loadfile``: each file in one worker, as pytest-xdist's, and the files of one
        ``SHARED_SET_UP`` in the same one (``--dist loadgroup`` cannot: pytest 9 ignores the node ids it rewrites),
        handed out in the order ``pytest_collection_modifyitems`` sorts them (``LONGEST_FIRST``): pytest-xdist's own
        order, the files with the most tests first, started the hub's round trip of three minutes last, alone."""
        if config.getvalue("dist") != "loadfile":
            return None
        from xdist.scheduler import LoadFileScheduling

        config.option.loadscopereorder = False  # --no-loadscope-reorder

        class BySetUp(LoadFileScheduling):
            def _split_scope(self, nodeid):
                path = nodeid.split("::", 1)[0]
                return SHARED_SET_UP.get(path.rsplit("/", 1)[-1], path)

        return BySetUp(config, log)


def pytest_collection_modifyitems(items):
    items.sort(key=lambda item: LONGEST_FIRST.index(item.path.name) if item.path.name in LONGEST_FIRST
               else len(LONGEST_FIRST))  # stable: every other file in its own order
    for item in items:
        needs = set(getattr(item, "fixturenames", ()))
        module = item.path.name
        if needs & BROWSER_FIXTURES or module in BROWSER_MODULES:
            item.add_marker(pytest.mark.browser)
        if module in HUB_MODULES:
            item.add_marker(pytest.mark.hub)
        if item.get_closest_marker("grading") or needs & SLOW_FIXTURES or module in SLOW_MODULES:
            item.add_marker(pytest.mark.slow)
