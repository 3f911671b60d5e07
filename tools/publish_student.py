"""Commit the student versions of the lessons to a branch of their own, for one-click nbgitpuller links.

    .venv/bin/python -m tools.publish_student              # what `make publish-student` runs
    git push origin student-versions                       # then hand out the link the tool prints

nbgitpuller pulls a branch into each learner's home folder and opens a
notebook in it; later clicks fetch the teacher's updates and keep the
learner's changes. The lessons' student versions are generated (they are not
in the repository), so they get a branch of their own: this tool writes every
lesson's student version (``nbgrader generate_assignment``, as `make student`
does) and commits ``release/<lesson>/`` as ``<lesson>/`` on the branch, with a
README for learners. The branch shares no history with main and holds only
those files.

The commit is made with git's plumbing (a temporary index, ``commit-tree``,
``update-ref``): the working tree, the index and the current branch are not
touched, so it is safe with uncommitted changes (they are not published: the
lessons are read from ``notebooks/`` as they are on disk, and the commit
message names the commit they were generated from, marked ``+changes`` when
``notebooks/`` differs from it). When nothing changed, no commit is made.

The same branch is what the website's **Open in Colab** links open: each
notebook's first cell installs the course's library from the tag
``v<version>`` (``tools/colab.py``); the tool warns when that tag is missing,
when the library changed since it, or when the README's Binder badge still
names the placeholder ``OWNER/REPO``.
"""

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from . import colab, student  # the same generation `make student` runs
from .course import ROOT, lesson_names
START = "00_start_here/00_start_here.ipynb"
#: The published branch: a name that is no folder of the repository (`student/` is where
#: `make lab` writes the student versions), so that `git log student-versions` is never ambiguous.
BRANCH = "student-versions"

README = """# The Transformer encoder block: your copy of the lessons

This branch holds the lessons as learners get them: the exercises are left for
you to write. Start with `{start}`.

Your teacher's link pulls this branch into your home folder. Clicking it again
later fetches the teacher's updates and keeps the changes you made. The
lessons need the course's Python packages and its `encoder_lib` library, which
your teacher's JupyterHub provides; opened on Google Colab, each notebook's
first cell installs them there.

(Written by the course's `tools/publish_student.py`; its commit messages name
the course's commit the lessons come from.)
"""


def git(args, root, env=None):
    """``git <args>`` in ``root``; its stdout, stripped. A failing command stops with git's message."""
    result = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, env=env)
    if result.returncode != 0:
        raise SystemExit(f"git {' '.join(args)} failed: {result.stderr.strip()}")
    return result.stdout.strip()


def branch_commit(root, branch):
    """The commit ``branch`` points at, or None when it does not exist yet."""
    result = subprocess.run(["git", "rev-parse", "--verify", "--quiet", f"refs/heads/{branch}"],
                            cwd=root, capture_output=True, text=True)
    return result.stdout.strip() or None


def source_name(root):
    """The commit the lessons come from, ``+changes`` when notebooks/ differs from it."""
    head = git(["rev-parse", "--short", "HEAD"], root)
    dirty = git(["status", "--porcelain", "--", "notebooks"], root)
    return head + ("+changes" if dirty else "")


def files_to_publish(root, folder):
    """``{path on the branch: file}``: each lesson's student version, and the README written into ``folder``."""
    release = root / "release"
    files = {}
    for lesson in lesson_names(root):
        for path in sorted((release / lesson).rglob("*")):
            if path.is_file() and ".ipynb_checkpoints" not in path.parts:
                files[path.relative_to(release).as_posix()] = path
    if START not in files:
        raise SystemExit(f"release/{START} is missing after nbgrader generate_assignment")
    readme = Path(folder) / "README.md"
    readme.write_text(README.format(start=START))
    files["README.md"] = readme
    return files


def commit_files(root, branch, files, message):
    """Commit ``files`` as the whole tree of ``branch``; returns the new commit, or None if nothing changed."""
    parent = branch_commit(root, branch)
    with tempfile.TemporaryDirectory(prefix="publish-student-") as tmp:
        env = dict(os.environ, GIT_INDEX_FILE=str(Path(tmp) / "index"))
        git(["read-tree", "--empty"], root, env=env)
        for path, source in files.items():
            blob = git(["hash-object", "-w", "--no-filters", str(source)], root)
            git(["update-index", "--add", "--cacheinfo", f"100644,{blob},{path}"], root, env=env)
        tree = git(["write-tree"], root, env=env)
    if parent and git(["rev-parse", f"{parent}^{{tree}}"], root) == tree:
        return None
    commit = git(["commit-tree", tree, *(["-p", parent] if parent else []), "-m", message], root)
    git(["update-ref", f"refs/heads/{branch}", commit, *([parent] if parent else [])], root)
    return commit


def refuse_checked_out(root, branch):
    """Stop, saying why, where ``branch`` is the one checked out in ``root`` (its files would be overwritten)."""
    if git(["rev-parse", "--abbrev-ref", "HEAD"], root) == branch:
        raise SystemExit(f"--branch {branch!r} is the branch checked out here; publish to another one")


def publish(root, branch, lay_out, message):
    """Commit to ``branch`` the files ``lay_out(folder)`` puts in a temporary folder (``{path: file}``), with
    ``message``: ``(the commit or None where the branch held the same files, the files)``."""
    with tempfile.TemporaryDirectory(prefix="publish-") as folder:
        files = lay_out(folder)
        return commit_files(root, branch, files, message), files


def say_committed(branch, commit, what, then):
    """Say whether ``branch`` got a new ``commit`` (None: it already held the same files) of ``what``, and how
    to publish it (``then``: what follows the push)."""
    if commit is None:
        print(f"branch {branch!r} already holds {what}: nothing to commit")
    else:
        print(f"branch {branch!r}: {what} committed as {commit[:10]}")
    print(f"publish it with `git push origin {branch}`; {then}")


def colab_warnings(root):
    """What stands between the published notebooks and Colab, as warnings: the README's Binder badge still naming
    ``OWNER/REPO``, or no tag ``v<version>`` (``pyproject.toml``'s) for the first cell to install the library from,
    or a library changed since that tag."""
    if colab.placeholder_warning(root):
        return [colab.placeholder_warning(root)]
    tag = f"v{colab.course_version(root)}"
    if not subprocess.run(["git", "rev-parse", "--verify", "--quiet", f"refs/tags/{tag}"], cwd=root,
                          capture_output=True).stdout:
        return [f"warning: the notebooks' first cell installs encoder_lib on Colab from the tag {tag} (the version "
                f"in pyproject.toml), which this repository does not have: git tag {tag} && git push origin {tag}"]
    changed = git(["diff", "--name-only", tag, "HEAD", "--", "encoder_lib", "pyproject.toml"], root)
    if changed:
        return [f"warning: the library changed since the tag {tag}, which the notebooks' first cell installs on "
                f"Colab ({len(changed.splitlines())} files): raise the version in pyproject.toml, publish again "
                "and tag the new version"]
    return []


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=ROOT, help="the course's git repository (default: this one)")
    parser.add_argument("--branch", default=BRANCH, help=f"the branch to write (default: {BRANCH})")
    args = parser.parse_args(argv)
    root = args.root.resolve()
    refuse_checked_out(root, args.branch)
    student.generate(root)
    for path in sorted((root / "release").glob("*/*.ipynb")):  # each "Try it" answer folded, as make student folds it
        student.fold_answers(path)
    source = source_name(root)
    commit, files = publish(root, args.branch, lambda folder: files_to_publish(root, folder),
                            f"Student versions of the lessons, from {source}")
    lessons = len({path.split("/")[0] for path in files if "/" in path})
    say_committed(args.branch, commit, f"the student versions ({lessons} lessons)",
                  f"the nbgitpuller link then uses branch={args.branch}&urlpath=lab/tree/<folder>/{START}")
    for warning in colab_warnings(root):
        print(warning, file=sys.stderr)
    return commit


if __name__ == "__main__":
    main()
