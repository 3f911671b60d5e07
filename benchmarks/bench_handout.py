"""Handing the course out at class scale: 10 learners click the nbgitpuller link at once on a local JupyterHub.

    .venv/bin/python -m benchmarks.bench_handout [--learners 10] [--prefix ENV]

The set-up of tests/test_classroom_hub.py (tests/hub.py): JupyterHub 6.1.1 on
127.0.0.1 with configurable-http-proxy, the dummy authenticator and the
simple local process spawner; the learners' servers run from an environment
made by `make hub-install` (``--prefix``: an existing one, else a new one in
a temporary folder, minutes); the lessons come from the README's link, built
from its template, on a scratch clone's published branch ``student-versions``.

Each learner's time runs from the click (a fresh browser context, not logged
in) through login, the server's start, nbgitpuller's pull and JupyterLab
opening the start notebook, to Run All having shown the widget with its
picture loaded. One learner first, not timed (disk caches warm), then one
learner alone, then ``--learners`` at once (all in one headless Chromium).
The memory is each learner's resident set (RSS) once their start notebook
shows its widget: the single-user server, and the kernel.

Target: the worst of the class under 4 times a single learner's, on this
2-core machine.
"""

import argparse
import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests import hub as hubs
from tests.browser import missing_browser
from tools import classroom
from tools.course import ROOT

from ._report import table

TARGET_RATIO = 4.0


def server_environment(prefix, scratch):
    if prefix:
        return Path(prefix)
    prefix = Path(scratch) / "server-env"
    subprocess.run([sys.executable, "-m", "venv", str(prefix)], check=True)
    t0 = time.perf_counter()
    subprocess.run(["make", "-C", str(ROOT), "hub-install", f"PREFIX={prefix}"], check=True,
                   stdout=subprocess.DEVNULL)
    print(f"make hub-install: {time.perf_counter() - t0:.0f} s", flush=True)
    return prefix


async def one(browser, hub, link, user):
    context = await browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        _, seconds = await hubs.click_link(context, link, user, timeout=600)
        return user, seconds, hub.memory(user)
    finally:
        await context.close()


async def measure(hub, link, learners):
    async with hubs.chromium() as browser:
        await one(browser, hub, link, "warmup")
        cpu0 = hubs.cpu_by_part(hub.token)
        single = await one(browser, hub, link, "single")
        cpu1 = hubs.cpu_by_part(hub.token)
        t0 = time.perf_counter()
        # the memory is read as each learner's widget shows, while the others still load
        group = await asyncio.gather(*(one(browser, hub, link, user) for user in learners))
        wall = time.perf_counter() - t0
        cpu2 = hubs.cpu_by_part(hub.token)
    cpu = {"single": {k: cpu1[k] - cpu0[k] for k in cpu0}, "group": {k: cpu2[k] - cpu1[k] for k in cpu0}}
    return single, group, wall, cpu


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--learners", type=int, default=10)
    parser.add_argument("--prefix", help="a server environment made by `make hub-install` (default: make one)")
    args = parser.parse_args(argv)
    reason = hubs.missing_tools() or missing_browser()
    if reason:
        raise SystemExit(f"cannot run the hub here: {reason}")
    learners = [f"learner{i:02d}" for i in range(args.learners)]
    with tempfile.TemporaryDirectory(prefix="bench-handout-") as scratch:
        scratch = Path(scratch)
        prefix = server_environment(args.prefix, scratch)
        course, remote = hubs.teacher_course(scratch)
        for command in classroom.TEACHER["publish"]:
            hubs.run_teacher(course, command)
        with hubs.LocalHub(scratch / "hub", prefix, ["warmup", "single", *learners]) as hub:
            link = hubs.link_for(classroom.gitpuller_link(), hub.base, remote)
            single, group, wall, cpu = asyncio.run(measure(hub, link, learners))

    _, s_times, (s_server, s_kernel) = single
    widget = sorted(seconds["widget"] for _, seconds, _ in group)
    notebook = sorted(seconds["notebook"] for _, seconds, _ in group)
    servers = [memory[0] for _, _, memory in group]
    kernels = [memory[1] for _, _, memory in group]
    print(f"\nHand-out: the nbgitpuller link clicked by 1 learner alone, then by {len(group)} at once "
          f"(JupyterHub on 127.0.0.1, {len(group)} servers and kernels on this machine's cores)\n")
    table([
        ("1 learner alone", f"{s_times['notebook']:.1f}", f"{s_times['widget']:.1f}", "-",
         f"{s_server:.0f}", f"{s_kernel:.0f}"),
        (f"{len(group)} at once: median", f"{statistics.median(notebook):.1f}", f"{statistics.median(widget):.1f}",
         f"{statistics.median(widget) / s_times['widget']:.1f}x",
         f"{statistics.median(servers):.0f}", f"{statistics.median(kernels):.0f}"),
        (f"{len(group)} at once: worst", f"{notebook[-1]:.1f}", f"{widget[-1]:.1f}",
         f"{widget[-1] / s_times['widget']:.1f}x", f"{max(servers):.0f}", f"{max(kernels):.0f}"),
    ], ("learners", "s to notebook open", "s to widget shown", "vs alone", "server MiB (RSS)", "kernel MiB (RSS)"))
    ratio = widget[-1] / s_times["widget"]
    total = sum(servers) + sum(kernels)
    print(f"the class of {len(group)}: {wall:.1f} s from the first click to the last widget; "
          f"{total:.0f} MiB for its servers and kernels ({total / len(group):.0f} MiB a learner)")
    print("\nWhere the CPU went (seconds; 2 cores give 2 CPU-seconds a second). The browser's part runs on "
          "each learner's own machine in a real class; here it shares the hub's two cores:\n")
    parts = ("browser", "server", "kernel", "hub")
    table([(name, *(f"{cpu[key][p]:.1f}" for p in parts), f"{sum(cpu[key].values()):.1f}",
            f"{sum(cpu[key][p] for p in parts[1:]) / n:.1f}")
           for name, key, n in (("1 learner alone", "single", 1), (f"{len(group)} at once", "group", len(group)))],
          ("", "Chromium", "servers", "kernels", "hub + proxy", "total", "hub side a learner"))
    hub_side = sum(cpu["group"][p] for p in parts[1:])
    print(f"without the browsers, the class's hub-side work is {hub_side:.0f} CPU-s: at least "
          f"{hub_side / 2:.0f} s on 2 cores, {hub_side / 2 / s_times['widget']:.1f}x a single learner's time")
    print(f"target: the worst under {TARGET_RATIO:.0f}x a single learner's: {ratio:.1f}x, "
          f"{'met' if ratio < TARGET_RATIO else 'NOT met'}")


if __name__ == "__main__":
    main()
