"""`make grade`'s first step, `make student`, run only when what the student versions are made of changed.

Its inputs (the lessons' folders, ``nbgrader_config.py``, the tools that write the student versions, the command)
are digested into ``release/.made-from``; the command runs again where the digest differs or what it made is
not all there (``release/<lesson>/<lesson>.ipynb``, ``student/``, the lessons in ``gradebook.db``).
"""

import hashlib
import os
from pathlib import Path

from encoder_lib.grading.exercises import BY_LESSON

from . import gradebook
from .files import made_from, write_file

MADE_FROM_FILE = ".made-from"
#: Besides notebooks/: what `make student`'s student versions are made of, where the course folder has them.
MADE_OF = ("nbgrader_config.py", "tools/student.py", "tools/colab.py", "tools/course.py")
SKIPPED = (".ipynb_checkpoints", "__pycache__")


def _files(root):
    """Every file the student versions are made of, in a fixed order."""
    found = [root / name for name in MADE_OF if (root / name).is_file()]
    for dirpath, dirnames, filenames in os.walk(root / "notebooks"):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIPPED)
        found += [Path(dirpath) / name for name in sorted(filenames)]
    return found


def digest_of_inputs(root, command):
    """A digest of the command and of every file the student versions are made of (names and bytes)."""
    root = Path(root)
    digest = hashlib.sha256(command.encode())
    for path in _files(root):
        digest.update(b"\0" + path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def _all_there(root):
    """Whether what the command made last time is all there: each graded lesson's student version, student/'s
    record_inputs, and the lessons in the gradebook."""
    if not (root / "student" / ".generated.json").is_file():
        return False
    if not all((root / "release" / lesson / f"{lesson}.ipynb").is_file() for lesson in BY_LESSON):
        return False
    try:
        recorded = {name for (name,) in gradebook._rows(root, "SELECT name FROM assignment")}
    except ValueError:
        return False
    return set(BY_LESSON) <= recorded


def up_to_date(root, command):
    """Whether ``command`` (make student's) needs not run: nothing it reads changed since it last ran, and all
    it made is there."""
    root = Path(root)
    return made_from(root / "release" / MADE_FROM_FILE) == digest_of_inputs(root, command) and _all_there(root)


def record_inputs(root, command):
    """After ``command`` ran: what it was made from, in ``release/.made-from``."""
    root = Path(root)
    if (root / "release").is_dir():
        write_file(root / "release" / MADE_FROM_FILE, digest_of_inputs(root, command) + "\n")
