"""The course's nbgrader setting that ``make grade`` and ``make report`` read from ``nbgrader_config.py``: the
course's id and the lessons the class is set (``c.EncoderCourse.lessons``)."""

from pathlib import Path



def course_config(root):
    from traitlets.config.loader import PyFileConfigLoader

    return PyFileConfigLoader("nbgrader_config.py", path=str(root)).load_config()


def course_id(root):
    return course_config(root).CourseDirectory.get("course_id", "default_course")


def lessons_set(root):
    """The lessons the class is set, as the course's ``nbgrader_config.py`` says
    (``c.EncoderCourse.lessons = ["01_attention", ...]``), or None (every lesson; also without the file).
    ValueError when it is not a list of names."""
    if not (Path(root) / "nbgrader_config.py").is_file():
        return None
    lessons = course_config(root).EncoderCourse.get("lessons")
    if lessons is None:
        return None
    if isinstance(lessons, str) or not all(isinstance(name, str) for name in lessons):
        raise ValueError(f"c.EncoderCourse.lessons in nbgrader_config.py must be a list of lesson names, got "
                         f"{lessons!r}")
    return list(lessons) or None

