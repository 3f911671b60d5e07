"""Issue 51's attacks on the hand-in service, one test each, with a stand-in for the hub's identity API
(``hand_in_service.FakeHubApi``; the real hub's round trip is in ``tests/test_classroom_hub.py``):

- one learner stalls everyone: a body without a token, with a forged token, over the bound, or past the learner's
  rate is answered before it is read; a long history is listed while a classmate is answered; connections are
  bounded in number and time;
- one learner fills the disk: what is kept of a learner is bounded, and `make hand-ins` prunes and says it;
- a look-alike hub account is a classmate; an honest id that is not a safe folder name is lost; a roster id the
  hub cannot have goes unsaid until the class starts;
- a squatted port; a revoked token that keeps working;
- a hidden case read bit by bit by an unchanged answer that behaves differently each time;
- the solutions in the learner's hands before the due date (the service gives them after it);
- a restart that loses a verdict a learner's notebook was waiting for;
- `make collect` on a hub with the service and no exchange.
"""

import datetime
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from grading_helpers import course_after_make_student, make_measured
from hand_in_service import FakeHubApi, ServiceProcess, post, request, verdict
from report_class import answer_in, open_gradebook, write_roster

LESSON = "01_attention"
ROSTER = ["ada", "bo", "cy", "di", "flo", "gus", "josé", "mallory", "rand"] + [f"class{i}" for i in range(5)]
TOKENS = {f"t-{s}": s for s in ROSTER if s.isascii()} | {"t-jose": "josé", "t-jose-decomposed": "jose\u0301",
                                                          "t-revoked": "bo"}
#: An answer whose results change from one run to the next (the clock's last digits): each run a different reading
#: of the same hidden cases, were it run again.
FICKLE = '''def softmax(x, axis=-1):
    import time
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True) * (1 + (time.perf_counter_ns() // 1000 % 3 == 0))
'''


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """The course after `make student` with its roster, the stand-in for the hub, and the service on them."""
    root = course_after_make_student(tmp_path_factory, "hand-in-attacks")
    write_roster(root, ROSTER)
    with FakeHubApi(TOKENS) as api, ServiceProcess(root, api.url) as running:
        yield root, api, running


@pytest.fixture
def course(served):
    return served[0]


@pytest.fixture
def hub(served):
    return served[1]


@pytest.fixture
def service(served):
    return served[2]


def solved(course):
    return (course / "notebooks" / LESSON / f"{LESSON}.ipynb").read_bytes()


def headers_only(service, headers, path=f"api/hand-ins/{LESSON}", chunked=b""):
    """Send a POST's headers (and ``chunked``, bytes of a chunked body), never the rest: ``(status, JSON body)`` of
    what the service answers first, or None where it waited for the body (20 s)."""
    with socket.create_connection(("127.0.0.1", service.port), timeout=20) as s:
        head = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
        s.sendall(f"POST /services/encoder-hand-in/{path} HTTP/1.1\r\nHost: x\r\n{head}\r\n".encode() + chunked)
        data = b""
        try:
            while b"\r\n\r\n" not in data or len(data.split(b"\r\n\r\n", 1)[1]) < _length(data):
                more = s.recv(65536)
                if not more:
                    break
                data += more
        except (socket.timeout, ConnectionResetError):
            return None
    if not data:
        return None
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), json.loads(body[:_length(data)] or b"{}")


def _length(data):
    for line in data.split(b"\r\n\r\n", 1)[0].split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            return int(line.split(b":")[1])
    return 0


# ---------------------------------------------------------------- one learner stalls everyone


@pytest.mark.parametrize("token, status", [(None, 401), ("forged", 403)])
def test_a_body_without_a_learner_s_token_is_refused_before_it_is_read(service, token, status):
    headers = {"Content-Length": str(10 * 2**20)} | ({"Authorization": f"token {token}"} if token else {})
    assert (headers_only(service, headers) or (None,))[0] == status


def test_a_body_over_the_bound_is_refused_before_it_is_read_and_while_it_streams(service, course):
    from course_grader.handin.service import MOST_BYTES

    answer = headers_only(service, {"Authorization": "token t-flo", "Content-Length": str(MOST_BYTES + 1)})
    assert answer and answer[0] == 413 and "10 MB" in answer[1]["message"], answer
    chunk = b"%x\r\n%s\r\n" % (2**20, b" " * 2**20)  # no length said: refused once past the bound, as it comes
    answer = headers_only(service, {"Authorization": "token t-flo", "Transfer-Encoding": "chunked"}, chunked=chunk * 11)
    assert answer and answer[0] == 413, answer
    assert not list(course.glob("hand-ins/flo/*/*/hand_in.json")) and not list(course.glob("hand-ins/flo/*/.inc*"))


def test_the_learner_s_rate_is_applied_before_any_of_the_notebook_is_read(service, course):
    from course_grader.handin.service import PER_MINUTE

    taken = [post(service, LESSON, "t-gus", solved(course))[0] for _ in range(PER_MINUTE)]
    assert taken == [202] * PER_MINUTE
    answer = headers_only(service, {"Authorization": "token t-gus", "Content-Length": str(9 * 2**20)})
    assert answer and answer[0] == 429 and "the next is taken in" in answer[1]["message"], answer


def test_a_long_history_is_listed_while_a_classmate_is_answered(service, course):
    """3,000 hand-ins kept of one learner (as before pruning): their listing is off the event loop and linear, and
    a classmate's request is answered before it ends."""
    from course_grader.handin.store import Store

    store = Store(course)
    first = store.add("mallory", LESSON, solved(course))
    folder = first.folder.parent
    info = json.loads((first.folder / "hand_in.json").read_text())
    for i in range(3000):
        name = f"2000-01-01T00-00-00.{i:06d}Z"
        (folder / name).mkdir()
        (folder / name / "hand_in.json").write_text(json.dumps({**info, "handed_in": f"2000-01-01T00:00:00.{i:06d}"}))
    status, classmate = post(service, LESSON, "t-di", solved(course))
    assert status == 202
    finished = []

    def listing():
        finished.append(("list", request(f"{service.url}api/hand-ins/{LESSON}", "t-mallory")[0]))
    thread = threading.Thread(target=listing)
    thread.start()
    time.sleep(0.05)
    finished.append(("classmate", request(f"{service.url}api/hand-ins/{classmate['key']}", "t-di")[0]))
    thread.join()
    assert finished == [("classmate", 200), ("list", 200)], finished


def test_connections_are_bounded_in_number_and_in_time(service):
    from course_grader.handin.service import HEADER_SECONDS, MOST_CONNECTIONS

    idle = [socket.create_connection(("127.0.0.1", service.port), timeout=5) for _ in range(MOST_CONNECTIONS + 20)]
    try:
        closed = 0
        for s in idle[-20:]:  # past the bound: closed at once
            try:
                closed += s.recv(1) == b""
            except (socket.timeout, ConnectionResetError):
                pass
        assert closed == 20
        idle[0].settimeout(3 * HEADER_SECONDS)  # one that never sends its headers: closed after HEADER_SECONDS
        assert idle[0].recv(1) == b""
    finally:
        for s in idle:
            s.close()
    assert request(f"{service.url}api/hand-ins/{LESSON}", "t-di")[0] == 200


# ---------------------------------------------------------------- one learner fills the disk


def test_what_is_kept_of_a_learner_is_bounded_and_make_hand_ins_prunes_and_says_it(course, tmp_path):
    from course_grader.handin import status
    from course_grader.handin.store import KEPT, LEARNER_BYTES, Full, Store

    store = Store(course)
    big = solved(course) + b" " * (4 * 2**20)
    made = [store.add("rand", LESSON, big) for _ in range(3)]
    store.set_verdict(made[0], {"results": []})  # the graded one that counts
    made += [store.add("rand", LESSON, big) for _ in range(KEPT + 3)]
    kept = [h.folder.name for h in store.history("rand", LESSON)]
    assert kept == [made[0].folder.name] + [h.folder.name for h in made[-KEPT:]], "the latest, and the graded"
    for lesson in ("02_multi_head_attention", "03_feed_forward", "04_add_and_norm"):
        for _ in range(KEPT):
            store.add("rand", lesson, big)
    held = sum(f.stat().st_size for f in (course / "hand-ins" / "rand").rglob("*") if f.is_file())
    assert held <= LEARNER_BYTES, held
    with pytest.raises(Full, match="MB on the grader"):
        store.add("rand", "05_encoder_block", b" " * (LEARNER_BYTES - 4 * 2**20 * 5))
    old = course / "hand-ins" / "rand" / "06_stack"  # hand-ins from before the service pruned: make hand-ins does
    for i in range(KEPT + 5):
        shutil.copytree(made[-1].folder, old / f"2001-01-01T00-00-00.{i:06d}Z")
    said = "\n".join(status.lines(course))
    assert "MB freed" in said and " MB " in said and len(list(old.iterdir())) == KEPT, said


# ---------------------------------------------------------------- identity as the hub gives it


def test_a_look_alike_hub_account_is_not_the_classmate_it_looks_like(service, course):
    status, body = post(service, LESSON, "t-jose-decomposed", solved(course))
    assert status == 403 and "not on this course's roster" in body["message"], body


def test_an_id_that_is_no_safe_folder_name_is_collected_under_the_roster_s_id(service, course):
    from course_grader import collected
    from course_grader.handin.collect import take

    status, body = post(service, LESSON, "t-jose", solved(course))
    assert status == 202, body
    take(course, LESSON, out=lambda line: None, students={"josé"})
    assert (course / "submitted" / "josé" / LESSON / f"{LESSON}.ipynb").read_bytes() == solved(course)
    assert "josé" not in " ".join(collected.summary(course, LESSON)).split("not handed in")[-1]


def test_make_hand_in_service_config_lists_the_roster_ids_the_hub_cannot_have(course):
    from tools import classroom

    with open_gradebook(course) as gradebook:
        gradebook.update_or_create_student("Dave")
    try:
        problems = classroom.roster_problems(course)
    finally:
        with open_gradebook(course) as gradebook:
            gradebook.remove_student("Dave")
    assert problems == ["'Dave': the hub names this learner 'dave' (it lowercases every name): give the roster that "
                        "id"], problems


def test_a_revoked_token_is_refused_at_once(service, course, hub):
    status, body = post(service, LESSON, "t-revoked", solved(course))
    assert status == 202
    del hub.tokens["t-revoked"]
    try:
        assert request(f"{service.url}api/hand-ins/{body['key']}", "t-revoked")[0] == 403
        assert post(service, LESSON, "t-revoked", solved(course))[0] == 403
    finally:
        hub.tokens["t-revoked"] = "bo"


def test_the_kernels_reach_the_service_where_no_other_account_can_listen(service, course):
    """Its Unix socket is in a folder that only the service's account may change: while the service is down, no
    other account can take the socket's place (the port a squatter took before)."""
    folder = service.socket.parent
    assert request(f"{service.socket_url}api/hand-ins/{LESSON}", "t-di")[0] == 200
    info = folder.stat()
    assert info.st_uid == os.getuid() and info.st_mode & 0o777 == 0o711
    if os.geteuid() != 0:
        pytest.skip("trying as another account needs root")
    squat = [sys.executable, "-c", "import os, socket; os.setgid(65534); os.setuid(65534); "
             f"s = socket.socket(socket.AF_UNIX); s.bind({str(folder / 'other.sock')!r})"]
    result = subprocess.run(squat, capture_output=True, text=True)
    assert result.returncode != 0 and "PermissionError" in result.stderr, result.stderr


# ---------------------------------------------------------------- hidden cases


def test_an_unchanged_answer_is_never_run_again_so_its_verdict_tells_nothing_more(service, course):
    notebook = json.dumps(answer_in(json.loads(solved(course)), "softmax", FICKLE)).encode()
    shown = []
    for _ in range(5):
        status, body = post(service, LESSON, "t-cy", notebook)
        assert status == 202, body
        graded = verdict(service, body["key"], "t-cy")[1]
        assert graded["state"] == "graded", graded
        shown.append([e for e in graded["exercises"] if e["exercise"] == "softmax"])
    assert all(s == shown[0] for s in shown), shown
    known = json.loads((course / "hand-ins" / "cy" / LESSON / ".answers.json").read_text())
    assert len(known["softmax"]) == 1, "run once, then taken as marked"
    changed = notebook.replace(b"import time", b"import time  # changed")
    status, body = post(service, LESSON, "t-cy", changed)
    assert verdict(service, body["key"], "t-cy")[1]["state"] == "graded"
    known = json.loads((course / "hand-ins" / "cy" / LESSON / ".answers.json").read_text())
    assert len(known["softmax"]) == 2, "a changed answer is run, on hidden cases of its own"


# ---------------------------------------------------------------- the solutions


def test_the_course_s_solution_is_given_at_the_learner_s_due_date_never_before(service, course, hub, tmp_path):
    status, body = request(f"{service.url}api/solutions/softmax", "t-di")
    assert status == 403 and "opens after 01_attention's due date" in body["message"], body
    late = tmp_path / "course"
    shutil.copytree(course, late, symlinks=True, ignore=shutil.ignore_patterns("*.sock", "hand-ins"))
    with open_gradebook(late) as gradebook:
        gradebook.update_or_create_assignment(LESSON, duedate=datetime.datetime(2001, 1, 1))
    with ServiceProcess(late, hub.url) as after:
        status, body = request(f"{after.url}api/solutions/softmax", "t-di")
        assert status == 200 and body["source"].startswith("def softmax"), body
        assert request(f"{after.url}api/solutions/softmax", None)[0] == 401


# ---------------------------------------------------------------- a restart loses nothing a learner sees


KERNEL = ("import json, sys; from encoder_lib.grading import hand_in; "
          "print('STATE', json.dumps(hand_in('01_attention', path=sys.argv[1], wait=300)))")


def test_a_restart_loses_no_verdict_every_learner_s_notebook_shows_its_own(course, hub, tmp_path):
    """Five learners hand in with grading.hand_in() as their kernels run it; the service is killed as the notebooks
    arrive (its supervisor starts it again at once), then it and its supervisor are killed for a while (as the hub
    restarts a service it finds dead): every notebook shows its verdict."""
    learners = [f"class{i}" for i in range(5)]
    notebook = tmp_path / f"{LESSON}.ipynb"
    notebook.write_bytes(solved(course))
    with ServiceProcess(course, hub.url) as service:
        kernels = [subprocess.Popen([sys.executable, "-c", KERNEL, str(notebook)], stdout=subprocess.PIPE, text=True,
                                    env={**os.environ, "JUPYTERHUB_API_TOKEN": f"t-{learner}",
                                         "ENCODER_COURSE_HAND_IN_URL": service.socket_url})
                   for learner in learners]
        time.sleep(1.0)
        os.kill(service.service_pid(), signal.SIGKILL)  # the supervisor starts it again at once
        service.wait_ready()
        time.sleep(1.0)
        service.stop(signal.SIGKILL)  # supervisor and all: down until started again
        time.sleep(5)
        service.start()
        shown = [json.loads(k.communicate(timeout=600)[0].split("STATE ", 1)[1]) for k in kernels]
    assert [s["state"] for s in shown] == ["graded"] * len(learners), shown
    assert all(s["points"] == s["max_points"] > 0 for s in shown), shown


# ---------------------------------------------------------------- make collect on a hub with the service alone


def test_make_collect_on_a_hub_with_the_service_alone_collects_its_hand_ins(course, tmp_path):
    from course_grader.handin.store import Store

    root = tmp_path / "course"
    shutil.copytree(course, root, symlinks=True, ignore=shutil.ignore_patterns("*.sock", "hand-ins", "submitted"))
    shutil.copy(Path(__file__).parents[2] / "Makefile", root / "Makefile")
    (root / ".venv").symlink_to(Path(sys.executable).parent.parent)
    config = (root / "nbgrader_config.py").read_text()
    (root / "nbgrader_config.py").write_text(config.replace('EXCHANGE = "/srv/nbgrader/exchange"',
                                                            f"EXCHANGE = {str(tmp_path / 'no-exchange')!r}"))
    Store(root).add("ada", LESSON, solved(course))
    made, _, _ = make_measured("collect", root, 300, LESSON=LESSON)
    assert made.returncode == 0, made.stdout + made.stderr
    assert "no nbgrader exchange" in made.stderr + made.stdout
    assert (root / "submitted" / "ada" / LESSON / f"{LESSON}.ipynb").read_bytes() == solved(course)
