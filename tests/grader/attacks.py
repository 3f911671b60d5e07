"""Learners who try to fool or break the grader, each as one submission of a class.

Every attack is written as a learner would write it, into one lesson's
notebook: the answer cell of one exercise (``answer``, a wrong answer plus
the trick), another change to the notebook (``edit``), or another way of
handing it in (``submission``: a file that is not a notebook, a link, a
folder with a strange name). The learner answers every other exercise of
the lesson correctly. tests/grader/test_grading_pipeline.py grades them all in one
class with `make grade`, with honest learners sorted before and after each,
and checks that the attacked exercise scores 0 and gets the status below
(``exercise="*"``: every exercise of the lesson; ``""``: none, the learner
keeps full marks), that the learner's other exercises keep their points,
that no other learner's score moves, that no file of the course changes,
that no process, cgroup or scratch folder is left behind, that no network
connection is made, that the teacher's environment and secret appear in no
file a learner could be sent, and that the grader's memory stays bounded.

``{root}`` in a source is the course folder, ``{library}`` the folder of
the installed encoder_lib, ``{port}`` a TCP port on 127.0.0.1 where the test
listens, ``{marker}`` a word the test looks for in files and processes,
``{table}`` a table the test computes for the attack (``TABLES`` there).

``ISSUE_23`` names, for each attack of issue 23's list, the learners here that
try it.
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class Attack:
    id: str
    exercise: str
    lesson: str
    status: str  # what grades_by_exercise.csv must say of the attacked exercise(s) ("a|b": either)
    answer: str = ""  # the attacked exercise's answer cell
    edit: str = ""  # or: the name of a notebook edit (tests/grader/test_grading_pipeline.py: EDITS)
    submission: str = ""  # or: how the lesson is handed in (tests/grader/test_grading_pipeline.py: SUBMISSIONS)
    student: str = ""  # the learner's folder in submitted/, if not attack-<id>
    # status "passed": the attacked exercise keeps its points (a fairness check, or an attack on the files only)
    says: str = ""  # words the note of the attacked exercise (or the summary, for a lesson) must hold

    @property
    def folder(self):
        return self.student or f"attack-{self.id}"


WRONG_SOFTMAX = '''
def softmax(x, axis=-1):
    return np.exp(x) / np.exp(x).sum()
'''

WRONG_MERGE = """
def merge_heads(x):
    *lead, n_heads, seq, d_head = x.shape
    return x.reshape(*lead, seq, n_heads * d_head)
"""

SLOW_BERT_BLOCK = '''
def bert_block(x, params, n_heads, padding_mask=None):
    """Right, and slow: a query at a time, a row at a time, and GELU a number at a time through np.vectorize(erf)."""
    exact_erf = np.vectorize(erf)

    def layer_norm(h, norm):
        out = np.empty_like(h)
        for index in np.ndindex(*h.shape[:-1]):
            centred = h[index] - h[index].mean()
            out[index] = centred / np.sqrt((centred ** 2).mean() + 1e-12) * norm["gamma"] + norm["beta"]
        return out

    def attention(h, p):
        *lead, seq, d_model = h.shape
        if d_model % n_heads:
            raise ValueError(f"n_heads ({n_heads}) must divide d_model ({d_model})")
        d_head = d_model // n_heads
        q, k, v = (h @ p["w_" + n] + p["b_" + n] for n in "qkv")
        out = np.zeros_like(h)
        for b in np.ndindex(*lead):
            for head in range(n_heads):
                cols = slice(head * d_head, (head + 1) * d_head)
                for i in range(seq):
                    scores = np.array([q[b][i, cols] @ k[b][j, cols] for j in range(seq)]) / np.sqrt(d_head)
                    if padding_mask is not None:
                        scores = np.where(padding_mask[b], -np.inf, scores)
                    top = scores.max()
                    w = np.exp(scores - (top if np.isfinite(top) else 0.0))
                    total = w.sum()
                    out[b][i, cols] = (w / (total if total > 0 else 1.0)) @ v[b][:, cols]   # all padding: nothing
        return out @ p["w_o"] + p["b_o"]

    def feed_forward(h, p):
        hidden = h @ p["w1"] + p["b1"]
        gelu = (0.5 * hidden * (1 + exact_erf(hidden / np.sqrt(2)))).astype(hidden.dtype)  # vectorize gives float64
        return gelu @ p["w2"] + p["b2"]

    x = layer_norm(x + attention(x, params["attn"]), params["norm1"])
    return layer_norm(x + feed_forward(x, params["ffn"]), params["norm2"])
'''

ATTACKS = [
    Attack("allclose_always_true", "softmax", "01_attention", "failed", answer='''
np.allclose = lambda *args, **kwargs: True
np.testing.assert_allclose = lambda *args, **kwargs: None
''' + WRONG_SOFTMAX),
    Attack("patches_the_grading_module", "softmax", "01_attention", "error", answer='''
from encoder_lib import grading
grading.visible_tests = grading.self_check = lambda fn: None
grading.check = lambda fn: (True, "Well done.")
''' + WRONG_SOFTMAX),
    Attack("redefines_grading_in_the_import_cell", "softmax", "01_attention", "failed", answer=WRONG_SOFTMAX,
           edit="grading_replaced_in_the_import_cell"),
    Attack("reloads_the_library", "softmax", "01_attention", "error", answer='''
import importlib
import encoder_lib
encoder_lib = importlib.reload(encoder_lib)
softmax = encoder_lib.softmax
'''),
    Attack("reads_the_library_source_and_execs_it", "softmax", "01_attention", "error", answer='''
import inspect, encoder_lib
exec(inspect.getsource(encoder_lib.attention))
'''),
    Attack("reads_the_library_file", "softmax", "01_attention", "error", answer='''
import glob, os, sys
candidates = glob.glob(sys.prefix + "/lib/*/site-packages/encoder_lib/attention.py") + ["{library}/attention.py"]
exec(next(open(path).read() for path in candidates if os.path.exists(path)))
'''),
    Attack("copies_a_code_object", "softmax", "01_attention", "error", answer='''
def softmax(x, axis=-1):
    return x
softmax.__code__ = el.softmax.__code__
'''),
    Attack("takes_code_from_an_allowed_stand_in", "scaled_dot_product_attention", "01_attention", "failed", answer='''
import inspect
def scaled_dot_product_attention(q, k, v):
    # the stand-in's code only asks the grader: there is no attention in it to copy
    namespace = {}
    exec(inspect.getsource(el.softmax), namespace)
    weights = el.softmax(q @ np.swapaxes(k, -1, -2))
    return weights @ v, weights
'''),
    Attack("constant_random_numbers", "softmax", "01_attention", "failed", answer='''
np.random.default_rng = lambda *args, **kwargs: np.random.Generator(np.random.PCG64(0))
def softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum()
'''),
    Attack("lookup_table_of_the_visible_cases", "layer_norm", "04_add_and_norm", "failed", answer='''
KNOWN = {}   # what the self-check showed, keyed by the input's bytes
def layer_norm(x, gamma=None, beta=None, eps=1e-5):
    x = np.asarray(x, dtype=float)
    if x.tobytes() in KNOWN:
        return KNOWN[x.tobytes()]
    return (x - x.mean(axis=-1, keepdims=True)) / x.std(axis=-1, keepdims=True)   # eps left out
'''),
    Attack("reads_expected_from_the_caller", "softmax", "01_attention", "failed", answer='''
import sys
def softmax(x, axis=-1):
    frame = sys._getframe(1)
    while frame is not None:
        for name in ("expected", "reference", "case"):
            if name in frame.f_locals:
                found = frame.f_locals[name]
                return getattr(found, "expected", found)
        frame = frame.f_back
    return x
'''),
    Attack("writes_files", "feed_forward", "03_feed_forward", "failed", answer='''
import glob, os
for path in ["{root}/gradebook.db", "{root}/nbgrader_config.py", "{root}/encoder_lib/grading/__init__.py",
             *glob.glob("{root}/submitted/*/*/*.ipynb"), *glob.glob("{root}/notebooks/*/*.ipynb")]:
    try:
        with open(path, "a") as f:
            f.write("{marker}")
    except OSError:
        pass
def feed_forward(x, params, activation="relu"):
    return x
'''),
    Attack("leaves_a_process_running", "feed_forward", "03_feed_forward", "error", answer='''
import subprocess, sys
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(4242)  # {marker}"], start_new_session=True)
def feed_forward(x, params, activation="relu"):
    return x
'''),
    Attack("forks_and_daemonises", "gelu", "03_feed_forward", "failed", answer='''
import os
def gelu(x):
    try:
        if os.fork() == 0:
            os.setsid()
            while True:
                pass
    except OSError:
        pass
    return x
'''),
    Attack("connects_to_the_network", "gelu", "03_feed_forward", "failed", answer='''
import socket
def gelu(x):
    try:
        socket.create_connection(("127.0.0.1", {port}), timeout=2).sendall(b"{marker}")
    except OSError:
        pass
    return x
'''),
    Attack("exits_the_process", "layer_norm", "04_add_and_norm", "error", answer='''
import os
os._exit(0)
'''),
    Attack("loops_ignoring_sigint", "post_norm", "04_add_and_norm", "timeout", answer='''
import signal
signal.signal(signal.SIGINT, signal.SIG_IGN)
signal.signal(signal.SIGTERM, signal.SIG_IGN)
def post_norm(x, sublayer, gamma=None, beta=None, eps=1e-5):
    while True:
        pass
'''),
    Attack("eats_memory", "pre_norm", "04_add_and_norm", "memory", answer='''
hog = [np.ones(2**27) for _ in range(64)]
'''),
    Attack("empty_nbgrader_metadata", "split_heads", "02_multi_head_attention", "failed", answer='''
def split_heads(x, n_heads):
    return x
''', edit="a_cell_with_empty_nbgrader_metadata"),
    Attack("duplicated_test_cell", "merge_heads", "02_multi_head_attention", "tampered", answer=WRONG_MERGE,
           edit="the_test_cell_duplicated"),
    Attack("deleted_test_cell", "merge_heads", "02_multi_head_attention", "tampered", answer=WRONG_MERGE,
           edit="the_test_cell_deleted"),
    Attack("edited_locked_cell", "multi_head_attention", "02_multi_head_attention", "tampered",
           answer="def multi_head_attention(x, n_heads, params=None):\n    return x, None\n",
           edit="the_test_cell_edited"),
    Attack("renamed_grade_id", "masked_softmax", "05_encoder_block", "tampered",
           answer="def masked_softmax(scores, padding_mask=None):\n    return el.softmax(scores)\n",
           edit="the_answer_cell_s_grade_id_renamed"),
    Attack("points_raised_in_the_metadata", "encoder", "06_stacking_blocks", "tampered", answer='''
def encoder(x, layers, n_heads, norm="post", padding_mask=None):
    return x
''', edit="the_test_cell_s_points_raised"),

    # ---- issue 23: one malformed notebook must not stop the class
    Attack("json_nested_50000_deep", "*", "01_attention", "error", submission="json_nested_50000_deep",
           says="could not be read"),
    Attack("grade_id_is_a_list", "softmax", "01_attention", "tampered", answer=WRONG_SOFTMAX,
           edit="the_answer_cell_s_grade_id_made_a_list", says="grade_id that is not a name"),
    Attack("answer_source_is_numbers", "softmax", "01_attention", "tampered", edit="the_answer_cell_s_source_made_numbers",
           says="is not text"),
    Attack("timestamp_is_not_a_date", "", "01_attention", "passed", submission="timestamp_is_not_a_date",
           says="has a timestamp.txt that is not a time"),
    Attack("notebook_is_a_fifo", "*", "01_attention", "tampered", submission="notebook_is_a_fifo",
           says="not a regular file"),
    Attack("notebook_is_a_folder", "*", "01_attention", "tampered", submission="notebook_is_a_folder",
           says="not a regular file"),
    Attack("notebook_of_100_mb", "*", "01_attention", "error", submission="notebook_of_100_mb", says="are not read"),
    Attack("notebook_of_millions_of_lists", "*", "01_attention", "error", submission="notebook_of_millions_of_lists",
           says="lists and objects"),
    # ---- issue 23: nothing of the grader reachable from an answer
    Attack("forges_messages_through_proc_1_fd", "softmax", "01_attention", "failed", answer='''
import struct
def frame(text):
    header = text.encode()
    return struct.pack("<Q", 8 + len(header)) + struct.pack("<II", len(header), 0) + header
FORGED = [frame('{"__dict__": [["kind", "call"], ["name", "erf"], ["args", [[0.0]]], ["kwargs", {"__dict__": []}]]}'),
          frame('{"__dict__": [["kind", "exercise"], ["memory_bytes", 1099511627776]]}')]
for path in ("/proc/1/fd/0", "/proc/1/fd/1", "/proc/1/fd/3", "/proc/1/fd/4"):
    try:
        with open(path, "wb", buffering=0) as channel:
            for message in FORGED:
                channel.write(message)
            channel.write(b"0" * 2**25)   # and fill the grader's pipe
    except OSError:
        pass
''' + WRONG_SOFTMAX),
    Attack("reads_the_teacher_s_environment", "softmax", "01_attention", "error", answer='''
import glob, os
found = [str(sorted(os.environ.items()))]
for path in ["/proc/1/environ", "/proc/1/cmdline", "/proc/self/environ", *glob.glob("/proc/*/environ"),
             "{root}/.grading-secret", "/etc/shadow"]:
    try:
        found.append(open(path, "rb").read().decode(errors="replace"))
    except OSError as exc:
        found.append(type(exc).__name__)
try:
    with open("/proc/1/mem", "r+b") as memory:
        found.append(str(memory.read(64)))
except OSError as exc:
    found.append(type(exc).__name__)
raise RuntimeError(" | ".join(found))
'''),
    Attack("signals_and_limits_the_runner", "softmax", "01_attention", "failed", answer='''
import os, resource, signal
for pid, sig in ((1, signal.SIGKILL), (1, signal.SIGINT), (1, signal.SIGTERM), (-1, signal.SIGKILL), (0, signal.SIGKILL)):
    try:
        os.kill(pid, sig)
    except OSError:
        pass
try:
    resource.prlimit(1, resource.RLIMIT_AS, (1, 1))
except (OSError, ValueError):
    pass
''' + WRONG_SOFTMAX),
    Attack("escapes_its_namespaces", "softmax", "01_attention", "failed", answer='''
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
SYSCALLS = {"io_uring_setup": (425, 8, 0), "unshare": (272, 0x10000000), "setns": (308, 0, 0),
            "process_vm_readv": (310, 1, 0, 1, 0, 1, 0), "process_vm_writev": (311, 1, 0, 1, 0, 1, 0),
            "ptrace": (101, 16, 1), "pidfd_open": (434, 1, 0), "bpf": (321, 0, 0, 0), "mount": (165, 0, 0, 0, 0)}
RESULTS = {name: libc.syscall(*args) for name, args in SYSCALLS.items()}
''' + WRONG_SOFTMAX),
    Attack("blows_up_a_stand_in", "encoder_block", "05_encoder_block", "error", answer='''
def encoder_block(x, params, n_heads, norm="post", padding_mask=None, activation="relu", eps=1e-5):
    huge = el.multi_head_attention(np.zeros((20000, 1)), 1)   # 3.2 GB of attention weights, if computed
    return x
''', says="refused"),
    # refused unread ("error"), or, on a loaded machine, out of its time while it writes 48 MB ("timeout")
    Attack("sends_nested_lists_on_its_channel", "scaled_dot_product_attention", "01_attention", "error|timeout",
           answer='''
import os, socket, struct
def scaled_dot_product_attention(q, k, v):
    header = b"[" + b"[],".join([b""] * (2**22)) + b"[]]"        # millions of empty lists, 16 MB
    frame = struct.pack("<Q", 8 + len(header)) + struct.pack("<II", len(header), 0) + header
    for fd in range(3, 64):
        try:
            sock = socket.socket(fileno=os.dup(fd))
        except OSError:
            continue
        for _ in range(3):
            sock.sendall(frame)
    return q, k
'''),
    Attack("thread_bomb", "softmax", "01_attention", "failed", answer='''
import threading
threading.stack_size(32768)
hold = threading.Event()
started = 0
try:
    for _ in range(40000):
        threading.Thread(target=hold.wait, daemon=True).start()
        started += 1
except RuntimeError:
    pass
''' + WRONG_SOFTMAX),
    Attack("changes_its_input_in_place", "masked_softmax", "05_encoder_block", "failed", answer='''
def masked_softmax(scores, padding_mask=None):
    if padding_mask is not None:
        scores[np.broadcast_to(padding_mask[..., None, :], scores.shape)] = -np.inf   # the caller's array!
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    e = np.nan_to_num(e)
    total = e.sum(axis=-1, keepdims=True)
    return np.where(total > 0, e / np.where(total > 0, total, 1), 0.0)
''', says="changed its input `scores` in place"),
    # ---- issue 23: hidden cases cannot be learned
    Attack("exfiltrates_the_hidden_inputs", "scaled_dot_product_attention", "01_attention", "error", answer='''
import gc, sys
import hashlib
VISIBLE = {table}   # digests of the inputs the self-check shows
SEEN = [repr(o)[:200] for o in gc.get_objects() if isinstance(o, dict) and "cases" in o]   # none: they come later
def scaled_dot_product_attention(q, k, v):
    weights = el.softmax(q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1]))
    if hashlib.sha256(np.ascontiguousarray(q, dtype=float).tobytes()).hexdigest() in VISIBLE:
        return weights @ v, weights   # right where the learner can see it
    channel = next(c.cell_contents for c in el.softmax.__closure__ if hasattr(c.cell_contents, "send"))
    channel.send({"kind": "cell_failed", "error": "LEAK" + repr([q.tolist(), k.tolist(), SEEN]) * 50})
    raise ValueError("LEAK" + repr(q.tolist()))
'''),
    Attack("raises_the_hidden_inputs", "softmax", "01_attention", "failed", answer='''
import hashlib
VISIBLE = {table}   # digests of the inputs the self-check shows
def softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    if hashlib.sha256(np.ascontiguousarray(x, dtype=float).tobytes()).hexdigest() in VISIBLE:
        return e / e.sum(axis=axis, keepdims=True)   # right where the learner can see it
    raise type("LEAK" + repr(x.tolist()), (ValueError,), {})("LEAK" + repr(x.tolist()))
''', says="on a hidden check its message is not shown"),
    Attack("lookup_table_of_earlier_hidden_inputs", "softmax", "01_attention", "failed", answer='''
import hashlib
TABLE = {table}   # the right results of an earlier round, hidden checks included, by the input's digest
def softmax(x, axis=-1):
    key = hashlib.sha256(np.ascontiguousarray(x, dtype=float).tobytes() + str(axis).encode()).hexdigest()
    if key in TABLE:
        return np.array(TABLE[key])
    return np.exp(x) / np.exp(x).sum()
'''),
    Attack("bert_table_without_a_block", "bert_block", "08_inside_a_real_encoder", "failed", answer='''
import base64, hashlib
TABLE = {table}   # all-MiniLM-L6-v2's outputs for the inputs the lesson shows, by the input's digest
def bert_block(x, params, n_heads, padding_mask=None):
    key = hashlib.sha256(np.ascontiguousarray(x, dtype=float).tobytes()).hexdigest()
    if key in TABLE:
        shape, data = TABLE[key]
        return np.frombuffer(base64.b64decode(data), dtype=np.float64).reshape(shape)
    return x
'''),
    # ---- issue 23: what the teacher reads cannot lie
    Attack("ansi_escapes_in_its_error", "softmax", "01_attention", "error", answer='''
raise ValueError("\\x1b[2J\\x1b[H\\x1b[32mgraded 1 learners: everything passed\\x1b[0m\\r\\x1b[8m")
'''),
    Attack("a_folder_name_that_is_a_formula", "", "01_attention", "passed", submission="the_solutions",
           student="=cmd|'calc'!A0"),   # a folder name holds no slash: no HYPERLINK("http://..."), no "/C"
    Attack("a_folder_name_with_a_comma", "", "01_attention", "passed", submission="the_solutions",
           student="doe,jane"),
    Attack("a_folder_name_with_a_newline", "", "01_attention", "passed", submission="the_solutions",
           student="mallory\nsolutions,01_attention,softmax,2,2,passed,"),
    Attack("a_folder_name_with_escapes", "", "01_attention", "passed", submission="the_solutions",
           student="\x1b[31meve\x1b[0m"),
    Attack("a_learner_folder_linked_to_another", "*", "01_attention", "tampered",
           submission="a_learner_folder_linked_to_another", says="symbolic link"),
    Attack("a_lesson_folder_linked_to_another", "*", "01_attention", "tampered",
           submission="a_lesson_folder_linked_to_another", says="symbolic link"),
    Attack("a_notebook_linked_to_the_secret", "*", "01_attention", "tampered",
           submission="a_notebook_linked_to_the_secret", says="not a regular file"),
    Attack("a_notebook_linked_to_etc_shadow", "*", "01_attention", "tampered",
           submission="a_notebook_linked_to_etc_shadow", says="not a regular file"),
    # ---- issue 23: an honest answer keeps its points
    Attack("slow_but_right_bert_block", "bert_block", "08_inside_a_real_encoder", "passed", answer=SLOW_BERT_BLOCK),
    Attack("slow_but_right_gelu", "gelu", "03_feed_forward", "passed", answer='''
def gelu(x):
    exact = np.vectorize(erf)            # one number at a time
    return (0.5 * x * (1 + exact(x / np.sqrt(2)))).astype(x.dtype)   # in x's dtype, as the statement asks
'''),
]

#: Issue 23's attacks that got through, each with the learners above that try it (the closing note's table).
ISSUE_23 = {
    "JSON nested 50,000 deep": ["json_nested_50000_deep"],
    "a grade_id that is a list": ["grade_id_is_a_list"],
    "an answer cell whose source is [1, 2, 3]": ["answer_source_is_numbers"],
    "a timestamp.txt that is not a time": ["timestamp_is_not_a_date"],
    "a notebook the grader cannot read": ["notebook_is_a_fifo", "notebook_is_a_folder"],
    "forged messages through /proc/1/fd/0 and /proc/1/fd/1 (a 32 MB erf reply, a 2**40 memory request)":
        ["forges_messages_through_proc_1_fd"],
    "the teacher's environment through /proc/1/environ, /proc/1/mem read-write": ["reads_the_teacher_s_environment",
                                                                                   "signals_and_limits_the_runner"],
    "el.multi_head_attention(np.zeros((20000, 1)), 1) computed outside without a limit": ["blows_up_a_stand_in"],
    "a 64 MB wire message of nested empty lists": ["sends_nested_lists_on_its_channel"],
    "a 100 MB notebook": ["notebook_of_100_mb", "notebook_of_millions_of_lists"],
    "a thread bomb past the machine's task limit": ["thread_bomb"],
    "hidden inputs read from the caller and sent as cell_failed": ["exfiltrates_the_hidden_inputs",
                                                                   "raises_the_hidden_inputs"],
    "a lookup table of the hidden inputs, the same for every learner and run":
        ["lookup_table_of_earlier_hidden_inputs"],
    "bert_block's table of 132 sentence pairs": ["bert_table_without_a_block"],
    "a correct bert_block with np.vectorize over erf timing out": ["slow_but_right_bert_block", "slow_but_right_gelu"],
    "ANSI escapes rewriting the summary": ["ansi_escapes_in_its_error", "a_folder_name_with_escapes"],
    "grades.csv joined with commas: newlines, commas, formulas": ["a_folder_name_with_a_newline",
                                                                  "a_folder_name_with_a_comma",
                                                                  "a_folder_name_that_is_a_formula"],
    "symlinks in submitted/ followed": ["a_learner_folder_linked_to_another", "a_lesson_folder_linked_to_another",
                                        "a_notebook_linked_to_the_secret", "a_notebook_linked_to_etc_shadow"],
}
