"""The grader's side inside the sandbox: runs learners' answer cells, one exercise per process.

    python -I runner.py        # started by encoder_lib.grading.sandbox, in bubblewrap

This file and ``wire.py`` are copied into the sandbox and need only the
standard library and numpy; ``encoder_lib`` is not there. The runner reads
requests from its standard input and answers on its standard output, both
connected to a grader process outside.

For each exercise the runner forks a child, which

1. limits itself: address space, CPU seconds, file size; a seccomp filter
   makes fork, vfork, exec and ptrace fail (threads still work), so an
   answer cannot leave a process behind or start another program;
2. runs the answer cell alone in a fresh namespace holding ``np``, ``math``,
   ``erf``, ``el`` and the earlier exercises' functions the exercise may
   call. All but numpy and math are stand-ins: each call sends its arguments to the grader,
   which computes the library's function outside and sends back the result;
   no library code is in here to read, import or copy;
3. calls the answer's function on each case the grader sent and sends back
   what it returned (plain arrays, see ``wire``) or what it raised.

The runner itself waits for the child with a deadline, kills it and every
other process in the sandbox when the exercise ends, and reports how it
ended: done, timeout, or died (with the exit status). Comparing the results
with the right answers happens outside, in the grader: the right answers
never come in here.
"""

import ctypes
import math
import os
import platform
import resource
import shutil
import signal
import socket
import struct
import sys
import time
import types
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np  # noqa: E402
import wire  # noqa: E402

# ---------------------------------------------------------------- the answer's process: limits


def _bpf(code, k, jt=0, jf=0):
    return struct.pack("HBBI", code, jt, jf, k)


def forbid_new_processes():
    """Install a seccomp filter: fork, vfork, clone of a process, clone3, exec and ptrace fail.

    Threads (clone with CLONE_THREAD) still start; glibc falls back from
    clone3 to clone when clone3 says ENOSYS. Returns False on an
    architecture this filter does not know (the sandbox's process namespace
    still ends every process when the learner's grading ends).
    """
    machine = platform.machine()
    if machine == "x86_64":
        arch, numbers = 0xC000003E, {"fork": 57, "vfork": 58, "execve": 59, "execveat": 322, "ptrace": 101,
                                     "process_vm_writev": 311, "clone": 56, "clone3": 435}
    elif machine in ("aarch64", "arm64"):
        arch, numbers = 0xC00000B7, {"execve": 221, "execveat": 281, "ptrace": 117, "process_vm_writev": 271,
                                     "clone": 220, "clone3": 435}
    else:
        return False
    ld, jeq, jge, jset, ret = 0x20, 0x15, 0x35, 0x45, 0x06
    allow, deny, enosys = 0x7FFF0000, 0x00050000 | 1, 0x00050000 | 38  # SECCOMP_RET_ALLOW, ERRNO(EPERM / ENOSYS)
    denied = [n for name, n in numbers.items() if name not in ("clone", "clone3")]
    # instructions, with jumps to the three final returns resolved below
    program = [("ld", 4), ("arch", arch), ("ld", 0)]
    if machine == "x86_64":
        program.append(("x32", 0x40000000))
    program += [("deny_if", n) for n in denied]
    program += [("enosys_if", numbers["clone3"]), ("clone", numbers["clone"]), ("ld", 16), ("thread", 0x00010000),
                ("ret", allow), ("ret", deny), ("ret", enosys)]
    end = len(program)
    allow_at, deny_at, enosys_at = end - 3, end - 2, end - 1
    code = []
    for i, (op, k) in enumerate(program):
        def to(target):
            return target - i - 1
        if op == "ld":
            code.append(_bpf(ld, k))
        elif op == "arch":
            code.append(_bpf(jeq, k, 0, to(deny_at)))
        elif op == "x32":
            code.append(_bpf(jge, k, to(deny_at), 0))
        elif op == "deny_if":
            code.append(_bpf(jeq, k, to(deny_at), 0))
        elif op == "enosys_if":
            code.append(_bpf(jeq, k, to(enosys_at), 0))
        elif op == "clone":
            code.append(_bpf(jeq, k, 0, to(allow_at)))
        elif op == "thread":
            code.append(_bpf(jset, k, to(allow_at), to(deny_at)))
        else:
            code.append(_bpf(ret, k))
    buffer = ctypes.create_string_buffer(b"".join(code))

    class Program(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    prog = Program(len(code), ctypes.cast(buffer, ctypes.c_void_p))
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")
    if libc.prctl(22, 2, ctypes.byref(prog), 0, 0) != 0:  # PR_SET_SECCOMP, SECCOMP_MODE_FILTER
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_SECCOMP)")
    return True


def limit_myself(memory_bytes, cpu_seconds, file_bytes=16 * 2**20):
    resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds + 1))
    resource.setrlimit(resource.RLIMIT_FSIZE, (file_bytes, file_bytes))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def scratch_folder(pid):
    """Where an answer's process may write: in the sandbox's own /tmp (outside one, a folder the grader made)."""
    return os.path.join(os.environ.get("ENCODER_GRADER_SCRATCH", "/tmp"), f"answer-{pid}")


# ---------------------------------------------------------------- the answer's process: stand-ins


class Channel:
    """Messages over a socket, each read against a deadline (``TimeoutError`` when it passes)."""

    def __init__(self, sock):
        self.sock = sock

    def send(self, value, lenient=False):
        data = wire.encode(value, lenient)
        self.sock.sendall(struct.pack("<Q", len(data)) + data)

    def send_raw(self, data):
        self.sock.sendall(struct.pack("<Q", len(data)) + data)

    def receive(self, deadline=None):
        return wire.decode(self.receive_raw(deadline))

    def receive_raw(self, deadline=None):
        (size,) = struct.unpack("<Q", self._read(8, deadline))
        if size > wire.MAX_BYTES:
            raise wire.WireError(f"a message of {size} bytes")
        return self._read(size, deadline)

    def _read(self, size, deadline):
        chunks, remaining = [], size
        while remaining:
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError
                self.sock.settimeout(left)
            try:
                chunk = self.sock.recv(min(remaining, 1 << 20))
            except socket.timeout:
                raise TimeoutError from None
            if not chunk:
                raise EOFError
            chunks.append(chunk)
            remaining -= len(chunk)
        return b"".join(chunks)


ERRORS = {"ValueError": ValueError, "TypeError": TypeError, "IndexError": IndexError, "KeyError": KeyError}


def stand_in(name, channel):
    """``name`` as a function that asks the grader for the library's result."""
    def function(*args, **kwargs):
        try:
            channel.send({"kind": "call", "name": name, "args": list(args), "kwargs": kwargs})
        except wire.WireError as exc:
            raise TypeError(f"el.{name} got an argument the grader cannot pass on ({exc})") from None
        reply = channel.receive()
        if reply.get("kind") == "value":
            return reply["value"]
        raise ERRORS.get(reply.get("type"), RuntimeError)(reply.get("message", "the grader could not compute it"))

    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"encoder_lib's {name}, computed by the grader outside the sandbox."
    return function


def composed_add_norm(layer_norm, placement):
    """post_norm and pre_norm take a function, which cannot cross: they are composed here from layer_norm."""
    def add_norm(x, sublayer, gamma=None, beta=None, eps=1e-5):
        if not callable(sublayer):
            raise TypeError(f"sublayer must be a function of one array, got {type(sublayer).__name__}")
        if placement == "post":
            return layer_norm(x + sublayer(x), gamma, beta, eps)
        return x + sublayer(layer_norm(x, gamma, beta, eps))

    add_norm.__name__ = add_norm.__qualname__ = f"{placement}_norm"
    return add_norm


def library_stand_in(names, channel):
    """A module object that answers ``el.<name>`` for the names an exercise may call, and nothing else."""
    module = types.ModuleType("encoder_lib", "encoder_lib as the grader's sandbox offers it: "
                              "the functions this exercise may call, computed outside")
    for name in names:
        if name not in ("post_norm", "pre_norm"):
            setattr(module, name, stand_in(name, channel))
    layer_norm = getattr(module, "layer_norm", None) or stand_in("layer_norm", channel)
    for placement in ("post", "pre"):
        if f"{placement}_norm" in names:
            setattr(module, f"{placement}_norm", composed_add_norm(layer_norm, placement))

    def missing(attribute):
        if attribute.startswith("__"):
            raise AttributeError(attribute)
        raise AttributeError(f"encoder_lib.{attribute} is not available to this exercise in the grader: "
                             f"write what it does yourself (it may call: {', '.join(sorted(names)) or 'nothing'})")

    module.__getattr__ = missing
    return module


def rebuild(value, channel):
    """Fresh inputs for one call: arrays copied (an answer may change its inputs in place), and
    ``wire.Call`` made a function that asks the grader."""
    if isinstance(value, np.ndarray):
        return value.copy()
    if isinstance(value, wire.Call):
        function = stand_in(value.name, channel)
        args = [rebuild(a, channel) for a in value.args]
        return lambda h: function(h, *args)
    if isinstance(value, list):
        return [rebuild(v, channel) for v in value]
    if isinstance(value, tuple):
        return tuple(rebuild(v, channel) for v in value)
    if isinstance(value, dict):
        return {k: rebuild(v, channel) for k, v in value.items()}
    return value


def describe_exception(exc):
    return f"{type(exc).__name__}: {exc}"[:2000]


def answer_process(sock, request):
    """In the forked child: limit, run the answer cell, run the cases, report. Never returns."""
    channel = Channel(sock)
    try:
        os.setsid()
        for fd in (0, 1, 2):  # the answer's prints and its attempts to read go nowhere
            os.dup2(os.open(os.devnull, os.O_RDWR), fd)
        limit_myself(int(request["memory_bytes"]), int(math.ceil(request["time_limit"])) + 1)
        forbid_new_processes()
        scratch = scratch_folder(os.getpid())
        os.makedirs(scratch, exist_ok=True)
        os.chdir(scratch)
        warnings.simplefilter("ignore")  # a warning a correct answer prints never costs it anything
        np.seterr(all="ignore")
        el = library_stand_in(request["may_call"], channel)
        sys.modules["encoder_lib"] = el
        # erf is SciPy's, computed by the grader like the stand-ins (importing SciPy here would cost more)
        namespace = {"__name__": "__main__", "np": np, "numpy": np, "math": math, "erf": stand_in("erf", channel),
                     "el": el}
        for name in request["uses"]:
            namespace[name] = getattr(el, name)
        name, cases = request["name"], request["cases"]
        try:
            exec(compile(request["source"], "<answer cell>", "exec"), namespace)
        except MemoryError:
            channel.send({"kind": "cell_failed", "memory": True, "error": "MemoryError"})
            os._exit(0)
        except BaseException as exc:  # SystemExit and KeyboardInterrupt too: the cell's own doing
            channel.send({"kind": "cell_failed", "memory": False, "error": describe_exception(exc)})
            os._exit(0)
        function = namespace.get(name)
        if not callable(function):
            channel.send({"kind": "cell_failed", "memory": False, "missing": True,
                          "error": f"the answer cell does not define `{name}`"})
            os._exit(0)
        for i, case in enumerate(cases):
            args, kwargs = rebuild(case["args"], channel), rebuild(case["kwargs"], channel)
            try:
                value = function(*args, **kwargs)
            except NotImplementedError:
                channel.send({"kind": "raised", "case": i, "error": "NotImplementedError", "not_done": True})
                continue
            except MemoryError:
                channel.send({"kind": "raised", "case": i, "error": "MemoryError", "memory": True})
                continue
            except BaseException as exc:
                channel.send({"kind": "raised", "case": i, "error": describe_exception(exc)})
                continue
            channel.send({"kind": "result", "case": i, "value": value}, lenient=True)
        channel.send({"kind": "done"})
    except BaseException:  # the channel broke, or the answer broke the runner's own code: nothing more to say
        pass
    os._exit(0)


# ---------------------------------------------------------------- the supervisor


def kill_everything_else():
    """Kill every process of the sandbox but its init (pid 1) and this runner: what an answer left behind.

    Only in bubblewrap's process namespace, where /proc lists the sandbox's
    processes alone (the grader sets ENCODER_GRADER_OWN_PIDS there).
    """
    if os.environ.get("ENCODER_GRADER_OWN_PIDS") != "1" or os.getpid() > 10:
        return
    me = os.getpid()
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) not in (1, me):
            try:
                os.kill(int(entry), signal.SIGKILL)
            except OSError:
                pass
    while True:  # reap them
        try:
            if os.waitpid(-1, os.WNOHANG) == (0, 0):
                break
        except ChildProcessError:
            break


def run_exercise(request, grader_in, grader_out):
    """Run one exercise in a child; relay its calls to the grader; report how it ended."""
    parent, child = socket.socketpair()
    pid = os.fork()
    if pid == 0:
        parent.close()
        os.close(grader_in.fileno())
        os.close(grader_out.fileno())
        answer_process(child, request)
    child.close()
    channel = Channel(parent)
    deadline = time.monotonic() + float(request["time_limit"])
    ending = {"kind": "ended", "status": "died"}
    try:
        while True:  # messages are passed on as they came, undecoded: the grader reads them
            message = channel.receive_raw(deadline)
            kind = wire.peek(message, "kind")
            if kind == "call":
                wire.send_raw(grader_out, message)
                channel.send_raw(wire.receive_raw(grader_in))
            elif kind in ("result", "raised", "cell_failed"):
                wire.send_raw(grader_out, message)
                if kind == "cell_failed":
                    ending["status"] = "done"
                    break
            elif kind == "done":
                ending["status"] = "done"
                break
            else:
                ending["detail"] = "the answer's process sent something that is not a message"
                break
    except TimeoutError:
        ending["status"] = "timeout"
    except (EOFError, wire.WireError, OSError) as exc:
        ending["detail"] = f"{type(exc).__name__}"
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        pass
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError:
        pass
    _, status = os.waitpid(pid, 0)
    if ending["status"] == "died":
        if os.WIFSIGNALED(status):
            ending["detail"] = f"killed by signal {os.WTERMSIG(status)} ({signal.Signals(os.WTERMSIG(status)).name})"
        else:
            ending["detail"] = f"the process exited with status {os.WEXITSTATUS(status)} before it finished"
    parent.close()
    kill_everything_else()
    shutil.rmtree(scratch_folder(pid), ignore_errors=True)  # the next exercise starts from an empty folder
    wire.send(grader_out, ending)


def main():
    libc = ctypes.CDLL(None)
    libc.prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE 0: the answers' processes cannot read or trace this one
    grader_in = os.fdopen(os.dup(0), "rb")
    grader_out = os.fdopen(os.dup(1), "wb")
    for fd in (0, 1):  # nothing else writes to the grader's channel by accident
        os.dup2(os.open(os.devnull, os.O_RDWR), fd)
    wire.send(grader_out, {"kind": "ready", "pid": os.getpid()})
    while True:
        try:
            request = wire.receive(grader_in)
        except EOFError:
            return
        if request.get("kind") == "exercise":
            run_exercise(request, grader_in, grader_out)
        elif request.get("kind") == "bye":
            return


if __name__ == "__main__":
    main()
