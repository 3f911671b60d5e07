"""How fast a learner reads the verdict after handing in, with a class handing in and one learner attacking.

    .venv/bin/python -m benchmarks.bench_hand_in [--learners 500] [--window 300] [--attacks none,flood,...]
        [--bursts 50,100,200,400] [--scheduler local] [--hour] [--jobs N] [--lesson 01_attention]

Targets (issues 38 and 51), on a 2-core machine: 500 learners each handing in
one lesson within 5 minutes, from the request to the verdict p95 at most 5 s
while one learner floods (quiet: at most 20 s, the slowest 60 s); the
others' p95 within 20% of the quiet figure; no hand-in lost; the service's
processes under 1.5 GB; a learner's disk under the documented 100 MB.

In a fresh copy of the course after `make student` for each row, with a
roster, the service runs as the hub starts it (its supervisor, the service,
the sandbox, ``--jobs`` workers), asking a stand-in for the hub's identity
API whose each token is (``tests/grader/hand_in_service.py``). Each learner
hands in at a time drawn uniformly over the window (seeded), as
``grading.hand_in()`` does: POST the notebook, then ask for its state until
graded (every ``POLL`` s). Half the notebooks are right, half carry one of
two catalogued mistakes; each answer cell carries its learner's own comment.
Beside them, one attacker (``--attacks``, one row each):

- ``flood``: four connections handing in a 9.9 MB notebook back to back, as
  fast as the service answers, beyond the rate (each sent whole without
  waiting to be told, as a script would);
- ``limit``: the most the rate takes, 10 hand-ins a minute, each a 9.9 MB
  notebook with a new answer (each read and graded anew);
- ``tokenless``: 32 connections sending 10 MB bodies with no token;
- ``history``: a learner who handed in 3,000 times lists their hand-ins in a
  loop (two connections).

``--bursts``: the class all at once (``BURST`` s), by size: where p95 passes
20 s. ``--scheduler local``: also with a Dask scheduler and two one-thread
workers on 127.0.0.1 grading. ``--hour``: what the store holds of one
learner after an hour at the rate with 9.9 MB notebooks, simulated (sparse
files, the service's own pruning). Lost: a hand-in answered "handed in" that
is not on disk, or never graded.
"""

import argparse
import json
import os
import random
import shutil
import socket
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests" / "grader"), str(ROOT)]

from grading_helpers import TreeSampler, made_student  # noqa: E402
from hand_in_service import FakeHubApi, ServiceProcess, post, request  # noqa: E402
from report_class import answer_in, write_roster  # noqa: E402

WRONG = {
    "scaled_dot_product_attention": '''def scaled_dot_product_attention(q, k, v):
    weights = softmax(q @ np.swapaxes(k, -1, -2), axis=-1)
    return weights @ v, weights
''',
    "softmax": '''def softmax(x, axis=-1):
    e = np.exp(x)
    return e / e.sum(axis=axis, keepdims=True)
'''}
LESSON = "01_attention"
#: How often a learner asks for the state here (grading.hand_in asks every second: a learner reads the verdict up
#: to a second after these times); how long a burst takes to arrive.
POLL, BURST = 0.25, 5.0
ATTACKER = "attacker"


def notebooks(root, lesson, learners, rng):
    """{learner: the notebook's bytes}: half right, half with one catalogued mistake, every one its own."""
    solved = json.loads((root / "notebooks" / lesson / f"{lesson}.ipynb").read_text())
    made = {}
    for i in range(learners):
        notebook = json.loads(json.dumps(solved))
        for cell in notebook["cells"]:
            if cell.get("metadata", {}).get("nbgrader", {}).get("solution"):
                cell["source"] = "".join(cell["source"]) + f"\n# learner {i}\n"
        if i % 2 and lesson == "01_attention":
            name = rng.choice(sorted(WRONG))
            answer_in(notebook, name, WRONG[name] + f"# learner {i}\n")
        made[f"learner{i:04d}"] = json.dumps(notebook).encode()
    return made


def one_learner(service, learner, data, at, started, results):
    time.sleep(max(0.0, at - (time.monotonic() - started)))
    t0 = started + at  # the learner's press: a request that waits for a connection waits in their time
    try:
        status, body = post(service, LESSON, f"t-{learner}", data)
    except OSError as exc:
        status, body = 0, {"message": str(exc)}
    if status != 202:
        results[learner] = {"refused": f"{status} {body.get('message')}"}
        return
    key, state = body["key"], body
    while state.get("state") in ("waiting", "grading") and time.monotonic() - t0 < 900:
        time.sleep(POLL)
        try:
            status, state = request(f"{service.url}api/hand-ins/{key}", f"t-{learner}")
        except OSError:
            state = {"state": "waiting"}
    results[learner] = {"key": key, "state": state.get("state"), "seconds": time.monotonic() - t0}


def percentile(values, q):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))] if ordered else float("nan")


def lost(root, results):
    """Hand-ins answered "handed in" that are not on disk whole, or were never graded."""
    return [learner for learner, result in results.items() if "key" in result and (
        not (root / "hand-ins" / learner / result["key"] / "hand_in.json").is_file() or result["state"] != "graded")]


# ---------------------------------------------------------------- the attacker


def _raw_post(service, headers, body):
    """A POST sent whole, without waiting to be told (as a script does); the status answered, or 0."""
    try:
        with socket.create_connection(("127.0.0.1", service.port), timeout=30) as s:
            head = "".join(f"{k}: {v}\r\n" for k, v in {**headers, "Content-Length": len(body)}.items())
            s.sendall(f"POST {service.url.split(str(service.port), 1)[1]}api/hand-ins/{LESSON} HTTP/1.1\r\n"
                      f"Host: x\r\n{head}\r\n".encode())
            try:
                s.sendall(body)
            except OSError:
                pass
            return int(s.recv(64).split()[1])
    except (OSError, IndexError, ValueError):
        return 0


def _big(data, i):
    """A 9.9 MB notebook: ``data`` with a new answer (``i``) and a long output."""
    notebook = json.loads(data)
    for cell in notebook["cells"]:
        if cell.get("metadata", {}).get("nbgrader", {}).get("solution"):
            cell["source"] = "".join(cell["source"]) + f"\n# attempt {i}\n"
    notebook["cells"][-1].setdefault("outputs", []).append(
        {"output_type": "stream", "name": "stdout", "text": "x" * (9_900_000 - len(data))})
    return json.dumps(notebook).encode()


def attack(kind, service, data, stop, counts):
    """Run attacker ``kind`` until ``stop`` is set; ``counts``: {status: how many}."""
    def count(status):
        counts[status] = counts.get(status, 0) + 1

    def loop(one):
        while not stop.is_set():
            count(one())

    if kind == "flood":
        body = _big(data, 0)
        return [threading.Thread(target=loop, args=(lambda: _raw_post(service, {"Authorization": f"token t-{ATTACKER}"},
                                                                       body),)) for _ in range(4)]
    if kind == "tokenless":
        body = b" " * (10 * 2**20)
        return [threading.Thread(target=loop, args=(lambda: _raw_post(service, {}, body),)) for _ in range(32)]
    if kind == "history":
        url = f"{service.url}api/hand-ins/{LESSON}"
        return [threading.Thread(target=loop, args=(lambda: _status(request, url, f"t-{ATTACKER}"),))
                for _ in range(2)]
    if kind == "limit":
        def paced():
            i = 0
            while not stop.wait(6.0 if i else 0):
                count(_status(post, service, LESSON, f"t-{ATTACKER}", _big(data, i)))
                i += 1
        return [threading.Thread(target=paced)]
    return []


def _status(function, *args):
    try:
        return function(*args)[0]
    except OSError:
        return 0


def long_history(root, data, count=3000):
    """The attacker's ``count`` hand-ins, as the service's store keeps them."""
    from course_grader.handin.store import Store

    store = Store(root)
    for _ in range(count):
        store.add(ATTACKER, LESSON, data)


# ---------------------------------------------------------------- one row


def run(args, scratch, kind, learners, window, scheduler=None):
    """One row: the class (``learners`` of them, over ``window`` s) with attacker ``kind``; its figures."""
    root = made_student(scratch / f"{kind}-{learners}-{scheduler or 'here'}")
    made = notebooks(root, LESSON, learners, random.Random(args.seed))
    write_roster(root, list(made) + [ATTACKER])
    solved = (root / "notebooks" / LESSON / f"{LESSON}.ipynb").read_bytes()
    if kind == "history":
        long_history(root, solved)
    env = {}
    if scheduler is not None:
        env["DASK_SCHEDULER"] = scheduler.address
        scheduler.certify(root)
    rng = random.Random(args.seed)
    arrivals = sorted(rng.uniform(0, window) for _ in made)
    results, counts, stop = {}, {}, threading.Event()
    tokens = {f"t-{learner}": learner for learner in [*made, ATTACKER]}
    with FakeHubApi(tokens) as hub, ServiceProcess(root, hub.url, jobs=args.jobs, seconds=10, env=env) as service:
        sampler = TreeSampler(service.process.pid, every=0.5)
        attackers = attack(kind, service, solved, stop, counts)
        for thread in attackers:
            thread.start()
        started = time.monotonic()
        with ThreadPoolExecutor(max_workers=len(made)) as pool:  # every learner at once, as a class is
            for (learner, data), at in zip(made.items(), arrivals):
                pool.submit(one_learner, service, learner, data, at, started, results)
        wall = time.monotonic() - started
        stop.set()
        for thread in attackers:
            thread.join()
        sampler.stop()
    seconds = [r["seconds"] for r in results.values() if r.get("state") == "graded"]
    return {"p50": percentile(seconds, 0.5), "p95": percentile(seconds, 0.95), "max": max(seconds, default=float("nan")),
            "graded": len(seconds), "refused": sum("refused" in r for r in results.values()),
            "lost": len(lost(root, results)), "peak": sampler.peak / 2**20, "grader": sampler.grader_peak / 2**20,
            "wall": wall, "attacker": counts,
            "disk": sum(f.stat().st_size for f in (root / "hand-ins").rglob("*") if f.is_file()) / 2**20}


ROW = "{:38s} {:>6.1f} {:>6.1f} {:>6.1f} {:>7d} {:>8d} {:>5d} {:>9.0f} {:>9.0f}  {}"
HEAD = (f"{'':38s} {'p50':>6s} {'p95':>6s} {'max':>6s} {'graded':>7s} {'refused':>8s} {'lost':>5s} {'peak MiB':>9s} "
        f"{'disk MiB':>9s}  the attacker's requests answered")


def row(label, found):
    answered = ", ".join(f"{n} x {status or 'no answer'}" for status, n in sorted(found["attacker"].items())) or "-"
    print(ROW.format(label, found["p50"], found["p95"], found["max"], found["graded"], found["refused"],
                     found["lost"], found["peak"], found["disk"], answered), flush=True)


def hour(scratch):
    """What the store holds of one learner handing in 9.9 MB notebooks at the rate for an hour (600, each of the
    lessons in turn), simulated with sparse files through the service's own store: ``(bytes held, hand-ins kept)``."""
    from encoder_lib.grading.exercises import BY_LESSON

    from course_grader.handin.store import Store

    from course_grader.handin.store import Full

    store, lessons, refused = Store(scratch / "hour"), list(BY_LESSON), 0
    for i in range(600):
        folder, f = store.upload(ATTACKER, lessons[i % len(lessons)])
        with f:
            f.truncate(9_900_000)
        try:
            store.commit(folder, ATTACKER, lessons[i % len(lessons)], {"sha256": f"{i:064x}", "bytes": 9_900_000})
        except Full:
            refused += 1
    files = [f for f in (scratch / "hour").rglob("*.ipynb")]
    return sum(f.stat().st_size for f in files), len(files), refused


def main():
    global LESSON
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--learners", type=int, default=500)
    parser.add_argument("--window", type=float, default=300.0, help="seconds over which they hand in")
    parser.add_argument("--attacks", default="none,flood,limit,tokenless,history",
                        help="the rows: none (a quiet class), flood, limit, tokenless, history (commas between)")
    parser.add_argument("--bursts", default="", help="class sizes handing in at once, e.g. 50,100,200,400")
    parser.add_argument("--scheduler", choices=["local"], default=None, help="also grade on a local Dask cluster")
    parser.add_argument("--hour", action="store_true", help="the disk one learner holds after an hour of flood")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--lesson", default=LESSON)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    LESSON = args.lesson
    scratch = Path(tempfile.mkdtemp(prefix="bench-hand-in-"))
    print(f"load average before: {os.getloadavg()[0]:.2f}; {os.cpu_count()} cores; the service with {args.jobs} "
          f"worker{'s' * (args.jobs > 1)}; a learner asks for the state every {POLL} s")
    try:
        measure(args, scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print(f"load average after: {os.getloadavg()[0]:.2f}")


def measure(args, scratch):
    kinds = [k for k in args.attacks.split(",") if k]
    if kinds:
        print(f"\n{args.learners} learners handing in {LESSON} over {args.window:g} s, with one attacker; seconds "
              f"from the request to the verdict of the others\n{HEAD}")
    for kind in kinds:
        row(kind if kind != "none" else "none (quiet)", run(args, scratch, kind, args.learners, args.window))
    sizes = [int(n) for n in args.bursts.split(",") if n]
    if sizes:
        print(f"\nthe class handing in {LESSON} at once (within {BURST:g} s), by its size\n{HEAD}")
    for n in sizes:
        row(f"{n} at once", run(args, scratch, "none", n, BURST))
    if args.scheduler:
        from dask_cluster import LocalCluster

        print(f"\non a Dask scheduler and two one-thread workers on 127.0.0.1 (TLS){chr(10)}{HEAD}")
        with LocalCluster(scratch / "dask", workers=2) as cluster:
            row(f"{args.learners} over {args.window:g} s", run(args, scratch, "none", args.learners, args.window,
                                                               scheduler=cluster))
    if args.hour:
        held, kept, refused = hour(scratch)
        print(f"\none learner at the rate for an hour (600 hand-ins of 9.9 MB, each lesson in turn, simulated): "
              f"{kept} kept, {held / 2**20:.1f} MB held, {refused} refused as over their share (handed in: "
              f"{600 * 9.9:.0f} MB)")


if __name__ == "__main__":
    main()
