"""The code a grading result depends on: the learner's library (its exercises, the judge) and the grader itself.

``plan.grader_version`` digests it with the secret and the limits, so that a result graded by other code is graded
again, and a Dask worker at another commit grades nothing; the class report digests it with its inputs.
"""

from pathlib import Path

import encoder_lib

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
