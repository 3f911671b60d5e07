"""A class's whole round trip on a real JupyterHub: hand out, work, update, hand in, grade.

On 127.0.0.1 (free ports, a scratch folder, everything stopped and removed
whatever happens): JupyterHub from the server environment `make hub-install`
makes, configurable-http-proxy from npm, the dummy authenticator and the
simple local process spawner; two learners and a teacher.

1. Each learner clicks the teachers' page's nbgitpuller link (its own template, with
   this hub and git URL put in) in headless Chromium: the lessons arrive,
   the start notebook opens in JupyterLab, Run All shows its widget with its
   picture, and the widget's slider changes the picture.
2. A learner answers lesson 01's exercises in JupyterLab and saves; the
   teacher changes a lesson and publishes (`make publish-student`, `git push
   origin student-versions`); the learner's next click keeps the answers and
   brings the change.
3. Hand-in with nbgrader's exchange (docs/teaching/hand-out.md) and with the hand-in service
   (docs/teaching/hand-in-service.md: each learner's grading.hand_in() with their server's own token, the
   verdict in seconds, the service's page through the hub's login): the teacher
   releases lesson 01; one learner hands in the nbgitpuller copy, the other
   fetches the released lesson, answers it there and hands it in; the teacher
   collects, and `make grade` scores them: the first all right, the second
   with its wrong attention (no 1/sqrt(d_k)).
4. The teacher's `make release-feedback` hands the pages back through
   nbgrader's feedback exchange; the second learner's `nbgrader
   fetch_feedback` gets their own page only.

The commands are the teachers' page's (``tools.classroom``; ``test_the_teachers_page_quotes``
checks the page against it). Skipped locally without configurable-http-proxy
(npm) or Chromium, with the reason; under CI they are failures.
"""

import asyncio
import concurrent.futures
import csv
import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from conftest import in_ci
from tests import hub as hubs
from tools import classroom

ROOT = Path(__file__).resolve().parent.parent
LESSON = classroom.LESSON
LEARNERS = ("alice", "bob")

SOFTMAX = '''def softmax(x, axis=-1):
    """Softmax of `x` along `axis`."""
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)
'''
# right on the whole contract (issue 49): math.sqrt keeps a float32 q float32, where np.sqrt's float64 scalar would
# promote it (NumPy 2), and the statement asks for q's dtype
ATTENTION_RIGHT = '''def scaled_dot_product_attention(q, k, v):
    """softmax(q k^T / sqrt(d_k)) v"""
    weights = softmax(q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1]), axis=-1)
    return weights @ v, weights
'''
# a typical mistake: the scores are not divided by sqrt(d_k)
ATTENTION_WRONG = '''def scaled_dot_product_attention(q, k, v):
    """softmax(q k^T) v"""
    weights = softmax(q @ np.swapaxes(k, -1, -2), axis=-1)
    return weights @ v, weights
'''
TEACHER_CHANGE = "A note from your teacher, published after the first click."


def skip_or_fail(reason):
    if in_ci():
        pytest.fail(f"CI must run the classroom test: {reason}", pytrace=False)
    pytest.skip(reason)


TEACHING = ROOT / "docs" / "teaching" / "hand-out.md"


def readme_link_template():
    """The nbgitpuller link as the teachers' page writes it (its ```text block)."""
    teaching = TEACHING.read_text()
    lines = [line.strip() for line in teaching.splitlines() if "/hub/user-redirect/git-pull?" in line]
    assert lines, "docs/teaching/hand-out.md shows no nbgitpuller link"
    return lines[0]


# ------------------------------------------------------------------ docs/teaching/hand-out.md == tools.classroom

def test_the_teachers_page_quotes_the_classroom_commands_verbatim():
    teaching = TEACHING.read_text()
    for name, block in classroom.readme_blocks().items():
        assert block in teaching, f"docs/teaching/hand-out.md lacks tools.classroom's {name!r} block (python -m tools.classroom):\n{block}"


def test_zero_to_jupyterhub_names_each_hand_in_after_the_hub_user_not_jovyan():
    """Every container of a Zero to JupyterHub runs as jovyan: the learners' nbgrader settings in config.yaml must
    take the student id from the hub's user name, as the file `make hub-install` writes does."""
    import yaml

    config = yaml.safe_load(classroom.Z2JH_CONFIG)["singleuser"]
    settings = config["extraFiles"]["nbgrader-config"]["stringData"]
    for user in ("alice", None):
        namespace = {"get_config": lambda: _Config(), "__name__": "nbgrader_config"}
        environ = {"JUPYTERHUB_USER": user} if user else {}
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr("os.environ", environ)
            exec(compile(settings, "nbgrader_config.py", "exec"), namespace)  # noqa: S102
        c = namespace["c"]
        assert c.CourseDirectory.course_id == classroom.COURSE_ID and c.Exchange.root == classroom.EXCHANGE
        assert getattr(c.CourseDirectory, "student_id", None) == user
    mounts = {m["mountPath"] for m in config["storage"]["extraVolumeMounts"]}
    assert classroom.EXCHANGE in mounts, "the exchange folder must be the shared volume"


class _Config:
    """A stand-in for traitlets' config: attribute sections that hold what the settings file assigns."""

    def __getattr__(self, name):
        section = type("Section", (), {})()
        setattr(self, name, section)
        return section


def test_the_link_template_is_the_published_branch_s_start_notebook():
    from conftest import load_tool

    assert classroom.BRANCH == load_tool("publish_student").BRANCH
    assert readme_link_template() == classroom.gitpuller_link()
    assert (ROOT / "notebooks" / classroom.START).is_file()
    assert (ROOT / "notebooks" / LESSON / f"{LESSON}.ipynb").is_file()


def test_hub_install_installs_the_hub_s_packages_pinned():
    from conftest import load_tool

    hub_install = load_tool("hub_install")
    pins = hub_install.hub_packages("/nonexistent")
    assert any(p.startswith("jupyterhub==") for p in pins) and any(p.startswith("nbgitpuller==") for p in pins)
    assert all("==" in p for p in pins)
    assert f'proxy="{classroom.PROXY_NPM}"' in (ROOT / ".ci" / "install").read_text(), ".ci/install installs another proxy"
    config = classroom.exchange_config("/scratch/exchange")
    namespace = {"get_config": lambda: type("C", (), {"__getattr__": lambda s, k: s.__dict__.setdefault(k, type("S", (), {})())})()}
    exec(config, namespace)  # noqa: S102 - our own generated file
    c = namespace["c"]
    assert c.CourseDirectory.course_id == classroom.COURSE_ID and c.Exchange.root == "/scratch/exchange"


def test_the_exchange_is_one_setting_for_the_teacher_and_the_learners():
    """The course's nbgrader_config.py names the exchange (nbgrader reads it there for the teacher's commands),
    and the learners' settings `make hub-install` writes come from that same value; the teachers' page says which."""
    from traitlets.config.loader import PyFileConfigLoader

    teacher = PyFileConfigLoader("nbgrader_config.py", path=str(ROOT)).load_config()
    assert teacher.Exchange.root == classroom.EXCHANGE == classroom.course_setting("exchange")
    assert classroom.EXCHANGE != "/usr/local/share/nbgrader/exchange"  # nbgrader's own default is not relied on
    learners = classroom.exchange_config(classroom.course_setting("exchange"))
    assert f"c.Exchange.root = {classroom.EXCHANGE!r}" in learners
    readme = TEACHING.read_text()
    assert f"`{classroom.EXCHANGE}`" in readme and "EXCHANGE" in readme
    assert "nbgrader's `/srv/nbgrader/exchange`" not in readme and "EXCHANGE=" not in readme


# ------------------------------------------------------------------ the round trip

@pytest.fixture(scope="module")
def tools_present():
    from tests.browser import missing_browser

    reason = hubs.missing_tools() or missing_browser()
    if reason:
        skip_or_fail(reason)


@pytest.fixture
def scratch(tmp_path):
    """The class's folder (homes, the teacher's course, its remote, the exchange, the hub's files), removed
    whatever happens; the hub's log is kept beside it for a failure's diagnosis."""
    folder = tmp_path / "classroom"
    folder.mkdir()
    yield folder
    if (folder / "jupyterhub.log").exists():
        shutil.copy(folder / "jupyterhub.log", tmp_path / "jupyterhub.log")
    shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.timeout(1500)
def test_a_class_round_trip_on_a_real_jupyterhub(tools_present, server_env, scratch, request):
    timings = {}
    exchange = scratch / "exchange"
    exchange.mkdir()
    exchange.chmod(0o1777)  # classroom.exchange_setup(), without sudo

    # the teacher: a copy of the course, its remote; the course's one exchange setting (nbgrader_config.py's
    # EXCHANGE, as the teachers' page says to change it) pointed at this class's folder
    course, remote = hubs.teacher_course(scratch)
    config = course / "nbgrader_config.py"
    text = config.read_text()
    assert f'EXCHANGE = "{classroom.EXCHANGE}"' in text
    config.write_text(text.replace(f'EXCHANGE = "{classroom.EXCHANGE}"', f"EXCHANGE = {str(exchange)!r}"))
    teacher_home = scratch / "teacher" / "home"
    teacher_home.mkdir(parents=True)

    # the server environment: `make hub-install` from the teacher's copy, which writes the learners' settings
    # from that same line
    t0 = time.perf_counter()
    result = subprocess.run(["make", "-C", str(course), "hub-install", f"PREFIX={server_env}"],
                            capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    timings["hub-install (again)"] = time.perf_counter() - t0
    for program in ("jupyterhub", "jupyterhub-singleuser", "nbgrader"):
        assert (server_env / "bin" / program).exists(), f"make hub-install did not install {program}"
    learners_config = (server_env / "etc" / "jupyter" / "nbgrader_config.py").read_text()
    assert f"c.Exchange.root = {str(exchange)!r}" in learners_config

    teacher_env = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER", "JPY_"))}
    teacher_env.update(HOME=str(teacher_home), GIT_TERMINAL_PROMPT="0")
    for command in classroom.TEACHER["publish"]:
        seconds, _ = hubs.run_teacher(course, command, teacher_env)
        timings[f"teacher: {command}"] = seconds

    # the roster (docs/teaching/grading.md), and the hand-in service the hub starts (make hand-in-service-config)
    for user in LEARNERS:
        hubs.run_teacher(course, f".venv/bin/nbgrader db student add {user}", teacher_env)
    hub = hubs.LocalHub(scratch, server_env, LEARNERS)
    service_port = hubs.free_port()
    # a Unix socket's path holds at most 100 bytes; pytest's folders under xdist (popen-gw2/...) are longer
    short_folder = Path(tempfile.mkdtemp(prefix="hub-", dir="/tmp"))
    request.addfinalizer(lambda: shutil.rmtree(short_folder, ignore_errors=True))
    hub.extra_config = classroom.hand_in_service_config(course, service_port, environment={hubs.MARKER: hub.token},
                                                        socket=short_folder / "hand-in.sock")
    with hub:
        link = hubs.link_for(readme_link_template(), hub.base, remote)
        # in a thread of its own: the session's sync Playwright (conftest's one Chromium) may hold this one's loop
        with concurrent.futures.ThreadPoolExecutor(1) as thread:
            thread.submit(asyncio.run, _round_trip(hub, course, teacher_env, link, timings)).result()
    assert not hubs.marked_processes(hub.token), "a process of the hub outlived it"

    # grade: both learners scored as their answers deserve
    seconds, output = hubs.run_teacher(course, classroom.TEACHER["grade"][0], teacher_env)
    timings["teacher: make grade"] = seconds
    assert "2 graded when handed in (the hand-in service)" in output, output[-3000:]
    rows = list(csv.DictReader(open(course / "grades_by_exercise.csv")))
    for user, shown in SHOWN.items():  # what each learner's notebook showed is what make grade writes
        written = {r["exercise"]: (float(r["points"]), r["status"]) for r in rows
                   if r["student_id"] == user and r["lesson"] == LESSON}
        assert {e["exercise"]: (e["points"], e["status"]) for e in shown["exercises"]} == written, user
    feedback = (course / "feedback" / "bob" / "index.html").read_text()
    got = {(r["student_id"], r["exercise"]): (float(r["points"]), r["status"]) for r in rows if r["lesson"] == LESSON}
    assert got == {
        ("alice", "softmax"): (2.0, "passed"),
        ("alice", "scaled_dot_product_attention"): (2.0, "passed"),
        ("bob", "softmax"): (2.0, "passed"),
        ("bob", "scaled_dot_product_attention"): (0.0, "failed"),
    }, output[-3000:]
    assert "scaled_dot_product_attention" in feedback

    # 4. feedback handed back through nbgrader's exchange: each learner fetches their own page only
    seconds, output = hubs.run_teacher(course, classroom.TEACHER["release-feedback"][0], teacher_env)
    timings["teacher: make release-feedback"] = seconds
    assert "2 pages released through nbgrader's feedback exchange" in output, output[-3000:]
    t0 = time.perf_counter()
    hub.run_as_learner("bob", classroom.LEARNER_FEEDBACK)
    timings["bob: fetch_feedback"] = time.perf_counter() - t0
    [fetched] = (hub.home("bob") / LESSON / "feedback").glob(f"*/{LESSON}.html")
    lesson_page = (course / "feedback" / "bob" / f"{LESSON}.html").read_text()
    assert fetched.read_text() == lesson_page, "bob's own page of the lesson, as make grade wrote it"
    assert "Feedback for bob" in lesson_page and "alice" not in lesson_page
    print("\nclassroom round trip, seconds:")
    for name, seconds in timings.items():
        print(f"  {name:48s} {seconds:7.1f}")


async def _round_trip(hub, course, teacher_env, link, timings):
    lesson_path = f"{classroom.TARGET}/{LESSON}/{LESSON}.ipynb"
    async with hubs.chromium() as browser:
        contexts = {user: await browser.new_context(viewport={"width": 1280, "height": 900}) for user in LEARNERS}
        # 1. each learner clicks the link: the lessons arrive, the start notebook shows its widget, which responds
        for user in LEARNERS:
            page, seconds = await hubs.click_link(contexts[user], link, user)
            timings[f"{user}: first click to notebook"] = seconds["notebook"]
            timings[f"{user}: first click to widget shown"] = seconds["widget"]
            home = hub.home(user) / classroom.TARGET
            lessons = sorted(p.name for p in home.iterdir() if p.is_dir() and not p.name.startswith("."))
            assert lessons == sorted(p.name for p in (ROOT / "notebooks").iterdir() if any(p.glob("*.ipynb")))
            assert await hubs.widget_responds(page)
            dialogs = await page.evaluate("() => [...document.querySelectorAll('.jp-Dialog, .Toastify__toast')]"
                                          ".map(e => e.textContent)")
            assert not dialogs, f"{user} sees pop-ups: {dialogs}"
            errors = await page.evaluate("() => [...document.querySelectorAll('.jp-OutputArea-output')]"
                                         ".filter(o => /error|stderr/.test(o.getAttribute('data-mime-type') || ''))"
                                         ".map(o => o.textContent.slice(0, 300))")
            assert not errors, f"the start notebook shows errors to {user}: {errors}"
            menus = await page.evaluate("() => [...document.querySelectorAll('.lm-MenuBar-itemLabel')]"
                                        ".map(e => e.textContent)")
            assert "Run" in menus and not [m for m in menus if "nbgrader" in m.lower()], \
                f"{user} sees nbgrader's teacher menu: {menus}"
            await page.close()

        # 2. alice answers lesson 01 in the nbgitpuller copy and saves
        notebook = hub.home("alice") / lesson_path
        cells = hubs.answer_cells(notebook)
        t0 = time.perf_counter()
        page = await hubs.answer_exercise(contexts["alice"], hub.base, "alice", lesson_path, {
            cells["softmax_answer"]: SOFTMAX, cells["scaled_dot_product_attention_answer"]: ATTENTION_RIGHT})
        assert hubs.wait_for_file(notebook, lambda text: "math.sqrt(q.shape[-1])" in text and "x.max(axis" in text), \
            "alice's answers were not saved"
        timings["alice: answer and save"] = time.perf_counter() - t0
        await page.close()

        # the teacher changes lesson 02 and publishes it
        changed = course / "notebooks" / "02_multi_head_attention" / "02_multi_head_attention.ipynb"
        nb = json.loads(changed.read_text())
        nb["cells"][0]["source"] = "".join(nb["cells"][0]["source"]) + f"\n\n{TEACHER_CHANGE}"
        changed.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n")
        for command in classroom.TEACHER["publish"]:
            seconds, _ = hubs.run_teacher(course, command, teacher_env)
            timings[f"teacher: {command} (update)"] = seconds

        # alice clicks again: her answers stay, the change arrives (the widget was shown to work on the first
        # click: this one opens the notebook, without running it all again)
        page, seconds = await hubs.click_link(contexts["alice"], link, "alice", logged_in=True, run=False)
        timings["alice: second click to notebook"] = seconds["notebook"]
        await page.close()
        text = notebook.read_text()
        assert "math.sqrt(q.shape[-1])" in text and "x.max(axis" in text, "the update lost alice's answers"
        updated = hub.home("alice") / classroom.TARGET / "02_multi_head_attention" / "02_multi_head_attention.ipynb"
        assert TEACHER_CHANGE in updated.read_text(), "the teacher's update did not arrive"

        # 3. hand-in through nbgrader's exchange
        t0 = time.perf_counter()
        hubs.run_teacher(course, classroom.TEACHER["release"][0], teacher_env)
        timings["teacher: release_assignment"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        hub.run_as_learner("alice", classroom.LEARNER_PULLED)
        timings["alice: submit"] = time.perf_counter() - t0
        fetch, submit = classroom.LEARNER_FETCHED[:2], classroom.LEARNER_FETCHED[:1] + classroom.LEARNER_FETCHED[2:]
        t0 = time.perf_counter()
        hub.run_as_learner("bob", fetch)
        timings["bob: fetch_assignment"] = time.perf_counter() - t0
        fetched = hub.home("bob") / LESSON / f"{LESSON}.ipynb"
        assert fetched.is_file()
        cells = hubs.answer_cells(fetched)
        page = await hubs.answer_exercise(contexts["bob"], hub.base, "bob", f"{LESSON}/{LESSON}.ipynb", {
            cells["softmax_answer"]: SOFTMAX, cells["scaled_dot_product_attention_answer"]: ATTENTION_WRONG})
        assert hubs.wait_for_file(fetched, lambda text: "softmax(q @ np.swapaxes(k, -1, -2), axis=-1)" in text), \
            "bob's answers were not saved"
        await page.close()
        t0 = time.perf_counter()
        hub.run_as_learner("bob", submit)
        timings["bob: submit"] = time.perf_counter() - t0
        t0 = time.perf_counter()  # alice presses the Hand in button her lesson ends with, in JupyterLab
        shown = await hubs.press_hand_in(contexts["alice"], hub.base, "alice", lesson_path)
        assert f"Handed in {LESSON} at" in shown and "4 of 4 points" in shown, shown
        timings["alice: Run All, Hand in pressed, verdict shown"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        _hand_in_through_the_service(hub, course, {"alice": notebook, "bob": fetched})
        timings["alice and bob: hand_in(), bounds, a crash and the restart"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        for user in LEARNERS:  # the service's page, through the hub's login: each learner's own verdicts only
            page = await contexts[user].new_page()
            points = f"{SHOWN[user]['points']:g} of {SHOWN[user]['max_points']:g} points"
            for _ in range(60):  # the latest hand-in may still be in line (alice's hundred, bob's after the crash)
                await page.goto(f"{hub.base}/services/{classroom.SERVICE}/", wait_until="domcontentloaded")
                await page.wait_for_selector("main h1", timeout=120_000)
                text = await page.inner_text("main")
                if points in text:
                    break
                await asyncio.sleep(1)
            other = next(u for u in LEARNERS if u != user)
            assert f"Your hand-ins, {user}" in text and f"Handed in {LESSON} at" in text and other not in text, text
            assert points in text, text
            await page.close()
        timings["alice and bob: the service's page"] = time.perf_counter() - t0
        inbound = sorted(p.name.split("+")[0] for p in (Path(exchange_root(hub)) / classroom.COURSE_ID / "inbound")
                         .iterdir())
        assert inbound == ["alice", "bob"], inbound
        t0 = time.perf_counter()
        hubs.run_teacher(course, classroom.TEACHER["collect"][0], teacher_env)
        timings["teacher: collect"] = time.perf_counter() - t0
        for user in LEARNERS:
            assert (course / "submitted" / user / LESSON / f"{LESSON}.ipynb").is_file()
        for context in contexts.values():
            await context.close()


#: What each learner's notebook showed after grading.hand_in(): {user: the state the service gave}.
SHOWN = {}
HAND_IN = ("import json; from encoder_lib.grading import hand_in; "
           "print('STATE', json.dumps(hand_in({lesson!r}, path={path!r}, wait=240)))")


def _hand_in_through_the_service(hub, course, notebooks):
    """3b. Each learner hands in with grading.hand_in(), as their kernel runs it (their server's token): filed under
    the name the hub gives that token, graded, the verdict shown; a forged token refused by the real hub."""
    from course_grader.handin.store import Store
    from tests.grader.hand_in_service import request

    for user, notebook in notebooks.items():
        environ = hub.server_environment(user)
        assert environ.get(classroom.SERVICE_URL_VARIABLE, "").endswith(f"/services/{classroom.SERVICE}/")
        output = hub.in_learner_kernel(user, HAND_IN.format(lesson=LESSON, path=str(notebook)), notebook.parent)
        state = json.loads(output.split("STATE ", 1)[1])
        assert state["state"] == "graded" and f"Handed in {LESSON} at" in output, output[-2000:]
        assert {h.student for h in Store(course).history(user, LESSON)} == {user}
        SHOWN[user] = state
    [bob_attention] = [e for e in SHOWN["bob"]["exercises"] if e["exercise"] == "scaled_dot_product_attention"]
    assert bob_attention["points"] == 0 and "1/sqrt(d_k)" in bob_attention["note"], bob_attention
    url = hub.server_environment("alice")[classroom.SERVICE_URL_VARIABLE]
    status, body = request(f"{url}api/hand-ins/{LESSON}", "a-forged-token", notebooks["alice"].read_bytes())
    assert status == 403 and "does not know this token" in body["message"], body
    status, body = request(f"{url}api/hand-ins/{LESSON}", None, notebooks["alice"].read_bytes())
    assert status == 401, body
    _bounded_on_the_hub(hub, url, notebooks)
    _nothing_hidden_shown(course, notebooks["bob"], SHOWN["bob"])
    _a_crash_loses_nothing(hub, course, url, notebooks["bob"])


def _bounded_on_the_hub(hub, url, notebooks):
    """With alice's own token: a notebook over the bound refused, naming it; thirty hand-ins in a minute take at
    most the rate's worth, and bob's next is graded as soon as a grader is free."""
    from course_grader.handin.service import MOST_BYTES, PER_MINUTE
    from tests.grader.hand_in_service import request

    token = hub.server_environment("alice")["JUPYTERHUB_API_TOKEN"]
    status, body = request(f"{url}api/hand-ins/{LESSON}", token, b" " * (MOST_BYTES + 1))
    assert status == 413 and f"{MOST_BYTES // 2**20} MB" in body["message"], body
    answers = [request(f"{url}api/hand-ins/{LESSON}", token, notebooks["alice"].read_bytes())[0]
               for _ in range(PER_MINUTE + 20)]  # past the rate each refusal waits a second: all within the minute
    assert answers.count(202) < PER_MINUTE and answers.count(429) > 20, answers
    output = hub.in_learner_kernel("bob", HAND_IN.format(lesson=LESSON, path=str(notebooks["bob"])),
                                   notebooks["bob"].parent)
    assert json.loads(output.split("STATE ", 1)[1])["state"] == "graded", output[-2000:]


def _nothing_hidden_shown(course, notebook, shown):
    """What bob's notebook showed holds none of the hidden checks the grader drew for his answer cell."""
    import hashlib

    from course_grader.cases import hidden_cases, visible_cases
    from course_grader.version import course_secret

    name = "scaled_dot_product_attention"
    [source] = ["".join(c["source"]) for c in json.loads(notebook.read_text())["cells"]
                if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == f"{name}_answer"]
    drawn = hidden_cases(name, course_secret(course), hashlib.sha256(source.encode()).hexdigest())
    described = {c.description for c in drawn} - {c.description for c in visible_cases(name)}
    assert described and not [d for d in described if d in json.dumps(shown)]


def _a_crash_loses_nothing(hub, course, url, notebook):
    """bob hands in with grading.hand_in() as his kernel runs it; as the notebook lands the service is killed (its
    supervisor starts it again at once), then the supervisor itself (the hub starts it again, and the service it had
    just started dies with it: no orphan keeps the sockets from the next one): his notebook shows the verdict all
    the same, and the notebook was on disk all along."""
    import signal
    import subprocess

    from course_grader.handin.store import Store
    from tests.grader.hand_in_service import request

    before = len(Store(course).history("bob", LESSON))
    kernel = subprocess.Popen([str(hub.prefix / "bin" / "python"), "-c", HAND_IN.format(lesson=LESSON,
                               path=str(notebook)).replace("wait=240", "wait=400")],
                              cwd=notebook.parent, env=hub.server_environment("bob"), stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 120
    while len(Store(course).history("bob", LESSON)) == before and time.monotonic() < deadline:
        time.sleep(0.05)
    for whole in (False, True):
        services = [p for p in hubs.marked_processes(hub.token) if "course_grader.handin.service" in hubs._cmdline(p)]
        [supervisor] = [pid for pid in services if hubs.parent_of(pid) not in services]
        os.kill(supervisor if whole else next(p for p in services if hubs.parent_of(p) == supervisor), signal.SIGKILL)
        time.sleep(3)  # the service the supervisor started again may still be starting when the supervisor dies
    assert not set(services) & set(hubs.marked_processes(hub.token)), "a service outlived its supervisor"
    latest = Store(course).history("bob", LESSON)[-1]
    assert latest.notebook.read_bytes() == notebook.read_bytes()
    output = kernel.communicate(timeout=600)[0]
    state = json.loads(output.split("STATE ", 1)[1])
    assert state["state"] == "graded" and state["key"] == latest.key, output[-2000:]
    # the kernel may have had its verdict before the kills: the service the hub starts again (at its next poll, up to
    # 30 s) answers through the proxy, where the learners' page is (before, the hub's 503 page stayed up and the
    # browser's wait for the page gave up after two minutes)
    token, status, deadline = hub.server_environment("bob")["JUPYTERHUB_API_TOKEN"], None, time.monotonic() + 120
    while status != 200 and time.monotonic() < deadline:
        try:
            status = request(f"{hub.base}/services/{classroom.SERVICE}/api/hand-ins/{LESSON}", token, timeout=10)[0]
        except OSError as error:
            status = error
        time.sleep(0 if status == 200 else 1)
    assert status == 200, f"the service the hub started again did not answer through its proxy in 120 s ({status})"


def exchange_root(hub):
    return hub.scratch / "exchange"  # the test's `exchange`: the hub's scratch folder is the class's
