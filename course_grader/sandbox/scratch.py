"""A sandbox's scratch ``/tmp`` bounded in files as well as bytes: a tmpfs of its own, then bubblewrap.

    python -I -S scratch.py FOLDER BYTES FILES PARENT -- bwrap ...   # what the grader starts (session.bwrap_command)
    python -I -S scratch.py --probe FOLDER                             # exit status 0 where this works here

bubblewrap's ``--tmpfs`` takes a size but no count of files (inodes): an
empty file costs no bytes, so a sandbox with only ``--size`` could make
files until the kernel's memory for them ran out (181,000 in 8 seconds grew
the kernel's slab by 190 MB). This process, started by the grader with the
teacher's rights, makes a mount namespace of its own (and, for a teacher who
is not root, a user namespace, where the teacher's id is the only one),
mounts a tmpfs of ``BYTES`` and ``FILES`` on ``FOLDER`` there, and becomes
bubblewrap, which binds it as the sandbox's ``/tmp``. The mount exists only
in that namespace: each sandbox gets a fresh one, and it is gone with it.

It ends with the process that started it (``PARENT``, its pid: a grader's
worker), as bubblewrap's ``--die-with-parent`` does once it runs: a worker
killed while this process was starting (Ctrl+C in ``make grade``) left it,
and the sandbox it became, running after the grader had ended.

It needs the standard library only (``-S``: not even site-packages), and
says why on its standard error where the kernel refuses (a system where
unprivileged user namespaces are turned off for all but bubblewrap): the
grader then probes first and falls back to bubblewrap's own ``--size``.
"""

import ctypes
import os
import sys

CLONE_NEWNS, CLONE_NEWUSER = 0x00020000, 0x10000000
MS_NOSUID, MS_NODEV, MS_REC, MS_PRIVATE = 0x2, 0x4, 0x4000, 0x40000
PR_SET_PDEATHSIG, SIGKILL = 1, 9


def _fail(what):
    raise OSError(ctypes.get_errno(), f"{what}: {os.strerror(ctypes.get_errno())}")


def _own_namespaces(libc):
    """A mount namespace of this process's own, where it may mount (and a user namespace where it is not root)."""
    uid, gid = os.getuid(), os.getgid()
    if libc.unshare(CLONE_NEWNS | (0 if uid == 0 else CLONE_NEWUSER)) != 0:
        _fail("unshare")
    if uid != 0:  # the teacher's own ids, the only ones in the new user namespace
        for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1")):
            with open(f"/proc/self/{name}", "w") as f:
                f.write(text)
    if libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None) != 0:  # nothing mounted here goes back out
        _fail("making the mounts private")


def mount_scratch(folder, size, files):
    """A tmpfs of ``size`` bytes and ``files`` inodes on ``folder``, in namespaces of this process's own."""
    libc = ctypes.CDLL(None, use_errno=True)
    _own_namespaces(libc)
    options = f"size={int(size)},nr_inodes={int(files)},mode=0755".encode()
    if libc.mount(b"tmpfs", os.fsencode(folder), b"tmpfs", MS_NOSUID | MS_NODEV, options) != 0:
        _fail("mounting the scratch tmpfs")


def main(argv):
    if argv[:1] == ["--probe"] and len(argv) == 2:
        mount_scratch(argv[1], 2**20, 16)
        return 0
    if len(argv) < 6 or argv[4] != "--" or not argv[3].isdigit():
        print("usage: scratch.py FOLDER BYTES FILES PARENT -- COMMAND ...", file=sys.stderr)
        return 2
    ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0)  # kept through execv: bubblewrap's own comes later
    if os.getppid() != int(argv[3]):  # the parent died before that: nobody is left to end this sandbox
        return 1
    mount_scratch(argv[0], argv[1], argv[2])
    os.execv(argv[5], argv[5:])


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except OSError as exc:
        print(f"the sandbox's scratch /tmp could not be made: {exc.strerror or exc}", file=sys.stderr)
        sys.exit(125)
