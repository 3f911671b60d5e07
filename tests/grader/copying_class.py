"""A seeded class of 200 for the copying section of the class report: what grading leaves, without grading.

``copying_class(root)`` writes, in a copy of the course at ``root``, the
``grades_by_exercise.csv`` and ``autograded/`` notebooks of 200 learners
(``tests/grader/report_class.py``'s helpers). Most answers come from a handful of
common variants, each learner's renamed and commented in their own way: the
course's solution, the catalogued mistakes (``tests/mistakes/``, named in
the ``mistake`` column) and ``report_class.UNLISTED``'s wrong answers (their
``diagnosis`` in its column). Then four groups copied: three pairs whose
answer is an unusual right one, the copy renamed, its statements reordered
and its comments rewritten, and a triple with an unusual wrong answer no
mistake explains. ``COPIED`` names them. Not a test file.
"""

import ast
import copy
import json
import random
from pathlib import Path

from encoder_lib.grading import EXERCISES
from encoder_lib.grading.exercises import BY_LESSON
from report_class import UNLISTED, _row, copy_notebooks, lessons, write_graded, write_roster, write_rows, Seeded
from tests.mistakes import MISTAKES

LEARNERS = 200
#: The copied groups: (exercise, status, diagnosis, [the answer of each learner of the group]).
COPIED = {
    ("learner017", "learner142"): ("softmax", "passed", "", ['''def softmax(x, axis=-1):
    """Softmax of `x` along `axis`."""
    moved = np.moveaxis(x, axis, -1)
    out = np.empty_like(moved, dtype=float)
    flat = moved.reshape(-1, moved.shape[-1])
    rows = []
    for row in flat:
        row = row - row.max()
        rows.append(np.exp(row) / np.exp(row).sum())
    return np.moveaxis(np.array(rows).reshape(moved.shape), -1, axis)
''', '''def softmax(values, axis=-1):
    # I do it one row at a time, it is clearer to me
    out = np.empty_like(np.moveaxis(values, axis, -1), dtype=float)
    moved = np.moveaxis(values, axis, -1)
    result = []
    flat = moved.reshape(-1, moved.shape[-1])
    for r in flat:  # each row on its own
        r = r - r.max()  # stability
        result.append(np.exp(r) / np.exp(r).sum())
    return np.moveaxis(np.array(result).reshape(moved.shape), -1, axis)
''']),
    ("learner033", "learner088"): ("layer_norm", "passed", "", ['''def layer_norm(x, gamma=None, beta=None, eps=1e-5):
    d = x.shape[-1]
    centred = x - np.sum(x, axis=-1, keepdims=True) / d
    spread = np.sum(centred * centred, axis=-1, keepdims=True) / d
    out = centred * (spread + eps) ** -0.5
    if gamma is not None:
        out = gamma * out
    if beta is not None:
        out = beta + out
    return out
''', '''def layer_norm(x, gamma=None, beta=None, eps=1e-5):
    """My layer norm."""
    width = x.shape[-1]
    c = x - np.sum(x, axis=-1, keepdims=True) / width   # centre each row
    v = np.sum(c * c, axis=-1, keepdims=True) / width   # its variance
    result = c * (v + eps) ** -0.5
    if beta is not None:
        beta_ = beta
    else:
        beta_ = None
    if gamma is not None:
        result = gamma * result
    if beta_ is not None:
        result = beta_ + result
    return result
''']),
    ("learner051", "learner170"): ("feed_forward", "passed", "", ['''def feed_forward(x, params, activation="relu"):
    w1, b1, w2, b2 = (params[name] for name in ("w1", "b1", "w2", "b2"))
    pre = np.einsum("...i,ij->...j", x, w1) + b1
    if activation == "relu":
        act = np.where(pre > 0, pre, 0.0)
    else:
        act = el.gelu(pre)
    return np.einsum("...j,jk->...k", act, w2) + b2
''', '''def feed_forward(x, params, activation="relu"):
    # unpack the weights first
    W1, B1, W2, B2 = (params[key] for key in ("w1", "b1", "w2", "b2"))
    h = np.einsum("...i,ij->...j", x, W1) + B1   # first layer
    if activation != "relu":
        a = el.gelu(h)
    else:
        a = np.where(h > 0, h, 0.0)   # relu
    return np.einsum("...j,jk->...k", a, W2) + B2
''']),
    ("learner005", "learner099", "learner163"): ("scaled_dot_product_attention", "failed", "sums", ['''def scaled_dot_product_attention(q, k, v):
    scale = np.sqrt(q.shape[-1])
    scores = np.einsum("...qd,...kd->...qk", q, k) / scale
    weights = np.abs(scores) / np.abs(scores).sum(axis=-1, keepdims=True)
    out = np.einsum("...qk,...kd->...qd", weights, v)
    return out, weights
''', '''def scaled_dot_product_attention(q, k, v):
    """Attention."""
    s = np.einsum("...qd,...kd->...qk", q, k) / np.sqrt(q.shape[-1])   # the scores
    w = np.abs(s) / np.abs(s).sum(axis=-1, keepdims=True)   # weights sum to one
    return np.einsum("...qk,...kd->...qd", w, v), w
''', '''def scaled_dot_product_attention(query, key, value):
    # scores scaled by sqrt(d)
    scale = np.sqrt(query.shape[-1])
    sc = np.einsum("...qd,...kd->...qk", query, key) / scale
    wts = np.abs(sc) / np.abs(sc).sum(axis=-1, keepdims=True)
    res = np.einsum("...qk,...kd->...qd", wts, value)
    return res, wts
''']),
}
NAMES = ("a", "b", "c", "tmp", "val", "res", "z", "h", "m", "n", "p", "r", "s", "t", "u", "w", "y", "zz", "acc", "out2")


def lean(notebook):
    """A notebook without its outputs: what the report reads is the answer cells."""
    notebook = copy.deepcopy(notebook)
    for cell in notebook["cells"]:
        if cell.get("cell_type") == "code":
            cell["outputs"], cell["execution_count"] = [], None
    return notebook


class _Renaming(ast.NodeTransformer):
    def __init__(self, rng):
        self.rng, self.names = rng, {}

    def new(self, name):
        return self.names.setdefault(name, f"{self.rng.choice(NAMES)}{len(self.names)}")

    def visit_Name(self, node):
        if isinstance(node.ctx, ast.Store) or node.id in self.names:
            node.id = self.new(node.id)
        return node


def disguised(source, rng, student):
    """``source`` as one learner writes it: the variables it assigns renamed, a comment of their own first."""
    tree = _Renaming(rng).visit(ast.parse(source))
    return f"# {student}: my answer\n{ast.unparse(tree)}\n"


def common_answer(rng, exercise, solution):
    """``(source, status, mistake, diagnosis)`` of a common variant: the solution (most), a catalogued mistake or
    an answer no mistake explains."""
    mistakes = [m for m in MISTAKES if m.exercise == exercise]
    unlisted = [u for u in UNLISTED if u.exercise == exercise]
    draw = rng.random()
    if mistakes and draw < 0.12:
        mistake = rng.choice(mistakes[:2])
        return mistake.source.strip() + "\n", "failed", mistake.model, ""
    if unlisted and draw < 0.25:
        return unlisted[0].source, "failed", "", unlisted[0].diagnosis
    return solution, "passed", "", ""


def _solutions(root):
    from course_grader.class_report.answers import answer_cells

    notebooks = {lesson: lean(json.loads((root / "notebooks" / lesson / f"{lesson}.ipynb").read_text()))
                 for lesson in lessons()}
    sources = {}
    for lesson, notebook in notebooks.items():
        sources.update(answer_cells(json.dumps(notebook).encode(), BY_LESSON[lesson]))
    return notebooks, sources


def copying_class(root, seed=32):
    """Write the class; returns ``(Seeded, COPIED's groups as sets)``."""
    root = Path(root)
    copy_notebooks(root)
    rng, seeded = random.Random(seed), Seeded()
    notebooks, solutions = _solutions(root)
    copied = {student: (group, n) for group in COPIED for n, student in enumerate(group)}
    for i in range(LEARNERS):
        student = f"learner{i:03d}"
        for lesson, notebook in notebooks.items():
            answers = {}
            for name in (n for n, e in EXERCISES.items() if e.lesson == lesson):
                group, n = copied.get(student, (None, 0))
                if group and COPIED[group][0] == name:
                    _, status, diagnosis, texts = COPIED[group]
                    source, mistake = texts[n], ""
                else:
                    source, status, mistake, diagnosis = common_answer(rng, name, solutions[name])
                    source = disguised(source, rng, student)
                answers[name] = source
                _row(seeded, student, lesson, name, status, "" if status == "passed" else "its output differs",
                     mistake, diagnosis)
            write_graded(root, student, lesson, notebook, answers)
    write_rows(root, seeded.rows)
    write_roster(root, [f"learner{i:03d}" for i in range(LEARNERS)])
    return seeded, [set(group) for group in COPIED]
