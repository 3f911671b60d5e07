"""`make collect FROM=<a platform's download> RECORD=<its record>` (issue 42, item 2): Canvas's and Moodle's
downloads of an assignment's submissions, made here in each platform's layout as its code writes them
(``course_grader/downloads.py`` says where each comes from), collected through the record alone.

Canvas: loose files ``<sortable name>[_LATE]_<user id>_<file id>_<file>``, their names' UTF-8 stored with no flag
(rubyzip's way), beside the submissions API's JSON (``while(1);`` first, as a browser saves it) and the gradebook
export. Moodle: ``<Full name>_<participant id>_assignsubmission_file_`` folders (3.x), without the last ``_`` (4.x)
or joined to the file's name, beside the grading worksheet. Each download holds what must be refused and listed,
never guessed: an unmatched learner, two notebooks of one learner, a file that is not a notebook, a link, a
zip-slip path, one too large.
"""

import datetime
import json
import os
import shutil
import stat
import subprocess
import zipfile
from pathlib import Path

import pytest
from report_class import open_gradebook  # a new gradebook runs alembic from this environment, whatever PATH says

from course_grader import collect_download, collected, downloads, exchange
from course_grader.deadlines import Deadlines

ROOT = Path(__file__).resolve().parents[2]
LESSON = "01_attention"
ROSTER = {"ada": ("Ada", "Lovelace", "ada@school.example"), "josé": ("José", "Núñez", "jose@school.example"),
          "bo": ("Bo", "Li", "bo@school.example"), "cy": ("Cy", "Young", "cy@school.example")}


def notebook(text):
    return json.dumps({"cells": [{"cell_type": "markdown", "metadata": {}, "source": text}], "metadata": {},
                       "nbformat": 4, "nbformat_minor": 5}).encode()


class RubyzipInfo(zipfile.ZipInfo):
    """An entry whose name is stored as UTF-8 bytes with no flag saying so, as Canvas's rubyzip writes it."""

    def _encodeFilenameFlags(self):
        return self.filename.encode("utf-8"), self.flag_bits & ~0x800


def write_zip(path, entries, info=zipfile.ZipInfo):
    """A zip of ``entries`` (``{name: bytes}``; a name starting ``link:`` is a symbolic link to its bytes)."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in entries.items():
            entry = info(name.removeprefix("link:"), (2026, 12, 10, 9, 0, 0))
            entry.compress_type = zipfile.ZIP_DEFLATED
            entry.external_attr = ((stat.S_IFLNK | 0o777) if name.startswith("link:") else (stat.S_IFREG | 0o644)) << 16
            archive.writestr(entry, data)
    return path


@pytest.fixture
def course(tmp_path):
    """A course folder whose gradebook's roster is ``ROSTER``, and the lesson due 2026-12-10 17:00 UTC."""
    root = tmp_path / "course"
    root.mkdir()
    shutil.copy(ROOT / "nbgrader_config.py", root / "nbgrader_config.py")
    with open_gradebook(root) as gradebook:
        for student, (first, last, email) in ROSTER.items():
            gradebook.update_or_create_student(student, first_name=first, last_name=last, email=email)
        gradebook.update_or_create_assignment(LESSON, duedate="2026-12-10 17:00:00 UTC")
    return root


def canvas_user(user_id, name, sis, login=None, when=None):
    return {"id": 9000 + user_id, "user_id": user_id, "submitted_at": when, "workflow_state": "submitted",
            "late": False, "user": {"id": user_id, "name": name, "sortable_name": name, "sis_user_id": sis,
                                    "login_id": login}}


def canvas_download(folder):
    """Canvas's Download Submissions of the lesson, its submissions API's JSON, and its gradebook export."""
    entries = {"lovelaceada_101_9001_01_attention.ipynb": notebook("Ada's"),
               "lovelaceada_101_9005_notes.pdf": b"%PDF-1.4",
               "núñezjosé_LATE_102_9002_01_attention-1.ipynb": notebook("José's, late"),
               "strangerx_103_9003_01_attention.ipynb": notebook("not on the roster"),
               "../../evil_104_9004_01_attention.ipynb": notebook("zip slip"),
               "/tmp/abs_104_9014_01_attention.ipynb": notebook("absolute"),
               "link:lib_105_9006_01_attention.ipynb": b"/etc/passwd",
               "anon_q8r2x_9007_01_attention.ipynb": notebook("anonymous"),
               "licy_106_9008_01_attention.ipynb": notebook("two roster learners"),
               "huge_107_9009_01_attention.ipynb": b"0" * (21 * 2**20)}
    write_zip(folder / "submissions.zip", entries, RubyzipInfo)
    api = [canvas_user(101, "Lovelace, Ada", "ada", "ada", "2026-12-10T15:59:00Z"),
           canvas_user(102, "Núñez, José", None, None, "2026-12-10T17:30:00Z"),
           canvas_user(103, "Stranger, X", "x999", "x999", "2026-12-10T12:00:00Z"),
           canvas_user(106, "Li, Cy", "bo", "cy", "2026-12-10T12:00:00Z")]
    (folder / "submissions.json").write_text("while(1);" + json.dumps(api))
    (folder / "grades.csv").write_text("Student,ID,SIS User ID,SIS Login ID,Section,Lesson 1 (77)\n"
                                       "    Points Possible,,,,,10\n"
                                       "\"Núñez, José\",102,josé,josé,A,\n"
                                       "\"Lovelace, Ada\",101,ada,ada,A,\n", encoding="utf-8")
    return folder / "submissions.zip", [folder / "submissions.json", folder / "grades.csv"]


def learner_files(root):
    return sorted(str(p.relative_to(root / "submitted")) for p in (root / "submitted").rglob("*")
                  if not p.relative_to(root / "submitted").parts[0].startswith("."))


def test_canvas_download_is_collected_through_its_record_and_what_cannot_be_matched_is_listed(course, tmp_path):
    download, records = canvas_download(tmp_path)
    lines = collect_download.take(course, LESSON, download, records)
    assert lines[0] == f"collected 2 hand-ins of {LESSON} from submissions.zip (Canvas)"
    refused = {line.split("'")[1]: line for line in lines if line.startswith("  refused ")}
    assert set(refused) == {"lovelaceada_101_9005_notes.pdf", "strangerx_103_9003_01_attention.ipynb",
                            "../../evil_104_9004_01_attention.ipynb", "/tmp/abs_104_9014_01_attention.ipynb",
                            "lib_105_9006_01_attention.ipynb", "anon_q8r2x_9007_01_attention.ipynb",
                            "licy_106_9008_01_attention.ipynb", "huge_107_9009_01_attention.ipynb"}
    assert "not a notebook" in refused["lovelaceada_101_9005_notes.pdf"]
    assert "no roster learner is Canvas's user id 103 (Stranger, X): x999" in refused["strangerx_103_9003_01_attention.ipynb"]
    assert "leaves the download" in refused["../../evil_104_9004_01_attention.ipynb"]
    assert "leaves the download" in refused["/tmp/abs_104_9014_01_attention.ipynb"]
    assert "symbolic link" in refused["lib_105_9006_01_attention.ipynb"]
    assert "anonymous grading" in refused["anon_q8r2x_9007_01_attention.ipynb"]
    assert "names 2 roster learners (bo, cy)" in refused["licy_106_9008_01_attention.ipynb"]
    assert "over 20 MB unpacked" in refused["huge_107_9009_01_attention.ipynb"]
    assert learner_files(course) == ["ada", "ada/01_attention", "ada/01_attention/01_attention.ipynb",
                                     "ada/01_attention/timestamp.txt", "josé", "josé/01_attention",
                                     "josé/01_attention/01_attention.ipynb", "josé/01_attention/timestamp.txt"]
    assert not (tmp_path / "evil_104_9004_01_attention.ipynb").exists() and not Path("/tmp/abs_104_9014_01_attention.ipynb").exists()
    folder = course / "submitted" / "josé" / LESSON
    assert (folder / f"{LESSON}.ipynb").read_bytes() == notebook("José's, late")
    assert (folder / "timestamp.txt").read_text() == "2026-12-10 17:30:00.000000 UTC"
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700 and stat.S_IMODE((folder / "timestamp.txt").stat().st_mode) == 0o600
    record = exchange.read_record(course / "submitted", LESSON)
    when = exchange.hand_in_time(folder / f"{LESSON}.ipynb", record["hand_ins"]["josé"])
    assert (when.when, when.by) == (datetime.datetime(2026, 12, 10, 17, 30), "Canvas's record of the hand-in")
    assert Deadlines.read(course).seconds_late("josé", LESSON, when.when) == 1800
    assert record["download"]["refused_count"] == 8
    said = exchange.collect_notices(course / "submitted", [LESSON])
    assert any("FROM=submissions.zip (Canvas) refused 'strangerx_103_9003_01_attention.ipynb'" in s for s in said)
    assert collected.summary(course, LESSON) == [f"{LESSON}: 2 of the roster's 4 handed in",
                                                 "  not handed in (2): bo, cy"]


def test_collecting_again_changes_nothing_and_a_newer_download_keeps_the_earlier_hand_in(course, tmp_path):
    download, records = canvas_download(tmp_path)
    collect_download.take(course, LESSON, download, records)
    again = collect_download.take(course, LESSON, download, records)
    assert again[0].startswith("collected 0 hand-ins") and not (course / "submitted" / "ada" / ".replaced").exists()
    newer = write_zip(tmp_path / "newer.zip", {"lovelaceada_101_9011_01_attention.ipynb": notebook("Ada's second")},
                      RubyzipInfo)
    api = [canvas_user(101, "Lovelace, Ada", "ada", "ada", "2026-12-10T16:30:00Z")]
    (tmp_path / "newer.json").write_text(json.dumps(api))
    assert collect_download.take(course, LESSON, newer, [tmp_path / "newer.json"])[0].startswith("collected 1 ")
    folder = course / "submitted" / "ada"
    assert (folder / LESSON / f"{LESSON}.ipynb").read_bytes() == notebook("Ada's second")
    kept = list((folder / ".replaced").iterdir())
    assert len(kept) == 1 and (kept[0] / f"{LESSON}.ipynb").read_bytes() == notebook("Ada's")
    assert (kept[0] / "timestamp.txt").read_text() == "2026-12-10 15:59:00.000000 UTC"


def test_two_of_canvas_s_learners_who_are_one_roster_learner_are_both_refused(course, tmp_path):
    download = write_zip(tmp_path / "s.zip", {"lovelaceada_101_1_01_attention.ipynb": notebook("one"),
                                              "adalovelace_108_2_01_attention.ipynb": notebook("two")}, RubyzipInfo)
    api = [canvas_user(101, "Lovelace, Ada", "ada"), canvas_user(108, "Ada, Lovelace", None, "ada")]
    (tmp_path / "s.json").write_text(json.dumps(api))
    lines = collect_download.take(course, LESSON, download, [tmp_path / "s.json"])
    assert lines[0].startswith("collected 0 ")
    assert sum("2 of Canvas's learners are the roster's ada (101, 108)" in line for line in lines) == 2
    assert not (course / "submitted" / "ada").exists()


def test_a_canvas_hand_in_without_a_time_is_collected_untimed_and_said(course, tmp_path):
    download, _ = canvas_download(tmp_path)
    lines = collect_download.take(course, LESSON, download, [tmp_path / "grades.csv"])
    assert lines[0].startswith("collected 2 ")
    untimed = [line for line in lines if "not timed" in line]
    assert len(untimed) == 2 and any("josé" in line and "Canvas named it LATE" in line for line in untimed)
    assert not (course / "submitted" / "josé" / LESSON / "timestamp.txt").exists()
    record = exchange.read_record(course / "submitted", LESSON)
    notebook_path = course / "submitted" / "josé" / LESSON / f"{LESSON}.ipynb"
    assert exchange.hand_in_time(notebook_path, record["hand_ins"]["josé"]).when is None


MOODLE_COLUMNS = ("Identifier,Full name,Email address,Status,Grade,Maximum Grade,Grade can be changed,"
                  "Last modified (submission),Online text,Last modified (grade),Feedback comments\n")


def moodle_download(folder):
    """Moodle's Download all submissions (the three layouts its versions write) and its grading worksheet."""
    entries = {"Ada Lovelace_5001_assignsubmission_file_/01_attention.ipynb": notebook("Ada's"),
               "Ada Lovelace_5001_assignsubmission_onlinetext_/onlinetext.html": b"<p>hi</p>",
               "José Núñez_5002_assignsubmission_file/01_attention.ipynb": notebook("José's"),
               "Bo Li_5003_assignsubmission_file_01_attention.ipynb": notebook("Bo's first"),
               "Bo Li_5003_assignsubmission_file_01_attention (copy).ipynb": notebook("Bo's second"),
               "Mallory_5004_assignsubmission_file_/01_attention.ipynb": notebook("unknown"),
               "Ada Lovelace_5001_assignsubmission_file_/../../../escape.ipynb": notebook("zip slip")}
    write_zip(folder / "moodle.zip", entries)
    rows = ['Participant 5001,Ada Lovelace,ada@school.example,Submitted for grading,,10.00,Yes,'
            '"Thursday, 10 December 2026, 5:05 PM",,-,\n',
            'Participant 5002,José Núñez,JOSE@school.example,Submitted for grading,,10.00,Yes,'
            '"Thursday, 10 December 2026, 6:30 PM",,-,\n',
            'Participant 5003,Bo Li,bo@school.example,Submitted for grading,,10.00,Yes,'
            '"Wednesday, 9 December 2026, 9:00 AM",,-,\n',
            'Participant 5004,Mallory,mallory@elsewhere.example,Submitted for grading,,10.00,Yes,'
            '"Wednesday, 9 December 2026, 9:00 AM",,-,\n']
    (folder / "worksheet.csv").write_text("\ufeff" + MOODLE_COLUMNS + "".join(rows), encoding="utf-8")
    return folder / "moodle.zip", folder / "worksheet.csv"


def test_moodle_download_is_collected_through_its_worksheet_in_the_teacher_s_time_zone(course, tmp_path):
    download, worksheet = moodle_download(tmp_path)
    with pytest.raises(downloads.DownloadError, match="ZONE=Europe/Paris"):
        collect_download.take(course, LESSON, download, [worksheet])
    with pytest.raises(downloads.DownloadError, match="time zone 'Europe/Pariss' is not one nbgrader knows"):
        collect_download.take(course, LESSON, download, [worksheet], "Europe/Pariss")
    lines = collect_download.take(course, LESSON, download, [worksheet], "Europe/Paris")
    assert lines[0] == f"collected 2 hand-ins of {LESSON} from moodle.zip (Moodle)"
    refused = {line.split("'")[1]: line for line in lines if line.startswith("  refused ")}
    assert len(refused) == 5
    assert "onlinetext submission, not a file" in refused["Ada Lovelace_5001_assignsubmission_onlinetext_/onlinetext.html"]
    assert "bo handed in 2 notebooks for one lesson" in refused["Bo Li_5003_assignsubmission_file_01_attention.ipynb"]
    assert "bo handed in 2 notebooks" in refused["Bo Li_5003_assignsubmission_file_01_attention (copy).ipynb"]
    assert "no roster learner is Moodle's participant 5004 (Mallory): mallory@elsewhere.example" in \
        refused["Mallory_5004_assignsubmission_file_/01_attention.ipynb"]
    assert "leaves the download" in refused["Ada Lovelace_5001_assignsubmission_file_/../../../escape.ipynb"]
    stamps = {s: (course / "submitted" / s / LESSON / "timestamp.txt").read_text() for s in ("ada", "josé")}
    assert stamps == {"ada": "2026-12-10 16:05:00.000000 UTC", "josé": "2026-12-10 17:30:00.000000 UTC"}
    assert not (course / "submitted" / "bo").exists()


def test_reading_an_entry_stops_at_the_bound_whatever_it_declares(tmp_path, monkeypatch):
    path = write_zip(tmp_path / "bomb.zip", {"a_1_2_x.ipynb": b"0" * 5000})
    monkeypatch.setattr(downloads, "MAX_NOTEBOOK_BYTES", 1000)
    archive, infos = downloads.open_download(path)
    with archive:
        assert downloads.read_entry(archive, infos[0], 10**9) == (None, "it is over 0 MB unpacked")
        assert downloads.read_entry(archive, infos[0], 100)[1].startswith("the download's notebooks pass")
    monkeypatch.setattr(downloads, "MAX_ENTRIES", 0)
    with pytest.raises(downloads.DownloadError, match="more than the 0"):
        downloads.open_download(path)


def test_a_record_that_is_no_platform_s_stops_everything(course, tmp_path):
    download, _ = canvas_download(tmp_path)
    (tmp_path / "other.csv").write_text("name,score\nada,3\n")
    with pytest.raises(downloads.DownloadError, match="neither Moodle's grading worksheet"):
        collect_download.take(course, LESSON, download, [tmp_path / "other.csv"])
    _, worksheet = moodle_download(tmp_path)
    with pytest.raises(downloads.DownloadError, match="one platform's"):
        collect_download.take(course, LESSON, download, [tmp_path / "grades.csv", worksheet], "UTC")
    assert not (course / "submitted").exists()


def test_make_collect_from_a_moodle_download_end_to_end(course, tmp_path):
    """The real `make collect FROM=... RECORD=... ZONE=...` in a copy of the course, as a teacher runs it."""
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    for name in ("Makefile", "requirements.txt", "pyproject.toml"):
        shutil.copy(ROOT / name, course / name)
    (course / ".venv").symlink_to(ROOT / ".venv")
    download, worksheet = moodle_download(tmp_path)
    # --no-print-directory: under make test (make within make) make names the folders it enters on stdout
    done = subprocess.run(["make", "--no-print-directory", "-o", ".venv/.installed", "collect", f"LESSON={LESSON}",
                           f"FROM={download}", f"RECORD={worksheet}", "ZONE=Europe/Paris"], cwd=course,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    out = done.stdout.splitlines()
    assert out[0] == f"collected 2 hand-ins of {LESSON} from moodle.zip (Moodle)"
    assert out[-2:] == [f"{LESSON}: 2 of the roster's 4 handed in", "  not handed in (2): bo, cy"]
    assert (course / "submitted" / "josé" / LESSON / f"{LESSON}.ipynb").read_bytes() == notebook("José's")
    assert stat.S_IMODE(exchange.record_path(course / "submitted", LESSON).stat().st_mode) & 0o077 == 0
    missing = subprocess.run(["make", "-o", ".venv/.installed", "collect", f"LESSON={LESSON}", f"FROM={download}"],
                             cwd=course, capture_output=True, text=True, timeout=300)
    assert missing.returncode != 0 and "RECORD= must name the platform's record" in missing.stderr
    assert os.listdir(course / "submitted" / "ada") == [LESSON]
