"""tools/publish_student.py: the student versions committed to a branch of their own, for nbgitpuller links."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tools.student import ANSWER_SUMMARY

from conftest import load_tool

ROOT = Path(__file__).resolve().parent.parent
BRANCH = load_tool("publish_student").BRANCH


def git(repo, *args):
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True).stdout.strip()


@pytest.fixture(scope="module")
def published(tmp_path_factory):
    """A clone of the course with the tool run once on it, plus the tool's output of a second run."""
    repo = tmp_path_factory.mktemp("publish") / "course"
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(repo)], check=True)
    (repo / "notes.txt").write_text("a teacher's uncommitted file\n")
    env = dict(os.environ, GIT_AUTHOR_NAME="Teacher", GIT_AUTHOR_EMAIL="t@example.org",
               GIT_COMMITTER_NAME="Teacher", GIT_COMMITTER_EMAIL="t@example.org")
    status_before = git(repo, "status", "--porcelain")
    branch_before = git(repo, "rev-parse", "--abbrev-ref", "HEAD")

    def run():
        return subprocess.run([sys.executable, "-m", "tools.publish_student", "--root", str(repo)], capture_output=True, text=True,
                              env=env, timeout=300, cwd=ROOT)

    first, second = run(), run()
    assert first.returncode == 0, first.stdout + first.stderr
    assert second.returncode == 0, second.stdout + second.stderr
    return {"repo": repo, "first": first.stdout, "second": second.stdout, "status_before": status_before,
            "branch_before": branch_before}


def test_the_branch_holds_every_lesson_s_student_version_and_a_readme(published):
    repo = published["repo"]
    files = git(repo, "ls-tree", "-r", "--name-only", BRANCH).splitlines()
    lessons = sorted(p.name for p in (ROOT / "notebooks").iterdir() if any(p.glob("*.ipynb")))
    assert sorted(files) == sorted(["README.md", *(f"{name}/{name}.ipynb" for name in lessons)])
    assert "00_start_here/00_start_here.ipynb" in git(repo, "show", f"{BRANCH}:README.md")
    for name in lessons:
        notebook = json.loads(git(repo, "show", f"{BRANCH}:{name}/{name}.ipynb"))
        source = "".join("".join(cell["source"]) for cell in notebook["cells"])
        assert "BEGIN SOLUTION" not in source and "BEGIN HIDDEN TESTS" not in source, name
        answers = [c for c in notebook["cells"] if "try-it-answer" in c.get("metadata", {}).get("tags", [])]
        assert all(ANSWER_SUMMARY in "".join(c["source"]) for c in answers), f"{name}: a Try it answer not folded"


def test_the_branch_shares_no_history_with_main_and_names_its_source(published):
    repo = published["repo"]
    assert git(repo, "rev-list", "--count", BRANCH) == "1"
    head = git(repo, "rev-parse", "--short", "HEAD")
    assert git(repo, "log", "-1", "--format=%s", BRANCH) == f"Student versions of the lessons, from {head}"
    assert f"{len(list((ROOT / 'notebooks').glob('*/*.ipynb')))} lessons) committed" in published["first"]


def test_a_second_run_with_nothing_changed_commits_nothing(published):
    assert "nothing to commit" in published["second"]
    assert git(published["repo"], "rev-list", "--count", BRANCH) == "1"


def test_the_working_tree_index_and_checked_out_branch_are_untouched(published):
    repo = published["repo"]
    assert git(repo, "rev-parse", "--abbrev-ref", "HEAD") == published["branch_before"] != BRANCH
    assert git(repo, "status", "--porcelain") == published["status_before"] == "?? notes.txt"


def test_the_branch_name_is_no_folder_of_the_course_so_git_log_is_never_ambiguous(published):
    assert not (ROOT / BRANCH).exists() and BRANCH not in {"student", "release", "notebooks"}
    repo = published["repo"]
    (repo / "student").mkdir(exist_ok=True)  # the folder `make lab` writes the student versions to
    assert git(repo, "log", "--format=%s", BRANCH).startswith("Student versions of the lessons")
