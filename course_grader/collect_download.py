"""``make collect LESSON=<lesson> FROM=<zip> RECORD=<record>[,<record>...] [ZONE=<time zone>]``: a learning
platform's download of one assignment's submissions, collected into ``submitted/<student_id>/<lesson>/``.

    .venv/bin/python -m course_grader.collect_download 01_attention submissions.zip --record submissions.json

Each notebook of the download (``downloads``: the platforms' layouts, read without trusting them) is matched to its
learner through the record alone (``match``: the record's ids must name one roster learner), copied beside a
``timestamp.txt`` of the platform's own time (an earlier hand-in moved to ``.replaced/``, never lost) and recorded
in ``submitted/.collected/<lesson>.json`` with what the platform called it, which ``make grade`` times it by and
``make release-feedback`` names its page after; everything refused is listed with why.
docs/teaching/learning-platform.md says it for teachers.
"""

import argparse
import hashlib
import os
import sys
import unicodedata
from collections import defaultdict
from pathlib import Path

from encoder_lib.grading.exercises import BY_LESSON

from . import collected, downloads, exchange, gradebook
from .collect import install_files, refusals
from .files import plain_text
from .ids import id_problem


def sort_files(archive, infos, platform, learners):
    """The download's notebooks by their learner's key in the record (``{key: [(File, ZipInfo)]}``), and the
    entries refused (``[(entry, why)]``)."""
    by_key, refused = defaultdict(list), []
    for info in infos:
        name = downloads.entry_name(info)
        why = downloads.entry_problem(info, name)
        file, why = (None, why) if why else downloads.parse_file(platform, name, learners)
        if file is not None and not file.name.lower().endswith(".ipynb"):
            why = "it is not a notebook (.ipynb)"
        if why:
            refused.append((name, why))
        else:
            by_key[file.key].append((file, info))
    return by_key, refused


def roster_ids(learner, roster):
    """The roster ids the record's ``learner`` names: its ids that are a roster id (in either Unicode form), its
    e-mails that are a roster learner's (case aside)."""
    by_id = {unicodedata.normalize("NFC", s): s for s in roster}
    found = {by_id[n] for n in (unicodedata.normalize("NFC", i.strip()) for i in learner.ids) if n in by_id}
    mails = {e.strip().casefold() for e in learner.emails}
    return found | {s for s, known in roster.items() if known.email and known.email.strip().casefold() in mails}


def _said(learner, platform):
    """What the record says of ``learner``, for a refusal."""
    ids = ", ".join(sorted(learner.ids | learner.emails)) or ("no SIS id, login, ID number or e-mail (Canvas's API "
                                                             "gives them with include[]=user)")
    key = "user id" if platform == downloads.CANVAS else "participant"
    return f"{platform}'s {key} {learner.key}{f' ({learner.shown})' if learner.shown else ''}: {ids}"


def _whose(files, learner, roster, platform, full_pages=()):
    """The roster id ``files`` (one learner's notebooks) are collected under; ``(id, None)`` or ``(None, why)``."""
    if learner is None:
        return None, f"RECORD has no learner with its {platform} id {files[0][0].key}: not collected, never guessed" + (
            f" (RECORD {', '.join(full_pages)} holds exactly {downloads.CANVAS_PAGE} submissions, one full page of "
            f"Canvas's API: give the next pages too, &page=2 and on)" if full_pages else "")
    ids = roster_ids(learner, roster)
    if not ids:
        return None, f"no roster learner is {_said(learner, platform)}"
    if len(ids) > 1:
        return None, f"{_said(learner, platform)} names {len(ids)} roster learners ({', '.join(sorted(ids))})"
    if len(files) > 1:
        return None, (f"{next(iter(ids))} handed in {len(files)} notebooks for one lesson "
                      f"({', '.join(f.name for f, _ in files)}): none collected, never chosen")
    return next(iter(ids)), None


def match(by_key, learners, roster, platform):
    """``({student_id: (File, ZipInfo, PlatformLearner)}, refused)``: each learner's one notebook under their roster
    id."""
    chosen, refused = defaultdict(list), []
    for key, files in sorted(by_key.items()):
        student, why = _whose(files, learners.get(key), roster, platform, getattr(learners, "full_pages", ()))
        if why:
            refused += [(f.entry, why) for f, _ in files]
        else:
            chosen[student].append((*files[0], learners[key]))
    for student, found in list(chosen.items()):
        if len(found) > 1 or id_problem(student):
            why = id_problem(student) or (f"{len(found)} of {platform}'s learners are the roster's {student} "
                                          f"({', '.join(f[2].key for f in found)}): none collected")
            refused += [(f[0].entry, why) for f in found]
            del chosen[student]
    return {s: f[0] for s, f in chosen.items()}, refused


def collect_one(root, lesson, student, data, learner, *, record, platform, file):
    """Collect one learner's notebook (``data``) and record it; True if it was copied, False if already there."""
    stamp = exchange.utc_text(learner.when) if learner.when is not None else None
    files = {f"{lesson}.ipynb": hashlib.sha256(data).hexdigest()}
    earlier = record["hand_ins"].get(student) or {}
    there = os.path.lexists(Path(root) / "submitted" / student / lesson)
    if there and (earlier.get("source"), earlier.get("files"), earlier.get("exchange_time"), earlier.get("entry")) \
            == (platform, files, stamp, file.entry):
        return False
    install_files(Path(root) / "submitted", student, lesson,
                  {f"{lesson}.ipynb": data, **({exchange.STAMP: stamp.encode()} if stamp else {})})
    record["hand_ins"][student] = {"source": platform, "exchange_time": stamp, "stamp": stamp, "files": files,
                                   "platform_id": learner.key, "collected_at": exchange.utc_text(exchange.utc_now()),
                                   "entry": file.entry, "file_id": file.file_id, "sis": learner.sis,
                                   "login": learner.login}
    return True


def _untimed(file, learner, student, platform):
    """A line for a notebook collected without a time (None if it has one)."""
    if learner.when is not None:
        return None
    why = learner.time_problem or f"RECORD gives no time ({platform}'s record of it is empty)"
    late = f"; {platform} named it LATE" if file.late else ""
    return plain_text(f"  not timed: {student}'s {file.name} ({why}{late}): never late until a timestamp.txt is put "
                      f"beside it")


def collect_all(root, lesson, archive, chosen, record, platform):
    """Read and collect each chosen notebook; ``(copied, refused, untimed lines)``."""
    copied, refused, untimed, budget = 0, [], [], downloads.MAX_READ_BYTES
    for student, (file, info, learner) in sorted(chosen.items()):
        data, why = downloads.read_entry(archive, info, budget)
        if why:
            refused.append((file.entry, why))
            continue
        budget -= len(data)
        try:
            copied += collect_one(root, lesson, student, data, learner, record=record, platform=platform, file=file)
        except OSError as exc:
            refused.append((file.entry, f"it could not be copied ({exc.strerror or exc})"))
            continue
        untimed.append(_untimed(file, learner, student, platform))
    return copied, refused, [line for line in untimed if line]


def take(root, lesson, download, records, zone=None):
    """Collect ``lesson`` from the platform's ``download`` with its ``records`` (paths) into ``root``'s
    ``submitted/``; the lines to print. ``downloads.DownloadError`` where the download or a record cannot be read."""
    platform, learners = downloads.read_records(records, zone)
    archive, infos = downloads.open_download(download)
    with archive:
        by_key, refused = sort_files(archive, infos, platform, learners)
        chosen, unmatched = match(by_key, learners, gradebook.students(root), platform)
        submitted = Path(root) / "submitted"
        record = exchange.read_record(submitted, lesson)
        copied, unread, untimed = collect_all(root, lesson, archive, chosen, record, platform)
    refused += unmatched + unread
    record["download"] = {"from": f"{Path(download).name} ({platform})", "refused_count": len(refused),
                          "refused": [list(r) for r in refused[:exchange.MOST_RECORDED]],
                          "assignment": list(learners.assignment) if getattr(learners, "assignment", None) else None}
    exchange.write_record(submitted, lesson, record)
    pages = [f"RECORD {path} holds exactly {downloads.CANVAS_PAGE} submissions, one full page of Canvas's API: it "
             f"may be one page of several (add &page=2 to its address, and so on, and give every page)"
             for path in getattr(learners, "full_pages", ())]
    return [f"collected {copied} hand-in{'s' * (copied != 1)} of {lesson} from {Path(download).name} ({platform})",
            *refusals(lesson, "refused", refused, "file", "of the download"), *pages, *untimed]


def main(argv=None):
    parser = argparse.ArgumentParser(prog="make collect FROM=...", description=__doc__.split("\n\n")[0])
    parser.add_argument("lesson")
    parser.add_argument("download", help="the platform's zip of the lesson's submissions")
    parser.add_argument("--record", default="", help="the platform's record beside it (commas for several)")
    parser.add_argument("--zone", default="", help="Moodle's time zone (yours in Moodle), e.g. Europe/Paris")
    parser.add_argument("--root", type=Path, default=Path.cwd())
    args = parser.parse_args(argv)
    if args.lesson not in BY_LESSON:
        return _fail(f"LESSON must be one lesson of the course ({', '.join(BY_LESSON)}): a download is one "
                     f"assignment's; got {args.lesson!r}")
    if not args.record:
        return _fail("RECORD= must name the platform's record beside the download (Canvas: its submissions API's "
                     "JSON or its gradebook export; Moodle: the grading worksheet): docs/teaching/grading.md")
    os.umask(0o077)
    try:
        lines = take(args.root, args.lesson, args.download, [r for r in args.record.split(",") if r], args.zone)
    except (downloads.DownloadError, exchange.RecordUnreadable) as exc:
        return _fail(f"{exc}: nothing was collected")
    print("\n".join(lines + collected.summary(args.root, args.lesson)))
    return 0


def _fail(message):
    print(f"make collect: {message}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
