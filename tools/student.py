"""Write the student versions of the lessons into student/, never overwriting a learner's work.

    .venv/bin/python -m tools.student            # what `make student` runs

First `nbgrader generate_assignment "*" --force` writes every lesson's student
version (solutions replaced by ``raise NotImplementedError()``, hidden tests
removed) into release/<lesson>/ and records the lessons' tests in
gradebook.db; each "Try it" answer (a markdown cell tagged ``try-it-answer``)
is then folded into a disclosure, so that a learner predicts before reading
(``fold_answers``). Then each file of release/<lesson>/ is copied to
student/<lesson>/, where learners work:

- a file that is missing, or still exactly as this tool last wrote it, is
  (re)written;
- a file the learner has changed is kept as it is. If the lesson itself has
  changed since the learner last got it, the new version is written beside
  it, as ``<name>.new.ipynb``, and a message says so.

``student/.generated.json`` records the SHA-256 of what was last written to
each path, and of the latest version delivered for each lesson file.
"""

import argparse
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

from .course import ROOT, jupyter_env, lesson_names

MANIFEST = ".generated.json"


def sha256(data):
    return hashlib.sha256(data).hexdigest()


def file_hash(path):
    return sha256(path.read_bytes()) if path.is_file() else None


def write_atomically(path, data):
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp-student")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def new_names(rel):
    """Where an updated lesson goes when the learner has changed ``rel``:
    ``x.new.ipynb``, then ``x.new2.ipynb``, ``x.new3.ipynb``, ..."""
    path = Path(rel)
    stem, suffix = (path.stem, path.suffix) if path.suffix else (path.name, "")
    n = 1
    while True:
        yield (path.parent / f"{stem}.new{n if n > 1 else ''}{suffix}").as_posix()
        n += 1


def load_manifest(student_dir):
    path = student_dir / MANIFEST
    try:
        manifest = json.loads(path.read_text())
    except (FileNotFoundError, ValueError):
        manifest = {}
    return {"written": dict(manifest.get("written", {})), "delivered": dict(manifest.get("delivered", {}))}


def sync(release_dir, student_dir, lessons=None, out=print):
    """Copy every file of ``release_dir/<lesson>/`` to ``student_dir/<lesson>/`` as described
    in this module's docstring. Returns ``{"written": [...], "updated": [...], "kept": [...],
    "new": [...]}`` of paths relative to ``student_dir``."""
    release_dir, student_dir = Path(release_dir), Path(student_dir)
    manifest = load_manifest(student_dir)
    written, delivered = manifest["written"], manifest["delivered"]
    report = {"written": [], "updated": [], "kept": [], "new": []}
    if lessons is None:
        lessons = sorted(p.name for p in release_dir.iterdir() if p.is_dir())
    for lesson in lessons:
        for src in sorted(p for p in (release_dir / lesson).rglob("*") if p.is_file()):
            rel = src.relative_to(release_dir).as_posix()
            data = src.read_bytes()
            new = sha256(data)
            dest = student_dir / rel
            current = file_hash(dest)
            if current is None or current == written.get(rel):
                # missing, or exactly as we last wrote it: (re)write
                if current != new:
                    write_atomically(dest, data)
                    report["written" if current is None else "updated"].append(rel)
                written[rel] = delivered[rel] = new
            elif current == new:
                # the learner's file already is the new version
                written[rel] = delivered[rel] = new
            elif delivered.get(rel) == new:
                # changed by the learner, and they already have this version of the lesson
                report["kept"].append(rel)
            else:
                # changed by the learner, and the lesson has changed: the update goes beside it
                for candidate in new_names(rel):
                    there = file_hash(student_dir / candidate)
                    if there is None or there == written.get(candidate) or there == new:
                        break
                if file_hash(student_dir / candidate) != new:
                    write_atomically(student_dir / candidate, data)
                written[candidate] = delivered[rel] = new
                report["kept"].append(rel)
                report["new"].append(candidate)
                out(f"kept your changes to {student_dir.name}/{rel}; "
                    f"the updated lesson is {student_dir.name}/{candidate}")
    write_atomically(student_dir / MANIFEST,
                     (json.dumps({"written": written, "delivered": delivered}, indent=1, sort_keys=True)
                      + "\n").encode())
    return report


def nbgrader(args, root, **kwargs):
    """Run ``nbgrader <args>`` in the course folder ``root`` (where nbgrader_config.py is)."""
    command = [str(Path(sys.executable).parent / "nbgrader"), *args]
    return subprocess.run(command, cwd=root, env=jupyter_env(), **kwargs)


def generate(root):
    """Write every lesson's student version into release/ (and its tests into gradebook.db)."""
    result = nbgrader(["generate_assignment", "*", "--force", "--log-level=WARN"], root,
                      capture_output=True, text=True)
    if result.returncode != 0:
        sys.stderr.write(result.stdout + result.stderr)
        raise SystemExit(f"nbgrader generate_assignment failed (exit code {result.returncode})")


TRY_IT_ANSWER = "try-it-answer"  # the tag of a markdown cell that answers a "Try it" question
ANSWER_SUMMARY = "The answer: open it once you have tried"


def folded(source):
    """A "Try it" answer as a disclosure the learner opens: HTML around the markdown, which still renders."""
    if source.lstrip().startswith("<details"):
        return source
    return f"<details>\n<summary>{ANSWER_SUMMARY}</summary>\n\n{source.strip()}\n\n</details>\n"


def fold_answers(path):
    """Fold every cell of the notebook at ``path`` tagged ``try-it-answer``; returns how many were folded."""
    import nbformat

    notebook = nbformat.read(path, as_version=4)
    count = 0
    for cell in notebook.cells:
        if cell.cell_type == "markdown" and TRY_IT_ANSWER in cell.metadata.get("tags", []):
            cell.source = folded(cell.source)
            count += 1
    if count:
        write_atomically(Path(path), nbformat.writes(notebook).encode())
    return count


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=ROOT, help="the course folder (default: this repository)")
    args = parser.parse_args(argv)
    root = args.root.resolve()
    lessons = lesson_names(root)
    generate(root)
    for lesson in lessons:
        for path in sorted((root / "release" / lesson).glob("*.ipynb")):
            fold_answers(path)
    report = sync(root / "release", root / "student", lessons)
    print(f"student versions in student/: {len(report['written'])} written, "
          f"{len(report['updated'])} updated, {len(report['kept'])} kept with your changes")
    return report


if __name__ == "__main__":
    main()
