"""Plain values across the sandbox's boundary: numbers, strings, lists, dicts and numeric arrays.

The grader and the sandbox that runs a learner's answer exchange messages of
this form, never pickles: a pickle can run code when it is loaded, and a
learner's answer must not be able to run code in the grader. A message is a
JSON header followed by the raw bytes of its arrays; decoding checks every
shape, dtype and length against the bytes that are there, and refuses
anything else.

This module needs only the standard library and numpy: it is copied into the
sandbox, where ``encoder_lib`` is not installed.

    >>> import numpy as np
    >>> message = encode({"x": np.arange(3.0), "n": 2, "name": "softmax", "pair": (1, None)})
    >>> decode(message)
    {'x': array([0., 1., 2.]), 'n': 2, 'name': 'softmax', 'pair': (1, None)}
"""

import json
import struct

import numpy as np

#: The array dtypes that may cross: numbers and booleans, never objects or strings.
DTYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "float32", "float64", "complex64", "complex128")
#: The largest message either side reads (a learner's answer could return anything).
MAX_BYTES = 64 * 2**20
#: The most bytes of arrays one message may decode to: an array sent once but named many times decodes to a
#: copy for each name, so without this bound a small message from a learner's code could fill the grader's memory.
MAX_DECODED_BYTES = 4 * MAX_BYTES
MAX_DEPTH = 16


class WireError(ValueError):
    """A value that cannot cross, or a message that is not one."""


class Unsupported:
    """What a learner's function returned when it is not a plain value (a generator, a class...): its type name."""

    def __init__(self, type_name):
        self.type_name = str(type_name)

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


def encode(value, lenient=False):
    """``value`` as bytes. With ``lenient``, values that cannot cross become ``Unsupported`` (for results).

    An array object that occurs more than once (one model's weights in several
    cases) is sent once; each occurrence still decodes to its own copy.
    """
    arrays = []
    sent = {}  # id of an array in ``value`` -> its index in ``arrays`` (``value`` keeps them all alive)

    def walk(v, depth):
        if depth > MAX_DEPTH:
            raise WireError(f"nested more than {MAX_DEPTH} levels deep")
        if v is None or isinstance(v, (bool, str)):
            return v
        if isinstance(v, int):
            return v if -(2**63) <= v < 2**63 else {"__float__": float(v)}
        if isinstance(v, float):
            return {"__float__": repr(v)} if v != v or v in (float("inf"), float("-inf")) else v
        if isinstance(v, (np.ndarray, np.generic)):
            a = np.asarray(v)
            if a.dtype.name in DTYPES:  # otherwise (objects, strings) unsupported, below
                if isinstance(v, np.ndarray) and id(v) in sent:
                    index = sent[id(v)]
                else:
                    a = a if a.flags.c_contiguous else np.ascontiguousarray(a)  # makes 0-d arrays 1-d
                    arrays.append(a)
                    index = len(arrays) - 1
                    if isinstance(v, np.ndarray):
                        sent[id(v)] = index
                return {"__array__": index, "dtype": a.dtype.name, "shape": list(a.shape),
                        "scalar": isinstance(v, np.generic)}
        elif isinstance(v, (list, tuple)):
            items = [walk(x, depth + 1) for x in v]
            return {"__tuple__": items} if isinstance(v, tuple) else items
        elif isinstance(v, dict):
            if all(isinstance(k, str) for k in v):
                return {"__dict__": [[k, walk(x, depth + 1)] for k, x in v.items()]}
        elif isinstance(v, Call):
            return {"__call__": v.name, "args": [walk(x, depth + 1) for x in v.args]}
        elif isinstance(v, Unsupported):
            return {"__unsupported__": v.type_name}
        if lenient:
            return {"__unsupported__": type(v).__name__}
        raise WireError(f"a {type(v).__name__} cannot cross to the sandbox")

    try:
        header = json.dumps(walk(value, 0)).encode()
    except (TypeError, RecursionError) as exc:  # a subclass that misbehaves, a cycle
        if not lenient:
            raise WireError(str(exc)) from None
        header = json.dumps({"__unsupported__": type(value).__name__}).encode()
        arrays = []
    sizes = [a.nbytes for a in arrays]
    total = 8 + len(header) + 8 * len(arrays) + sum(sizes)
    if total > MAX_BYTES:
        if lenient:
            return encode(Unsupported(f"value of {total / 2**20:.0f} MB (at most {MAX_BYTES // 2**20} MB cross)"))
        raise WireError(f"a message of {total} bytes is larger than {MAX_BYTES}")
    parts = [struct.pack("<II", len(header), len(arrays)), header, struct.pack(f"<{len(arrays)}Q", *sizes)]
    parts += [a.tobytes() for a in arrays]
    return b"".join(parts)


def decode(data):
    """The value ``encode`` wrote; ``WireError`` for anything that is not exactly such a message."""
    try:
        return _decode(memoryview(data))
    except WireError:
        raise
    except Exception as exc:  # a malformed message of any kind
        raise WireError(f"not a message: {type(exc).__name__}: {exc}") from None


def _decode(view):
    if len(view) > MAX_BYTES or len(view) < 8:
        raise WireError(f"a message of {len(view)} bytes")
    header_size, count = struct.unpack_from("<II", view, 0)
    offset = 8
    header = json.loads(bytes(view[offset:offset + header_size]))
    offset += header_size
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

    decoded = 0  # bytes of the array copies made so far

    def walk(v, depth):
        nonlocal decoded
        if depth > MAX_DEPTH:
            raise WireError("nested too deep")
        if v is None or isinstance(v, (bool, int, float, str)):
            return v
        if isinstance(v, list):
            return [walk(x, depth + 1) for x in v]
        if not isinstance(v, dict) or len(v) == 0:
            raise WireError(f"unexpected {type(v).__name__} in the header")
        if "__float__" in v:
            return float(v["__float__"])
        if "__tuple__" in v:
            return tuple(walk(x, depth + 1) for x in v["__tuple__"])
        if "__dict__" in v:
            return {str(k): walk(x, depth + 1) for k, x in v["__dict__"]}
        if "__unsupported__" in v:
            return Unsupported(v["__unsupported__"])
        if "__call__" in v:
            return Call(v["__call__"], *(walk(x, depth + 1) for x in v["args"]))
        if "__array__" in v:
            dtype = v["dtype"]
            if dtype not in DTYPES:
                raise WireError(f"arrays of dtype {dtype!r} do not cross")
            shape = tuple(int(n) for n in v["shape"])
            if any(n < 0 for n in shape):
                raise WireError(f"a negative shape {shape}")
            buffer = buffers[int(v["__array__"])]
            expected = int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize
            if expected != len(buffer):
                raise WireError(f"an array of shape {shape} and dtype {dtype} with {len(buffer)} bytes")
            decoded += len(buffer)
            if decoded > MAX_DECODED_BYTES:
                raise WireError(f"the message's arrays decode to more than {MAX_DECODED_BYTES} bytes")
            array = np.frombuffer(buffer, dtype=dtype).reshape(shape).copy()
            return array[()] if v.get("scalar") else array
        raise WireError(f"unknown header entry {sorted(v)}")

    return walk(header, 0)


def peek(data, key):
    """The value of ``key`` in the top-level dict of a message, read from its header alone (no arrays decoded)."""
    try:
        header_size, _ = struct.unpack_from("<II", data, 0)
        header = json.loads(bytes(data[8:8 + header_size]))
        value = dict(header["__dict__"]).get(key)
    except Exception:
        return None
    return value if isinstance(value, (str, int, float, bool)) or value is None else None


def send(stream, value, lenient=False):
    """Write one message to a binary ``stream``: its length, then ``encode(value)``."""
    send_raw(stream, encode(value, lenient))


def send_raw(stream, data):
    """Write an encoded message (bytes from ``encode`` or ``receive_raw``) to a binary ``stream``."""
    stream.write(struct.pack("<Q", len(data)) + data)
    stream.flush()


def receive(stream):
    """Read one message from a binary ``stream``; ``EOFError`` at its end, ``WireError`` if malformed."""
    return decode(receive_raw(stream))


def receive_raw(stream):
    """Read one message's bytes from a binary ``stream``, undecoded (to pass it on)."""
    head = _read_exactly(stream, 8)
    (size,) = struct.unpack("<Q", head)
    if size > MAX_BYTES:
        raise WireError(f"a message of {size} bytes is larger than {MAX_BYTES}")
    return _read_exactly(stream, size)


def _read_exactly(stream, size):
    chunks, remaining = [], size
    while remaining:
        chunk = stream.read(remaining)
        if not chunk:
            raise EOFError("the other side closed the channel")
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)
