"""`make test` on a machine without the browser, the sandbox or the references: what needs them skips, locally only,
and the run ends by saying what was left out, why, and the one command that installs it."""

import doctest
import subprocess
import sys

import pytest

import conftest


def test_the_skip_summary_groups_the_reasons_and_names_the_install_command():
    [example] = doctest.DocTestFinder().find(conftest.skipped_summary)  # its docstring shows the whole summary
    assert doctest.DocTestRunner().run(example).failed == 0
    lines = conftest.skipped_summary(["no Chromium at /usr/bin/chromium"] * 3 + ["torch is not installed"])
    assert lines[0] == "4 skipped tests did not run here, for what this machine lacks:"
    assert "`make test-tools` installs what is missing" in lines[-2]
    assert conftest.skipped_summary([]) == []


def test_the_install_command_is_a_make_target_that_runs_ci_s_installer():
    makefile = (conftest.ROOT / "Makefile").read_text()
    assert "\ntest-tools:\n\tbash .ci/install\n" in makefile
    assert "bash .ci/install\nmake test\n" in (conftest.ROOT / ".ci" / "run").read_text()


@pytest.mark.parametrize("ci, outcome", [("", "skipped"), ("true", "failed")])
def test_a_missing_sandbox_skips_locally_and_fails_in_ci(tmp_path, ci, outcome):
    """need_bubblewrap on a PATH without bwrap: a skip with its reason, or a failure under CI=true."""
    test = tmp_path / "test_planted.py"
    test.write_text("from conftest import need_bubblewrap\n\n"
                    "def test_it():\n    need_bubblewrap('a planted test')\n")
    env = {"PATH": str(tmp_path), "CI": ci, "PYTHONPATH": str(conftest.ROOT / "tests")}
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
                             "--rootdir", str(tmp_path), "-c", "/dev/null", str(test), "-rs"],
                            capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert f"1 {outcome}" in result.stdout, result.stdout + result.stderr
    assert "a planted test" in result.stdout
