"""``make collect LESSON=...``: nbgrader's collect, through the course's own collector, ``CourseCollect``.

    make collect LESSON=01_attention [STUDENT=ada]     # nbgrader collect 01_attention, with this collector

The course's ``nbgrader_config.py`` names this class in
``c.ExchangeFactory.collect``, so ``nbgrader collect`` and formgrader's
Collect run it too. Of the lesson's hand-ins in the exchange's ``inbound/``
it skips, naming it, a folder whose name does not parse; refuses one owned
by another account than the learner's (``exchange.owner_problem``), one
holding a link, a special file, or more than ``exchange``'s bounds; collects
each learner's latest by the exchange time (the kernel's change time, not
the learner's stamp), never through a link, into
``submitted/<student_id>/<lesson>/`` (an earlier copy moved to ``.replaced/``);
records what it did in ``submitted/.collected/<lesson>.json``; keeps
``inbound/`` sticky; with no exchange at all (a hub with the hand-in service
alone) it says so and collects nothing. docs/teaching/grading.md says why.
"""

import fnmatch
import hashlib
import os
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path

from nbgrader.exchange.default.collect import ExchangeCollect
from traitlets import Bool, List, Unicode

from encoder_lib.grading.exercises import BY_LESSON

from . import exchange
from .files import plain_text, write_new


@dataclass(frozen=True)
class ExchangeHandIn:
    """One hand-in of the exchange that may be collected: its name, folder, what it holds and its stamp."""

    name: exchange.Name
    path: str
    walk: exchange.Walk
    stamp: str = None


def open_beneath(folder, relative):
    """A read-only descriptor of ``folder/relative``, no component of it followed if it is a link (each one
    opened in the one before it), so that a folder swapped for a link after the walk leads nowhere."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(folder, flags | os.O_DIRECTORY)
    try:
        for part in Path(relative).parts[:-1]:
            inner = os.open(part, flags | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = inner
        return os.open(Path(relative).name, flags | os.O_NONBLOCK, dir_fd=fd)
    finally:
        os.close(fd)


def copy_file(folder, relative, target, size):
    """Copy the regular file ``folder/relative`` (never through a link, and only if it is still ``size`` bytes)
    to the new file ``target``; returns ``(its SHA-256, its change time once read)``: a write into the file before
    the read ends moves that time, so the time taken belongs to the content copied. OSError if it is not what the
    walk saw."""
    with os.fdopen(open_beneath(folder, relative), "rb") as f:
        info = os.fstat(f.fileno())
        data = f.read(size + 1) if stat.S_ISREG(info.st_mode) and info.st_size == size else b""
        after = os.fstat(f.fileno())  # after the read: the time of what was read, or later
    if len(data) != size or not stat.S_ISREG(info.st_mode):
        raise OSError(f"{plain_text(relative)[:60]} changed while it was being collected")
    write_new(target, data)
    return hashlib.sha256(data).hexdigest(), exchange.utc_now(after.st_ctime)


def copy_hand_in(hand_in, target, ignore=()):
    """Copy what ``hand_in``'s walk found into the new folder ``target``, leaving out what nbgrader's
    ``CourseDirectory.ignore`` leaves out; ``({relative path: SHA-256} of the files copied, the exchange time of
    what was copied)``: the latest change time of the folders walked and of each file once read."""
    skipped = lambda relative: any(fnmatch.fnmatch(part, pattern) for part in Path(relative).parts
                                   for pattern in ignore)
    os.mkdir(target, 0o700)
    for folder in sorted(hand_in.walk.folders):
        if not skipped(folder):
            os.mkdir(os.path.join(target, folder), 0o700)
    digests, latest = {}, hand_in.walk.changed
    for relative, size in sorted(hand_in.walk.files.items()):
        if not skipped(relative):
            digests[relative], changed = copy_file(hand_in.path, relative, os.path.join(target, relative), size)
            latest = changed if latest is None else max(latest, changed)
    return digests, latest


class CourseCollect(ExchangeCollect):
    """nbgrader's collect, trusting nothing in a hand-in (the module's docstring says what it does)."""

    update = Bool(True, help="Replace a learner's collected hand-in with a newer one (the earlier copy is "
                             "kept in submitted/<student_id>/.replaced/).").tag(config=True)
    account_names = List(Unicode(), default_value=list(exchange.ACCOUNT_NAMES),
                         help="The accounts a learner may have on this machine ({student_id} is their id): where "
                              "one exists, a hand-in named for the learner must be that account's.").tag(config=True)

    def start(self):
        """nbgrader's collect, or nothing where there is no exchange (a hub with the hand-in service alone)."""
        if not os.path.exists(self.root):
            self.log.warning(f"no nbgrader exchange at {self.root}: nothing collected from it")
            return
        return super().start()

    def init_src(self):
        """The inbound folder, as nbgrader's collect checks it, then every hand-in of the lesson in it."""
        if self.coursedir.course_id == "":
            self.fail("No course id specified. Re-run with --course flag.")
        if self.coursedir.assignment_id not in BY_LESSON:
            self.fail(f"LESSON must name a graded lesson of the course ({', '.join(BY_LESSON)}), got "
                      f"{self.coursedir.assignment_id!r}")
        self.inbound_path = os.path.join(self.root, self.coursedir.course_id, "inbound")
        if not os.path.isdir(self.inbound_path):
            self.fail(f"Course not found: {self.inbound_path}")
        self._keep_sticky()
        self.refused, self.skipped, self.found = [], [], {}
        try:
            names = sorted(os.listdir(self.inbound_path))
        except OSError as exc:
            self.fail(f"You cannot read the directory {self.inbound_path}: {exc.strerror}")
        for folder in names:
            self._consider(folder)
        self.duedate = self._due_date() if self.before_duedate else None

    def _keep_sticky(self):
        """inbound/ with its sticky bit, as nbgrader's release does not leave it (0o733): without it, a learner who
        knows a classmate's hand-in's name can rename it, and make it late. Set where this account may."""
        mode = os.stat(self.inbound_path).st_mode
        if mode & stat.S_ISVTX:
            return
        try:
            os.chmod(self.inbound_path, stat.S_IMODE(mode) | stat.S_ISVTX)
            self.log.warning(f"{self.inbound_path} had no sticky bit (any learner could rename another's hand-in): "
                             f"set now")
        except OSError:
            self.log.warning(f"{self.inbound_path} has no sticky bit, so any learner can rename another's hand-in: "
                             f"sudo chmod +t {self.inbound_path}")

    def _consider(self, folder):
        """Take in one inbound folder: skipped, refused, or a ``ExchangeHandIn`` of its learner."""
        name, why = exchange.parse_name(folder, self.coursedir.assignment_id)
        if why:
            self.skipped.append((folder, why))
            return
        if name is None or self.coursedir.student_id not in ("", "*", name.student):
            return  # another lesson's, or another learner's (--student)
        path = os.path.join(self.inbound_path, folder)
        found = exchange.walk(path)
        why = found.problem or exchange.owner_problem(found, name.student, self.account_names)
        if why:
            self.refused.append((folder, why))
            return
        self.found.setdefault(name.student, []).append(ExchangeHandIn(name, path, found, exchange.read_stamp(path)))

    def _due_date(self):
        from nbgrader.api import Gradebook, MissingEntry

        with Gradebook(self.coursedir.db_url, self.coursedir.course_id) as gradebook:
            try:
                return gradebook.find_assignment(self.coursedir.assignment_id).duedate
            except MissingEntry:
                return None

    def chosen(self, hand_ins):
        """The hand-in collected of one learner's: the latest by the exchange time (with ``--before-duedate``,
        the latest before the due date, if there is one)."""
        latest = sorted(hand_ins, key=lambda h: (h.walk.changed, h.name.folder))
        if self.duedate is not None:
            due = self.duedate.replace(tzinfo=None)
            before = [h for h in latest if h.walk.changed <= due]
            latest = before or latest
        return latest[-1]

    def copy_files(self):
        submitted = Path(self.coursedir.root) / self.coursedir.submitted_directory
        try:
            record = exchange.read_record(submitted, self.coursedir.assignment_id)
        except exchange.RecordUnreadable as exc:
            self.fail(f"{exc}: move it away to collect anew (nothing was collected)")
        collected = 0
        for student, hand_ins in sorted(self.found.items()):
            collected += self._collect(student, self.chosen(hand_ins), record)
        record["refused"], record["skipped"] = [list(r) for r in self.refused], [list(s) for s in self.skipped]
        exchange.write_record(submitted, self.coursedir.assignment_id, record)
        self._listing(collected)

    def _collect(self, student, hand_in, record):
        """Collect one learner's ``hand_in`` into submitted/ and ``record`` it; 1 if copied, else 0."""
        lesson = self.coursedir.assignment_id
        target = Path(self.coursedir.format_path(self.coursedir.submitted_directory, student, lesson))
        staging = target.parent / f".collecting-{lesson}-{os.getpid()}"
        try:
            learner_folder(target.parent)
            digests, when = copy_hand_in(hand_in, staging, self.coursedir.ignore)
        except OSError as exc:
            shutil.rmtree(staging, ignore_errors=True)
            self.refused.append((hand_in.name.folder, f"it could not be copied ({exc.strerror or exc})"))
            return 0
        earlier = record["hand_ins"].get(student) or {}
        there = os.path.lexists(target)
        if there and (earlier.get("files") == digests or not self.update):
            shutil.rmtree(staging)
            self.log.info(f"No newer submission to collect: {plain_text(student)} {lesson}" if self.update else
                          f"Submission already exists, use --update to update: {plain_text(student)} {lesson}")
            return 0
        install(staging, target)
        record["hand_ins"][student] = _entry(hand_in, digests, earlier, when)
        self.log.info(f"Collected submission: {plain_text(student)} {lesson} (from {plain_text(hand_in.name.folder)})")
        return 1

    def _listing(self, collected):
        """What this collection did, ending with everything it refused and skipped, one line each."""
        self.log.info(f"collected {collected} hand-in{'s' * (collected != 1)} of {self.coursedir.assignment_id}")
        for kind, found in (("refused", self.refused), ("skipped", self.skipped)):
            for line in refusals(self.coursedir.assignment_id, kind, found, "folder", "of the exchange's inbound/"):
                self.log.warning(line)


def refusals(lesson, kind, found, thing, where):
    """The lines that list what a collection ``kind`` (refused, skipped): ``found``, ``[(thing's name, why)]``, the
    first ``exchange.MOST_RECORDED`` one a line, the rest counted (its record keeps as many)."""
    lines = [f"{kind} {len(found)} {thing}{'s' * (len(found) != 1)} {where} (make grade's summary lists them "
             f"too):"] if found else []
    lines += [plain_text(f"  {kind} {name!r}: {why}") for name, why in found[:exchange.MOST_RECORDED]]
    if len(found) > exchange.MOST_RECORDED:
        lines.append(f"  and {len(found) - exchange.MOST_RECORDED} more {kind}, counted in "
                     f"submitted/.collected/{lesson}.json")
    return lines


def learner_folder(folder):
    """``submitted/<student_id>/``, made if it is not there; OSError where it is anything but a folder."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.mkdir(folder, 0o700)
    except FileExistsError:
        if not stat.S_ISDIR(os.lstat(folder).st_mode):
            raise OSError(f"{plain_text(str(folder))} is not a folder (a link?): not followed") from None
    return folder


def install(staging, target):
    """Put the copy ``staging`` at ``target``; an earlier copy there is moved to ``.replaced/`` first, never lost."""
    if os.path.lexists(target):
        kept = target.parent / ".replaced" / f"{target.name}+{exchange.utc_now():%Y-%m-%dT%H-%M-%S.%fZ}"
        kept.parent.mkdir(mode=0o700, exist_ok=True)
        os.rename(target, kept)
    os.rename(staging, target)


def install_files(submitted, student, lesson, files):
    """``files`` (``{name: bytes}``) as the hand-in ``submitted/<student>/<lesson>/``, as every collector puts one
    there: written into a staging folder beside it, then put in place by ``install``."""
    target = learner_folder(Path(submitted) / student) / lesson
    staging = target.parent / f".collecting-{lesson}-{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    os.mkdir(staging, 0o700)
    for name, data in files.items():
        write_new(staging / name, data)
    install(staging, target)


def _entry(hand_in, digests, earlier, when):
    """The record of one learner's collected hand-in: the exchange time of what was copied (``when``; the earliest
    seen for the same files: a later change of the exchange's modes by an administrator moves no one's time), the
    stamp as it was."""
    seen = exchange.read_time(str(earlier.get("exchange_time")))
    if earlier.get("files") == digests and seen is not None:
        when = min(when, seen)
    return {"folder_digest": hashlib.sha256(hand_in.name.folder.encode("utf-8", "surrogateescape")).hexdigest(),
            "exchange_time": exchange.utc_text(when), "stamp": hand_in.stamp, "files": digests,
            "collected_at": exchange.utc_text(exchange.utc_now())}
