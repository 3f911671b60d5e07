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
    assert record["daemon"]["folder"] == own.name
    assert (collected(root, "daemon") / f"{LESSON}.ipynb").read_text() == NOTEBOOK


def test_the_latest_hand_in_by_the_exchange_s_time_is_collected_whatever_its_name_says(course):
    root, inbound, collect = course
    first = submit(inbound, "ada", name_time=utc_now() + datetime.timedelta(days=3), notebook='{"first": 1}')
    time.sleep(0.05)
    second = submit(inbound, "ada", name_time=utc_now() - datetime.timedelta(days=3), notebook='{"second": 2}')
    collect()
    assert (collected(root, "ada") / f"{LESSON}.ipynb").read_text() == '{"second": 2}'
    assert exchange.read_record(root / "submitted", LESSON)["hand_ins"]["ada"]["folder"] == second.name != first.name


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


def test_a_stamp_that_agrees_with_the_exchange_s_time_is_the_hand_in_s_time(course):
    root, inbound, collect = course
    stamp = utc_now() - datetime.timedelta(seconds=exchange.STAMP_TOLERANCE.total_seconds() / 2)
    submit(inbound, "ada", stamp=stamp)
    collect()
    when = hand_in_time(root)
    assert when.when == stamp and not when.flag and when.by == "the time the exchange recorded"


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

    from course_grader.collect import HandIn, copy_hand_in

    hand_in, secret = tmp_path / "hand-in", tmp_path / "teacher"
    (hand_in / "data").mkdir(parents=True)
    (hand_in / "data" / "f").write_text("mine")
    secret.mkdir()
    (secret / "f").write_text("the teacher's")
    walked = exchange.walk(hand_in)
    shutil.rmtree(hand_in / "data")
    (hand_in / "data").symlink_to(secret)
    with pytest.raises(OSError):
        copy_hand_in(HandIn(None, str(hand_in), walked), tmp_path / "copy")
    assert not any("teacher" in p.read_text() for p in (tmp_path / "copy").rglob("*") if p.is_file())
