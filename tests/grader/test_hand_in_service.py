"""The hand-in service (issue 38), run as its own process on a course after `make student`, with a stand-in for the
hub's identity API (``hand_in_service.FakeHubApi``: the real hub's round trip is in ``test_classroom_hub.py``):

- a hand-in is filed under the name the hub gives its token, never one the request carries; no token, an unknown
  one, a service's, a learner off the roster, a lesson not set or another lesson's notebook, one over the bounds:
  refused, in words, nothing stored;
- the verdict comes back within seconds, the cause and the first rung of the hint ladder with it, and nothing of
  the hidden checks the grader drew;
- a learner handing in a hundred times a minute holds one grader and one place in line;
- a crash between "handed in" and "graded" loses nothing: graded after the restart;
- `make collect` takes the service's hand-ins with their times, and `make grade` takes the service's verdicts as
  its own: every file it writes is byte for byte what a batch run over the same hand-ins writes.
"""

import copy
import hashlib
import json
import shutil
import signal
import time

import pytest

from encoder_lib.grading.exercises import BY_LESSON
from hand_in_service import FakeHubApi, ServiceProcess, post, request, verdict
from report_class import answer_in, write_roster
from grading_helpers import course_after_make_student, run_grader

pytestmark = pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning")
LESSON = "01_attention"
TOKENS = {"t-ada": "ada", "t-bo": "bo", "t-cy": "cy", "t-di": "di", "t-eve": "eve", "t-service": None}
NO_SCALING = '''def scaled_dot_product_attention(q, k, v):
    """softmax(q k^T) v: the scaling left out"""
    weights = softmax(q @ np.swapaxes(k, -1, -2), axis=-1)
    return weights @ v, weights
'''


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    root = course_after_make_student(tmp_path_factory, "hand-in-service")
    write_roster(root, ["ada", "bo", "cy", "di"])
    return root


@pytest.fixture(scope="module")
def hub():
    with FakeHubApi(TOKENS) as api:
        yield api


@pytest.fixture(scope="module")
def service(course, hub):
    with ServiceProcess(course, hub.url) as running:
        yield running


def solved(course, lesson=LESSON):
    return (course / "notebooks" / lesson / f"{lesson}.ipynb").read_bytes()


def wrong(course):
    notebook = answer_in(json.loads(solved(course)), "scaled_dot_product_attention", NO_SCALING)
    return json.dumps(notebook).encode()


def stored(course, student):
    return sorted((course / "hand-ins" / student).glob(f"{LESSON}/*/hand_in.json"))


def test_a_hand_in_is_filed_under_the_hub_s_name_for_its_token_not_the_request_s(course, service):
    notebook = json.loads(solved(course))
    notebook["metadata"]["student_id"] = "bo"  # what a learner writes is never who they are
    before = len(stored(course, "bo"))
    status, body = request(f"{service.url}api/hand-ins/{LESSON}?student=bo", "t-ada",
                           json.dumps(notebook).encode())
    assert status == 202, body
    info = json.loads(stored(course, "ada")[-1].read_text())
    assert info["student_id"] == "ada" and info["sha256"] == body["sha256"]
    assert len(stored(course, "bo")) == before
    status, graded = verdict(service, body["key"], "t-ada")
    assert graded["state"] == "graded" and graded["points"] == graded["max_points"] > 0, graded
    assert request(f"{service.url}api/hand-ins/{body['key']}", "t-bo")[0] == 404, "bo cannot read ada's hand-in"


@pytest.mark.parametrize("token, status, words", [
    (None, 401, "No JupyterHub token"), ("forged", 403, "does not know this token"),
    ("t-service", 403, "does not know this token as a learner's"), ("t-eve", 403, "not on this course's roster")])
def test_a_request_without_a_learner_s_token_on_the_roster_is_refused_in_words(course, service, token, status, words):
    before = sorted((course / "hand-ins").rglob("hand_in.json"))
    answer = post(service, LESSON, token, solved(course))
    assert answer[0] == status and words in answer[1]["message"], answer
    assert sorted((course / "hand-ins").rglob("hand_in.json")) == before


def test_a_lesson_not_set_another_lesson_s_notebook_and_one_over_the_bounds_are_refused(course, service):
    from course_grader.handin.service import MOST_BYTES, MOST_CELLS

    cases = [("nope", solved(course), 404, "not a graded lesson"),
             ("05_encoder_block", solved(course), 400, "none of 05_encoder_block's answer cells"),
             (LESSON, b"{not json", 400, "not a notebook"),
             (LESSON, b" " * (MOST_BYTES + 1), 413, f"over the {MOST_BYTES // 2**20} MB"),
             (LESSON, json.dumps({"cells": [{"cell_type": "code", "source": ""}] * (MOST_CELLS + 1)}).encode(), 413,
              f"over the {MOST_CELLS}")]
    for lesson, data, status, words in cases:
        answer = post(service, lesson, "t-cy", data)
        assert answer[0] == status and words in answer[1]["message"], (lesson, answer)
    assert not list((course / "hand-ins").glob("cy/*/*/hand_in.json")), "nothing stored"


def test_a_closed_lesson_or_one_not_released_is_refused(course, tmp_path):
    from course_grader.handin.service import Course
    from course_grader.handin.views import Refusal

    copy_root = tmp_path / "course"
    shutil.copytree(course / "release", copy_root / "release")
    shutil.copy(course / "nbgrader_config.py", copy_root / "nbgrader_config.py")
    with open(copy_root / "nbgrader_config.py", "a") as f:
        f.write('\nc.EncoderCourse.hand_ins_closed = ["01_attention"]\nc.EncoderCourse.lessons = ["01_attention", '
                '"02_multi_head_attention", "03_feed_forward"]\n')
    shutil.rmtree(copy_root / "release" / "03_feed_forward")
    settings = Course(copy_root)
    for lesson, words in (("01_attention", "is closed"), ("03_feed_forward", "not handed out"),
                          ("04_add_and_norm", "not handed out")):
        with pytest.raises(Refusal, match=words):
            settings.lesson(lesson)
    settings.lesson("02_multi_head_attention")


def hidden_descriptions(course, source):
    """The descriptions of the hidden cases the grader drew for this answer cell, that no visible case has."""
    from course_grader.cases import hidden_cases, visible_cases
    from course_grader.plan import course_secret

    name = "scaled_dot_product_attention"
    hidden = hidden_cases(name, course_secret(course), hashlib.sha256(source.encode()).hexdigest())
    return {c.description for c in hidden} - {c.description for c in visible_cases(name)}


def test_a_wrong_answer_s_verdict_names_its_cause_and_holds_no_hidden_input(course, service):
    status, body = post(service, LESSON, "t-bo", wrong(course))
    assert status == 202, body
    status, graded = verdict(service, body["key"], "t-bo")
    assert graded["state"] == "graded", graded
    [attention] = [e for e in graded["exercises"] if e["exercise"] == "scaled_dot_product_attention"]
    assert attention["points"] == 0 and "1/sqrt(d_k)" in attention["note"]
    assert attention["hint"].startswith("**What is wrong") and "hidden" not in attention
    assert attention["visible"][0] < attention["visible"][1]
    shown = json.dumps(graded)
    described = hidden_descriptions(course, NO_SCALING)
    assert described, "the grader drew hidden cases of their own"
    assert not [d for d in described if d in shown]
    full = json.loads((course / "hand-ins" / "bo" / body["key"] / "verdict.json").read_text())
    [row] = [r for r in full["results"] if r["exercise"] == "scaled_dot_product_attention"]
    assert row["points"] == 0, "the stored verdict is make grade's, hidden checks and all"


def test_a_learner_handing_in_thirty_times_a_minute_holds_one_grader_and_one_place(course, service):
    """Past the rate, each refusal comes a second late (a flood's connection waits, and counts, before it is
    told): thirty hand-ins take about twenty seconds, all within the minute."""
    from course_grader.handin.service import PER_MINUTE

    answers = [post(service, LESSON, "t-di", solved(course)) for _ in range(PER_MINUTE + 20)]
    taken = [body for status, body in answers if status == 202]
    refused = [body for status, body in answers if status == 429]
    assert len(taken) == PER_MINUTE and len(refused) == 20
    assert "the next is taken in" in refused[0]["message"]
    status, other = post(service, LESSON, "t-bo", wrong(course))
    assert status == 202
    assert verdict(service, other["key"], "t-bo")[1]["state"] == "graded"
    states = [verdict(service, body["key"], "t-di")[1] for body in taken]
    assert states[-1]["state"] == "graded" and {s.get("state") for s in states} <= {"graded", "replaced", None}, states
    before_bo = [body for body in taken if _graded_at(course, "di", body) < _graded_at(course, "bo", other)]
    assert len(before_bo) <= 2, "bo waited for at most the hand-in of cy's being graded and the one waiting"


def _graded_at(course, student, body):
    path = course / "hand-ins" / student / body["key"] / "verdict.json"
    return json.loads(path.read_text())["graded_at"] if path.exists() else "9999"


def test_a_crash_after_handed_in_loses_nothing_and_it_is_graded_after_the_restart(course, hub, tmp_path):
    from course_grader.handin.store import Store

    with ServiceProcess(course, hub.url) as first:
        status, body = post(first, LESSON, "t-ada", wrong(course))
        assert status == 202
        first.stop(signal.SIGKILL)  # at once: most likely before its grading ended
    folder = course / "hand-ins" / "ada" / body["key"]
    assert (folder / f"{LESSON}.ipynb").read_bytes() == wrong(course)
    while_down = Store(course).add("ada", LESSON, solved(course))  # stored, never queued: the service was down
    with ServiceProcess(course, hub.url) as second:
        for key in (body["key"], while_down.key):
            state = verdict(second, key, "t-ada")[1]["state"]
            assert state in ("graded", "replaced"), (key, state)
        assert verdict(second, while_down.key, "t-ada")[1]["state"] == "graded"


def test_a_supervisor_killed_takes_its_service_with_it_even_one_still_starting(course, hub):
    """The hub starts another supervisor when one dies, and it must bind the same port and socket: a service its
    dead supervisor had just started again (still starting, so it took init for its parent) lived on as an orphan
    holding the port, and every supervisor the hub started after it failed ("Address already in use")."""
    import contextlib
    import os

    first = ServiceProcess(course, hub.url).start()
    try:
        old = first.service_pid()
        os.kill(old, signal.SIGKILL)
        deadline = time.monotonic() + 30
        while (restarted := _child_of(first.process.pid)) in (None, old) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert restarted not in (None, old), "the supervisor did not start the service again"
        first.process.kill()  # the supervisor alone, as the service it has just started still starts
        first.process.wait(10)
        deadline = time.monotonic() + 10
        while _running(restarted) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _running(restarted), "the service outlived its supervisor"
        second = ServiceProcess(course, hub.url)
        shutil.rmtree(second.socket.parent)
        for name in ("port", "url", "socket", "socket_url"):
            setattr(second, name, getattr(first, name))
        with second:  # the hub's next supervisor: the same port and socket, taken at once
            assert second.process.poll() is None, "the next supervisor could not take the port and the socket"
            assert request(f"{second.socket_url}api/hand-ins/{LESSON}", "t-ada")[0] == 200
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(first.process.pid, signal.SIGKILL)  # an orphan, where there is one, is in its process group
        first.stop()


def _child_of(pid):
    try:
        return int(open(f"/proc/{pid}/task/{pid}/children").read().split()[0])
    except (OSError, IndexError, ValueError):
        return None


def _running(pid):
    """Whether ``pid`` runs (a zombie, dead but not yet reaped, does not)."""
    try:
        return open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def test_a_hand_in_that_cannot_be_graded_stops_no_one_else_s(course, hub):
    from course_grader.handin.store import Store

    broken = Store(course).add("cy", LESSON, solved(course))
    broken.notebook.unlink()  # gone from under the service: its grading fails, said as the machine's failure
    with ServiceProcess(course, hub.url) as service:
        status, body = post(service, LESSON, "t-ada", wrong(course))
        assert status == 202 and verdict(service, body["key"], "t-ada")[1]["state"] == "graded"
        shown = verdict(service, broken.key, "t-cy")[1]
        assert shown["state"] == "graded" and "grader's machine failed" in shown["message"], shown


def _files(root):
    """What make grade writes for people to read: the CSVs (grades.csv is nbgrader's export of the gradebook), the
    feedback pages and the class report."""
    names = ("grades.csv", "grades_by_exercise.csv", "grades_lms.csv")
    pages = sorted((root / "feedback").rglob("*.html")) + sorted(  # the report's caches (dot files) left out
        p for p in (root / "report").rglob("*") if p.is_file() and not p.name.startswith("."))
    assert root / "report" / "index.html" in pages, "make grade wrote no class report"
    return {name: (root / name).read_bytes() for name in names} | \
        {str(p.relative_to(root)): p.read_bytes() for p in pages}


def test_make_grade_takes_the_service_s_verdicts_as_its_own_byte_for_byte(course, service, tmp_path):
    from course_grader.handin.collect import take
    from course_grader.handin.store import Store

    for token in ("t-ada", "t-bo"):
        status, body = post(service, LESSON, token, solved(course) if token == "t-ada" else wrong(course))
        if status == 429:  # this module's earlier tests handed in much: wait for the learner's minute
            time.sleep(61)
            status, body = post(service, LESSON, token, solved(course) if token == "t-ada" else wrong(course))
        assert status == 202, body
        assert verdict(service, body["key"], token)[1]["state"] == "graded"
    deadline = time.monotonic() + 120  # every learner's latest graded, whatever this module's tests left waiting
    while Store(course).waiting() and time.monotonic() < deadline:
        time.sleep(0.5)
    assert take(course, LESSON, out=lambda line: None) >= 2
    batch = tmp_path / "batch"
    shutil.copytree(course, batch, symlinks=True, ignore=shutil.ignore_patterns("*.sock"))
    shutil.rmtree(batch / "hand-ins")
    served = run_grader(course, "--lessons", LESSON)
    assert served.returncode == 0, served.stdout + served.stderr
    assert "graded when handed in (the hand-in service)" in served.stdout and " 0 graded now" in served.stdout
    graded = run_grader(batch, "--lessons", LESSON)
    assert graded.returncode == 0, graded.stdout + graded.stderr
    assert _files(course) == _files(batch)


@pytest.mark.slow
def test_with_a_dask_cluster_configured_as_make_grade_s_the_service_grades_on_it(course, hub, tmp_path):
    """DASK_SCHEDULER (or c.EncoderCourse.scheduler) set as for make grade: the hand-ins are graded by the
    cluster's workers, with its TLS certificates, and the verdict is the one graded here."""
    from distributed import Client

    from course_grader import cluster_tls
    from dask_cluster import LocalCluster

    with LocalCluster(tmp_path / "dask", workers=1) as dask:
        dask.certify(course)
        with ServiceProcess(course, hub.url, env={"DASK_SCHEDULER": dask.address}) as remote:
            status, body = post(remote, LESSON, "t-bo", wrong(course))
            assert status == 202, body
            graded = verdict(remote, body["key"], "t-bo")[1]
        with Client(dask.address, security=cluster_tls.security(course), set_as_default=False) as client:
            prefixes = client.run_on_scheduler(lambda dask_scheduler: sorted(dask_scheduler.task_prefixes))
    assert "grade-learner" in prefixes, prefixes
    [attention] = [e for e in graded["exercises"] if e["exercise"] == "scaled_dot_product_attention"]
    assert graded["state"] == "graded" and attention["points"] == 0 and "1/sqrt(d_k)" in attention["note"], graded
