"""What ``make grade`` keeps of each graded submission: ``autograded/<student_id>/<lesson>/grading.json`` (its
results, the submission's SHA-256 and the grader's version), and, before a changed submission is graded, the
earlier results and notebook in ``history/<the time they were graded, UTC>/``."""

import dataclasses
import json
import os
import time
from dataclasses import asdict

from .files import make_folder, write_file
from .outputs import Result

HISTORY = "history"

def _results(rows, student):
    """The stored rows as ``Result``s of ``student`` (whose id an older grader may have written in another form)."""
    return [dataclasses.replace(Result(**row), student_id=student) for row in rows]


def store(folder, digest, version, results):
    payload = {"submission_sha256": digest, "grader": version, "results": [asdict(r) for r in results]}
    write_file(make_folder(folder) / "grading.json", json.dumps(payload, indent=1, sort_keys=True) + "\n")


def stored(folder, student, digest=None, version=None):
    """The results stored in ``folder``'s grading.json, as ``student``'s (by any grader, for any submission; with
    ``digest`` and ``version``, only for this exact submission by this exact grader), or None."""
    try:
        found = json.loads((folder / "grading.json").read_text())
        if digest is not None and (found.get("submission_sha256"), found.get("grader")) != (digest, version):
            return None
        return _results(found["results"], student)
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None


def keep_history(folder, digest, lesson):
    """Before a changed submission is graded: the earlier ``grading.json`` and notebook moved into
    ``history/<the time they were graded, UTC>/``, never overwriting one kept before; returns that folder, or
    None when there was nothing earlier or it was this very submission."""
    earlier = folder / "grading.json"
    try:
        if json.loads(earlier.read_text()).get("submission_sha256") == digest:
            return None
    except (OSError, ValueError, AttributeError):
        if not earlier.is_file():
            return None
    stamp = time.strftime("%Y-%m-%dT%H-%M-%SZ", time.gmtime(earlier.stat().st_mtime))
    kept, n = folder / HISTORY / stamp, 1
    while kept.exists():
        n += 1
        kept = folder / HISTORY / f"{stamp}-{n}"
    make_folder(folder / HISTORY)
    make_folder(kept)
    for name in (f"{lesson}.ipynb", "grading.json"):
        if (folder / name).is_file():
            os.replace(folder / name, kept / name)
    return kept

