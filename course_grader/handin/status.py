"""What the hand-in service holds, for the teacher: ``make hand-ins`` (``python -m course_grader.handin.status``).

First it prunes what the service keeps no longer (``store.Store.prune``: the
same rule it applies at each hand-in), and says how much that freed; then,
per lesson, how many learners handed in, the hand-ins kept and their bytes,
and of the learners' latest hand-ins how many are graded, waiting (or being
graded), or failed on the grader's machine; then each hand-in still waiting,
the oldest first. Read from the service's files alone: it works whether the
service runs or not.
"""

import argparse
from collections import Counter
from pathlib import Path

from ..files import plain_text
from .store import Store, folder_bytes

#: The most waiting hand-ins listed one by one (the rest counted).
MOST_LISTED = 50


def latest_states(root):
    """``{lesson: [(learner, latest HandIn, its state, hand-ins kept, their bytes)]}``: graded, waiting or failed."""
    store, found = Store(root), {}
    for _, lesson_folder in store.learners_lessons():
        history = store.history_in(lesson_folder)
        if history:
            latest, verdict = history[-1], history[-1].verdict()
            state = "waiting" if verdict is None else "failed" if verdict.get("failure") else "graded"
            found.setdefault(latest.lesson, []).append((latest.student, latest, state, len(history),
                                                        sum(folder_bytes(h.folder) for h in history)))
    return found


def lines(root):
    """The teacher's summary, line by line."""
    store = Store(root)
    freed = sum(store.prune(lesson) for _, lesson in store.learners_lessons())
    found = latest_states(root)
    if not found:
        return ["the hand-in service holds no hand-in yet (hand-ins/ is empty)"]
    said = [f"pruned what the service keeps no longer: {freed / 2**20:.1f} MB freed",
            f"{'lesson':28s} {'learners':>8s} {'kept':>6s} {'MB':>8s} {'graded':>7s} {'waiting':>8s} {'failed':>7s}"]
    waiting = []
    for lesson, rows in sorted(found.items()):
        counts, kept, size = Counter(row[2] for row in rows), sum(row[3] for row in rows), sum(row[4] for row in rows)
        said.append(f"{lesson:28s} {len(rows):8d} {kept:6d} {size / 2**20:8.1f} {counts['graded']:7d} "
                    f"{counts['waiting']:8d} {counts['failed']:7d}")
        waiting += [(hand_in.when, student, lesson) for student, hand_in, state, _, _ in rows if state == "waiting"]
    for when, student, lesson in sorted(waiting)[:MOST_LISTED]:
        said.append(plain_text(f"  waiting: {student} {lesson}, handed in {when:%Y-%m-%d %H:%M:%S} UTC"))
    if len(waiting) > MOST_LISTED:
        said.append(f"  and {len(waiting) - MOST_LISTED} more waiting")
    return said


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=Path.cwd())
    args = parser.parse_args(argv)
    print("\n".join(lines(args.root)))


if __name__ == "__main__":
    main()
