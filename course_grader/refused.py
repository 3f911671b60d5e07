"""``Refused``: what the teacher asked, or the course's settings, cannot be done, said in one sentence.

The plan (a lesson or learner that is not the course's, a missing release), the run (nbgrader's late-penalty setting)
and the cluster (a scheduler's address, one that cannot be reached) raise it before anything is graded; only the
command (``grade.main``) turns it into a message and an exit status, so that the library never exits a process.
"""


class Refused(Exception):
    """A choice or a setting that cannot be used; its message says why and what to do, naming the setting."""
