"""Where the hand-in service keeps each hand-in, durably, before it answers "handed in".

``hand-ins/<learner's folder>/<lesson>/<time, UTC>/`` holds the notebook as it
came (``<lesson>.ipynb``), ``hand_in.json`` (who by the hub's word, the
lesson, the service's own time, the notebook's SHA-256 and size) and, once
graded, ``verdict.json``. A hand-in is written into a hidden folder beside
it, each file flushed to disk, then renamed into place and the folder's
entry flushed too: a crash at any moment leaves either no hand-in or a whole
one, and one acknowledged is on disk. Nothing is ever overwritten: each
hand-in is a new folder, the earlier ones are its history.

State is read from the files alone (``state``): a hand-in with a verdict is
graded; one without, that a later hand-in of the same lesson replaced before
its grading began, is "replaced"; else it waits. So a service that restarts
finds its queue again (``waiting``).
"""

import datetime
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

from .. import ids

FOLDER = "hand-ins"
INFO, VERDICT = "hand_in.json", "verdict.json"
TIME_FORMAT = "%Y-%m-%dT%H-%M-%S.%fZ"
#: The most bytes a verdict file read back may have (a lesson's verdict is a few kilobytes).
MOST_VERDICT_BYTES = 4 * 2**20


def utc_now():
    return datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)


def _fsync_folder(path):
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_synced(path, data):
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())


def _folder(path):
    """``path`` made (mode 700) where missing, each parent too; its parent's entry flushed."""
    path = Path(path)
    if not path.is_dir():
        _folder(path.parent)
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            pass
        _fsync_folder(path.parent)
    return path


@dataclass(frozen=True)
class HandIn:
    """One stored hand-in: its folder, and what ``hand_in.json`` says of it."""

    folder: Path
    student: str
    lesson: str
    when: datetime.datetime  # the service's clock, naive UTC
    digest: str

    @property
    def key(self):
        """An id a learner's kernel asks about it by: ``<lesson>/<time>``, unique per learner."""
        return f"{self.lesson}/{self.folder.name}"

    @property
    def notebook(self):
        return self.folder / f"{self.lesson}.ipynb"

    def verdict(self):
        """Its ``verdict.json`` as stored, or None (not graded yet)."""
        try:
            with open(self.folder / VERDICT, "rb") as f:
                data = f.read(MOST_VERDICT_BYTES + 1)
            return json.loads(data) if len(data) <= MOST_VERDICT_BYTES else None
        except (OSError, ValueError):
            return None


class Store:
    """The hand-ins of one course (``root``): written whole before they are acknowledged, read back on restart."""

    def __init__(self, root):
        self.root = Path(root) / FOLDER

    def lesson_folder(self, student, lesson):
        return self.root / ids.folder(student) / lesson

    def add(self, student, lesson, data, when=None):
        """Store one hand-in (``data``: the notebook's bytes) and return its ``HandIn``, on disk when this returns."""
        when = when or utc_now()
        parent = _folder(self.lesson_folder(student, lesson))
        name, n = when.strftime(TIME_FORMAT), 1
        while (parent / name).exists():  # two in the same microsecond: never one over another
            n += 1
            name = f"{when.strftime(TIME_FORMAT)}-{n}"
        staging = parent / f".incoming-{name}"
        os.mkdir(staging, 0o700)
        digest = hashlib.sha256(data).hexdigest()
        info = {"student_id": student, "lesson": lesson, "handed_in": when.isoformat(), "sha256": digest,
                "bytes": len(data)}
        _write_synced(staging / f"{lesson}.ipynb", data)
        _write_synced(staging / INFO, json.dumps(info, sort_keys=True).encode())
        _fsync_folder(staging)
        os.rename(staging, parent / name)
        _fsync_folder(parent)
        return HandIn(parent / name, student, lesson, when, digest)

    def set_verdict(self, hand_in, verdict):
        """Store a hand-in's verdict (whole: written beside it, then renamed into place)."""
        temporary = hand_in.folder / f".{VERDICT}.{os.getpid()}"
        temporary.unlink(missing_ok=True)
        _write_synced(temporary, json.dumps(verdict, sort_keys=True).encode())
        os.replace(temporary, hand_in.folder / VERDICT)
        _fsync_folder(hand_in.folder)

    def read(self, folder):
        """The ``HandIn`` stored in ``folder``, or None where it is not a whole one."""
        try:
            info = json.loads((Path(folder) / INFO).read_text())
            return HandIn(Path(folder), info["student_id"], info["lesson"],
                          datetime.datetime.fromisoformat(info["handed_in"]), info["sha256"])
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def history(self, student, lesson):
        """Every hand-in of ``student``'s ``lesson``, the earliest first."""
        return self.history_in(self.lesson_folder(student, lesson))

    def history_in(self, folder):
        """Every whole hand-in in a lesson's ``folder``, the earliest first."""
        try:
            names = sorted(entry.name for entry in os.scandir(folder) if not entry.name.startswith("."))
        except OSError:
            return []
        found = (self.read(folder / name) for name in names)
        return sorted((h for h in found if h is not None), key=lambda h: (h.when, h.folder.name))

    def learners_lessons(self):
        """``(learner's folder, lesson folder)`` of every lesson someone handed in."""
        try:
            learners = [e for e in os.scandir(self.root) if e.is_dir(follow_symlinks=False)]
        except OSError:
            return []
        return [(Path(learner.path), Path(lesson.path)) for learner in learners
                for lesson in os.scandir(learner.path) if lesson.is_dir(follow_symlinks=False)]

    def waiting(self):
        """Every hand-in still to grade after a restart (each lesson's latest without a verdict), in arrival order."""
        found = []
        for _, lesson_folder in self.learners_lessons():
            names = sorted(e.name for e in os.scandir(lesson_folder) if not e.name.startswith("."))
            latest = self.read(lesson_folder / names[-1]) if names else None
            if latest is not None and latest.verdict() is None:
                found.append(latest)
        return sorted(found, key=lambda h: h.when)


def state(hand_in, history):
    """``"graded"``, ``"replaced"`` (a later hand-in of the lesson came before it was graded) or ``"waiting"``."""
    if hand_in.verdict() is not None:
        return "graded"
    later = [h for h in history if (h.when, h.folder.name) > (hand_in.when, hand_in.folder.name)]
    return "replaced" if later else "waiting"


def reused(root, student, lesson, digest, version):
    """The results the service stored for this exact notebook (``digest``) by this exact grader (``version``), for
    `make grade` to take instead of grading it again (``plan``), or None."""
    import dataclasses

    from ..outputs import Result

    for hand_in in reversed(Store(root).history(student, lesson)):
        verdict = hand_in.verdict() if hand_in.digest == digest else None
        if not verdict or verdict.get("failure") or verdict.get("grader") != version or \
                verdict.get("submission_sha256") != digest:
            continue
        try:
            return [dataclasses.replace(Result(**row), student_id=student) for row in verdict["results"]]
        except (TypeError, KeyError):
            return None
    return None
