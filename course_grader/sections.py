"""A course's sections: which learner is in which, for one run over all of them (docs/teaching/sections.md).

Set in ``nbgrader_config.py`` as a roster file with an id and a section column (``c.EncoderCourse.sections =
"students.csv"``; the id column one of ``ID_COLUMNS``) or as ``{section: [ids]}``. Unset, the course has one
section. A learner in two sections, a file without those columns, one too large or a section name that is not
plain text is refused, naming the setting and what was expected.
"""

import csv
import io
import re
from pathlib import Path

from .course_config import course_config

SETTING = "c.EncoderCourse.sections in nbgrader_config.py"
ID_COLUMNS = ("id", "student_id", "SIS Login ID", "SIS User ID", "Login ID", "Username")
SECTION_COLUMNS = ("section", "Section")
#: The largest roster file read (a roster of 2,000 learners is about 200 kB).
MOST_BYTES = 20 * 2**20
#: A section's name: printable, short, no path separators (it names a file: grades_lms_<section>.csv).
NAME = re.compile(r"[^\x00-\x1f\x7f/\\]{1,60}")


def read_sections(root):
    """``{student_id: section}`` as the course sets it (empty: one section, unset)."""
    setting = course_config(root).EncoderCourse.get("sections")
    if setting is None:
        return {}
    if isinstance(setting, str):
        return _from_file(Path(root) / setting, setting)
    if isinstance(setting, dict):
        return _from_dict(setting)
    raise ValueError(f"{SETTING} must be a roster file's name (a CSV with an id and a section column) or "
                     f"{{section: [student ids]}}, got {type(setting).__name__}")


def _named(section, where):
    if not isinstance(section, str) or not NAME.fullmatch(section.strip()):
        raise ValueError(f"{SETTING}: {where} names the section {section!r}; a section's name must be 1 to 60 "
                         "printable characters, without / or \\")
    return section.strip()


def _from_dict(setting):
    found = {}
    for section, students in setting.items():
        section = _named(section, "the setting")
        if isinstance(students, str) or not all(isinstance(s, str) and s for s in students):
            raise ValueError(f"{SETTING}: section {section!r} must list its student ids, got {students!r}")
        for student in students:
            if found.get(student, section) != section:
                raise ValueError(f"{SETTING}: {student!r} is in two sections, {found[student]!r} and {section!r}")
            found[student] = section
    return found


def _from_file(path, setting):
    if not path.is_file():
        raise ValueError(f"{SETTING} names {setting!r}, which is not a file in the course folder")
    if path.stat().st_size > MOST_BYTES:
        raise ValueError(f"{SETTING}: {setting!r} is larger than {MOST_BYTES // 2**20} MB; is it the roster?")
    reader = csv.DictReader(io.StringIO(path.read_text(encoding="utf-8-sig")))
    columns = reader.fieldnames or []
    id_column = next((c for c in ID_COLUMNS if c in columns), None)
    section_column = next((c for c in SECTION_COLUMNS if c in columns), None)
    if id_column is None or section_column is None:
        raise ValueError(f"{SETTING}: {setting!r} needs an id column ({', '.join(ID_COLUMNS)}) and a section column "
                         f"({' or '.join(SECTION_COLUMNS)}); its columns are {columns}")
    found = {}
    for line, row in enumerate(reader, start=2):
        student, section = (row.get(id_column) or "").strip(), (row.get(section_column) or "").strip()
        if not student or not section:
            continue  # Canvas's "Points Possible" row, a learner without a section
        section = _named(section, f"{setting!r} line {line}")
        if found.get(student, section) != section:
            raise ValueError(f"{SETTING}: {setting!r} puts {student!r} in two sections, {found[student]!r} and "
                             f"{section!r} (line {line})")
        found[student] = section
    return found


def file_name(section):
    """The name of a section's learning-platform file: ``grades_lms_<section>.csv``, its name made safe."""
    return "grades_lms_" + re.sub(r"[^\w.-]+", "_", section).strip("._") + ".csv"


def in_words(sections):
    """``"A and B"`` for a few section names."""
    names = sorted(sections)
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
