"""`make grade` on a Dask cluster (issue 31): a scheduler and two workers that this test starts on 127.0.0.1, as
docs/teaching/several-machines.md starts them by hand, grade a class as the local pool grades it, and a worker killed mid-run costs the
class nothing.

The class: twelve learners handing in every lesson with exercises, correct, as released, with one catalogued
mistake, or correct up to a lesson; graded once by the local pool (the reference), then in copies of the same
course through the cluster. Every file the teacher's process writes (grades_by_exercise.csv, grades_lms.csv,
grading.json, the notebook as graded, the feedback pages) must be the same, byte for byte.
"""

import contextlib
import dataclasses
import shutil
import tempfile
import time
from pathlib import Path

import nbformat
import pytest

from conftest import require
from encoder_lib.grading import EXERCISES
from course_grader import cluster, workers
from course_grader.learner import Graded, NotebookToGrade, Task
from course_grader.plan import course_secret, plan_run
from course_grader.refused import Refused
from course_grader.run import grade_class
from course_grader.sandbox import Limits
from course_grader.sandbox.session import remove_stale
from grading_helpers import course_after_make_student
from hub import descendants
from mistakes import MISTAKES

LEARNERS = 12
KINDS = ("correct", "blank", "mistake", "partly done")
LESSONS = list(dict.fromkeys(e.lesson for e in EXERCISES.values()))


def hand_in_class(root):
    """Twelve learners, each handing in every lesson (``KINDS`` in turn, each mistake a different one)."""
    solved = {lesson: nbformat.read(root / "notebooks" / lesson / f"{lesson}.ipynb", as_version=4) for lesson in LESSONS}
    blank = {lesson: nbformat.read(root / "release" / lesson / f"{lesson}.ipynb", as_version=4) for lesson in LESSONS}
    for i in range(LEARNERS):
        kind, mistake = KINDS[i % len(KINDS)], MISTAKES[(5 * i) % len(MISTAKES)]
        for n, lesson in enumerate(LESSONS):
            nb = nbformat.from_dict(blank[lesson] if kind == "blank" or (kind == "partly done" and n > i % 7)
                                    else solved[lesson])
            for cell in nb.cells if kind == "mistake" and mistake.lesson == lesson else ():
                if cell.metadata.get("nbgrader", {}).get("grade_id") == f"{mistake.exercise}_answer":
                    cell.source = mistake.source.strip() + "\n"
            nb.metadata["learner"] = f"learner-{i:02d}"  # every notebook's bytes differ
            folder = root / "submitted" / f"learner-{i:02d}" / lesson
            folder.mkdir(parents=True)
            nbformat.write(nb, folder / f"{lesson}.ipynb")


def written(root):
    """Every file the grader wrote for the class, by its path: the CSV files, grading.json, the notebooks as graded
    and the feedback pages."""
    files = [root / "grades_by_exercise.csv", root / "grades_lms.csv", *sorted((root / "autograded").rglob("*")),
             *sorted((root / "feedback").rglob("*.html"))]
    return {str(path.relative_to(root)): path.read_bytes() for path in files if path.is_file()}


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """The class's course as `make student` and the hand-ins left it, before any grading."""
    require("distributed", "make grade's Dask cluster needs it (requirements.txt)")
    root = course_after_make_student(tmp_path_factory, "cluster-course")
    hand_in_class(root)
    course_secret(root)  # one secret for every copy: the same hidden cases wherever it is graded
    return root


@pytest.fixture(scope="module")
def reference(course, tmp_path_factory):
    """The class graded by the local pool (two workers): what the cluster must write too."""
    root = copy_of(course, tmp_path_factory.mktemp("local"))
    rows, summary = grade_class(plan_run(root), jobs=2, out=lambda line: None)
    assert not summary["machine"] and summary["regraded"] == LEARNERS * len(LESSONS)
    return written(root)


def copy_of(course, folder):
    root = folder / "course"
    shutil.copytree(course, root, symlinks=True)
    return root


def assert_written_as(reference, root):
    graded = written(root)
    assert sorted(graded) == sorted(reference)
    assert [path for path in reference if graded[path] != reference[path]] == []


@pytest.mark.grading
@pytest.mark.slow
@pytest.mark.timeout(900)
def test_a_class_graded_on_a_two_worker_cluster_is_graded_as_the_local_pool_grades_it(course, reference,
                                                                                       tmp_path_factory):
    from dask_cluster import LocalCluster

    root = copy_of(course, tmp_path_factory.mktemp("cluster"))
    with LocalCluster(tmp_path_factory.mktemp("dask"), workers=2) as dask:
        rows, summary = grade_class(plan_run(dask.certify(root)), out=lambda line: None, scheduler=dask.address)
        again = grade_class(plan_run(root), out=lambda line: None, scheduler=dask.address)[1]
    assert not summary["machine"] and summary["regraded"] == LEARNERS * len(LESSONS)
    assert_written_as(reference, root)
    assert again["regraded"] == 0 and again["reused"] == LEARNERS * len(LESSONS)  # stored as the local pool stores


@pytest.mark.grading
@pytest.mark.slow
@pytest.mark.timeout(900)
def test_a_worker_started_as_the_docs_give_it_under_its_nanny_grades_the_class(course, reference, tmp_path_factory):
    """Issue 39, item 9: under its nanny (the documented `dask worker --nworkers 1`), a Dask worker is a daemonic
    process, and every learner's task failed ("daemonic processes are not allowed to have children")."""
    from dask_cluster import LocalCluster

    root = copy_of(course, tmp_path_factory.mktemp("nanny"))
    with LocalCluster(tmp_path_factory.mktemp("dask"), workers=1, threads=2, nanny=True) as dask:
        rows, summary = grade_class(plan_run(dask.certify(root)), out=lambda line: None, scheduler=dask.address)
    assert not summary["machine"] and summary["written"], summary["machine"][:3]
    assert_written_as(reference, root)


@pytest.mark.grading
@pytest.mark.slow
@pytest.mark.timeout(900)
def test_the_documented_cluster_listens_on_no_other_interface_than_the_one_it_is_given(tmp_path_factory):
    """distributed 2026.8.0's --no-dashboard still opened an HTTP dashboard on 0.0.0.0 (the scheduler's 8787, each
    worker's a random port), and --dashboard-address none crashes it: the guide's --dashboard-address 127.0.0.1:0
    keeps every dashboard on the loopback (issue 52, item 6)."""
    from dask_cluster import GUIDE, LocalCluster

    assert not [line for line in GUIDE.read_text().splitlines() if "dask " in line and "--no-dashboard" in line]
    with LocalCluster(tmp_path_factory.mktemp("dask"), workers=1, nanny=True) as dask:
        listening = dask.listening()
    assert listening and {address for address, _ in listening} == {"127.0.0.1"}, listening


def test_the_hand_in_service_s_cluster_in_its_own_process_serves_nothing_to_anyone():
    """The hand-in service's in-process cluster (``Cluster.here``) opened the scheduler's HTTP dashboard on
    0.0.0.0:8787 and its worker's on another port of every interface, with ``dashboard_address=None`` (helper-11's
    `ss -tlpn` on the hub): now only the loopback, and no page on either."""
    import urllib.error
    import urllib.request

    import psutil

    from course_grader.cluster import Cluster

    here = Cluster.here(2)
    try:
        assert here.client.submit(sum, [1, 2]).result(timeout=60) == 3
        listening = {tuple(c.laddr) for c in psutil.Process().net_connections("inet") if c.status == psutil.CONN_LISTEN}
        assert listening and {address for address, _ in listening} == {"127.0.0.1"}, listening
        for _, port in listening:
            for path in ("/status", "/info/main/workers.html", "/json/identity.json", "/metrics", "/health"):
                with pytest.raises(urllib.error.HTTPError, match="404"):
                    urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10)
    finally:
        here.close()


def test_the_course_s_cluster_admits_only_hosts_with_its_certificates(course, tmp_path_factory):
    """Issue 39, item 10: a Dask client that reached the scheduler read the course's secret from a worker's memory
    and could patch the workers' grading. The documented cluster speaks TLS both ways with certificates the course
    makes: a client without them is refused; make grade refuses a scheduler without TLS unless the course takes
    the risk in a setting named for it, and a tls:// one without the certificates."""
    from distributed import Client

    from course_grader import cluster_tls
    from course_grader.cluster import Cluster
    from course_grader.refused import Refused
    from dask_cluster import LocalCluster

    root = copy_of(course, tmp_path_factory.mktemp("tls"))
    with LocalCluster(tmp_path_factory.mktemp("dask"), workers=1) as dask:
        assert dask.address.startswith("tls://")
        ca, cert, key = (dask.certificates / name for name in cluster_tls.FILES)
        assert _handshake(dask.address, ca, (cert, key)) and not _handshake(dask.address, ca)
        other = cluster_tls.make_certificates(tmp_path_factory.mktemp("other")).parent
        with pytest.raises((OSError, TimeoutError)):  # another course's: refused
            Client(dask.address, timeout=5, set_as_default=False, security=cluster_tls.security(other))
        with pytest.raises(Refused, match="the course has no certificates"):
            Cluster(dask.address, out=lambda line: None, security=cluster_tls.security(root))
        with contextlib.closing(Cluster(dask.address, out=lambda line: None,
                                        security=cluster_tls.security(dask.certify(root)))) as ours:
            assert ours.threads() == 1
    with pytest.raises(Refused, match=f"has no TLS: anyone who reaches it.*{cluster_tls.UNENCRYPTED}"):
        Cluster("tcp://127.0.0.1:1", out=lambda line: None)


def _handshake(address, ca, certificate=None):
    """Does a TLS client that trusts the scheduler at ``address`` complete its handshake, showing ``certificate``
    (``(cert, key)`` paths, or none)? TLS 1.2, where a server that asks for a client's certificate checks it in the
    handshake itself."""
    import socket
    import ssl

    host, port = address.removeprefix("tls://").rsplit(":", 1)
    context = ssl.create_default_context(cafile=str(ca))
    context.check_hostname, context.maximum_version = False, ssl.TLSVersion.TLSv1_2
    if certificate:
        context.load_cert_chain(*(str(path) for path in certificate))
    try:
        with socket.create_connection((host, int(port)), timeout=10) as raw, context.wrap_socket(raw):
            return True
    except (ssl.SSLError, OSError):
        return False


def test_a_dask_worker_keeps_nothing_of_the_secret_once_its_learner_is_graded(monkeypatch):
    """What a worker caches for a task (the grader's version, the hidden cases) is keyed by the course's secret:
    it is dropped when the task ends."""
    from course_grader import cases, cluster
    from course_grader.plan import grader_version

    secret = 123456789
    task = Task("ada", (), "/nowhere", secret, limits=Limits(), unsafe=False)
    monkeypatch.setattr(cluster, "host_pool", lambda: type("P", (), {"grade": staticmethod(lambda t: "graded")})())
    task = dataclasses.replace(task, version=grader_version(secret, task.limits))
    assert cluster.grade_remote(task) == "graded"
    assert cluster._own_version.cache_info().currsize == 0
    cases.hidden_cases("softmax", secret, "ab" * 32)
    assert cases._hidden_cases.cache_info().currsize >= 1  # other tests of this process may have left theirs
    cases.forget_hidden_cases()
    assert cases._hidden_cases.cache_info().currsize == 0


def _alive(pids):
    return {pid for pid in pids if Path(f"/proc/{pid}").exists()}


@pytest.mark.grading
@pytest.mark.slow
@pytest.mark.timeout(900)
def test_a_worker_killed_mid_run_costs_the_class_nothing(course, reference, tmp_path_factory):
    from dask_cluster import LocalCluster

    root, killed = copy_of(course, tmp_path_factory.mktemp("killed")), []
    with LocalCluster(tmp_path_factory.mktemp("dask"), workers=2) as dask:
        def out(line):
            if "learners graded" in line and not killed:  # the first learner recorded: both workers are busy
                killed.append(descendants(dask.workers[0].pid))
                dask.kill(0)

        rows, summary = grade_class(plan_run(dask.certify(root)), out=out, scheduler=dask.address)
        deadline = time.monotonic() + 60
        while _alive(killed[0]) and time.monotonic() < deadline:
            time.sleep(0.5)
    assert killed and killed[0], "no grader process had started on the worker that was killed"
    assert not _alive(killed[0]), "its grader processes and sandboxes end with the killed worker"
    remove_stale()  # what the next run on that machine does first: the killed graders' folders and cgroups go
    assert not [folder for pid in killed[0] for folder in Path(tempfile.gettempdir()).glob(f"encoder-grader-{pid}-*")]
    assert not summary["machine"] and summary["regraded"] == LEARNERS * len(LESSONS)
    assert_written_as(reference, root)


# ---------------------------------------------------------------- without a cluster


@pytest.mark.parametrize("value", ["8786", "http://host:8786", "tcp://", "tcp://a b:8786", "tcp://host:port", 7])
def test_a_scheduler_that_is_not_an_address_is_refused_naming_the_setting(value):
    with pytest.raises(Refused, match="DASK_SCHEDULER .* must be a Dask scheduler's address, tcp://host:8786"):
        cluster.address(given=value)


def test_the_scheduler_comes_from_dask_scheduler_else_the_course_s_setting_else_none(tmp_path, monkeypatch):
    monkeypatch.delenv("DASK_SCHEDULER", raising=False)
    assert cluster.address(tmp_path) is None
    (tmp_path / "nbgrader_config.py").write_text("c = get_config()\nc.EncoderCourse.scheduler = 'tcp://course:8786'\n")
    assert cluster.address(tmp_path) == "tcp://course:8786"
    monkeypatch.setenv("DASK_SCHEDULER", "tls://10.0.0.7:8786")
    assert cluster.address(tmp_path) == "tls://10.0.0.7:8786"
    monkeypatch.setenv("DASK_SCHEDULER", "")
    assert cluster.address(tmp_path) is None  # set empty: this machine, whatever the course says


def test_a_worker_whose_grader_is_not_the_teacher_s_grades_nothing():
    task = Task("ada", (("01_attention", NotebookToGrade("/nowhere/01_attention.ipynb", "0" * 64, (), b"{}")),), "/nowhere", 7, limits=Limits(), unsafe=False, version="0" * 16)
    died = cluster.grade_remote(task)
    assert isinstance(died, workers.WorkerDied) and "another version" in died.why


class _Done:
    def __init__(self, value):
        self.value = value

    def result(self):
        if isinstance(self.value, BaseException):
            raise self.value
        return self.value

    def release(self):
        pass


@pytest.mark.parametrize("value", [None, ("bob", {"01_attention": Graded([])}, {}), ("ada", {}, {}),
                                   ("ada", {"01_attention": Graded([])}), RuntimeError("lost")])
def test_what_a_worker_sends_back_is_stored_only_when_it_is_this_learner_s_results(value):
    require("distributed", "make grade's Dask cluster needs it (requirements.txt)")
    task = Task("ada", (("01_attention", NotebookToGrade("/nowhere/01_attention.ipynb", "0" * 64, (), b"{}")),), "/nowhere", 7, limits=Limits(), unsafe=False)
    assert isinstance(cluster._value(_Done(value), task), workers.WorkerDied)
    whole = ("ada", {"01_attention": Graded([])}, {})
    assert cluster._value(_Done(whole), task) is whole
