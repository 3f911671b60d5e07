"""The course's nbgrader setting that ``make grade`` and ``make report`` read from ``nbgrader_config.py``: the
course's id, the lessons the class is set (``c.EncoderCourse.lessons``; unset, the lessons released through
nbgrader's exchange: ``counted_lessons``) and the grace a learner's own time stamp gets
(``c.EncoderCourse.stamp_grace_seconds``; unset, none)."""

import os
from pathlib import Path

#: nbgrader's own exchange folder, where ``c.Exchange.root`` is not set.
NBGRADER_EXCHANGE = "/usr/local/share/nbgrader/exchange"


def course_config(root):
    """The course's ``nbgrader_config.py``, loaded; an empty ``Config`` where the course has none."""
    from traitlets.config import Config
    from traitlets.config.loader import PyFileConfigLoader

    if not (Path(root) / "nbgrader_config.py").is_file():
        return Config()
    return PyFileConfigLoader("nbgrader_config.py", path=str(root)).load_config()


def course_id(root):
    return course_config(root).CourseDirectory.get("course_id", "default_course")


def lessons_set(root):
    """The lessons the class is set, as the course's ``nbgrader_config.py`` says
    (``c.EncoderCourse.lessons = ["01_attention", ...]``), or None (every lesson; also without the file).
    ValueError when it is not a list of names."""
    lessons = course_config(root).EncoderCourse.get("lessons")
    if lessons is None:
        return None
    if isinstance(lessons, str) or not all(isinstance(name, str) for name in lessons):
        raise ValueError(f"c.EncoderCourse.lessons in nbgrader_config.py must be a list of lesson names, got "
                         f"{lessons!r}")
    return list(lessons) or None


def time_zone(root):
    """The course's time zone, in which due dates are shown: nbgrader's own setting for the times it writes
    (``c.Exchange.timezone`` in nbgrader_config.py), else UTC; ValueError naming it when it is not a zone."""
    import zoneinfo

    name = course_config(root).Exchange.get("timezone", "UTC")
    try:
        return zoneinfo.ZoneInfo(str(name))
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise ValueError(f"c.Exchange.timezone in nbgrader_config.py must be a time zone such as 'Europe/Paris', "
                         f"got {name!r}") from None


#: The most grace a course may give a learner's own timestamp.txt over the exchange's time.
MOST_GRACE_SECONDS = 3600


def stamp_grace(root):
    """How long before the exchange's time a learner's own timestamp.txt may be and still count
    (``c.EncoderCourse.stamp_grace_seconds`` in nbgrader_config.py): none unless the course says, as every learner
    could otherwise hand in that much late unpenalised; every hand-in timed inside it is flagged. ValueError when
    it is not a number of seconds from 0 to ``MOST_GRACE_SECONDS``."""
    import datetime

    seconds = course_config(root).EncoderCourse.get("stamp_grace_seconds", 0)
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not 0 <= seconds <= MOST_GRACE_SECONDS:
        raise ValueError(f"c.EncoderCourse.stamp_grace_seconds in nbgrader_config.py must be a number of seconds "
                         f"from 0 to {MOST_GRACE_SECONDS}, got {seconds!r}")
    return datetime.timedelta(seconds=seconds)


def released_lessons(root):
    """The graded lessons released to learners through nbgrader's exchange (``nbgrader release_assignment``: a
    folder of ``<Exchange.root>/<course_id>/outbound/``), in the course's order; empty where none was."""
    from encoder_lib.grading.exercises import BY_LESSON

    config = course_config(root)
    outbound = Path(config.Exchange.get("root", NBGRADER_EXCHANGE)) / course_id(root) / "outbound"
    try:
        there = {entry.name for entry in os.scandir(outbound) if entry.is_dir(follow_symlinks=False)}
    except OSError:
        return []
    return [lesson for lesson in BY_LESSON if lesson in there]


def handed_in_lessons(root):
    """The graded lessons someone handed in (a ``submitted/<student_id>/<lesson>/`` folder), in course order."""
    from encoder_lib.grading.exercises import BY_LESSON

    found = set()
    try:
        learners = [entry for entry in os.scandir(Path(root) / "submitted") if entry.is_dir(follow_symlinks=False)
                    and not entry.name.startswith(".")]
        for learner in learners:
            found |= {entry.name for entry in os.scandir(learner.path) if entry.is_dir(follow_symlinks=False)}
    except OSError:
        pass
    return [lesson for lesson in BY_LESSON if lesson in found]


def counted_lessons(root, given=None):
    """``(lessons, why)``: the lessons a class is graded and counted on, and why, in words. ``given``
    (``LESSONS=``) first; else ``c.EncoderCourse.lessons`` in ``nbgrader_config.py``; else the lessons released
    through nbgrader's exchange; else, where nothing was released there (hand-ins copied in by hand), the
    lessons someone handed in; else every lesson (None). ValueError on a setting that is not a list of names."""
    if given:
        return list(given), "LESSONS="
    setting = lessons_set(root)
    if setting:
        return setting, "c.EncoderCourse.lessons in nbgrader_config.py"
    if (Path(root) / "nbgrader_config.py").is_file():
        released = released_lessons(root)
        if released:
            return released, "the lessons released through nbgrader's exchange (nbgrader release_assignment)"
    handed = handed_in_lessons(root)
    if handed:
        return handed, "the lessons someone handed in (none was released through nbgrader's exchange)"
    return None, "every lesson (nothing released or handed in yet)"
