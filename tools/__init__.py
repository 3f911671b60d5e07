"""The course's command-line tools, run from the course's folder as ``python -m tools.<name>``.

The Makefile runs them (``make student``, ``make present``, ...); each
module's docstring says what it does. ``tools.course`` holds what they share:
where the course is, its lessons, and the environment Jupyter runs in.
"""
