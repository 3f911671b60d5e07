"""nbgrader's exchange as the course reads it: a hand-in's folder, what it holds, when it came, and what
``make collect`` recorded of it. Nothing in a hand-in is trusted.

A hand-in is a folder of the exchange's ``inbound/``, which every learner may
write: ``<student_id>+<lesson>+<time>+<random>`` holding the learner's files
and ``timestamp.txt``, both the learner's to choose. ``parse_name`` reads
whose and which lesson a name says (or why it says nothing); ``walk`` what
the folder holds, without following any link, bounded before anything is
read, and its **exchange time**, the latest change time the kernel keeps for
it, which no learner can set back; ``owner_problem`` whether it is another
account's; ``hand_in_time`` the time that counts for lateness; and
``read_record``/``write_record`` the record ``make collect`` keeps of each
lesson (``submitted/.collected/<lesson>.json``: what it collected, refused
and skipped), which ``make grade``'s summary lists.
"""

import datetime
import json
import os
import pwd
import stat
import time
from dataclasses import dataclass, field
from pathlib import Path

from .files import make_folder, plain_text, read_json, read_regular, write_file
from .ids import id_problem

STAMP = "timestamp.txt"
#: The most files and folders a hand-in may hold, and their bytes: a lesson is one notebook of well under 2 MB.
MAX_HAND_IN_FILES = 100
MAX_HAND_IN_BYTES = 50 * 2**20
#: How deep a hand-in's folders may go.
MAX_HAND_IN_DEPTH = 8
#: ``nbgrader submit`` writes timestamp.txt a moment before its files: a stamp earlier than the exchange's time by
#: less than this is not worth a word to the teacher (the exchange's time still counts, as for any earlier stamp).
#: A grace in which the stamp counts instead is the course's setting, none by default (``course_config``).
UNREMARKED = datetime.timedelta(seconds=2)
#: Where ``make collect`` keeps its record of each lesson, in ``submitted/`` (hidden: no learner's folder).
RECORDS = ".collected"
#: The accounts a learner named ``{student_id}`` may have on the hub's machine: their own name (a hub whose
#: accounts are the learners'), or The Littlest JupyterHub's ``jupyter-<name>``.
ACCOUNT_NAMES = ("{student_id}", "jupyter-{student_id}")


def utc_now(timestamp=None):
    """Now, or the POSIX ``timestamp``, as the naive UTC ``datetime`` the records and nbgrader hold."""
    return datetime.datetime.fromtimestamp(time.time() if timestamp is None else timestamp, datetime.timezone.utc) \
        .replace(tzinfo=None)


def utc_text(when):
    """A naive UTC ``datetime`` as the record and nbgrader write it."""
    return f"{when:%Y-%m-%d %H:%M:%S.%f} UTC"


#: The times nbgrader's exchange, make collect's record (``utc_text``) and make extension write, which ``utc_time``
#: reads without importing nbgrader (a second).
UTC_FORMATS = ("%Y-%m-%d %H:%M:%S.%f UTC", "%Y-%m-%d %H:%M:%S UTC")


def utc_time(text):
    """``text`` written in one of ``UTC_FORMATS``, as the naive UTC ``datetime`` nbgrader's ``parse_utc`` gives;
    None for any other text (nbgrader reads it)."""
    for form in UTC_FORMATS:
        try:
            return datetime.datetime.strptime(text.strip(), form)
        except ValueError:
            pass
    return None


def read_time(text):
    """nbgrader's reading of a time (naive UTC), or None for anything that is not one; ``utc_time`` reads the
    course's own formats, and ``None`` (``str`` of a record's missing time) is none, without nbgrader."""
    if not isinstance(text, str) or text.strip() in ("None", ""):
        return None
    if (quick := utc_time(text)) is not None:
        return quick
    from nbgrader import utils

    try:
        return utils.parse_utc(text.strip())
    except Exception:  # dateutil's ParserError, OverflowError, ...: any text that is not a time
        return None


# ---------------------------------------------------------------- a folder's name


@dataclass(frozen=True)
class Name:
    """Whose and which lesson an inbound folder's name says."""

    folder: str
    student: str
    lesson: str


def _readings(folder):
    """``(student, lesson, time)`` as a name can be read: with nbgrader's random part last, then without it."""
    parts = folder.rsplit("+", 3)
    if len(parts) == 4:
        yield parts[0], parts[1], parts[2]
    if len(parts) >= 3:
        yield "+".join(parts[:-2]), parts[-2], parts[-1]


def parse_name(folder, lesson):
    """``(Name, None)`` for a folder of ``lesson`` named ``<student_id>+<lesson>+<time>[+<random>]``; ``(None,
    None)`` for another lesson's; ``(None, why)`` for a name that says nothing (no ``+``, no time, no id).

    >>> parse_name("ada+01_attention+2026-12-10 16:59:00.1 UTC+Xy9", "01_attention")[0].student
    'ada'
    >>> parse_name("victim+01_attention", "01_attention")
    (None, 'its name is not <student_id>+<lesson>+<time>+<random>, as nbgrader submit names a hand-in')
    """
    for student, named, when in _readings(folder):
        if named == lesson and read_time(when) is not None:
            problem = id_problem(student)
            if problem:
                return None, f"its learner's id cannot be one ({problem})"
            return Name(folder, student, lesson), None
    if len(folder.rsplit("+", 3)) < 3:
        return None, "its name is not <student_id>+<lesson>+<time>+<random>, as nbgrader submit names a hand-in"
    if f"+{lesson}+" in folder:
        return None, "its name holds no time nbgrader can read"
    return None, None


# ---------------------------------------------------------------- what a folder holds


@dataclass
class Walk:
    """What a hand-in's folder holds: its files (relative path -> size), folders, the accounts that own them, its
    exchange time (naive UTC), and the first thing that stops it being collected."""

    files: dict = field(default_factory=dict)
    folders: list = field(default_factory=list)
    owners: set = field(default_factory=set)
    changed: datetime.datetime = None
    problem: str = None


def _look(found, path, relative, depth):
    """Take in one entry (``os.lstat``, never followed): True if it is a folder to look into."""
    info = os.lstat(path)
    found.owners.add(info.st_uid)
    changed = utc_now(info.st_ctime)
    found.changed = changed if found.changed is None else max(found.changed, changed)
    shown = plain_text(relative)[:80]
    if stat.S_ISREG(info.st_mode):
        found.files[relative] = info.st_size
    elif stat.S_ISDIR(info.st_mode):
        found.folders.append(relative)
    elif stat.S_ISLNK(info.st_mode):
        found.problem = f"it holds a symbolic link ({shown}): links are never followed"
    else:
        found.problem = f"it holds a special file ({shown}), not a regular file"
    if depth > MAX_HAND_IN_DEPTH:
        found.problem = f"its folders go more than {MAX_HAND_IN_DEPTH} deep"
    elif len(found.files) + len(found.folders) > MAX_HAND_IN_FILES:
        found.problem = f"it holds more than {MAX_HAND_IN_FILES} files and folders"
    elif sum(found.files.values()) > MAX_HAND_IN_BYTES:
        found.problem = f"its files are more than {MAX_HAND_IN_BYTES // 2**20} MB"
    return found.problem is None and stat.S_ISDIR(info.st_mode)


def walk(path):
    """The ``Walk`` of the hand-in folder at ``path``: no link followed, stopped at the first problem or bound
    (so that a folder of a million files costs a hundred ``lstat``)."""
    found = Walk()
    try:
        if not stat.S_ISDIR(os.lstat(path).st_mode):
            found.problem = "it is not a folder (a symbolic link, or a file): not followed"
            return found
        pending = [("", 0)]
        while pending and found.problem is None:
            relative, depth = pending.pop()
            if _look(found, os.path.join(path, relative) if relative else path, relative, depth):
                with os.scandir(os.path.join(path, relative)) as entries:
                    for entry in entries:
                        pending.append((os.path.join(relative, entry.name), depth + 1))
                        if len(pending) > MAX_HAND_IN_FILES:
                            found.problem = f"it holds more than {MAX_HAND_IN_FILES} files and folders"
                            break
    except OSError as exc:
        found.problem = f"it could not be read ({exc.strerror})"
    found.folders = [f for f in found.folders if f]  # the hand-in's own folder is not one of its folders
    return found


def accounts_of(student, templates=ACCOUNT_NAMES):
    """The ids (uids) of the accounts the learner named ``student`` has on this machine (empty: none)."""
    found = set()
    for template in templates:
        try:
            found.add(pwd.getpwnam(template.format(student_id=student)).pw_uid)
        except (KeyError, ValueError, IndexError):
            continue
    return found


def owner_problem(walk, student, templates=ACCOUNT_NAMES):
    """Why a hand-in named for ``student`` is someone else's, or None: where the learner has an account of their
    own here (a hub with one account per learner), every folder and file of it must be that account's; where
    they have none (a hub whose servers share one account), the exchange cannot tell, and this says nothing."""
    own = accounts_of(student, templates)
    others = walk.owners - own
    if not own or not others:
        return None
    names = []
    for uid in sorted(others)[:3]:
        try:
            names.append(pwd.getpwuid(uid).pw_name)
        except KeyError:
            names.append(f"uid {uid}")
    return (f"it is owned by {', '.join(names)}, not by {student}'s account: a hand-in is its owner's, whatever "
            f"its name says")


def read_stamp(folder):
    """The text of a hand-in's ``timestamp.txt`` (at most 200 characters, never through a link), or None."""
    try:
        data = read_regular(os.path.join(folder, STAMP), 199)
    except OSError:
        return None
    return None if data is None else data.decode("utf-8", "replace")


# ---------------------------------------------------------------- the time that counts


@dataclass(frozen=True)
class HandInTime:
    """When a hand-in came, for lateness (naive UTC; None: never late), what that time is (``by``, as the pages
    say it: "by ..."), and ``flag``, a sentence for the teacher where the learner's stamp was not taken."""

    when: datetime.datetime = None
    by: str = "the time the exchange recorded"
    flag: str = ""


def _collected_time(stamp_text, exchange, grace=datetime.timedelta(0)):
    """The ``HandInTime`` of a collected hand-in: the later of its stamp and the exchange time, but where the
    course grants a ``grace`` (``c.EncoderCourse.stamp_grace_seconds``) and the stamp is earlier by no more, the
    stamp, flagged; a missing or unreadable stamp takes the exchange time, flagged."""
    stamp = read_time(stamp_text) if stamp_text is not None else None
    kernel = f"the exchange's change time, {exchange:%Y-%m-%d %H:%M:%S} UTC"
    if stamp is None:
        said = "has no timestamp.txt" if stamp_text is None else \
            f"has a timestamp.txt that is not a time ({plain_text(stamp_text)[:40]!r})"
        return HandInTime(exchange, "the exchange's change time (no readable timestamp.txt)",
                          f"{said}: {kernel}, counts")
    if stamp >= exchange:
        return HandInTime(stamp)
    if exchange - stamp <= grace:
        return HandInTime(stamp, "the time the exchange recorded",
                          f"timed by its timestamp.txt, {stamp:%Y-%m-%d %H:%M:%S} UTC, inside the course's grace of "
                          f"{grace.total_seconds():g} s before {kernel}")
    flag = "" if exchange - stamp < UNREMARKED else \
        f"timestamp.txt says {stamp:%Y-%m-%d %H:%M:%S} UTC, before {kernel}: the later counts"
    return HandInTime(exchange, "the exchange's change time (timestamp.txt said earlier)", flag)


#: What make collect's record says of a hand-in taken from the hand-in service (``handin.collect``), timed by its
#: clock: no learner's stamp is read.
SERVICE = "the hand-in service"
#: What it says of a hand-in taken from a learning platform's download (``collect_download``), timed by the
#: platform's own record of it.
PLATFORMS = ("Canvas", "Moodle")


def hand_in_time(notebook, record, digest=None, grace=datetime.timedelta(0)):
    """The ``HandInTime`` of the notebook at ``notebook`` in ``submitted/`` (``digest``: its SHA-256, where the
    caller has it). Collected by ``make collect`` (``record``, the lesson's record of this learner, holds this
    very file): by its stamp and the exchange time (``_collected_time``; ``grace``, the course's setting). Copied
    in by hand: by a
    ``timestamp.txt`` the teacher put beside it, else never late (the time it was copied or graded is never
    taken)."""
    notebook = Path(notebook)
    exchange = read_time(str((record or {}).get("exchange_time")))
    if exchange is not None and (record.get("files") or {}).get(notebook.name) == (digest or file_digest(notebook)):
        if record.get("source") == SERVICE:
            return HandInTime(exchange, "the hand-in service's clock")
        if record.get("source") in PLATFORMS:
            return HandInTime(exchange, f"{record['source']}'s record of the hand-in")
        return _collected_time(record.get("stamp"), exchange, grace)
    text = read_stamp(notebook.parent)
    if text is None:
        return HandInTime(None, "no time: copied in by hand")
    when = read_time(text)
    if when is None:
        return HandInTime(None, "no time: copied in by hand", f"has a timestamp.txt that is not a time "
                                                              f"({plain_text(text)[:40]!r}): ignored, never late")
    return HandInTime(when, "the time in timestamp.txt, copied in by hand")


def file_digest(path):
    """The SHA-256 of a regular file (never through a link) of at most ``MAX_HAND_IN_BYTES`` (a larger one was
    never collected), or None."""
    import hashlib

    try:
        data = read_regular(path, MAX_HAND_IN_BYTES)
    except OSError:
        return None
    return None if data is None or len(data) > MAX_HAND_IN_BYTES else hashlib.sha256(data).hexdigest()


# ---------------------------------------------------------------- make collect's record


def record_path(submitted, lesson):
    return Path(submitted) / RECORDS / f"{lesson}.json"


#: The most folders of each kind (refused, skipped) the record names: a flood of junk folders in inbound/ is
#: counted, its first few named, so that the record stays the size of the class.
MOST_RECORDED = 50
#: The largest record read: a class of 2,000 learners' records is well under a megabyte.
MOST_RECORD_BYTES = 16 * 2**20


class RecordUnreadable(Exception):
    """``make collect``'s record of a lesson exists but cannot be read: never taken as empty, since every hand-in
    would then be timed by its learner's own timestamp.txt."""


def read_record(submitted, lesson):
    """What ``make collect`` recorded of ``lesson`` (``{"hand_ins": {id: ...}, "refused": [...], "skipped":
    [...]}``, with ``refused_count`` and ``skipped_count``), empty where it never ran; ``RecordUnreadable`` where
    it is there but cannot be read, or is larger than ``MOST_RECORD_BYTES``, or is not a record."""
    path = record_path(submitted, lesson)
    try:
        record = read_json(path, MOST_RECORD_BYTES)
    except FileNotFoundError:
        return {"hand_ins": {}, "refused": [], "skipped": []}
    except OSError as exc:
        raise RecordUnreadable(f"{path} cannot be read ({exc.strerror})") from None
    if not isinstance(record, dict) or not isinstance(record.get("hand_ins"), dict):
        raise RecordUnreadable(f"{path} is not make collect's record of {lesson} (over "
                               f"{MOST_RECORD_BYTES // 2**20} MiB, or not its JSON)")
    return record


def write_record(submitted, lesson, record):
    """Write the record, its refused and skipped folders bounded: each list's first ``MOST_RECORDED``, and its
    count."""
    for kind in ("refused", "skipped"):
        found = list(record.get(kind) or ())
        record[f"{kind}_count"], record[kind] = len(found), found[:MOST_RECORDED]
    make_folder(Path(submitted) / RECORDS)
    write_file(record_path(submitted, lesson), json.dumps(record, indent=1, sort_keys=True) + "\n")


def collect_notices(submitted, lessons):
    """What the last ``make collect`` of each of ``lessons`` refused or skipped, in words, for the summary: the
    folders the record names, and how many more it counted."""
    said = []
    for lesson in lessons:
        record = read_record(submitted, lesson)
        for kind in ("refused", "skipped"):
            named = record.get(kind) or ()
            for folder, why in named:
                said.append(plain_text(f"make collect {lesson} {kind} inbound/{folder!r}: {why}"))
            more = int(record.get(f"{kind}_count") or 0) - len(named)
            if more > 0:
                said.append(f"make collect {lesson} {kind} {more} more folder{'s' * (more > 1)} of inbound/, "
                            f"counted, not named")
        download = record.get("download") or {}
        for entry, why in download.get("refused") or ():
            said.append(plain_text(f"make collect {lesson} FROM={download.get('from')} refused {entry!r}: {why}"))
        more = int(download.get("refused_count") or 0) - len(download.get("refused") or ())
        if more > 0:
            said.append(f"make collect {lesson} FROM={download.get('from')} refused {more} more files, counted")
    return said