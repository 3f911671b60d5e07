"""`make collect`: the course's collector (course_grader/collect.py), on an exchange made here.

Each test makes the exchange's ``inbound/`` as learners (and an attacker)
would and collects it with ``CourseCollect``, the class the course's
``nbgrader_config.py`` names in ``c.ExchangeFactory.collect``: a name that
does not parse is skipped and named, a hand-in holding a link, a special file
or too much is refused and named, never followed, and stops no one else's
collection; each learner's latest hand-in by the exchange's own time is
collected, a newer one replacing it (the earlier kept); and the hand-in's
time (``exchange.hand_in_time``) is one the learner cannot set. The whole
pipeline with these attackers (`make collect`, `make grade`) is
tests/grader/test_hand_in_attacks.py.
"""

import datetime
import json
import os
import time
from pathlib import Path

import pytest
from traitlets.config import Config

from course_grader import exchange
from course_grader.collect import CourseCollect

ROOT = Path(__file__).resolve().parents[2]
LESSON = "01_attention"
COURSE_ID = "encoder-course"
NOTEBOOK = json.dumps({"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


def utc_now():
    return datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)


def submit(inbound, student, stamp=None, name_time=None, notebook=NOTEBOOK, stamp_text=None):
    """A hand-in as ``nbgrader submit`` makes it: the folder, the notebook, then timestamp.txt (``stamp``, a naive
    UTC time, default now; ``stamp_text`` written as it is instead; ``False``: none); the name's time
    ``name_time`` (default: the stamp's)."""
    stamp = stamp or utc_now()
    folder = inbound / f"{student}+{LESSON}+{exchange.utc_text(name_time or stamp)}+r4nd0m"
    folder.mkdir()
    (folder / f"{LESSON}.ipynb").write_text(notebook)
    if stamp_text is not False:
        (folder / "timestamp.txt").write_text(stamp_text if stamp_text is not None else exchange.utc_text(stamp))
    return folder


@pytest.fixture
def course(tmp_path):
    """A course folder and an exchange with an empty inbound/; ``collect(**settings)`` collects the lesson."""
    root, inbound = tmp_path / "course", tmp_path / "exchange" / COURSE_ID / "inbound"
    root.mkdir()
    inbound.mkdir(parents=True)

    def collect(**settings):
        config = Config({"CourseDirectory": {"root": str(root), "course_id": COURSE_ID, "assignment_id": LESSON,
                                             "ignore": [".ipynb_checkpoints", "*.pyc", "__pycache__", ".*"]},
                         "CourseCollect": settings})
        from nbgrader.coursedir import CourseDirectory

        collector = CourseCollect(coursedir=CourseDirectory(config=config), config=config,
                                  root=str(tmp_path / "exchange"))
        collector.start()
        return collector

    return root, inbound, collect


def folder_digest(name):
    import hashlib

    return hashlib.sha256(name.encode()).hexdigest()


def collected(root, student):
    return root / "submitted" / student / LESSON


def test_a_name_that_does_not_parse_is_skipped_and_named_and_the_others_are_collected(course):
    root, inbound, collect = course
    submit(inbound, "ada")
    for name in ("garbage", f"eve+{LESSON}", f"eve+{LESSON}+not a time+x", f"..+{LESSON}+2026-12-01 10:00:00 UTC+x"):
        (inbound / name).mkdir()
    submit(inbound, "bob")
    made = collect()
    assert (collected(root, "ada") / f"{LESSON}.ipynb").is_file() and (collected(root, "bob") / "timestamp.txt").is_file()
    skipped = dict(made.skipped)
    assert set(skipped) == {"garbage", f"eve+{LESSON}", f"eve+{LESSON}+not a time+x",
                            f"..+{LESSON}+2026-12-01 10:00:00 UTC+x"}
    assert "no time" in skipped[f"eve+{LESSON}+not a time+x"] and "hidden" in skipped[f"..+{LESSON}+2026-12-01 10:00:00 UTC+x"]
    assert not (root / LESSON).exists(), "an id of .. never becomes a path"
    record = exchange.read_record(root / "submitted", LESSON)
    assert sorted(record["hand_ins"]) == ["ada", "bob"] and len(record["skipped"]) == 4
    assert any("skipped inbound/'garbage'" in line for line in exchange.collect_notices(root / "submitted", [LESSON]))


def test_a_hand_in_holding_a_link_or_a_special_file_is_refused_and_never_followed(course, tmp_path):
    root, inbound, collect = course
    secret = tmp_path / "secret"
    secret.write_text("the grading secret")
    linked = submit(inbound, "mallory")
    (linked / f"{LESSON}.ipynb").unlink()
    (linked / f"{LESSON}.ipynb").symlink_to(secret)
    deep = submit(inbound, "trudy")
    (deep / "data").mkdir()
    (deep / "data" / "more").symlink_to(tmp_path)
    fifo = submit(inbound, "oscar")
    os.mkfifo(fifo / "pipe")
    (inbound / f"carol+{LESSON}+2026-12-01 10:00:00 UTC+x").symlink_to(tmp_path / "exchange")
    submit(inbound, "ada")
    made = collect()
    refused = dict(made.refused)
    assert "symbolic link (01_attention.ipynb)" in refused[linked.name]
    assert "symbolic link (data/more)" in refused[deep.name] and "special file (pipe)" in refused[fifo.name]
    assert "not a folder" in refused[f"carol+{LESSON}+2026-12-01 10:00:00 UTC+x"]
    assert sorted(p.name for p in (root / "submitted").iterdir() if not p.name.startswith(".")) == ["ada"]
    assert not any("grading secret" in p.read_text() for p in (root / "submitted").rglob("*") if p.is_file())


def test_a_hand_in_over_the_bounds_is_refused_without_reading_it(course):
    root, inbound, collect = course
    many = submit(inbound, "flood")
    for i in range(exchange.MAX_HAND_IN_FILES + 5):
        (many / f"f{i}").write_text("")
    big = submit(inbound, "huge")
    with open(big / "data.bin", "wb") as f:
        f.truncate(exchange.MAX_HAND_IN_BYTES + 1)  # sparse: no disk, but its size says
    submit(inbound, "ada")
    made = collect()
    refused = dict(made.refused)
    assert f"more than {exchange.MAX_HAND_IN_FILES} files" in refused[many.name]
    assert f"more than {exchange.MAX_HAND_IN_BYTES // 2**20} MB" in refused[big.name]
    assert collected(root, "ada").is_dir() and not collected(root, "flood").exists()


@pytest.mark.skipif(os.geteuid() != 0, reason="making folders owned by other accounts needs root")
def test_a_hand_in_owned_by_another_account_than_the_learner_s_is_refused(course):
    import pwd

    root, inbound, collect = course
    victim, forger = pwd.getpwnam("daemon"), pwd.getpwnam("bin")
    own = submit(inbound, "daemon")
    forged = submit(inbound, "daemon", stamp=utc_now() + datetime.timedelta(hours=19), notebook="{}")
    planted = submit(inbound, "daemon")
    for folder, account in ((own, victim), (forged, forger), (planted, victim)):
        for path in (folder, *folder.iterdir()):
            os.lchown(path, account.pw_uid, account.pw_gid)
    os.lchown(planted / "timestamp.txt", forger.pw_uid, forger.pw_gid)  # a file slipped into the victim's folder
    made = collect(account_names=["{student_id}"])
    refused = dict(made.refused)
    assert "owned by bin, not by daemon's account" in refused[forged.name]
    assert "owned by bin" in refused[planted.name]
    record = exchange.read_record(root / "submitted", LESSON)["hand_ins"]
    assert record["daemon"]["folder_digest"] == folder_digest(own.name)
    assert (collected(root, "daemon") / f"{LESSON}.ipynb").read_text() == NOTEBOOK


def test_the_latest_hand_in_by_the_exchange_s_time_is_collected_whatever_its_name_says(course):
    root, inbound, collect = course
    first = submit(inbound, "ada", name_time=utc_now() + datetime.timedelta(days=3), notebook='{"first": 1}')
    time.sleep(0.05)
    second = submit(inbound, "ada", name_time=utc_now() - datetime.timedelta(days=3), notebook='{"second": 2}')
    collect()
    assert (collected(root, "ada") / f"{LESSON}.ipynb").read_text() == '{"second": 2}'
    assert exchange.read_record(root / "submitted", LESSON)["hand_ins"]["ada"]["folder_digest"] == \
        folder_digest(second.name) != folder_digest(first.name)


def test_a_newer_hand_in_replaces_the_earlier_which_is_kept_and_collecting_again_changes_nothing(course):
    root, inbound, collect = course
    submit(inbound, "ada", notebook='{"v": 1}')
    collect()
    time.sleep(0.05)
    submit(inbound, "ada", notebook='{"v": 2}')
    collect()
    assert (collected(root, "ada") / f"{LESSON}.ipynb").read_text() == '{"v": 2}'
    [kept] = (root / "submitted" / "ada" / ".replaced").iterdir()
    assert (kept / f"{LESSON}.ipynb").read_text() == '{"v": 1}', "the earlier copy is never lost"
    record = (root / "submitted" / exchange.RECORDS / f"{LESSON}.json").read_text()
    collect()
    assert (root / "submitted" / exchange.RECORDS / f"{LESSON}.json").read_text().split('"collected_at"')[0] == \
        record.split('"collected_at"')[0]
    assert len(list((root / "submitted" / "ada" / ".replaced").iterdir())) == 1


# ---------------------------------------------------------------- the time that counts


def hand_in_time(root, student="ada"):
    record = exchange.read_record(root / "submitted", LESSON)["hand_ins"].get(student)
    return exchange.hand_in_time(collected(root, student) / f"{LESSON}.ipynb", record)


def test_a_stamp_earlier_than_the_exchange_s_time_gives_way_to_it_unless_the_course_grants_a_grace(course):
    """No grace by default (every learner could otherwise hand in that much late unpenalised): the exchange's
    time counts, flagged; inside a grace the course sets, the stamp counts, flagged too."""
    root, inbound, collect = course
    stamp = utc_now() - datetime.timedelta(seconds=30)
    submit(inbound, "ada", stamp=stamp)
    collect()
    when = hand_in_time(root)
    assert when.when > stamp and "the later counts" in when.flag and "the exchange's change time" in when.by
    record = exchange.read_record(root / "submitted", LESSON)["hand_ins"]["ada"]
    notebook = collected(root, "ada") / f"{LESSON}.ipynb"
    graced = exchange.hand_in_time(notebook, record, grace=datetime.timedelta(seconds=60))
    assert graced.when == stamp and "inside the course's grace of 60 s" in graced.flag


def test_the_course_s_grace_is_a_number_of_seconds_or_make_grade_refuses_it(tmp_path):
    from course_grader import course_config

    (tmp_path / "nbgrader_config.py").write_text("c = get_config()\nc.EncoderCourse.stamp_grace_seconds = 90\n")
    assert course_config.stamp_grace(tmp_path) == datetime.timedelta(seconds=90)
    for bad in ("'a minute'", "-5", "86400", "True"):
        (tmp_path / "nbgrader_config.py").write_text(f"c = get_config()\nc.EncoderCourse.stamp_grace_seconds = {bad}\n")
        with pytest.raises(ValueError, match="stamp_grace_seconds in nbgrader_config.py must be a number of seconds"):
            course_config.stamp_grace(tmp_path)
    (tmp_path / "nbgrader_config.py").write_text("c = get_config()\n")
    assert course_config.stamp_grace(tmp_path) == datetime.timedelta(0)


@pytest.mark.parametrize("stamp_text, words", [
    (False, "has no timestamp.txt"),
    ("handed in on time, promise", "is not a time"),
    (exchange.utc_text(utc_now() - datetime.timedelta(days=2)), "before the exchange's change time"),
], ids=["missing", "garbled", "set-back"])  # ids of their own: a time in an id would differ between collections
def test_a_stamp_missing_garbled_or_set_back_gives_way_to_the_exchange_s_time_and_is_flagged(course, stamp_text,
                                                                                               words):
    root, inbound, collect = course
    before = utc_now() - datetime.timedelta(seconds=1)
    submit(inbound, "ada", stamp_text=stamp_text)
    collect()
    when = hand_in_time(root)
    assert when.when >= before and words in when.flag and "the exchange's change time" in when.by, when


def test_a_stamp_later_than_the_exchange_s_time_is_the_later_and_counts(course):
    root, inbound, collect = course
    later = utc_now() + datetime.timedelta(hours=2)
    submit(inbound, "ada", stamp=later)
    collect()
    assert hand_in_time(root).when == later


def test_a_notebook_the_teacher_copied_over_a_collected_one_is_a_copy_by_hand(course):
    root, inbound, collect = course
    submit(inbound, "ada", stamp_text=False)
    collect()
    (collected(root, "ada") / f"{LESSON}.ipynb").write_text('{"corrected": true}')
    when = hand_in_time(root)
    assert when.when is None and "copied in by hand" in when.by


def test_a_lesson_the_course_does_not_grade_is_refused_and_named(tmp_path):
    from nbgrader.coursedir import CourseDirectory
    from nbgrader.exchange import ExchangeError

    (tmp_path / "exchange" / COURSE_ID / "inbound").mkdir(parents=True)
    config = Config({"CourseDirectory": {"root": str(tmp_path), "course_id": COURSE_ID, "assignment_id": "09_nope"}})
    collector = CourseCollect(coursedir=CourseDirectory(config=config), config=config, root=str(tmp_path / "exchange"))
    with pytest.raises(ExchangeError, match="LESSON must name a graded lesson of the course .*got '09_nope'"):
        collector.start()


def test_a_folder_swapped_for_a_link_after_the_walk_is_never_followed(tmp_path):
    """The copy opens each part of a path inside the one before it, never through a link: a learner who swaps a
    folder of their hand-in for a link between the walk and the copy gets an error, not the teacher's file."""
    import shutil

    from course_grader.collect import ExchangeHandIn, copy_hand_in

    hand_in, secret = tmp_path / "hand-in", tmp_path / "teacher"
    (hand_in / "data").mkdir(parents=True)
    (hand_in / "data" / "f").write_text("mine")
    secret.mkdir()
    (secret / "f").write_text("the teacher's")
    walked = exchange.walk(hand_in)
    shutil.rmtree(hand_in / "data")
    (hand_in / "data").symlink_to(secret)
    with pytest.raises(OSError):
        copy_hand_in(ExchangeHandIn(None, str(hand_in), walked), tmp_path / "copy")
    assert not any("teacher" in p.read_text() for p in (tmp_path / "copy").rglob("*") if p.is_file())


def test_a_notebook_rewritten_after_the_walk_is_timed_by_the_content_that_was_copied(tmp_path):
    """Issue 39, item 5: the collector read the time, then copied the notebook later, checking its size alone, so
    a learner who watched their folder rewrote it in place, same byte count, after the due date and was on time.
    The time recorded is now the files' change time once read: the rewrite's."""
    import os
    import time

    from course_grader.collect import ExchangeHandIn, copy_hand_in

    hand_in = tmp_path / "hand-in"
    hand_in.mkdir()
    (hand_in / f"{LESSON}.ipynb").write_text('{"answers": "blank"}')
    walked = exchange.walk(hand_in)
    time.sleep(0.05)
    with open(hand_in / f"{LESSON}.ipynb", "r+") as f:  # in place: the same bytes count, the same inode
        f.write('{"answers": "SOLVE"}')
    rewritten = datetime.datetime.fromtimestamp(os.stat(hand_in / f"{LESSON}.ipynb").st_ctime,
                                                datetime.timezone.utc).replace(tzinfo=None)
    assert rewritten > walked.changed
    digests, when = copy_hand_in(ExchangeHandIn(None, str(hand_in), walked), tmp_path / "copy")
    assert (tmp_path / "copy" / f"{LESSON}.ipynb").read_text() == '{"answers": "SOLVE"}'
    assert when == rewritten and when > walked.changed


def test_a_flood_of_junk_folders_is_counted_not_recorded_and_the_record_stays_readable(course):
    """Issue 39, item 1: 12,000 junk folders (names not UTF-8 among them) were each written into the record (19 MB,
    over its reader's bound, so taken as empty: every learner timed by their own stamp again). Now the record names
    the first few and counts the rest, stays small, and the real hand-ins are collected with their times."""
    root, inbound, collect = course
    for i in range(12_000):
        os.mkdir(os.path.join(os.fsencode(inbound), b"junk\xff" + str(i).encode() if i % 2 else f"junk{i}".encode()))
    submit(inbound, "ada")
    made = collect()
    assert len(made.skipped) == 12_000
    path = exchange.record_path(root / "submitted", LESSON)
    assert path.stat().st_size < 64 * 1024
    record = exchange.read_record(root / "submitted", LESSON)
    assert record["skipped_count"] == 12_000 and len(record["skipped"]) == exchange.MOST_RECORDED
    assert "ada" in record["hand_ins"] and record["hand_ins"]["ada"]["exchange_time"]
    notices = exchange.collect_notices(root / "submitted", [LESSON])
    assert len(notices) == exchange.MOST_RECORDED + 1 and "11950 more folders of inbound/" in notices[-1]


def test_a_record_that_cannot_be_read_stops_make_grade_and_make_collect_never_takes_it_as_empty(course):
    """A record taken as empty times every hand-in by its learner's own timestamp.txt: it is refused instead."""
    from course_grader.plan import _records
    from course_grader.refused import Refused

    root, inbound, collect = course
    submit(inbound, "ada")
    collect()
    path = exchange.record_path(root / "submitted", LESSON)
    path.write_text("{not json")
    with pytest.raises(exchange.RecordUnreadable, match="is not make collect's record"):
        exchange.read_record(root / "submitted", LESSON)
    from nbgrader.exchange import ExchangeError

    with pytest.raises(ExchangeError, match="move it away to collect anew"):  # nbgrader's fail(): stopped, said why
        collect()
    assert path.read_text() == "{not json"
    with pytest.raises(Refused, match="run `make collect LESSON=<lesson>` again"):
        _records(root, [LESSON])  # what make grade's plan reads first


def test_inbound_is_kept_sticky_and_make_collect_writes_for_the_teacher_alone(course):
    """Issue 39, item 2: nbgrader's release leaves inbound/ at 0o733, so a learner who knows a classmate's hand-in's
    name can rename it (and make it late); the collector sets its sticky bit. `make collect` runs under umask 077,
    and its record names no hand-in's folder (whose random part keeps it private), only its digest."""
    import stat
    import subprocess

    root, inbound, collect = course
    inbound.chmod(0o733)
    folder = submit(inbound, "ada")
    collect()
    assert inbound.stat().st_mode & stat.S_ISVTX
    text = exchange.record_path(root / "submitted", LESSON).read_text()
    assert folder.name not in text and "r4nd0m" not in text
    dry = subprocess.run(["make", "-C", str(ROOT), "-n", "-o", ".venv/.installed", "collect", f"LESSON={LESSON}"],
                         capture_output=True, text=True, check=True).stdout
    assert any(line.startswith("umask 077; for lesson in") for line in dry.splitlines()), dry


def test_make_collect_ends_with_who_on_the_roster_has_not_handed_in(course, tmp_path):
    """Issue 42, item 3: the last lines of make collect, per lesson: how many of the roster handed in, who has not
    (the first fifty named, the rest counted); without a roster, how many handed in."""
    import shutil

    from course_grader import collected
    from report_class import write_roster

    root, inbound, collect = course
    assert collected.summary(root, LESSON) == [f"{LESSON}: 0 learners handed in (no roster in the gradebook to say "
                                               f"who has not: docs/teaching/grading.md)"]
    shutil.copy(ROOT / "nbgrader_config.py", root / "nbgrader_config.py")
    roster = ["ada", "bo", *(f"learner{i:02d}" for i in range(60))]
    write_roster(root, roster)
    submit(inbound, "ada")
    collect()
    lines = collected.summary(root, LESSON)
    assert lines[0] == f"{LESSON}: 1 of the roster's 62 handed in"
    assert lines[1].startswith("  not handed in (61): bo, learner00, ") and lines[1].endswith(" and 11 more")
    with open(root / "nbgrader_config.py", "a") as config:  # two sections: each one's count under the whole's
        config.write("\nc.EncoderCourse.sections = {'A': ['ada', 'bo'], 'B': ['learner00']}\n")
    assert collected.summary(root, LESSON)[1] == "  section A: 1 of 2; section B: 0 of 1"


@pytest.mark.parametrize("text", ["2026-12-05 13:13:01.914647 UTC", "2026-1-5 3:13:01.5 UTC", "2026-12-05 13:13:01 UTC",
                                  " 2026-12-05 13:13:01.914647 UTC\n", "2026-12-05 13:13:01.914647 Europe/Paris",
                                  "2026-12-05T13:13:01+01:00", "2026-12-05 13:13:01.914647 +0100", "None", "",
                                  "not a time", "2026-02-30 13:13:01.000000 UTC"])
def test_a_time_is_read_as_nbgrader_reads_it_also_without_nbgrader(text):
    """``read_time`` reads nbgrader's own format (``utc_text``'s) itself, without importing nbgrader: the same
    time, or none, as nbgrader's ``parse_utc`` gives."""
    from nbgrader import utils

    try:
        expected = utils.parse_utc(text.strip())
    except Exception:
        expected = None
    assert exchange.read_time(text) == expected
    when = datetime.datetime(2026, 1, 2, 3, 4, 5, 6)
    assert exchange.read_time(exchange.utc_text(when)) == when
