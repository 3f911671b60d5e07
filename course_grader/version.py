"""What a grading result depends on besides the notebook: the course's secret (``course_secret``), the learner's
library (its exercises, the judge) and the grader itself (``code_files``).

``grader_version`` digests the code with the secret and the limits, so that a result graded by other code is
graded again, and a Dask worker at another commit grades nothing; `make grade` (``plan``) and the hand-in service
(``handin.grading``) both read them here. The class report digests the code with its inputs.
"""

import hashlib
import json
import secrets
from dataclasses import asdict
from pathlib import Path

import encoder_lib

from .files import write_new

#: The two packages' folders, wherever they are installed from.
PACKAGES = (Path(encoder_lib.__file__).resolve().parent, Path(__file__).resolve().parent)


def code_files(skip=("widgets",)):
    """``(name, path)`` for every Python file of the two packages, in a fixed order; ``name`` is the path from the
    packages' common folder (``encoder_lib/attention.py``, ``course_grader/plan.py``). A folder named in ``skip``
    (the widgets, which only draw) is left out."""
    found = []
    for package in PACKAGES:
        for path in sorted(package.rglob("*.py")):
            relative = path.relative_to(package.parent)
            if not set(skip) & set(relative.parts):
                found.append((relative.as_posix(), path))
    return found


SECRET_FILE = ".grading-secret"


def course_secret(root):
    """The course's secret seed (an int), created beside gradebook.db on first use."""
    path = Path(root) / SECRET_FILE
    if not path.exists():
        write_new(path, (secrets.token_hex(32) + "\n").encode())
    return int(path.read_text().strip(), 16)


def grader_version(secret, limits):
    """A digest of everything a result depends on besides the submission: the library's code and the grader's, the
    secret, the limits."""
    digest = hashlib.sha256()
    for name, path in code_files():
        digest.update(name.encode() + b"\0" + path.read_bytes())
    digest.update(hashlib.sha256(str(secret).encode()).digest())
    digest.update(json.dumps(asdict(limits), sort_keys=True).encode())
    return digest.hexdigest()[:16]
