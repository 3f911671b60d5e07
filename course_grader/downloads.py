"""A learning platform's download of one assignment's submissions, and its record of them, read without trusting
either: what ``make collect FROM=<zip> RECORD=<record>`` (``collect_download``) collects from.

The two platforms' layouts, as their code writes them:

- **Canvas**, the assignment's *Download Submissions*: one zip of loose files, each named
  ``<sortable name>[_LATE]_<user id>_<file id>_<file's name>`` (``lib/content_zipper.rb``: the learner's
  "Last, First" lower-cased with everything but letters, digits and ``_`` taken out, ``LATE`` where Canvas marked
  the submission late, then Canvas's own user id; anonymous grading writes ``anon_<id>`` instead, which names no
  one). Its record: the submissions of the assignment as Canvas's API gives them
  (``.../assignments/<assignment>/submissions?include[]=user&include[]=assignment&per_page=100``, saved from the
  browser: ``user_id``, ``submitted_at``, the ``attachments`` handed in, the assignment's id and name, and the
  learner's ``sis_user_id``, ``login_id`` and ``email``; a page holds 100 at most), and/or the
  gradebook's export (*Grades > Export*: ``Student``, ``ID``, ``SIS User ID``, ``SIS Login ID``, ``Section``; no
  times).
- **Moodle**, the assignment's *Download all submissions*: ``<Full name>_<participant id>_assignsubmission_file_``
  and the learner's file, as a folder (``.../``, Moodle 3.1 to 3.11; ``..._file/`` from 4.0) or joined to the name
  (older, or with *download submissions in folders* off); blind marking writes ``Participant`` for the name. Its
  record: the assignment's *Download grading worksheet* (``Identifier`` "Participant <id>", ``Full name``, the
  identity fields the site shows: ``Email address``, ``ID number``, ``Username``; ``Status``, ``Last modified
  (submission)`` in the teacher's Moodle time zone, to the minute, which it does not name).

The zip's own entry times are the time the platform wrote the zip (Canvas) or stored the file (Moodle), never the
hand-in's: they are not read. A name matches a learner through the record only (Canvas's user id, Moodle's
participant id), never through the name it shows.
"""

import csv
import io
import json
import re
import stat
import unicodedata
import zipfile
from dataclasses import KW_ONLY, dataclass, field
from pathlib import Path

from .deadlines import parse_time
from .submissions import MAX_NOTEBOOK_BYTES

CANVAS, MOODLE = "Canvas", "Moodle"
#: The most submissions one page of Canvas's API gives (``per_page=100``): a record of exactly this many may be
#: one page of several.
CANVAS_PAGE = 100
#: The most entries a download may hold (a class of a thousand, a few files each), and the most bytes read from it:
#: a notebook is read to ``MAX_NOTEBOOK_BYTES`` at most, whatever its entry declares (no zip bomb).
MAX_ENTRIES = 10_000
MAX_READ_BYTES = 2 * 2**30
#: The largest record read (a class of two thousand's API pages are a few megabytes).
MAX_RECORD_BYTES = 64 * 2**20
#: Where a Canvas file's name may split into ``<name>[_LATE]_<user id>_<file id>_<file>`` (the record says where).
CANVAS_SPLIT = re.compile(r"_(\d+)_(\d+)_(?=[^/])")
MOODLE_NAME = re.compile(r"(?P<who>[^/]+?)_(?P<key>\d+)_assignsubmission_(?P<plugin>[a-z]+)"
                         r"(?:_?/(?P<path>.+)|_(?P<file>[^/]+))")
LAYOUT = {CANVAS: "<name>[_LATE]_<user id>_<file id>_<file>, as Canvas's Download Submissions names a file",
          MOODLE: "<full name>_<participant id>_assignsubmission_file_<file>, as Moodle's Download all submissions "
                  "names one"}
#: The worksheet's time, as Moodle's English language pack writes it (``strftimedaydatetime``).
MOODLE_TIME = "%A, %d %B %Y, %I:%M %p"


class DownloadError(Exception):
    """A download or record that cannot be read at all: nothing is collected."""


@dataclass
class PlatformLearner:
    """The platform's record of one learner: the ids it gives them (SIS, login, ID number, user name), their
    e-mails, when they handed in (naive UTC, or None), why that time could not be read, and how to name them."""

    key: str
    _: KW_ONLY
    ids: set = field(default_factory=set)
    emails: set = field(default_factory=set)
    when: object = None
    time_problem: str = ""
    shown: str = ""
    sis: str = ""  # Canvas's SIS User ID and login, for grades_lms.csv
    login: str = ""
    attachments: set = field(default_factory=set)  # Canvas's ids of the files handed in (empty: not in the record)


class Learners(dict):
    """``{key: PlatformLearner}``, with the assignment the record is of (``(id, name)``, Canvas's API) and the
    records that are one full page of Canvas's API (``full_pages``: there may be more)."""

    assignment = None
    full_pages = ()


@dataclass(frozen=True)
class File:
    """One file of a download: its learner's key in the platform's record, its own name, whether the platform
    named it late (Canvas), and the platform's id of the file (Canvas's, which its Re-Upload Submissions reads)."""

    entry: str
    key: str
    name: str
    late: bool = False
    file_id: str = ""


# ---------------------------------------------------------------- the zip


def entry_name(info):
    """An entry's name as the platform wrote it: UTF-8 even where the zip does not say so (Canvas's rubyzip sets no
    flag, so Python reads its bytes as code page 437)."""
    if info.flag_bits & 0x800:
        return info.filename
    try:
        return info.filename.encode("cp437").decode("utf-8")
    except UnicodeError:
        return info.filename


def entry_problem(info, name):
    """Why an entry is not a file to collect, whatever its name says (a link, a path that leaves the download, a
    special file, encrypted, declared too large), or None."""
    kind = stat.S_IFMT(info.external_attr >> 16)
    parts = name.replace("\\", "/").split("/")
    if kind == stat.S_IFLNK:
        return "it is a symbolic link: never followed"
    if name.startswith(("/", "\\")) or re.match(r"[A-Za-z]:", name) or ".." in parts:
        return "its path leaves the download (absolute, or ..): never unpacked"
    if any(unicodedata.category(c) == "Cc" for c in name):
        return "its name holds control characters"
    if kind not in (0, stat.S_IFREG):
        return "it is a special file, not a regular file"
    if info.flag_bits & 0x1:
        return "it is encrypted"
    if info.file_size > MAX_NOTEBOOK_BYTES:
        return f"it is over {MAX_NOTEBOOK_BYTES // 2**20} MB unpacked: notebooks that large are not read"
    return None


def open_download(path):
    """The download at ``path`` as a ``zipfile.ZipFile`` and its entries (folders left out); ``DownloadError``
    for a file that is not a zip or holds more than ``MAX_ENTRIES``."""
    try:
        archive = zipfile.ZipFile(path)
    except (OSError, zipfile.BadZipFile) as exc:
        raise DownloadError(f"{path} is not a zip that can be read ({exc})") from None
    infos = archive.infolist()
    if len(infos) > MAX_ENTRIES:
        archive.close()
        raise DownloadError(f"{path} holds {len(infos)} entries, more than the {MAX_ENTRIES} a class's download "
                            f"holds: not read")
    return archive, [info for info in infos if not info.is_dir()]


def read_entry(archive, info, budget):
    """An entry's bytes, never more than ``MAX_NOTEBOOK_BYTES`` read whatever it declares, nor past ``budget`` (the
    bytes still allowed); ``(bytes, None)`` or ``(None, why)``."""
    limit = min(MAX_NOTEBOOK_BYTES, budget)
    try:
        with archive.open(info) as f:
            data = f.read(limit + 1)
    except (OSError, zipfile.BadZipFile, RuntimeError, NotImplementedError, EOFError) as exc:
        return None, f"it could not be unpacked ({exc})"
    except Exception as exc:  # zlib.error, lzma.LZMAError, ...: any corrupt stream
        return None, f"it could not be unpacked ({type(exc).__name__})"
    if len(data) > limit:
        return None, (f"it is over {MAX_NOTEBOOK_BYTES // 2**20} MB unpacked" if limit == MAX_NOTEBOOK_BYTES else
                      f"the download's notebooks pass {MAX_READ_BYTES // 2**30} GiB unpacked: not read")
    return data, None


def slug(name):
    """A name as Canvas's zipper writes it in a file's name: lower case, only letters, digits and ``_``."""
    return re.sub(r"[^\w]", "", name.lower())


def _canvas_file(name, learners):
    """The ``File`` of a Canvas entry, read by the record, never by a suffix of a name a learner sets (a sortable
    name ``mallory_101`` before the learner's own ``_202_``): of every split of the name into ``<name>_<user
    id>_<file id>_<file>``, the one whose user id is in the record with that file id (the API's attachments),
    else whose name is the record's; ``(File, None)`` or ``(None, why)``."""
    splits = [(name[:m.start()], m[1], m[2], name[m.end():]) for m in
              (CANVAS_SPLIT.match(name, n) for n in range(len(name))) if m and "/" not in name[:m.start()]]
    if not splits:
        return None, f"its name is not {LAYOUT[CANVAS]}"
    known = [s for s in splits if s[1] in learners]
    fitting = [s for s in known if s[2] in learners[s[1]].attachments or
               (not learners[s[1]].attachments and slug(learners[s[1]].shown) == slug(s[0].removesuffix("_LATE")))]
    if len(fitting) != 1 and len(known) > 1:
        return None, (f"its name reads as {len(known)} of the record's learners ({', '.join(s[1] for s in known)}), "
                      f"and the record does not say which: not collected, never guessed")
    who, key, file_id, rest = (fitting or known or splits)[0]
    return File(name, key, rest, who.endswith("_LATE"), file_id), None


def parse_file(platform, name, learners=None):
    """The ``File`` a download's entry ``name`` is, in ``platform``'s layout, its learner read through the record's
    ``learners``; ``(File, None)`` or ``(None, why)``."""
    if platform == CANVAS:
        if re.match(r"(LATE_)?anon_", name):
            return None, "Canvas's anonymous grading named it anon_<id>, which names no one: not collected"
        return _canvas_file(name, learners or {})
    found = MOODLE_NAME.fullmatch(name)
    if found is None:
        return None, f"its name is not {LAYOUT[MOODLE]}"
    if found["plugin"] != "file":
        return None, f"it is Moodle's {found['plugin']} submission, not a file"
    return File(name, found["key"], (found["path"] or found["file"]).rsplit("/", 1)[-1]), None


# ---------------------------------------------------------------- the platform's record


def _text(path):
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_RECORD_BYTES + 1)
    except OSError as exc:
        raise DownloadError(f"RECORD {path} cannot be read ({exc.strerror})") from None
    if len(data) > MAX_RECORD_BYTES:
        raise DownloadError(f"RECORD {path} is over {MAX_RECORD_BYTES // 2**20} MB: not read")
    try:
        return data.decode("utf-8-sig")
    except UnicodeError:
        raise DownloadError(f"RECORD {path} is not UTF-8 text, as Canvas and Moodle write their exports") from None


def _canvas_submissions(text, path):
    """Canvas's API's submissions (a JSON list; ``while(1);`` first, as Canvas guards a page read in the browser)."""
    try:
        items = json.loads(text.strip().removeprefix("while(1);"))
    except ValueError:
        raise DownloadError(f"RECORD {path} is not the JSON of Canvas's submissions API") from None
    if not isinstance(items, list) or not all(isinstance(i, dict) and "user_id" in i for i in items):
        raise DownloadError(f"RECORD {path} is not a list of Canvas's submissions (each with its user_id)")
    learners = Learners()
    for item in items:
        user = item.get("user") if isinstance(item.get("user"), dict) else {}
        learner = PlatformLearner(str(item["user_id"]), shown=str(user.get("sortable_name") or user.get("name") or ""),
                          sis=str(user.get("sis_user_id") or ""), login=str(user.get("login_id") or ""))
        learner.ids = {str(user[k]) for k in ("sis_user_id", "login_id") if user.get(k)}
        learner.emails = {str(user["email"])} if user.get("email") else set()
        files = item.get("attachments") if isinstance(item.get("attachments"), list) else []
        learner.attachments = {str(f["id"]) for f in files if isinstance(f, dict) and f.get("id") is not None}
        if item.get("submitted_at"):
            learner.when, learner.time_problem = _time(str(item["submitted_at"]), "submitted_at")
        learners[learner.key] = learner
        assignment = item.get("assignment") if isinstance(item.get("assignment"), dict) else {}
        if item.get("assignment_id") is not None:
            learners.assignment = (str(item["assignment_id"]), str(assignment.get("name") or ""))
    learners.full_pages = (str(path),) if len(items) == CANVAS_PAGE else ()
    return learners


def _time(text, name, zone=None):
    """``(naive UTC, "")`` of a platform's time, or ``(None, why)``."""
    try:
        return parse_time(text if zone is None else f"{text} {zone}", name), ""
    except ValueError as exc:
        return None, str(exc)


def _moodle_time(text, zone):
    import datetime

    if text.strip() in ("", "-"):
        return None, ""
    try:
        local = datetime.datetime.strptime(" ".join(text.split()), MOODLE_TIME)
    except ValueError:
        return None, f"its Last modified (submission), {text!r}, is not a time as Moodle's English worksheet writes one"
    return _time(f"{local:%Y-%m-%d %H:%M:%S}", "Last modified (submission)", zone)


def _csv_record(text, path, zone):
    """Moodle's grading worksheet or Canvas's gradebook export: ``(platform, learners)``."""
    reader = csv.DictReader(io.StringIO(text))
    columns = set(reader.fieldnames or ())
    rows = list(reader)
    learners = {}
    if {"Identifier", "Last modified (submission)"} <= columns:
        if not zone:
            raise DownloadError(f"RECORD {path} is Moodle's grading worksheet, whose times are in your Moodle time "
                                f"zone, which it does not name: give it, ZONE=Europe/Paris")
        if _time("2026-01-01 00:00:00", "ZONE", zone)[1]:
            raise DownloadError(_time("2026-01-01 00:00:00", "ZONE", zone)[1])
        for row in rows:
            found = re.search(r"(\d+)\s*$", row["Identifier"] or "")
            if found:
                learner = PlatformLearner(found[1], shown=row.get("Full name") or "")
                learner.ids = {row[c].strip() for c in ("ID number", "Username") if (row.get(c) or "").strip()}
                learner.emails = {row["Email address"].strip()} if (row.get("Email address") or "").strip() else set()
                learner.when, learner.time_problem = _moodle_time(row["Last modified (submission)"] or "", zone)
                learners[learner.key] = learner
        return MOODLE, learners
    if {"Student", "ID", "SIS User ID", "SIS Login ID"} <= columns:
        for row in rows:
            if (row["ID"] or "").strip().isdigit():  # not the "Points Possible" row
                learners[row["ID"].strip()] = PlatformLearner(row["ID"].strip(), shown=row["Student"] or "", ids={
                    row[c].strip() for c in ("SIS User ID", "SIS Login ID") if (row[c] or "").strip()},
                    sis=(row["SIS User ID"] or "").strip(), login=(row["SIS Login ID"] or "").strip())
        return CANVAS, learners
    raise DownloadError(f"RECORD {path} is neither Moodle's grading worksheet (Identifier, ..., Last modified "
                        f"(submission), in English) nor Canvas's gradebook export (Student, ID, SIS User ID, "
                        f"SIS Login ID)")


def _merge(into, learner):
    had = into.setdefault(learner.key, learner)
    if had is not learner:
        had.ids |= learner.ids
        had.emails |= learner.emails
        had.attachments |= learner.attachments
        had.shown, had.sis, had.login = had.shown or learner.shown, had.sis or learner.sis, had.login or learner.login
        if learner.when is not None or learner.time_problem:
            had.when, had.time_problem = learner.when, learner.time_problem


def read_records(paths, zone=None):
    """``(platform, {key: PlatformLearner})`` from the platform's record files ``paths`` (one platform's, merged:
    Canvas's API pages and its gradebook export); ``DownloadError`` for one that is no platform's, or two
    platforms'."""
    platforms, learners = set(), Learners()
    for path in paths:
        text = _text(path)
        if text.lstrip().startswith(("[", "while(1);")):
            platform, found = CANVAS, _canvas_submissions(text, path)
            learners.assignment = found.assignment or learners.assignment
            learners.full_pages += found.full_pages
        else:
            platform, found = _csv_record(text, path, zone)
        platforms.add(platform)
        for learner in found.values():
            _merge(learners, learner)
    if len(platforms) != 1:
        raise DownloadError("RECORD must be one platform's: Canvas's submissions (its API's JSON) or gradebook "
                            "export, or Moodle's grading worksheet" if platforms else "RECORD names no file")
    return platforms.pop(), learners


def platform_hand_ins(root, lessons):
    """``({(student, lesson): make collect's record of a hand-in from Canvas or Moodle}, {lesson: Canvas's
    assignment (id, name)})`` of ``lessons``, from ``submitted/.collected/`` (what ``make collect FROM=`` wrote)."""
    from .exchange import read_record

    hand_ins, assignments = {}, {}
    for lesson in lessons:
        record = read_record(Path(root) / "submitted", lesson)
        hand_ins.update({(student, lesson): entry for student, entry in record["hand_ins"].items()
                         if isinstance(entry, dict) and entry.get("source") in (CANVAS, MOODLE)})
        assignment = (record.get("download") or {}).get("assignment")
        if isinstance(assignment, list) and len(assignment) == 2 and all(isinstance(a, str) for a in assignment):
            assignments[lesson] = tuple(assignment)
    return hand_ins, assignments
