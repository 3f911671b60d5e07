"""A learner's id, and the folders named after it: the one place where an id becomes a folder name.

A learner's id is the roster's (``nbgrader db student import``: ``josé``,
``ada+1@school.edu``), which is also the name of their folder in
``submitted/``: nbgrader's exchange names a hand-in after it, ``make
collect`` copies it to ``submitted/<id>/``, and a teacher who copies a
notebook in by hand names the folder so. The id is kept as it is: in the
gradebook, in every CSV file (one row per learner; neutralised there as all
text is, ``files.csv_field``), on the pages and in the summary. Only the
folders the grader writes, ``autograded/<folder>/`` and
``feedback/<folder>/``, are named by ``folder(id)``: the id itself where it
is a safe name (``SAFE_NAME``), else ``safe_name(id)``, a safe form that no
safe id can be (it holds a ``~``) and no other id gives (a 64-bit digest of
the id), so that two learners never share a folder.

    >>> folder("ada"), folder("josé"), folder("=HYPERLINK(1)")
    ('ada', 'jose~d994e1d001886fe5', 'HYPERLINK_1~bd32d5ce82568be7')
"""

import hashlib
import re
import unicodedata

from .files import plain_text

#: Ids that are folder names as they are: letters, digits and ``_ . @ -``, not starting with ``. @ -``.
SAFE_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.@-]{0,99}")
#: Every folder name ``folder`` gives: a safe id, or a safe form.
FOLDER_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.@-]{0,99}|[A-Za-z0-9_.@-]{1,60}~[0-9a-f]{16}")


def safe_name(raw):
    """``raw`` if it is a safe name, else a safe form of it: its letters and digits (``é`` as ``e``), a ``~``
    (which no safe name holds) and 16 hex digits of its SHA-256 (so that two ids never become one).

    >>> safe_name("alice"), safe_name("a b")
    ('alice', 'a_b~c8687a08aa5d6ed2')
    """
    if not isinstance(raw, str):
        raise TypeError(f"raw must be a learner's id (a str), got {type(raw).__name__}")
    if SAFE_NAME.fullmatch(raw):
        return raw
    ascii_only = unicodedata.normalize("NFKD", raw).encode("ascii", "ignore").decode()  # josé -> jose
    stem = re.sub(r"[^A-Za-z0-9_.@-]+", "_", ascii_only).strip("_.@-")[:60] or "learner"
    return f"{stem}~{hashlib.sha256(raw.encode('utf-8', 'surrogateescape')).hexdigest()[:16]}"


def folder(student_id):
    """The name of ``student_id``'s folders in ``autograded/`` and ``feedback/``."""
    return safe_name(student_id)


def by_folder(student_ids):
    """``{folder name: id}`` of ``student_ids``: who a folder in ``autograded/`` or ``feedback/`` belongs to."""
    return {folder(s): s for s in student_ids}


def of_folder(name, taken=()):
    """The id of the learner whose folder in ``submitted/`` is called ``name``: the name itself, except where it
    holds what no id holds (bytes that are not UTF-8, control characters: only an attacker's folder has them),
    which are replaced (``\ufffd``, a space) so that the gradebook and the CSV files can keep the id as it is;
    one already ``taken`` by another folder gets a digest of ``name`` after it.

    >>> of_folder("josé"), of_folder("eve\x1b[0m"), of_folder("a b", taken={"a b"})
    ('josé', 'eve [0m', 'a b~c8687a08')
    """
    text = plain_text(name.encode("utf-8", "surrogateescape").decode("utf-8", "replace"))
    if text in taken:
        text += "~" + hashlib.sha256(name.encode("utf-8", "surrogateescape")).hexdigest()[:8]
    return text


def id_problem(student_id):
    """Why ``student_id`` cannot be a learner's id (a sentence), or None: an id names a folder in ``submitted/``,
    so it is text without control characters, not empty, with no ``/``, not hidden (a leading ``.``), at most
    255 bytes.

    >>> id_problem("josé"), id_problem("=cmd"), id_problem("../alice")
    (None, None, 'it holds a /')
    """
    if not isinstance(student_id, str) or not student_id.strip():
        return "it is empty" if isinstance(student_id, str) else f"it is a {type(student_id).__name__}, not text"
    if "/" in student_id or "\0" in student_id:
        return "it holds a /" if "/" in student_id else "it holds a NUL byte"
    if student_id.startswith("."):
        return "it starts with a . (a hidden folder)"
    if of_folder(student_id) != student_id:
        return "it holds control characters or bytes that are not UTF-8"
    return "it is longer than 255 bytes" if len(student_id.encode()) > 255 else None
