"""The system calls an answer's process may make: an allow-list, compiled once by libseccomp into a BPF program.

The allow-list (``SYSTEM_CALLS``) holds what a Python answer with numpy
needs; every other call fails with EPERM. A few more are allowed with their
arguments checked: ``kill`` and ``tgkill`` to the answer's own process only,
``prlimit64`` of its own process only, and ``clone`` for a thread (where
``threads``) but never for a process; ``clone3`` says ENOSYS, so that glibc
falls back to ``clone``. Left out, among others: fork, vfork, execve,
ptrace, process_vm_readv and _writev, unshare, setns, mount, io_uring_*,
bpf, perf_event_open, userfaultfd, memfd_create, socket (the answer keeps
the one channel it was given), and every call of a foreign architecture
(x32 and i386 included: libseccomp's program kills on a wrong architecture).

``program(threads)`` is written by libseccomp (the ``pyseccomp`` binding)
once per grading run, outside the sandbox, with ``PID`` where the answer's
process id goes; the runner fills its child's pid in and loads it with one
``prctl`` (``runner.load_program``): a fraction of a millisecond per
exercise, where building the filter in each child took seven.
"""

import errno
import functools
import tempfile

#: Stands for the answer's pid in the program (above any pid: Linux's pid_max is at most 2**22).
PID = 0x5EC00FF1
#: System calls a Python answer with numpy needs; everything else fails with EPERM.
SYSTEM_CALLS = """
read write readv writev pread64 pwrite64 preadv pwritev preadv2 pwritev2 close close_range lseek fstat stat lstat
newfstatat statx fstatfs statfs access faccessat faccessat2 open openat openat2 getdents getdents64 readlink
readlinkat getcwd chdir fchdir mkdir mkdirat rmdir unlink unlinkat rename renameat renameat2 symlink symlinkat
link linkat chmod fchmod fchmodat umask utimensat fsync fdatasync ftruncate truncate fallocate fadvise64 flock
fcntl dup dup2 dup3 pipe pipe2 ioctl getxattr lgetxattr fgetxattr listxattr flistxattr llistxattr
mmap munmap mprotect mremap madvise brk msync mincore membarrier rseq
rt_sigaction rt_sigprocmask rt_sigreturn rt_sigpending rt_sigsuspend rt_sigtimedwait sigaltstack restart_syscall
alarm setitimer getitimer pause
select pselect6 poll ppoll epoll_create epoll_create1 epoll_ctl epoll_wait epoll_pwait eventfd2
sendto recvfrom sendmsg recvmsg shutdown getsockname getpeername getsockopt setsockopt
sched_yield sched_getaffinity sched_getparam sched_getscheduler sched_get_priority_max sched_get_priority_min
nanosleep clock_nanosleep clock_gettime clock_getres gettimeofday time times getrusage sysinfo uname getrandom
getpid getppid gettid getuid geteuid getgid getegid getresuid getresgid getgroups getpgrp getpgid getsid
getpriority getrlimit setrlimit futex set_robust_list get_robust_list set_tid_address arch_prctl prctl
exit exit_group
""".split()
CLONE_THREAD = 0x00010000


def rules(threads):
    """The allow-list as a ``pyseccomp.SyscallFilter``, with ``PID`` for the answer's pid."""
    import pyseccomp as seccomp

    made = seccomp.SyscallFilter(defaction=seccomp.ERRNO(errno.EPERM))

    def allow(name, *args, action=seccomp.ALLOW):
        number = seccomp.resolve_syscall(seccomp.Arch.NATIVE, name)
        if number >= 0:  # not every name exists on every architecture
            made.add_rule(action, number, *args)

    for name in SYSTEM_CALLS:
        allow(name)
    for name in ("kill", "tgkill"):
        allow(name, seccomp.Arg(0, seccomp.EQ, PID))
    for target in (0, PID):
        allow("prlimit64", seccomp.Arg(0, seccomp.EQ, target))
    if threads:
        allow("clone", seccomp.Arg(0, seccomp.MASKED_EQ, CLONE_THREAD, CLONE_THREAD))
    allow("clone3", action=seccomp.ERRNO(errno.ENOSYS))
    return made


@functools.lru_cache(maxsize=2)
def program(threads):
    """The allow-list as a classic BPF program (bytes of ``struct sock_filter``), ``PID`` for the answer's pid."""
    with tempfile.TemporaryFile() as f:
        rules(threads).export_bpf(f)
        f.seek(0)
        code = f.read()
    if not code or len(code) % 8 or PID.to_bytes(4, "little") not in code and PID.to_bytes(4, "big") not in code:
        raise RuntimeError(f"libseccomp wrote no usable program ({len(code)} bytes)")
    return code


def problem():
    """None when libseccomp can write the program here, else why not (a sentence)."""
    try:
        program(True)
    except (ImportError, OSError, RuntimeError) as exc:
        return f"{type(exc).__name__}: {exc}"
    return None
