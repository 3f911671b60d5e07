"""Commit the built site (site/) to a branch of its own, for GitHub Pages.

    .venv/bin/python -m tools.site.publish         # what `make publish-site` runs, after `make site`
    git push origin gh-pages                       # then, once: Settings > Pages > Deploy from gh-pages

The branch holds the site's files at its root, and ``.nojekyll`` (GitHub
Pages then serves the files as they are, without Jekyll). It is committed the
way ``make publish-student`` commits the student versions
(``tools/publish_student.commit_files``: a temporary index, ``commit-tree``,
``update-ref``), so the working tree, the index and the branch checked out
are not touched; when nothing changed, no commit is made. The commit message
names the course's commit the site was built from, marked ``+changes`` when
the lessons, the library or the site's tool differ from it.
"""

import argparse
from pathlib import Path

from ..course import ROOT
from ..publish_student import git, publish, refuse_checked_out, say_committed

BRANCH = "gh-pages"
#: What a site is built from: changes here, uncommitted, are marked in the commit message.
SOURCES = ("notebooks", "encoder_lib", "README.md", "tools/site")


def site_files(site, folder):
    """``{path on the branch: file}``: every file of ``site``, and an empty ``.nojekyll`` written into ``folder``."""
    site = Path(site)
    if not (site / "index.html").is_file():
        raise SystemExit(f"{site} holds no site (no index.html): run `make site` first")
    files = {path.relative_to(site).as_posix(): path for path in sorted(site.rglob("*")) if path.is_file()}
    marker = Path(folder) / ".nojekyll"
    marker.write_bytes(b"")
    files[".nojekyll"] = marker
    return files


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=ROOT, help="the course's git repository (default: this one)")
    parser.add_argument("--site", type=Path, help="the built site (default: <root>/site)")
    parser.add_argument("--branch", default=BRANCH, help=f"the branch to write (default: {BRANCH})")
    args = parser.parse_args(argv)
    root = args.root.resolve()
    site = (args.site or root / "site").resolve()
    refuse_checked_out(root, args.branch)
    head = git(["rev-parse", "--short", "HEAD"], root)
    source = head + ("+changes" if git(["status", "--porcelain", "--", *SOURCES], root) else "")
    commit, files = publish(root, args.branch, lambda folder: site_files(site, folder),
                            f"The course's site, built from {source}")
    say_committed(args.branch, commit, f"the site ({len(files)} files)", f"on GitHub, Settings > Pages > Build "
                                                                          f"and deployment: Deploy from a branch, "
                                                                          f"{args.branch}, / (root)")
    return commit


if __name__ == "__main__":
    main()
