"""The sandbox a learner's answers run in: bubblewrap around ``runner.py``, and the grader's end of the channel.

- ``box``: ``Sandbox``, one running sandbox for one learner, and its ``Limits``;
- ``session``: what one grading run makes outside its sandboxes, and the bubblewrap command;
  ``scratch``: the sandbox's scratch /tmp, a tmpfs bounded in bytes and files, mounted before bubblewrap starts;
- ``cgroups``: the cgroups that bound each sandbox's memory and tasks, and how they are removed;
- ``runner``: the program inside (the sandbox's pid 1), which runs each exercise in a child process of its own;
- ``syscalls``: that child's system-call allow-list; ``numeric``: erf for the runner, which has no scipy.
"""

from .box import (GRACE_SECONDS, SANDBOX_EXTRA_BYTES, SANDBOX_TASKS, Limits, Sandbox, SandboxDied, SandboxFailed,
                  SandboxUnavailable)
from .session import SANDBOX_ENV, SCRATCH_BYTES, SCRATCH_FILES, Session, bwrap_command, close_session, open_session, sandbox_problem

__all__ = ["GRACE_SECONDS", "Limits", "SANDBOX_ENV", "SANDBOX_EXTRA_BYTES", "SANDBOX_TASKS", "SCRATCH_BYTES",
           "SCRATCH_FILES", "Sandbox", "SandboxDied",
           "SandboxFailed", "SandboxUnavailable", "Session", "bwrap_command", "close_session", "open_session",
           "sandbox_problem"]
