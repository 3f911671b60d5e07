"""The answer's process, inside the sandbox: it limits itself, runs the answer cell alone, then its cases.

Forked by ``runner.py`` for each exercise (its docstring tells the whole
story); like it, this file needs only the standard library, numpy and the
files copied beside it (``wire.py``, ``numeric.py``): ``encoder_lib`` is not
in the sandbox. ``el`` is a module of stand-ins, each of which sends its
call to the runner and returns what the grader computed outside.
"""

import ctypes
import math
import os
import resource
import signal
import struct
import sys
import time
import types
import warnings

import numpy as np
import numpy.random  # noqa: F401 - imported here, once a sandbox: every answer's process watches it (wire.RandomWatch)

import numeric
import wire

#: The longest text (an error message) that leaves the sandbox.
ERROR_CHARS = 300
#: How long the runner waits for the grader: its reply to a library call (the grader bounds those), a write.
GRADER_SECONDS = 120.0
#: The tasks (threads) an answer's process may have where the kernel counts them for it (not root, see README).
MAX_TASKS = 256
#: The answer's open files.
MAX_FILES = 256
PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 1, 4, 38, 22, 2
#: The most bytes of arrays one result sends out of the sandbox: the largest right result is 86 KB (bert_block on a
#: batch of two). A result over it crosses as what its arrays are (dtype and shape), never as their bytes: an answer
#: that returned a 60 MB array once cost the grader a gigabyte and 40 s after the sandbox.
MAX_RESULT_BYTES = 4 * 2**20
#: The most arrays of such a result described, and how deep in its tuples, lists and dicts they are looked for.
MAX_DESCRIBED, MAX_RESULT_DEPTH = 16, 8
#: The key of a shared array's marker in a case's inputs (``shared.MARKER``), and where its file is: the folder
#: this file was copied into (the sandbox's read-only /tmp/grader), ``shared/<sha256>.npy``.
SHARED_MARKER, SHARED_FOLDER = "__grader_shared__", os.path.join(os.path.dirname(os.path.abspath(__file__)), "shared")


def cut(text, limit=ERROR_CHARS):
    """``text`` as a str of at most ``limit`` characters (what leaves the sandbox of a learner's text)."""
    text = str(text) if isinstance(text, str) else ""
    return text if len(text) <= limit else text[: limit - 1] + "…"


# ---------------------------------------------------------------- the answer's process: limits


def load_program(code, pid, stands_for_pid):
    """Load the seccomp allow-list ``code`` (``struct sock_filter``s, as ``syscalls.program`` wrote them) with the
    answer's ``pid`` where the program says ``stands_for_pid`` (``syscalls.PID``, which the grader sends with the
    program); after this the process cannot undo it."""
    filled, placeholder = bytearray(code), struct.pack("I", stands_for_pid)
    at = filled.find(placeholder)
    while at >= 0:
        if at % 8 == 4:  # the k field of an instruction (code u16, jt u8, jf u8, k u32)
            filled[at:at + 4] = struct.pack("I", pid)
        at = filled.find(placeholder, at + 1)
    buffer = ctypes.create_string_buffer(bytes(filled))

    class Program(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    program = Program(len(filled) // 8, ctypes.cast(buffer, ctypes.c_void_p))
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 or \
            libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(program), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "the system-call allow-list could not be loaded")


def limit_myself(memory_bytes, cpu_seconds, file_bytes=16 * 2**20):
    resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds + 1))
    resource.setrlimit(resource.RLIMIT_FSIZE, (file_bytes, file_bytes))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_NOFILE, (MAX_FILES, MAX_FILES))
    resource.setrlimit(resource.RLIMIT_NPROC, (MAX_TASKS, MAX_TASKS))  # holds where the teacher is not root


def scratch_folder(pid):
    """Where an answer's process may write: in the sandbox's own /tmp (outside one, a folder the grader made)."""
    return os.path.join(os.environ.get("ENCODER_GRADER_SCRATCH", "/tmp"), f"answer-{pid}")


def isolate(sock, request):
    """In the child, before any of the learner's code: its own session, nothing open but ``sock``, limits,
    first in line for the out-of-memory killer, the system-call allow-list, an empty scratch folder; returns the
    seconds the allow-list took to load."""
    os.setsid()
    libc = ctypes.CDLL(None)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    keep = sock.fileno()
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):  # the answer's prints and its attempts to read go nowhere
        os.dup2(null, fd)
    os.closerange(3, keep)
    os.closerange(keep + 1, resource.getrlimit(resource.RLIMIT_NOFILE)[0])
    try:
        with open("/proc/self/oom_score_adj", "w") as f:
            f.write("1000")
    except OSError:
        pass
    limit_myself(int(request["memory_bytes"]), int(math.ceil(request["time_limit"])) + 1)
    scratch = scratch_folder(os.getpid())
    os.makedirs(scratch, exist_ok=True)
    os.chdir(scratch)
    loading = time.monotonic()
    load_program(bytes(request["seccomp"]), os.getpid(), int(request["seccomp_pid"]))
    return time.monotonic() - loading


# ---------------------------------------------------------------- the answer's process: stand-ins


class Channel:
    """The answer's own channel to the runner: framed messages over a socket, each with a deadline."""

    def __init__(self, sock, seconds):
        self.sock, self.fd, self.seconds = sock, wire.channel(sock.fileno()), seconds

    def send(self, value, lenient=False):
        wire.send_message(self.fd, wire.pack(value, lenient), time.monotonic() + self.seconds)

    def receive(self, shared=False):
        return wire.unpack(wire.receive_message(self.fd, time.monotonic() + self.seconds), shared)


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


def _mapped(name, mapped):
    """The shared array ``name`` (64 hex digits), its file mapped read-only once per process."""
    if name not in mapped:
        if len(name) != 64 or any(c not in "0123456789abcdef" for c in name):
            raise ValueError("a shared array's name is 64 hexadecimal digits")
        mapped[name] = np.asarray(np.load(os.path.join(SHARED_FOLDER, name + ".npy"), mmap_mode="r",
                                          allow_pickle=False))
    return mapped[name]


def resolve_shared(value, mapped=None):
    """A case's inputs with each marker of a shared array (``shared.py``) replaced by its file, mapped read-only:
    the same array object wherever it is named, as it was in the grader's cases."""
    mapped = {} if mapped is None else mapped
    if isinstance(value, dict):
        if len(value) == 1 and isinstance(value.get(SHARED_MARKER), str):
            return _mapped(value[SHARED_MARKER], mapped)
        return {key: resolve_shared(item, mapped) for key, item in value.items()}
    if isinstance(value, list):
        return [resolve_shared(item, mapped) for item in value]
    if isinstance(value, tuple):
        return tuple(resolve_shared(item, mapped) for item in value)
    return value


def plain(value):
    """A result as arrays where it is numbers: a list of numbers becomes an array (as the grader reads it anyway),
    so that a large list crosses as an array, not as millions of JSON items; tuples and dicts stay what they are; a
    numpy number crosses as a 0-d array, a subclass of numpy's array (a masked array) as its name, as the self-check
    takes them."""
    if isinstance(value, np.ndarray) and type(value) is not np.ndarray:
        return wire.Unsupported(wire.SUBCLASS.format(type(value).__name__))
    if isinstance(value, np.generic):  # a float64 is a Python float too, and would cross as one
        return np.asarray(value)
    if isinstance(value, list):
        try:
            array = np.asarray(value)
        except Exception:  # ragged, or not numbers
            return [plain(v) for v in value]
        return array if array.dtype.kind in "biufc" else [plain(v) for v in value]
    if isinstance(value, tuple):
        return tuple(plain(v) for v in value)
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return value


def _array_bytes(value):
    """The bytes of the arrays in a result (in its tuples, lists and dicts)."""
    return sum(a.nbytes for a in wire.arrays_in(value))


def _described(value, path, large, depth=0):
    """``value`` with every array replaced by None, each described in ``large`` as ``[path, dtype, shape]``."""
    if isinstance(value, np.ndarray):
        if len(large) < MAX_DESCRIBED:
            large.append([list(path), value.dtype.name, [int(n) for n in value.shape]])
        return None
    if depth < MAX_RESULT_DEPTH and isinstance(value, (tuple, list)):
        items = [_described(v, (*path, i), large, depth + 1) for i, v in enumerate(value)]
        return tuple(items) if isinstance(value, tuple) else items
    if depth < MAX_RESULT_DEPTH and isinstance(value, dict):
        return {k: _described(v, (*path, k), large, depth + 1) for k, v in value.items()}
    return value


def bounded_result(value):
    """``(value, large)``: a result as it crosses. At most ``MAX_RESULT_BYTES`` of arrays: as it is, ``large``
    empty. More: every array in it replaced by None and described in ``large`` (``[path, dtype, shape]``, the path
    the indices and keys that lead to it), from which the grader puts back arrays of that dtype and shape that
    hold no memory: the verdict says what was wrong with them, without their bytes ever crossing.

    >>> bounded_result((np.zeros(3), 1))
    ((array([0., 0., 0.]), 1), [])
    >>> bounded_result((np.zeros(2**20, np.uint8), np.zeros((2**10, 2**10))))
    ((None, None), [[[0], 'uint8', [1048576]], [[1], 'float64', [1024, 1024]]])
    """
    if _array_bytes(value) <= MAX_RESULT_BYTES:
        return value, []
    large = []
    return _described(value, (), large), large


def describe_exception(exc):
    return cut(f"{type(exc).__name__}: {exc}")


def _top(inputs):
    """A case's top-level inputs (args, kwargs) as ``[(position or keyword name, value)]``."""
    return list(enumerate(inputs[0])) + list(inputs[1].items())


class CallState:
    """What the answer's calls leave for the next: the arrays a contract check kept (``wire.given``'s ``keep``), the
    results returned by their shapes (to tell a result that shares memory with an earlier one: a kept array is
    returned with its shape again), the watch on random numbers."""

    def __init__(self, channel):
        self.kept, self.returned, self.watch = None, {}, wire.RandomWatch()
        self.watch.install()
        self.call = lambda name, args: (lambda h, f=stand_in(name, channel): f(h, *args))


def _outcome(function, i, given, calls):
    """What the answer returned or raised on ``given`` (args, kwargs), as an event, with whether it drew random
    numbers and which inputs (positions, keyword names) its result shares memory with, else "earlier"."""
    try:
        with calls.watch:
            value = function(*given[0], **given[1])
    except NotImplementedError:
        return {"kind": "raised", "case": i, "error": "NotImplementedError", "not_done": True}
    except MemoryError:
        return {"kind": "raised", "case": i, "error": "MemoryError", "memory": True}
    except BaseException as exc:  # SystemExit and KeyboardInterrupt too: the answer's own doing
        return {"kind": "raised", "case": i, "error": describe_exception(exc), "random": calls.watch.drew}
    earlier = calls.returned.setdefault(tuple(a.shape for a in wire.arrays_in(value)), [])  # of the same shapes
    shares = [k for k, a in _top(given) if wire.shares_memory(value, a)] or \
        (["earlier"] if any(wire.shares_memory(value, r) for r in earlier) else [])  # an earlier call's result
    if _array_bytes(value) <= MAX_RESULT_BYTES:
        earlier.append(value)
    value, large = bounded_result(plain(value))
    return {"kind": "result", "case": i, "value": value, "shares": shares, "random": calls.watch.drew,
            **({"large": large} if large else {})}


def run_case(function, i, case, calls):
    """The event of one case. A plain one runs first on its inputs as they are, read-only (no copies: all-MiniLM-L6-v2's
    weights are 14 MB in each case); if it raises (writing into an input, for one), again on writable copies, and the
    event says which inputs that run changed in place. A contract check (its ``wire.HOW``) runs once, on its inputs
    as it says (``wire.given``: a layout, strings made at run time, the previous check's arrays refilled)."""
    kwargs = dict(case["kwargs"])
    how = kwargs.pop(wire.HOW, None)
    sent = (case["args"], kwargs)
    given = tuple(wire.given(v, how, calls.call, copy=how is not None) for v in sent)
    if how is not None and how.get("refill") and calls.kept is not None:
        try:
            given = wire.refill(calls.kept, given)
        except ValueError:  # not the same arrays: fresh ones
            pass
    calls.kept = given if how is not None and how.get("keep") else None
    event = _outcome(function, i, given, calls)
    if how is None and event["kind"] == "raised" and not (event.get("not_done") or event.get("memory")):
        given = tuple(wire.given(v, None, calls.call) for v in sent)
        event = _outcome(function, i, given, calls)
    event["changed"] = [k for (k, a), (_, b) in zip(_top(sent), _top(given)) if not wire.same_values(a, b)]
    return event


def answer_namespace(el, uses):
    namespace = {"__name__": "__main__", "np": np, "numpy": np, "math": math, "erf": numeric.erf, "el": el}
    for name in uses:
        namespace[name] = getattr(el, name)
    return namespace


def run_cell(request, channel, namespace):
    """Run the answer cell; its function, or None after reporting why there is none."""
    name = request["name"]
    try:
        exec(compile(bytes(request["source"]).decode("utf-8", "replace"), "<answer cell>", "exec"), namespace)
    except MemoryError:
        channel.send({"kind": "cell_failed", "memory": True, "error": "MemoryError"})
        return None
    except BaseException as exc:  # SystemExit and KeyboardInterrupt too: the cell's own doing
        channel.send({"kind": "cell_failed", "memory": False, "error": describe_exception(exc)})
        return None
    function = namespace.get(name)
    if not callable(function):
        channel.send({"kind": "cell_failed", "memory": False, "missing": True,
                      "error": f"the answer cell does not define `{name}`"})
        return None
    return function


def answer_process(sock, request):
    """In the forked child: isolate, run the answer cell, then receive the cases and run them. Never returns.
    Its ``cell_ok`` says how long its limits (``isolated``) and allow-list (``seccomp``) took, for the profile."""
    try:
        started = time.monotonic()
        seccomp = isolate(sock, request)
        isolated = time.monotonic() - started
        warnings.simplefilter("ignore")  # a warning a correct answer prints never costs it anything
        np.seterr(all="ignore")
        channel = Channel(sock, float(request["time_limit"]) + GRADER_SECONDS)
        calls = CallState(channel)  # its watch on random numbers is on before the cell runs
        el = library_stand_in(request["may_call"], channel)
        sys.modules["encoder_lib"] = el
        function = run_cell(request, channel, answer_namespace(el, request["uses"]))
        if function is not None:
            channel.send({"kind": "cell_ok", "isolated": isolated, "seccomp": seccomp})
            cases = resolve_shared(channel.receive(shared=True)["cases"])  # read-only, never copied
            for i, case in enumerate(cases):
                channel.send(run_case(function, i, case, calls), lenient=True)
            channel.send({"kind": "done"})
    except BaseException:  # the channel broke, or the answer broke the runner's own code: nothing more to say
        pass
    os._exit(0)
