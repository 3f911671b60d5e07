"""How fast a learner reads the verdict after handing in: a burst of hand-ins against the hand-in service.

    .venv/bin/python -m benchmarks.bench_hand_in [--learners 500] [--window 300] [--jobs N] [--lesson 01_attention]

Target (issue 38): 500 learners each handing in one lesson within 5 minutes,
on a 2-core machine: from the request to the verdict, p95 at most 20 s and
the slowest at most 60 s; no hand-in lost; the service's processes under
1.5 GB.

In a temporary copy of the course after `make student`, with a roster of the
learners, the service runs as the hub would start it (its own process, the
sandbox, ``--jobs`` workers), asking a stand-in for the hub's identity API
whose each token is (``tests/grader/hand_in_service.py``). Each learner
hands in at a time drawn uniformly over the window (seeded), as
``grading.hand_in()`` does: POST the notebook, then ask for its state until
graded (every ``POLL`` s here, every second in a notebook). Their notebooks differ, as a class's do: half right,
half with one of two catalogued mistakes, each answer cell carrying its
learner's own comment (so no two draw the same hidden cases). Lost: a
hand-in answered "handed in" that is not on disk, or never graded.
"""

import argparse
import json
import os
import random
import shutil
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
    status, body = post(service, LESSON, f"t-{learner}", data)
    if status != 202:
        results[learner] = {"refused": f"{status} {body.get('message')}"}
        return
    key, state = body["key"], body
    while state.get("state") in ("waiting", "grading") and time.monotonic() - t0 < 900:
        time.sleep(POLL)
        status, state = request(f"{service.url}api/hand-ins/{key}", f"t-{learner}")
    results[learner] = {"key": key, "state": state.get("state"), "seconds": time.monotonic() - t0,
                        "points": state.get("points")}


def percentile(values, q):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))] if ordered else float("nan")


def lost(root, results):
    """Hand-ins answered "handed in" that are not on disk whole, or were never graded."""
    missing = []
    for learner, result in results.items():
        folder = root / "hand-ins" / learner / result.get("key", "-")
        if "key" in result and (not (folder / "hand_in.json").is_file() or result["state"] != "graded"):
            missing.append(learner)
    return missing


LESSON = "01_attention"
#: How often a learner asks for the state here (grading.hand_in asks every second: a learner reads the verdict up
#: to a second after these times).
POLL = 0.25


def main():
    global LESSON
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--learners", type=int, default=500)
    parser.add_argument("--window", type=float, default=300.0, help="seconds over which they hand in")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--lesson", default=LESSON)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    LESSON = args.lesson
    rng = random.Random(args.seed)
    scratch = Path(tempfile.mkdtemp(prefix="bench-hand-in-"))
    try:
        run(args, rng, scratch / "course")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def run(args, rng, root):
    made_student(root)
    learners = notebooks(root, LESSON, args.learners, rng)
    write_roster(root, list(learners))
    arrivals = sorted(rng.uniform(0, args.window) for _ in learners)
    results = {}
    with FakeHubApi({f"t-{learner}": learner for learner in learners}) as hub, \
            ServiceProcess(root, hub.url, jobs=args.jobs, seconds=10) as service:
        sampler = TreeSampler(service.process.pid, every=0.5)
        started = time.monotonic()
        with ThreadPoolExecutor(max_workers=len(learners)) as pool:  # every learner at once, as a class is
            for (learner, data), at in zip(learners.items(), arrivals):
                pool.submit(one_learner, service, learner, data, at, started, results)
        wall = time.monotonic() - started
        sampler.stop()
    report(args, results, lost(root, results), sampler, wall)


def report(args, results, missing, sampler, wall):
    seconds = [r["seconds"] for r in results.values() if r.get("state") == "graded"]
    refused = [r["refused"] for r in results.values() if "refused" in r]
    print(f"{args.learners} learners handing in {LESSON} over {args.window:g} s; the service with {args.jobs} "
          f"worker{'s' * (args.jobs > 1)} on {os.cpu_count()} cores; {wall:.0f} s from the first to the last verdict")
    print(f"{'hand-in to verdict':24s} {'p50':>7s} {'p95':>7s} {'max':>7s} {'graded':>7s} {'refused':>8s} {'lost':>5s} "
          f"{'peak memory':>12s}")
    print(f"{'seconds':24s} {percentile(seconds, 0.5):7.1f} {percentile(seconds, 0.95):7.1f} "
          f"{max(seconds, default=float('nan')):7.1f} {len(seconds):7d} {len(refused):8d} {len(missing):5d} "
          f"{sampler.peak / 2**20:9.0f} MiB")
    print(f"target: p95 <= 20 s, max <= 60 s, none lost, memory < 1.5 GB (grader's own processes: "
          f"{sampler.grader_peak / 2**20:.0f} MiB)")
    for why in sorted(set(refused))[:5]:
        print("  refused:", why)


if __name__ == "__main__":
    main()
