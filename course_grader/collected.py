"""What `make collect` says last of each lesson: how many of the roster handed it in, and who has not.

    .venv/bin/python -m course_grader.collected 01_attention

Read from ``submitted/`` as ``make grade`` reads it (``submissions.scan``)
and from the gradebook's roster; a class without a roster is told how many
handed in. At most ``MOST_NAMED`` learners are named, the rest counted.
"""

import argparse
import sys
import unicodedata
from pathlib import Path

from encoder_lib.grading.exercises import BY_LESSON

from . import gradebook, submissions
from .files import plain_text
from .sections import read_sections

MOST_NAMED = 50


def summary(root, lesson):
    """The lines `make collect` ends with for ``lesson``."""
    found = submissions.scan(Path(root) / "submitted", {lesson: BY_LESSON[lesson]})
    handed = {unicodedata.normalize("NFC", student) for (student, _) in found.handed}
    roster = gradebook.roster(root)
    if not roster:
        return [f"{lesson}: {len(handed)} learner{'s' * (len(handed) != 1)} handed in (no roster in the gradebook "
                f"to say who has not: docs/teaching/grading.md)"]
    missing = [s for s in roster if unicodedata.normalize("NFC", s) not in handed]
    lines = [f"{lesson}: {len(roster) - len(missing)} of the roster's {len(roster)} handed in"]
    sections = read_sections(root)
    if len(set(sections.values())) > 1:  # each section's count (course_grader.sections)
        absent = set(missing)
        lines.append("  " + "; ".join(
            f"section {plain_text(name)}: {sum(s not in absent for s in roster if sections.get(s) == name)} of "
            f"{sum(sections.get(s) == name for s in roster)}" for name in sorted(set(sections.values()))))
    if missing:
        named = ", ".join(plain_text(s) for s in missing[:MOST_NAMED])
        more = f" and {len(missing) - MOST_NAMED} more" if len(missing) > MOST_NAMED else ""
        lines.append(f"  not handed in ({len(missing)}): {named}{more}")
    return lines


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("lesson")
    parser.add_argument("--root", type=Path, default=Path.cwd())
    args = parser.parse_args(argv)
    if args.lesson not in BY_LESSON:
        sys.exit(f"LESSON must name a lesson of the course ({', '.join(BY_LESSON)}); got {args.lesson!r}")
    print("\n".join(summary(args.root, args.lesson)))


if __name__ == "__main__":
    main()
