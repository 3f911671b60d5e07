"""Learners who try to fool or break the grader, each as one submission of a class.

Every attack is written as a learner would write it, into one lesson's
notebook: either the answer cell of one exercise (``answer``, a wrong answer
plus the trick), or another change to the notebook (``edit``). The learner
answers every other exercise of the lesson correctly.
tests/test_grading_pipeline.py grades them all in one class with `make
grade` and checks that the attacked exercise scores 0 and gets the status
below, that the learner's other exercises keep their points, that no other
learner's score moves, that no file of the course changes, that no process
is left behind and that no network connection is made.

``{root}`` in a source is the course folder, ``{library}`` the folder of
the installed encoder_lib, ``{port}`` a TCP port on 127.0.0.1 where the test
listens, ``{marker}`` a word the test looks for in files and processes.
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class Attack:
    id: str
    exercise: str
    lesson: str
    status: str  # what grades_by_exercise.csv must say of the attacked exercise
    answer: str = ""  # the attacked exercise's answer cell
    edit: str = ""  # or: the name of a notebook edit (tests/test_grading_pipeline.py: EDITS)


WRONG_SOFTMAX = '''
def softmax(x, axis=-1):
    return np.exp(x) / np.exp(x).sum()
'''

WRONG_MERGE = """
def merge_heads(x):
    *lead, n_heads, seq, d_head = x.shape
    return x.reshape(*lead, seq, n_heads * d_head)
"""

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
import subprocess
subprocess.Popen(["sleep", "4242"], start_new_session=True)   # {marker}
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
]
