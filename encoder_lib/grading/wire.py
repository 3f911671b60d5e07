"""Plain values across the sandbox's boundary: numbers, strings, lists, dicts and numeric arrays.

The grader, the runner inside the sandbox and the learner's answer exchange
messages of this form, never pickles: a pickle can run code when it is
loaded, and a learner's answer must not be able to run code in the grader. A
message is a JSON header followed by the raw bytes of its arrays; decoding
checks every shape, dtype and length against the bytes that are there, and
refuses anything else. Every message is framed the same way on every channel
(``send_message`` and ``receive_message``: an 8-byte length, then the
message), and every read and write of a frame has a deadline.

Every bound is named below beside its reason: a message's bytes, its
header's bytes, the objects its header may hold, its nesting, and the bytes
its arrays may decode to. Whoever wrote a message (a learner's answer can
write anything on its own channel), decoding it costs at most about
``MAX_DECODED_BYTES`` of memory and a fraction of a second.

This module needs only the standard library and numpy: it is copied into the
sandbox, where ``encoder_lib`` is not installed.

    >>> import numpy as np
    >>> message = pack({"x": np.arange(3.0), "n": 2, "name": "softmax", "pair": (1, None)})
    >>> unpack(message)
    {'x': array([0., 1., 2.]), 'n': 2, 'name': 'softmax', 'pair': (1, None)}
"""

import json
import math
import os
import random
import select
import struct
import sys
import time

import numpy as np

#: The array dtypes that may cross: numbers and booleans, never objects or strings.
DTYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "float32", "float64", "complex64", "complex128")
#: The largest message either side reads (a learner's answer could return anything).
MAX_BYTES = 64 * 2**20
#: The most bytes of arrays one message may decode to: an array sent once but named many times decodes to a
#: copy for each name, so without this bound a small message from a learner's code could fill the grader's memory.
MAX_DECODED_BYTES = 4 * MAX_BYTES
#: The largest JSON header: headers name arrays and hold short texts (answer cells travel as bytes), so a
#: megabyte is plenty, and parsing one takes milliseconds.
MAX_HEADER_BYTES = 2**20
#: The most lists and dicts a header may open (64 MB of nested empty lists once took 27 s and 3.3 GB to decode).
MAX_ITEMS = 50_000
#: The deepest nesting of lists, tuples and dicts.
MAX_NESTING = 16
_LENGTH = struct.Struct("<Q")
#: Each dtype of ``DTYPES`` (in this machine's byte order) and its name, looked up rather than read from
#: ``dtype.name``, a Python property of numpy's that was a fifth of packing a message.
_NAMED = {np.dtype(name): name for name in DTYPES}
_DTYPE = {name: np.dtype(name) for name in DTYPES}


def _name_of(a):
    """The name in ``DTYPES`` of array ``a``'s dtype (in either byte order), or None where it may not cross."""
    name = _NAMED.get(a.dtype)
    if name is None and not a.dtype.isnative:
        name = _NAMED.get(a.dtype.newbyteorder("="))
    return name


class WireError(ValueError):
    """A value that cannot cross, or a message that is not one."""


class Unsupported:
    """What a learner's function returned when it is not a plain value (a generator, a class...): its type name."""

    def __init__(self, type_name):
        self.type_name = str(type_name)[:100]

    def __repr__(self):
        return f"<a {self.type_name}>"

    def __eq__(self, other):
        return isinstance(other, Unsupported) and other.type_name == self.type_name


class Call:
    """A function to be rebuilt on the other side as ``lambda h: <name>(h, *args)``: a case's sub-layer.

    Inside the sandbox, ``<name>`` is a stand-in that asks the grader to
    compute the library's function; the learner sees a plain callable.
    """

    def __init__(self, name, *args):
        self.name, self.args = str(name), tuple(args)

    def __repr__(self):
        return f"Call({self.name!r}, ...)"


class _Encoder:
    """One message's header and arrays, built by walking a value."""

    def __init__(self, lenient):
        self.lenient, self.arrays = lenient, []
        self.sent = {}  # id of an array in the value -> its index in ``arrays`` (the value keeps them all alive)

    def array(self, v, a, name):
        """The header entry of ``v`` (``a``: it as an array, whose dtype's name is ``name``)."""
        if isinstance(v, np.ndarray) and id(v) in self.sent:
            index = self.sent[id(v)]
        else:
            if not a.dtype.isnative:  # its bytes as this machine's order, which the other side reads them in
                a = a.astype(a.dtype.newbyteorder("="))
            a = a if a.flags.c_contiguous else np.ascontiguousarray(a)  # makes 0-d arrays 1-d
            self.arrays.append(a)
            index = len(self.arrays) - 1
            if isinstance(v, np.ndarray):
                self.sent[id(v)] = index
        return {"__array__": index, "dtype": name, "shape": list(a.shape), "scalar": isinstance(v, np.generic)}

    def walk(self, v, depth):
        if depth > MAX_NESTING:
            raise WireError(f"nested more than {MAX_NESTING} levels deep")
        if v is None or isinstance(v, (bool, str)):
            return v
        if isinstance(v, int):
            return v if -(2**63) <= v < 2**63 else {"__float__": float(v)}
        if isinstance(v, float):
            return {"__float__": repr(v)} if v != v or v in (float("inf"), float("-inf")) else v
        if isinstance(v, (np.ndarray, np.generic)):
            a = np.asarray(v)
            name = _name_of(a)
            if name is not None:
                return self.array(v, a, name)
        return self.container(v, depth)

    def container(self, v, depth):
        if isinstance(v, (list, tuple)):
            items = [self.walk(x, depth + 1) for x in v]
            return {"__tuple__": items} if isinstance(v, tuple) else items
        if isinstance(v, dict) and all(isinstance(k, str) for k in v):
            return {"__dict__": [[k, self.walk(x, depth + 1)] for k, x in v.items()]}
        if isinstance(v, Call):
            return {"__call__": v.name, "args": [self.walk(x, depth + 1) for x in v.args]}
        if isinstance(v, Unsupported):
            return {"__unsupported__": v.type_name}
        if self.lenient:
            return {"__unsupported__": type(v).__name__}
        raise WireError(f"a {type(v).__name__} cannot cross to the sandbox")


def _too_large(header, arrays):
    """Why a message of ``header`` and ``arrays`` may not cross, or None."""
    total = 8 + len(header) + 8 * len(arrays) + sum(a.nbytes for a in arrays)
    if total > MAX_BYTES:
        return f"a message of {total} bytes is larger than {MAX_BYTES}"
    if len(header) > MAX_HEADER_BYTES:
        return f"a header of {len(header)} bytes is larger than {MAX_HEADER_BYTES}"
    return _too_many_items(header)


def pack(value, lenient=False):
    """``value`` as bytes. With ``lenient``, values that cannot cross become ``Unsupported`` (for results).

    An array object that occurs more than once (one model's weights in several
    cases) is sent once; each occurrence still decodes to its own copy.
    """
    encoder = _Encoder(lenient)
    try:
        header = json.dumps(encoder.walk(value, 0)).encode()
    except (TypeError, ValueError, RecursionError) as exc:  # a subclass that misbehaves, a cycle
        if not lenient:
            raise WireError(str(exc)) from None
        return pack(Unsupported(type(value).__name__))
    arrays = encoder.arrays
    problem = _too_large(header, arrays)
    if problem:
        if lenient:
            return pack(Unsupported(f"value too large to cross ({problem})"))
        raise WireError(problem)
    parts = [struct.pack("<II", len(header), len(arrays)), header,
             struct.pack(f"<{len(arrays)}Q", *(a.nbytes for a in arrays))]
    return b"".join(parts + [a.tobytes() for a in arrays])


def _too_many_items(header):
    """Why ``header`` (JSON bytes) opens too many lists and dicts, or None. Brackets inside strings count too:
    an upper bound, found without parsing."""
    items = header.count(b"[") + header.count(b"{")
    return f"a header of {items} lists and dicts, more than {MAX_ITEMS}" if items > MAX_ITEMS else None


def unpack(data, shared=False):
    """The value ``pack`` wrote; ``WireError`` for anything that is not exactly such a message.

    Each array is a copy of its own, unless ``shared`` (``data`` must then be ``bytes``): every occurrence of an
    array sent once is then one read-only array over ``data`` itself, which no one can make writeable (the
    runner's cases: all-MiniLM-L6-v2's 14 MB of weights in each of them, decoded once)."""
    if shared and not isinstance(data, bytes):
        raise TypeError(f"unpack(shared=True) needs bytes, which no one can change, got {type(data).__name__}")
    try:
        return _unpack(memoryview(data), shared)
    except WireError:
        raise
    except Exception as exc:  # a malformed message of any kind (RecursionError and MemoryError included)
        raise WireError(f"not a message: {type(exc).__name__}: {str(exc)[:200]}") from None


def _split(view):
    """``(header bytes, [array buffers])`` of a message, every length checked against what is there."""
    if len(view) > MAX_BYTES or len(view) < 8:
        raise WireError(f"a message of {len(view)} bytes")
    header_size, count = struct.unpack_from("<II", view, 0)
    if header_size > MAX_HEADER_BYTES or count > MAX_ITEMS:
        raise WireError(f"a header of {header_size} bytes naming {count} arrays")
    offset = 8 + header_size
    header = bytes(view[8:offset])
    problem = _too_many_items(header)
    if problem:
        raise WireError(problem)
    sizes = struct.unpack_from(f"<{count}Q", view, offset)
    offset += 8 * count
    buffers = []
    for size in sizes:
        if offset + size > len(view):
            raise WireError("the message is shorter than its arrays")
        buffers.append(view[offset:offset + size])
        offset += size
    if offset != len(view):
        raise WireError("the message has bytes after its arrays")
    return header, buffers


class _Decoder:
    """A message's value, rebuilt from its header and array buffers, every array checked against its bytes."""

    def __init__(self, buffers, shared):
        self.buffers, self.shared = buffers, shared
        self.decoded = 0  # bytes of the array copies made so far (of each buffer once, where ``shared``)
        self.made = {}  # buffer index -> its read-only array, where ``shared``

    def array(self, v):
        name = v["dtype"]
        dtype = _DTYPE.get(name) if isinstance(name, str) else None
        if dtype is None:
            raise WireError(f"arrays of dtype {name!r} do not cross")
        shape = tuple(int(n) for n in v["shape"])
        if any(n < 0 for n in shape) or len(shape) > 32:
            raise WireError(f"a shape {shape[:8]}")
        index = int(v["__array__"])
        buffer = self.buffers[index]
        if math.prod(shape) * dtype.itemsize != len(buffer):
            raise WireError(f"an array of shape {shape} and dtype {name} with {len(buffer)} bytes")
        made = self.made.get(index)
        if self.shared and made is not None and made.dtype == dtype and made.shape == shape:
            out = made
        else:
            self.decoded += len(buffer)
            if self.decoded > MAX_DECODED_BYTES:
                raise WireError(f"the message's arrays decode to more than {MAX_DECODED_BYTES} bytes")
            out = np.frombuffer(buffer, dtype=dtype).reshape(shape)
            out = self.made.setdefault(index, out) if self.shared else out.copy()
        return out[()] if v.get("scalar") else out

    def walk(self, v, depth):
        if depth > MAX_NESTING:
            raise WireError("nested too deep")
        if v is None or isinstance(v, (bool, int, float, str)):
            return v
        if isinstance(v, list):
            return [self.walk(x, depth + 1) for x in v]
        if not isinstance(v, dict) or len(v) == 0:
            raise WireError(f"unexpected {type(v).__name__} in the header")
        return self.entry(v, depth)

    def entry(self, v, depth):
        if "__float__" in v:
            return float(v["__float__"])
        if "__tuple__" in v:
            return tuple(self.walk(x, depth + 1) for x in v["__tuple__"])
        if "__dict__" in v:
            return {str(k): self.walk(x, depth + 1) for k, x in v["__dict__"]}
        if "__unsupported__" in v:
            return Unsupported(v["__unsupported__"])
        if "__call__" in v:
            return Call(v["__call__"], *(self.walk(x, depth + 1) for x in v["args"]))
        if "__array__" in v:
            return self.array(v)
        raise WireError(f"unknown header entry {sorted(v)[:5]}")


def _unpack(view, shared=False):
    header, buffers = _split(view)
    return _Decoder(buffers, shared).walk(json.loads(header), 0)


def peek(data, key):
    """The value of ``key`` in the top-level dict of a message, read from its header alone (no arrays decoded)."""
    try:
        header, _ = _split(memoryview(data))
        value = dict(json.loads(header)["__dict__"]).get(key)
    except Exception:
        return None
    return value if isinstance(value, (str, int, float, bool)) or value is None else None


def same_values(before, after):
    """Are two inputs the same (arrays equal in shape, dtype and every bit of their values), through dicts, lists
    and tuples? What the runner checks to tell whether an answer changed its inputs in place."""
    if before is after:  # an array the answer got read-only, for one
        return True
    if isinstance(before, np.ndarray):
        if not (isinstance(after, np.ndarray) and before.shape == after.shape and before.dtype == after.dtype):
            return False
        if before.flags.c_contiguous and after.flags.c_contiguous and before.dtype.itemsize in (1, 2, 4, 8, 16):
            word = np.dtype(f"u{min(before.dtype.itemsize, 8)}")  # bit for bit, in one pass (a model's weights)
            return bool(np.array_equal(before.reshape(-1).view(word), after.reshape(-1).view(word)))
        return bool(np.array_equal(before, after, equal_nan=before.dtype.kind in "fc"))
    if isinstance(before, dict):
        return isinstance(after, dict) and before.keys() == after.keys() and \
            all(same_values(before[k], after[k]) for k in before)
    if isinstance(before, (list, tuple)):
        return isinstance(after, (list, tuple)) and len(before) == len(after) and \
            all(same_values(b, a) for b, a in zip(before, after))
    return True  # numbers, strings, None, functions: nothing an answer can change in place


# ---------------------------------------------------------------- a case's inputs as the answer gets them

#: The key of a case's keyword arguments under which the grader sends how its inputs are given (a contract check's
#: ``How.wire()``): taken out before the answer is called, never passed to it.
HOW = "__encoder_course_how__"
#: How a result of a subclass of numpy's array is named, here and in the sandbox (which sends it by this name).
SUBCLASS = "{}, a subclass of np.ndarray"


def laid_out(a, layout=""):
    """A new array of ``a``'s values in ``layout``: "fortran" (column-major), "strided" (every second entry of a larger
    array, along the last axis) or "read-only"; else C-ordered and writeable."""
    if layout == "fortran":
        return np.array(a, order="F")
    if layout == "strided" and a.ndim >= 1:
        return np.repeat(a, 2, axis=-1)[..., ::2]
    out = np.array(a)
    out.flags.writeable = layout != "read-only"
    return out


def given(value, how=None, call=None, copy=True):
    """A case's inputs as an answer gets them: each array a new one in the layout ``how["layout"]`` names (without
    ``copy``, the array itself), each string interned as a literal is (with ``how["strings"]``, the same text made
    at run time: equal, another object), each ``Call`` the function ``call(name, args)`` makes of it."""
    how = how or {}
    if isinstance(value, np.ndarray):
        return laid_out(value, how.get("layout", "")) if copy else value
    if isinstance(value, str):
        return "".join(list(value)) if how.get("strings") else sys.intern(value)
    if isinstance(value, Call):
        return call(value.name, [given(a, None, call, copy) for a in value.args])
    if isinstance(value, (list, tuple)):
        return type(value)(given(v, how, call, copy) for v in value)
    if isinstance(value, dict):
        return {k: given(v, how, call, copy) for k, v in value.items()}
    return value


def refill(old, new):
    """``old`` (what an earlier call was given) with every array's values replaced in place by ``new``'s: the same
    objects, new values. ``ValueError`` where two arrays differ in shape or dtype, or one is read-only."""
    if isinstance(old, np.ndarray):
        if not isinstance(new, np.ndarray) or (old.shape, old.dtype) != (new.shape, new.dtype):
            raise ValueError("the arrays to refill differ in shape or dtype")
        old[...] = new
        return old
    if isinstance(old, dict) and isinstance(new, dict) and old.keys() == new.keys():
        old.update({k: refill(old[k], new[k]) for k in old})
        return old
    if isinstance(old, (list, tuple)) and type(new) is type(old) and len(old) == len(new):
        items = [refill(o, n) for o, n in zip(old, new)]
        if isinstance(old, tuple):
            return tuple(items)
        old[:] = items
        return old
    return new


def arrays_in(value, depth=0):
    """The numpy arrays in a value, through its tuples, lists and dicts (16 levels deep)."""
    if isinstance(value, np.ndarray):
        yield value
    elif depth < MAX_NESTING and isinstance(value, (list, tuple, dict)):
        for item in value.values() if isinstance(value, dict) else value:
            yield from arrays_in(item, depth + 1)


def shares_memory(value, other):
    """Does an array of ``value`` share memory with one of ``other``'s (exactly, where numpy can tell at a bounded
    cost; else as their bounds in memory say)?"""
    for a in arrays_in(value):
        for b in arrays_in(other):
            try:
                if np.may_share_memory(a, b) and np.shares_memory(a, b, max_work=10**5):
                    return True
            except np.exceptions.TooHardError:
                return True
    return False


class RandomWatch:
    """Did a call draw random numbers? After ``with watch:``, ``drew`` says whether it called one of numpy's or Python's
    global random functions (``np.random.rand``, ``random.random``) or made a generator seeded by the system
    (``np.random.default_rng()``): ``install`` wraps each to count its calls, at no cost where none is made."""

    def __init__(self):
        self.draws, self.drew = 0, False

    def install(self):  # returns what puts numpy's and Python's own functions back
        found = [(m, n, getattr(m, n)) for m, shared in ((np.random, np.random.mtrand._rand), (random, random._inst))
                 for n in m.__all__ if getattr(getattr(m, n), "__self__", None) is shared or n == "default_rng"]
        for module, name, function in found:
            setattr(module, name, self._counted(function, name == "default_rng"))
        return lambda: [setattr(module, name, function) for module, name, function in found]

    def _counted(self, function, seeded_by_the_system):
        def counted(*args, **kwargs):
            self.draws += not seeded_by_the_system or (args[0] if args else kwargs.get("seed")) is None
            return function(*args, **kwargs)
        return counted

    def __enter__(self):
        self.before = self.draws
        return self

    def __exit__(self, *_):
        self.drew = self.draws != self.before


# ---------------------------------------------------------------- framing, with deadlines


def channel(fd):
    """Make the file descriptor ``fd`` (a pipe's end, a socket) a channel for ``send_message`` and
    ``receive_message``: non-blocking, so that no read or write on it waits past its deadline. Returns ``fd``."""
    os.set_blocking(fd, False)
    return fd


def send_message(fd, data, deadline):
    """Write one framed message (``data``, bytes from ``pack``) to the channel ``fd`` by ``deadline`` (a
    ``time.monotonic()`` value). ``TimeoutError`` when it passes, ``BrokenPipeError`` if the reader is gone."""
    if len(data) > MAX_BYTES:
        raise WireError(f"a message of {len(data)} bytes is larger than {MAX_BYTES}")
    _write_all(fd, _LENGTH.pack(len(data)), deadline)
    _write_all(fd, data, deadline)


def receive_message(fd, deadline):
    """Read one framed message's bytes (undecoded, to decode or pass on) from the channel ``fd`` by ``deadline``.
    ``TimeoutError`` when it passes, ``EOFError`` at the channel's end, ``WireError`` for a frame too large."""
    (size,) = _LENGTH.unpack(_read_exactly(fd, 8, deadline))
    if size > MAX_BYTES:
        raise WireError(f"a message of {size} bytes is larger than {MAX_BYTES}")
    return _read_exactly(fd, size, deadline)


def _wait(fd, events, deadline):
    poller = select.poll()
    poller.register(fd, events)
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("the other side of the channel did not keep up")
        if poller.poll(min(left, 60.0) * 1000):
            return


def _write_all(fd, data, deadline):
    view = memoryview(data)
    while view:
        try:
            view = view[os.write(fd, view[: 1 << 20]):]
        except BlockingIOError:
            _wait(fd, select.POLLOUT, deadline)


def _read_exactly(fd, size, deadline):
    chunks, remaining = [], size
    while remaining:
        try:
            chunk = os.read(fd, min(remaining, 1 << 20))
        except BlockingIOError:
            _wait(fd, select.POLLIN, deadline)
            continue
        if not chunk:
            raise EOFError("the other side closed the channel")
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)
