"""The sandbox a learner's answers run in: bubblewrap around ``runner.py``, and the grader's end of the channel.

Where the answer runs: in a child process of ``runner.py``, ``answer.py``'s ``answer_process``, inside bubblewrap (no
network, no other process, a read-only root with only a bounded scratch /tmp, ``encoder_lib`` and the grader
hidden), in its own cgroups, under the system-call allow-list; the grader outside sees only what crosses the channel
(``encoder_lib.grading.wire``) and judges it there. Every file:

- ``__init__``: this list, and what the rest of the grader imports from the sandbox;
- ``box``: ``Sandbox``, one running sandbox for one learner, its ``Limits``, and the channel's grader end;
- ``session``: what one grading run makes outside its sandboxes, and the bubblewrap command;
- ``scratch``: the sandbox's scratch /tmp, a tmpfs bounded in bytes and files, mounted before bubblewrap starts;
- ``cgroups``: the cgroups that bound each sandbox's memory and tasks, and how they are removed;
- ``shared``: the lesson's large inputs (lesson 08's weights) written once per run and read by every sandbox;
- ``runner``: the program inside (the sandbox's pid 1), which starts each exercise in a child process of its own;
- ``answer``: that child: the answer cell run, the library's functions it may call served over the channel;
- ``syscalls``: that child's system-call allow-list; ``numeric``: erf for the runner, which has no scipy.

``runner``, ``answer``, ``numeric`` and ``wire`` are copied into the session's folder, which the sandbox reads:
they need only the standard library and numpy.
"""

from .box import (GRACE_SECONDS, SANDBOX_EXTRA_BYTES, SANDBOX_TASKS, Limits, Sandbox, SandboxDied,  # noqa: F401
                  SandboxFailed, SandboxUnavailable)
from .session import (SANDBOX_ENV, SCRATCH_BYTES, SCRATCH_FILES, Session, bwrap_command, close_session,  # noqa: F401
                      open_session, sandbox_problem)
