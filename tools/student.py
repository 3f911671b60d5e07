"""Write the student versions of the lessons into student/, never overwriting a learner's work.

    .venv/bin/python -m tools.student            # what `make student` runs

First `nbgrader generate_assignment "*" --force` writes every lesson's student
version (solutions replaced by ``raise NotImplementedError()``, hidden tests
removed) into release/<lesson>/ and records the lessons' tests in
gradebook.db, and each starts with the cell that installs the course's
library where it is missing, as on Colab, and does nothing where it imports
(``tools/colab.py``); each "Try it" answer (a markdown cell tagged ``try-it-answer``)
is then folded into a disclosure, so that a learner predicts before reading
(``fold_answers``). Every visible-tests cell, and every other cell that
calls a function the learner writes, carries JupyterLab's ``raises-exception``
tag (``let_run_all_go_on``): a blank or wrong answer fails there and Run All
goes on, to the lesson's last cell and its **Hand in** button. Then each file
of release/<lesson>/ is copied to student/<lesson>/, where learners work:

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
import re
import subprocess
import sys
from pathlib import Path

from . import colab
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
    delivery = _Delivery(student_dir, load_manifest(student_dir), out)
    if lessons is None:
        lessons = sorted(p.name for p in release_dir.iterdir() if p.is_dir())
    for lesson in lessons:
        for src in sorted(p for p in (release_dir / lesson).rglob("*") if p.is_file()):
            delivery.deliver(src.relative_to(release_dir).as_posix(), src.read_bytes())
    write_atomically(student_dir / MANIFEST,
                     (json.dumps({"written": delivery.written, "delivered": delivery.delivered}, indent=1,
                                 sort_keys=True) + "\n").encode())
    return delivery.report


class _Delivery:
    """One sync's state: what it wrote and delivered (the manifest), and its report."""

    def __init__(self, student_dir, manifest, out):
        self.student_dir, self.out = student_dir, out
        self.written, self.delivered = manifest["written"], manifest["delivered"]
        self.report = {"written": [], "updated": [], "kept": [], "new": []}

    def deliver(self, rel, data):
        """Deliver one file of the release (``rel``, its bytes), never over a learner's change."""
        new, current = sha256(data), file_hash(self.student_dir / rel)
        if current is None or current == self.written.get(rel):
            # missing, or exactly as we last wrote it: (re)write
            if current != new:
                write_atomically(self.student_dir / rel, data)
                self.report["written" if current is None else "updated"].append(rel)
            self.written[rel] = self.delivered[rel] = new
        elif current == new:  # the learner's file already is the new version
            self.written[rel] = self.delivered[rel] = new
        elif self.delivered.get(rel) == new:  # changed by the learner, who already has this version
            self.report["kept"].append(rel)
        else:  # changed by the learner, and the lesson has changed: the update goes beside it
            self.beside(rel, data, new)

    def beside(self, rel, data, new):
        """Write the new version of ``rel`` under a new name beside the learner's changed file."""
        for candidate in new_names(rel):
            there = file_hash(self.student_dir / candidate)
            if there is None or there == self.written.get(candidate) or there == new:
                break
        if file_hash(self.student_dir / candidate) != new:
            write_atomically(self.student_dir / candidate, data)
        self.written[candidate] = self.delivered[rel] = new
        self.report["kept"].append(rel)
        self.report["new"].append(candidate)
        name = self.student_dir.name
        self.out(f"kept your changes to {name}/{rel}; the updated lesson is {name}/{candidate}")


def nbgrader(args, root, **kwargs):
    """Run ``nbgrader <args>`` in the course folder ``root`` (where nbgrader_config.py is)."""
    command = [str(Path(sys.executable).parent / "nbgrader"), *args]
    return subprocess.run(command, cwd=root, env=jupyter_env(), **kwargs)


def generate(root, course=None):
    """Write every lesson's student version into release/ (and its tests into gradebook.db), each with the install
    cell of ``tools/colab.py`` first, made of the course at ``course`` (default: ``colab.course_folder(root)``)."""
    result = nbgrader(["generate_assignment", "*", "--force", "--log-level=WARN"], root,
                      capture_output=True, text=True)
    if result.returncode != 0:
        sys.stderr.write(result.stdout + result.stderr)
        raise SystemExit(f"nbgrader generate_assignment failed (exit code {result.returncode})")
    course = colab.course_folder(root) if course is None else Path(course)
    for path in sorted(Path(root, "release").glob("*/*.ipynb")):
        add_install_cell(path, course)
        let_run_all_go_on(path)


def add_install_cell(path, course):
    """Put the install cell first in the student version at ``path`` (``colab.first_cell`` of ``course``)."""
    import nbformat

    notebook = nbformat.read(path, as_version=4)
    if colab.with_first_cell(notebook, colab.first_cell(notebook, course)):
        write_atomically(Path(path), nbformat.writes(notebook).encode())


RAISES = "raises-exception"  # JupyterLab's tag: Run All goes on past the cell when it raises
_DEFINED = re.compile(r"^def\s+([A-Za-z_]\w*)\s*\(", re.M)


def learner_functions(notebook):
    """The names of the functions the learner writes: those defined in the answer cells (nbgrader's solution)."""
    return {name for cell in notebook.cells if cell.cell_type == "code"
            and cell.metadata.get("nbgrader", {}).get("solution") for name in _DEFINED.findall(cell.source)}


def runs_learner_code(cell, names):
    """Whether a code cell may fail on a blank or wrong answer: a visible-tests cell (nbgrader's grade cell), or a
    cell of the lesson's own that uses a function of ``names`` by its bare name, to call it or to hand it on
    (``el.softmax`` is the library's; a name in a string or a comment is not a use)."""
    nbgrader = cell.metadata.get("nbgrader", {})
    if cell.cell_type != "code" or nbgrader:  # an answer, a self-check (it reports, never raises), or a test cell
        return bool(nbgrader.get("grade")) and cell.cell_type == "code"
    return bool(names & _bare_names(cell.source))


def _bare_names(source):
    """The names ``source`` uses that are not an attribute (after a dot) nor a keyword argument or an assignment's
    target (before ``=``: ``rope="half"``), from Python's tokenizer; where it cannot read the code (a magic), every
    word not after a dot."""
    import io
    import tokenize

    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return set(re.findall(r"(?<![\w.])([A-Za-z_]\w*)", source))
    def op(k, text):
        return 0 <= k < len(tokens) and tokens[k].type == tokenize.OP and tokens[k].string == text

    return {t.string for k, t in enumerate(tokens) if t.type == tokenize.NAME and not op(k - 1, ".")
            and not op(k + 1, "=")}


def let_run_all_go_on(path):
    """Tag each cell of the student version at ``path`` that may fail on the learner's answer ``raises-exception``
    (``runs_learner_code``), so that Run All reaches the lesson's end whatever the answers; returns how many."""
    import nbformat

    notebook = nbformat.read(path, as_version=4)
    names = learner_functions(notebook)
    tagged = 0
    for cell in notebook.cells:
        tags = cell.metadata.get("tags", [])
        if runs_learner_code(cell, names) and RAISES not in tags:
            cell.metadata["tags"] = [*tags, RAISES]
            tagged += 1
    if tagged:
        write_atomically(Path(path), nbformat.writes(notebook).encode())
    return tagged


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
