"""Where the hand-in service keeps each hand-in, durably, before it answers "handed in", and how much.

``hand-ins/<learner's folder>/<lesson>/<time, UTC>/`` holds the notebook as it
came, ``hand_in.json`` (who by the hub's word, the service's time, the
SHA-256 of the notebook and of each answer cell) and, once graded,
``verdict.json``. A hand-in is streamed into a hidden folder (``upload``),
flushed, then renamed into place (``commit``): a crash leaves no hand-in or a
whole one. What is kept (``prune``, ``prune_learner``, ``_room``) is
docs/teaching/hand-in-service.md's; ``.answers.json`` keeps how each answer
cell was marked, never run again. State is read from the files alone, so a
service that restarts finds its queue again (``waiting``).
"""

import datetime
import json
import os
import secrets
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from .. import ids
from ..exchange import utc_now

FOLDER = "hand-ins"
INFO, VERDICT, ANSWERS = "hand_in.json", "verdict.json", ".answers.json"
TIME_FORMAT = "%Y-%m-%dT%H-%M-%S.%fZ"
#: The most bytes a verdict or the answers' file read back may have (a lesson's verdict is a few kilobytes).
MOST_VERDICT_BYTES = 4 * 2**20
#: What a learner's hand-ins may hold: the latest of each lesson and its latest graded, and this many in all.
KEPT, LEARNER_BYTES = 4, 100 * 2**20
#: The disk space no hand-in may take, and the most answers of a lesson remembered (then refused: ``Full``).
FREE_BYTES, MOST_ANSWERS = 2**30, 300


class Full(Exception):
    """A hand-in the learner's share or the disk has no room for: the sentence the learner reads."""


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


def _replace_synced(path, value):
    """``path`` holding ``value``'s JSON, whole: written beside it, then renamed into place."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}")
    temporary.unlink(missing_ok=True)
    _write_synced(temporary, json.dumps(value, sort_keys=True).encode())
    os.replace(temporary, path)


def _read_json(path):
    try:
        with open(path, "rb") as f:
            data = f.read(MOST_VERDICT_BYTES + 1)
        return json.loads(data) if len(data) <= MOST_VERDICT_BYTES else None
    except (OSError, ValueError):
        return None


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


def _names(folder):
    """The hand-ins' folder names in a lesson's ``folder``, the earliest first (their names are their times)."""
    return sorted(e.name for e in _entries(folder) if not e.name.startswith("."))


@dataclass(frozen=True)
class HandIn:
    """One stored hand-in: its folder, and what ``hand_in.json`` says of it."""

    folder: Path
    student: str
    lesson: str
    when: datetime.datetime  # the service's clock, naive UTC
    digest: str
    answers: dict = field(default_factory=dict, compare=False)  # {exercise: its answer cell's SHA-256}

    @property
    def key(self):
        """An id a learner's kernel asks about it by: ``<lesson>/<time>``, unique per learner."""
        return f"{self.lesson}/{self.folder.name}"

    @property
    def notebook(self):
        return self.folder / f"{self.lesson}.ipynb"

    def verdict(self):
        """Its ``verdict.json`` as stored, or None (not graded yet)."""
        return _read_json(self.folder / VERDICT)


class Store:
    """The hand-ins of one course (``root``): written whole before they are acknowledged, read back on restart."""

    def __init__(self, root):
        self.root = Path(root) / FOLDER

    def lesson_folder(self, student, lesson):
        return self.root / ids.folder(student) / lesson

    def upload(self, student, lesson):
        """A new hidden folder for a hand-in on its way, and the notebook's file in it, open to write."""
        folder = _folder(self.lesson_folder(student, lesson)) / f".incoming-{secrets.token_hex(8)}"
        os.mkdir(folder, 0o700)
        return folder, open(os.open(folder / f"{lesson}.ipynb", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb")

    def commit(self, upload, student, lesson, info, when=None):
        """The ``upload`` folder (its notebook written, ``info``: its ``sha256``, ``bytes`` and ``answers``) as a
        stored hand-in, on disk when this returns; the learner's oldest pruned first. ``Full`` where there is no
        room (the upload removed)."""
        try:
            self._room(student, info["bytes"])
        except Full:
            shutil.rmtree(upload, ignore_errors=True)
            raise
        when, parent = when or utc_now(), Path(upload).parent
        name, n = when.strftime(TIME_FORMAT), 1
        while (parent / name).exists():  # two in the same microsecond: never one over another
            n += 1
            name = f"{when.strftime(TIME_FORMAT)}-{n}"
        with open(Path(upload) / f"{lesson}.ipynb", "rb+") as f:
            os.fsync(f.fileno())
        _write_synced(Path(upload) / INFO, json.dumps({**info, "student_id": student, "lesson": lesson,
                                                       "handed_in": when.isoformat()}, sort_keys=True).encode())
        _fsync_folder(upload)
        os.rename(upload, parent / name)
        _fsync_folder(parent)
        self.prune(parent)
        return HandIn(parent / name, student, lesson, when, info["sha256"], info.get("answers") or {})

    def add(self, student, lesson, data, when=None, answers=None):
        """Store one hand-in of ``data`` (the notebook's bytes) at once: ``commit`` of an ``upload``."""
        import hashlib

        folder, f = self.upload(student, lesson)
        with f:
            f.write(data)
        info = {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data), "answers": answers or {}}
        return self.commit(folder, student, lesson, info, when)

    def _room(self, student, size):
        """``Full`` unless the disk and ``student``'s share have ``size`` bytes more (their oldest pruned)."""
        if shutil.disk_usage(self.root).free - size < FREE_BYTES:
            raise Full("The grader's disk is nearly full: nothing was handed in. Tell your teacher.")
        folder = self.root / ids.folder(student)
        held = self.prune_learner(folder, LEARNER_BYTES - size)
        if held + size > LEARNER_BYTES:
            raise Full(f"Your hand-ins hold {held / 2**20:.1f} MB, and this one {size / 2**20:.1f} MB more than your "
                       f"{LEARNER_BYTES // 2**20} MB on the grader: clear the notebook's outputs (Edit > Clear "
                       f"Outputs of All Cells), save, and hand in again.")

    def set_verdict(self, hand_in, verdict):
        """Store a hand-in's verdict (whole: written beside it, then renamed into place); nothing where the hand-in
        was pruned meanwhile."""
        try:
            _replace_synced(hand_in.folder / VERDICT, verdict)
            _fsync_folder(hand_in.folder)
        except FileNotFoundError:
            pass

    def read(self, folder):
        """The ``HandIn`` stored in ``folder``, or None where it is not a whole one."""
        info = _read_json(Path(folder) / INFO)
        try:
            return HandIn(Path(folder), info["student_id"], info["lesson"],
                          datetime.datetime.fromisoformat(info["handed_in"]), info["sha256"],
                          info.get("answers") or {})
        except (ValueError, KeyError, TypeError):
            return None

    def get(self, student, lesson, name):
        """``student``'s hand-in of ``lesson`` called ``name`` (its time), or None."""
        return None if name.startswith(".") else self.read(self.lesson_folder(student, lesson) / name)

    def history(self, student, lesson):
        """Every hand-in kept of ``student``'s ``lesson``, the earliest first."""
        return self.history_in(self.lesson_folder(student, lesson))

    def history_in(self, folder):
        """Every whole hand-in in a lesson's ``folder``, the earliest first."""
        return [h for h in (self.read(Path(folder) / name) for name in _names(folder)) if h is not None]

    def learners_lessons(self):
        """``(learner's folder, lesson folder)`` of every lesson someone handed in."""
        learners = [e for e in _entries(self.root) if e.is_dir(follow_symlinks=False)]
        return [(Path(learner.path), Path(lesson.path)) for learner in learners
                for lesson in os.scandir(learner.path) if lesson.is_dir(follow_symlinks=False)]

    def waiting(self):
        """Every hand-in still to grade after a restart (each lesson's latest without a verdict), in arrival order."""
        found = []
        for _, lesson_folder in self.learners_lessons():
            names = _names(lesson_folder)
            latest = self.read(lesson_folder / names[-1]) if names else None
            if latest is not None and latest.verdict() is None:
                found.append(latest)
        return sorted(found, key=lambda h: h.when)

    # ---------------------------------------------------------------- what is kept

    def prune(self, lesson_folder):
        """Remove what a lesson's folder keeps no longer (the module's rule; unfinished uploads an hour old too);
        returns the bytes freed."""
        names = _names(lesson_folder)
        graded = [n for n in names if (Path(lesson_folder) / n / VERDICT).is_file()]
        kept = set(names[-KEPT:]) | set(graded[-1:])
        stale = [Path(e.path) for e in os.scandir(lesson_folder) if e.name.startswith(".incoming-") and
                 utc_now().timestamp() - e.stat(follow_symlinks=False).st_mtime > 3600]
        return sum(_remove(Path(lesson_folder) / n) for n in names if n not in kept) + sum(map(_remove, stale))

    def prune_learner(self, learner_folder, most):
        """A learner's oldest hand-ins removed until they hold at most ``most`` bytes (never the latest of a
        lesson, nor its latest graded); returns the bytes they hold."""
        held, removable = 0, []
        for lesson in (e.path for e in _entries(learner_folder) if e.is_dir(follow_symlinks=False)):
            names = _names(lesson)
            graded = [n for n in names if (Path(lesson) / n / VERDICT).is_file()]
            for name in names:
                size = folder_bytes(Path(lesson) / name)
                held += size
                if name != names[-1] and name not in graded[-1:]:
                    removable.append((name, Path(lesson) / name, size))
        for _, folder, size in sorted(removable):
            if held <= most:
                break
            held -= size if _remove(folder) else 0
        return held

    # ---------------------------------------------------------------- the answers marked

    def marked_answers(self, student, lesson):
        """``{exercise: {answer's SHA-256: how it was marked}}`` of every answer of ``student``'s ``lesson``."""
        return _read_json(self.lesson_folder(student, lesson) / ANSWERS) or {}

    def remember(self, hand_in, marks):
        """Keep ``marks`` (``{exercise: {answer's SHA-256: how it was marked}}``) of ``hand_in``'s lesson."""
        known = self.marked_answers(hand_in.student, hand_in.lesson)
        for exercise, by_digest in marks.items():
            known.setdefault(exercise, {}).update(by_digest)
        _replace_synced(self.lesson_folder(hand_in.student, hand_in.lesson) / ANSWERS, known)

    def answers_full(self, student, lesson, answers):
        """Whether ``answers`` (``{exercise: SHA-256}``) would make more than ``MOST_ANSWERS`` of one exercise."""
        known = self.marked_answers(student, lesson)
        return any(digest not in known.get(name, {}) and len(known.get(name, {})) >= MOST_ANSWERS
                   for name, digest in answers.items())


def _entries(folder):
    try:
        return list(os.scandir(folder))
    except OSError:
        return []


def folder_bytes(folder):
    return sum(e.stat(follow_symlinks=False).st_size for e in _entries(folder) if e.is_file(follow_symlinks=False))


def _remove(folder):
    """Remove a hand-in's ``folder``; the bytes its files held (0 where it could not be removed)."""
    size = folder_bytes(folder)
    shutil.rmtree(folder, ignore_errors=True)
    return 0 if os.path.lexists(folder) else size


def state(hand_in, latest_name):
    """``"graded"``, ``"replaced"`` (a later hand-in of the lesson, ``latest_name``, came before it was graded) or
    ``"waiting"``."""
    if hand_in.verdict() is not None:
        return "graded"
    return "replaced" if latest_name and latest_name > hand_in.folder.name else "waiting"


def latest_name(store, student, lesson):
    names = _names(store.lesson_folder(student, lesson))
    return names[-1] if names else None


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
