"""The course in a browser: Run All → widgets shown, and key press → new picture (targets: < 5 s from
Run All per lesson, < 100 ms median per key press).

    .venv/bin/python -m benchmarks.bench_browser [--presses 10]

The same set-up as tests/test_browser_lab.py (tests/browser.py): the student
versions, written into a temporary copy of the course, in JupyterLab from
.venv, driven in headless Chromium (/usr/bin/chromium, or
ENCODER_COURSE_CHROMIUM). For each lesson: the time to open it (page load to
an idle kernel) and from Run All (Run menu) to every widget shown with its
picture loaded. For each widget type: one control operated from the
keyboard, ``--presses`` times, timed in the page from the keydown to the
img's new ``src`` and to the new picture loaded (kernel round trip, redraw
and PNG included).
"""

import argparse
import os
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

from tests import browser as lab
from tools.course import lesson_names

from ._report import table


def widget_type(cell):
    """The Explorer a widget cell builds, read from its source (``... = HeadsExplorer(...)``)."""
    found = re.findall(r"\b([A-Z]\w*Explorer)(?:\.\w+)?\(", cell.source)  # also TrainingComparisonExplorer.live(
    return found[-1] if found else "widget"


def time_presses(notebook, index, presses):
    """Press a key on one control of the cell's widget ``presses`` times; returns (control, src ms, load ms)."""
    view = notebook.widget_view(index)
    view.scroll_into_view_if_needed()
    handles = view.locator(".widget-slider .noUi-handle")
    to_src, to_load = [], []
    if handles.count():
        handle = handles.first
        control = (view.locator(".widget-slider .widget-label").first.text_content() or "slider").strip()
        handle.focus()
        key = "ArrowLeft" if handle.get_attribute("aria-valuenow") == handle.get_attribute("aria-valuemax") else "ArrowRight"
        for _ in range(presses):
            src, load = notebook.timed_key(index, key)
            to_src.append(src)
            to_load.append(load)
            key = "ArrowLeft" if key == "ArrowRight" else "ArrowRight"  # back and forth between two values
        return f"{control} (slider, arrow keys)", to_src, to_load
    group = view.locator(".widget-toggle-buttons").first
    buttons = group.locator("button")
    active = buttons.evaluate_all("bs => bs.findIndex(b => b.classList.contains('mod-active'))")
    other = 1 if active == 0 else 0
    label = (group.locator(".widget-label").first.text_content() or "toggle").strip()
    for i in range(presses):
        buttons.nth(other if i % 2 == 0 else active).focus()
        src, load = notebook.timed_key(index, "Enter")
        to_src.append(src)
        to_load.append(load)
    return f"{label} (toggle buttons, Enter)", to_src, to_load


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--presses", type=int, default=10)
    args = parser.parse_args()
    reason = lab.missing_browser()
    if reason:
        print(f"bench_browser: skipped: {reason}")
        return 1 if os.environ.get("CI", "").lower() not in ("", "0", "false", "no") else 0

    lesson_rows, widget_rows, seen, failures = [], [], set(), []
    with tempfile.TemporaryDirectory(prefix="bench-browser-") as tmp:
        student = lab.student_course(Path(tmp) / "course")
        with lab.LabServer(student, Path(tmp) / "jupyterlab", cwd=student.parent) as server, lab.chromium() as browser:
            for name in lesson_names():
                lesson = lab.Lesson(name, student)
                with lab.LabNotebook(browser, server, lesson.path) as notebook:
                    start = time.perf_counter()
                    try:
                        notebook.open()
                        opened = time.perf_counter()
                        notebook.page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Run$")).click()
                        notebook.page.locator('.lm-Menu-item[data-command="runmenu:run-all"]').click()
                        clicked = time.perf_counter()
                        notebook.wait_for_widgets(lesson.widget_cells, timeout=60)
                        shown = time.perf_counter()
                        notebook.wait_until_run()
                        done = time.perf_counter()
                    except Exception as exc:  # a row that says what went wrong; the other lessons still run
                        failures.append(f"{name}: {str(exc).splitlines()[0][:400]}")
                        lesson_rows.append((name, "-", "-", "-", len(lesson.widget_cells), "FAILED (below)"))
                        continue
                    from_run_all = shown - clicked
                    lesson_rows.append((name, f"{opened - start:.1f}", f"{from_run_all:.2f}", f"{done - clicked:.2f}",
                                        len(lesson.widget_cells), "ok" if from_run_all < 5 else "OVER 5 s"))
                    for index in lesson.widget_cells:
                        kind = widget_type(lesson.cells[index])
                        if kind in seen or not notebook.has_control(index):  # a progress display has no control
                            continue
                        seen.add(kind)
                        try:
                            control, to_src, to_load = time_presses(notebook, index, args.presses)
                        except Exception as exc:
                            failures.append(f"{name}, {kind}: {str(exc).splitlines()[0][:400]}")
                            widget_rows.append((kind, "-", "-", "-", "-", "FAILED (below)"))
                            continue
                        median = statistics.median(to_load)
                        widget_rows.append((kind, control, f"{statistics.median(to_src):.0f}",
                                            f"{median:.0f}", f"{max(to_load):.0f}",
                                            "ok" if median < 100 else "OVER 100 ms"))
                    if notebook.console_errors:
                        failures.append(f"{name}: browser console errors: {notebook.console_errors}")

    print(f"JupyterLab in headless Chromium, student versions; one JupyterLab, a fresh page per lesson "
          f"(python {sys.version.split()[0]})")
    table(lesson_rows, ("lesson", "open s", "Run All -> widgets s", "Run All -> done s", "widgets",
                        "target < 5 s from Run All"))
    print(f"key press -> new picture on the page, {args.presses} presses each")
    table(widget_rows, ("widget", "control", "-> new src, median ms", "-> picture loaded, median ms",
                        "worst ms", "target < 100 ms median"))
    for failure in failures:
        print(f"FAILED {failure}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
