"""The course's website (`make site`): its size per page and in all (budget: 60 MB in all, 8 MB a page), each
widget's states and which widgets keep a reduced grid and why, and the time from a key press to the new
picture in Chromium (target: at most 50 ms).

    .venv/bin/python -m benchmarks.bench_site [--presses 10]

The site is built by tools.site (what `make site` runs) into a temporary
folder, then opened from file:// with the network off in headless Chromium
(/usr/bin/chromium, or ENCODER_COURSE_CHROMIUM), as tests/test_site.py does
(tests/site_pages.py). For every control of every widget, ``--presses`` key
presses (arrow keys on a slider or a group of toggle buttons, Space on a
check box) are timed in the page, from the keydown to the frame in which the
new picture is loaded.
"""

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

from tests import browser as lab
from tests import site_pages
from tools.site import build
from tools.site.states import MB, PAGE_BUDGET, SITE_BUDGET

from ._report import table

KEY_TARGET_MS = 50


def size_rows(site):
    """One row per page: its size and what it holds."""
    rows = []
    for page in [site.index, *site.pages]:
        pictures = sum(1 for p in page.files() if p.suffix in (".webp", ".png"))
        size = page.size()
        rows.append((page.path.name, f"{size / MB:.2f}", len(page.widgets), pictures,
                     "ok" if size <= PAGE_BUDGET else f"OVER {PAGE_BUDGET / MB:.0f} MB"))
    assets = sum(p.stat().st_size for p in site.assets())
    rows.append(("assets/ (style sheet, scripts, search)", f"{assets / MB:.2f}", "", len(site.assets()), ""))
    total = site.size()
    rows.append(("search index (in assets/)", f"{site.search_bytes / MB:.2f}", "", "", ""))
    rows.append(("the whole site", f"{total / MB:.2f}", len(site.widgets), "",
                 "ok" if total <= SITE_BUDGET else f"OVER {SITE_BUDGET / MB:.0f} MB"))
    return rows


def widget_rows(site):
    """One row per widget: its controls, the states it can reach and the ones the page keeps, and why."""
    rows = []
    for widget in site.widgets:
        grid = widget.grid
        controls = ", ".join(f"{c['label']} ({len(c['labels'])})" for c in widget.data["controls"]) or "none"
        rows.append((widget.lesson, grid.name, controls, len(grid.states), len(grid.kept),
                     "reduced: " + grid.why if grid.reduced else "full, drawn on the page" if grid.drawn else "full"))
    return rows


def movable(on_page, ci, count):
    """Move the other controls (untimed) until control ``ci`` can take another value, if it cannot now: a slider
    whose range another control sets (lesson 02's head, with 1 head) has a single value in some states."""
    for other in [c for c in range(count) if c != ci] * 4:
        if on_page.can_move(ci):
            return
        on_page.move_with_keyboard(other)
    if not on_page.can_move(ci):
        raise RuntimeError(f"control {ci} never takes another value")


def key_rows(site, browser, presses):
    """One row per widget with controls: key press -> new picture, median and worst over every control."""
    rows, failures = [], []
    with site_pages.offline(browser) as context:
        for page_info in site.pages:
            if not page_info.widgets:
                continue
            page = site_pages.open_page(context, page_info.path)
            page.wait_for_function(f"() => document.querySelectorAll('section.explorer.explorer-ready').length === "
                                   f"{len(page_info.widgets)}", timeout=site_pages.WAIT_MS)
            for k, widget in enumerate(page_info.widgets):
                if not widget.data["controls"]:
                    continue
                on_page = site_pages.Widget(page, k)
                times = []
                try:
                    for ci in range(len(widget.data["controls"])):
                        for _ in range(presses):
                            movable(on_page, ci, len(widget.data["controls"]))
                            times.append(on_page.timed_key(ci))
                except Exception as exc:  # a row that says what went wrong; the other widgets still run
                    failures.append(f"{widget.widget_id}: {str(exc).splitlines()[0][:300]}")
                    rows.append((widget.lesson, widget.grid.name, "-", "-", "-", "FAILED (below)"))
                    continue
                worst = max(times)
                rows.append((widget.lesson, widget.grid.name, len(times), f"{statistics.median(times):.1f}",
                             f"{worst:.1f}", "ok" if worst <= KEY_TARGET_MS else f"OVER {KEY_TARGET_MS} ms"))
            failures += [f"{page_info.path.name}: {problem}" for problem in page.problems]
            page.close()
    return rows, failures


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--presses", type=int, default=10, help="key presses per control (default 10)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-site-") as tmp:
        site = build(Path(tmp) / "site", log=lambda line: None)
        print(f"tools.site built the site in {site.seconds:.0f} s (python {sys.version.split()[0]})")
        table(size_rows(site), ("page", "MB", "widgets", "pictures", f"budget {PAGE_BUDGET / MB:.0f} MB a page, "
                                                                      f"{SITE_BUDGET / MB:.0f} MB in all"))
        table(widget_rows(site), ("lesson", "widget", "controls (values)", "states it can reach",
                                  "states on the page", "grid"))
        reason = lab.missing_browser()
        if reason:
            print(f"bench_site: key presses not timed: {reason}")
            return 1 if os.environ.get("CI", "").lower() not in ("", "0", "false", "no") else 0
        with lab.chromium() as browser:
            rows, failures = key_rows(site, browser, args.presses)
        print(f"key press -> new picture shown, in headless Chromium from file://, {args.presses} presses per control")
        table(rows, ("lesson", "widget", "presses", "median ms", "worst ms", f"target <= {KEY_TARGET_MS} ms"))
        for failure in failures:
            print(f"FAILED {failure}")
        return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
