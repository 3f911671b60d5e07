"""The grader's parts on their own: the wire format, the in-sandbox erf, reading submissions, the reports, the
sandbox and the runner, the bounds on library calls, judging, the workers.

The whole pipeline, with a class of attackers, is tests/grader/test_grading_pipeline.py;
malformed classes, failing machines and Ctrl+C are tests/grader/test_grader_resilience.py.
"""

import csv
import hashlib
import json
import os
import shutil
import struct
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import erf as scipy_erf

import encoder_lib
from conftest import need_bubblewrap
from encoder_lib.grading import EXERCISES, wire
from course_grader import ids, sandbox, submissions, workers
from course_grader.cases import hidden_cases, visible_cases
from course_grader.files import csv_field, write_csv, write_file
from encoder_lib.grading.compare import allowed_names
from course_grader.library_calls import CallBudget, CallMemo, Calls, serve
from course_grader.marking import mark, parameter_names
from course_grader.outputs import Result, summary_text
from course_grader.sandbox import numeric
from course_grader.submissions import NOTEBOOK, ReleasedLesson, as_released, read_submission

# ---------------------------------------------------------------- the wire


def test_shared_decoding_gives_one_read_only_array_per_array_sent_that_no_one_can_make_writeable():
    weights = np.arange(12.0).reshape(3, 4)
    data = wire.pack({"cases": [{"w": weights}, {"w": weights}]})
    first, second = (case["w"] for case in wire.unpack(data, shared=True)["cases"])
    assert first is second and np.array_equal(first, weights) and not first.flags.writeable
    with pytest.raises(ValueError):
        first.flags.writeable = True
    copies = [case["w"] for case in wire.unpack(data)["cases"]]
    assert copies[0] is not copies[1] and copies[0].flags.writeable
    with pytest.raises(TypeError, match="needs bytes"):
        wire.unpack(bytearray(data), shared=True)


def test_plain_values_cross_and_come_back_equal():
    value = {"x": np.arange(6.0).reshape(2, 3).T, "mask": np.array([True, False]), "n": 3, "eps": 1e-12,
             "nan": float("nan"), "none": None, "name": "post", "pair": (np.int64(2), [1.5, "a"]),
             "f32": np.float32(0.5), "call": wire.Call("feed_forward", {"w1": np.eye(2)})}
    back = wire.unpack(wire.pack(value))
    assert np.array_equal(back["x"], value["x"]) and back["x"].dtype == np.float64
    assert back["mask"].dtype == bool and back["n"] == 3 and back["eps"] == 1e-12 and np.isnan(back["nan"])
    assert back["pair"][0] == 2 and isinstance(back["pair"], tuple) and back["pair"][1] == [1.5, "a"]
    assert back["f32"].dtype == np.float32 and np.ndim(back["f32"]) == 0
    assert back["call"].name == "feed_forward" and np.array_equal(back["call"].args[0]["w1"], np.eye(2))


@pytest.mark.parametrize("dtype", [">f8", ">f4", ">i2", "<f8", ">c16"])
def test_an_array_in_either_byte_order_crosses_with_its_values(dtype):
    """An answer may return an array of the other byte order (``astype('>f8')``): its values cross, not its bytes
    read in this machine's order (which made a right result garbage)."""
    value = np.arange(1, 7).reshape(2, 3).T.astype(dtype)
    back = wire.unpack(wire.pack({"x": value, "scalar": value[0, 0]}))
    assert np.array_equal(back["x"], value) and back["x"].dtype == value.dtype.newbyteorder("=")
    assert back["scalar"] == value[0, 0] and back["x"].dtype.isnative


@pytest.mark.parametrize("value", [object(), np.array(["text"]), np.array([{}], dtype=object), {1: 2},
                                   (x for x in [])], ids=["object", "strings", "objects", "int keys", "generator"])
def test_what_is_not_plain_does_not_cross_but_a_result_says_what_it_was(value):
    with pytest.raises(wire.WireError):
        wire.pack(value)
    assert isinstance(wire.unpack(wire.pack(value, lenient=True)), wire.Unsupported)


def test_an_array_in_several_cases_crosses_once_and_each_case_gets_its_own_copy():
    weights = np.arange(2.0 * 2**20)  # 16 MB, as one of all-MiniLM-L6-v2's blocks in float64
    cases = [{"params": {"w": weights}, "x": np.ones(3)} for _ in range(5)]
    data = wire.pack(cases)
    assert len(data) < weights.nbytes + 2**16  # 5 times as many bytes would be over wire.MAX_BYTES
    back = wire.unpack(data)
    assert all(np.array_equal(case["params"]["w"], weights) for case in back)
    back[0]["params"]["w"][0] = -1.0  # an answer that changes its input in place changes only its own case
    assert back[1]["params"]["w"][0] == 0.0
    assert len(wire.pack([weights.copy() for _ in range(2)])) > 2 * weights.nbytes  # equal, not the same: sent twice


def test_a_small_message_that_names_one_array_many_times_cannot_fill_the_grader_s_memory():
    big = np.zeros(2**20)  # 8 MB, sent once
    data = wire.pack([big] * (wire.MAX_DECODED_BYTES // big.nbytes + 1), lenient=True)  # as a learner's result
    assert len(data) < 2 * big.nbytes
    with pytest.raises(wire.WireError, match="decode to more than"):
        wire.unpack(data)


def test_a_cycle_is_refused_not_a_crash():
    cycle = []
    cycle.append(cycle)
    with pytest.raises(wire.WireError):
        wire.pack(cycle)


@pytest.mark.parametrize("data", [
    b"", b"\x00" * 7, b"not a message at all",
    struct.pack("<II", 2, 0) + b"{}",  # an empty dict is no value
    struct.pack("<II", 44, 1) + b'{"__array__": 0, "dtype": "O", "shape": [1]}' + struct.pack("<Q", 8) + b"\0" * 8,
    struct.pack("<II", 46, 1) + b'{"__array__": 0, "dtype": "f8", "shape": [99]}' + struct.pack("<Q", 8) + b"\0" * 8,
    b"\x80\x04\x95" + b"\0" * 20,  # the start of a pickle
], ids=["empty", "short", "text", "empty dict", "object dtype", "wrong length", "pickle"])
def test_anything_else_is_refused_when_read(data):
    with pytest.raises(wire.WireError):
        wire.unpack(data)


# ---------------------------------------------------------------- reading a submission


def notebook(*cells):
    return json.dumps({"cells": list(cells), "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


def cell(source, grade_id=None, locked=False, solution=False, points=None, cell_type="code"):
    meta = {} if grade_id is None else {"nbgrader": {"grade_id": grade_id, "locked": locked, "solution": solution,
                                                      "grade": points is not None, "points": points,
                                                      "schema_version": 3}}
    return {"cell_type": cell_type, "metadata": meta, "source": source, "outputs": [], "execution_count": None}


ANSWER = "def softmax(x, axis=-1):\n    return x\n"
RELEASED = ReleasedLesson.from_text(notebook(
    cell("import numpy as np"),
    cell("# YOUR CODE HERE\nraise NotImplementedError()", "softmax_answer", solution=True),
    cell("grading.self_check(softmax)", "softmax_self_check", locked=True),
    cell("grading.visible_tests(softmax)", "softmax_tests", locked=True, points=2)))


def submission(*changes):
    cells = [cell("import numpy as np"), cell(ANSWER, "softmax_answer", solution=True),
             cell("grading.self_check(softmax)", "softmax_self_check", locked=True),
             cell("grading.visible_tests(softmax)", "softmax_tests", locked=True, points=2)]
    for change in changes:
        change(cells)
    return notebook(*cells)


def test_an_untampered_submission_gives_its_answer_and_no_notes():
    reading = read_submission(submission(), RELEASED, ["softmax"])
    assert reading.answers == {"softmax": ANSWER} and reading.tampering == {} and reading.unreadable is None


def test_a_notebook_that_is_not_one_is_unreadable_not_a_crash():
    for text in ("{", "[]", json.dumps({"cells": "no"}), json.dumps({"cells": [1, 2]})):
        reading = read_submission(text, RELEASED, ["softmax"])
        assert reading.unreadable and reading.answers == {"softmax": None}


@pytest.mark.parametrize("change, words", [
    (lambda cells: cells[3].update(source="pass"), "locked cell 'softmax_tests' was edited"),
    (lambda cells: cells.pop(3), "'softmax_tests' was deleted"),
    (lambda cells: cells.append(json.loads(json.dumps(cells[3]))), "'softmax_tests' appears 2 times"),
    (lambda cells: cells[3]["metadata"]["nbgrader"].update(points=100), "metadata of 'softmax_tests' was changed (points)"),
    (lambda cells: cells[2]["metadata"]["nbgrader"].update(grade=True), "changed (grade)"),
    (lambda cells: cells[1].update(cell_type="markdown"), "from code to markdown"),
], ids=["edited", "deleted", "duplicated", "points", "self-check graded", "answer made markdown"])
def test_tampering_is_noted_against_its_exercise(change, words):
    reading = read_submission(submission(change), RELEASED, ["softmax"])
    assert any(words in note for note in reading.tampering["softmax"]), reading.tampering


def test_a_cell_with_empty_nbgrader_metadata_is_noted_against_the_notebook():
    reading = read_submission(submission(lambda cells: cells.insert(1, {**cell("x = 1"), "metadata": {"nbgrader": {}}})),
                              RELEASED, ["softmax"])
    assert reading.answers["softmax"] == ANSWER and "cell 2 has nbgrader metadata" in reading.tampering[NOTEBOOK][0]


def test_an_answer_without_its_metadata_is_found_by_its_def_and_the_last_one_counts():
    def rename(cells):
        cells[1]["metadata"]["nbgrader"]["grade_id"] = "mine"
        cells.append(cell("def softmax(x, axis=-1):\n    return 2 * x\n"))

    reading = read_submission(submission(rename), RELEASED, ["softmax"])
    assert reading.answers["softmax"] == "def softmax(x, axis=-1):\n    return 2 * x\n"
    assert any("lost its nbgrader metadata" in note for note in reading.tampering["softmax"])


def test_a_duplicated_answer_cell_counts_as_its_last_copy():
    def twice(cells):
        second = json.loads(json.dumps(cells[1]))
        second["source"] = "def softmax(x, axis=-1):\n    return 3 * x\n"
        cells.insert(2, second)

    reading = read_submission(submission(twice), RELEASED, ["softmax"])
    assert "3 * x" in reading.answers["softmax"]
    assert any("appears 2 times" in note for note in reading.tampering["softmax"])


def test_an_answer_left_as_released_is_known_without_running_it():
    stub = "# YOUR CODE HERE\nraise NotImplementedError()"
    assert as_released(stub, RELEASED, "softmax") and as_released(stub.replace("\n", "\r\n") + "\n\n", RELEASED, "softmax")
    assert not as_released(stub + "\nx = 1", RELEASED, "softmax") and not as_released(ANSWER, RELEASED, "softmax")
    assert not as_released(None, RELEASED, "softmax") and not as_released(stub, RELEASED, "gelu")


def test_a_notebook_that_is_not_json_or_too_deep_or_too_big_is_unreadable_and_says_why():
    for data, words in [(b"[" * 50000 + b"]" * 50000, "nested too deep"),
                        (b'{"cells": [' + b"[]," * 600_000 + b"[]]}", "lists and objects"),
                        (b"\xff\xfe not text", "could not be read")]:
        reading = read_submission(data, RELEASED, ["softmax"])
        assert reading.unreadable and words in reading.unreadable and reading.answers == {"softmax": None}


@pytest.mark.parametrize("change, where, words", [
    (lambda cells: cells[1]["metadata"]["nbgrader"].update(grade_id=["softmax_answer"]), NOTEBOOK, "not a name"),
    (lambda cells: cells[1].update(source=[1, 2, 3]), "softmax", "is not text"),
    (lambda cells: cells[3].update(source={"no": "text"}), "softmax", "was edited"),
    (lambda cells: cells[1].update(cell_type=["code"]), "softmax", "changed from code to ['code']"),
    (lambda cells: cells[1]["metadata"].update(nbgrader=[1]), "softmax", "nbgrader metadata"),
], ids=["grade_id a list", "source numbers", "locked source a dict", "cell type a list", "metadata a list"])
def test_a_cell_that_is_not_what_a_notebook_holds_is_noted_not_a_crash(change, where, words):
    reading = read_submission(submission(change), RELEASED, ["softmax"])
    assert any(words in note for notes in reading.tampering.values() for note in notes), reading.tampering
    assert where in reading.tampering


def test_a_learner_s_folder_is_read_without_following_links(tmp_path):
    submitted = tmp_path / "submitted"
    good = submitted / "alice" / "01_attention"
    good.mkdir(parents=True)
    (good / "01_attention.ipynb").write_text(submission())
    (submitted / "bob").symlink_to(submitted / "alice")
    (submitted / "carol" / "01_attention").mkdir(parents=True)
    (submitted / "carol" / "01_attention" / "01_attention.ipynb").symlink_to("/etc/passwd")
    (submitted / "dave").mkdir()
    (submitted / "dave" / "01_attention").symlink_to(good)
    (submitted / "erin" / "01_attention").mkdir(parents=True)
    os.mkfifo(submitted / "erin" / "01_attention" / "01_attention.ipynb")
    (submitted / "=1+1" / "01_attention").mkdir(parents=True)
    (submitted / "=1+1" / "01_attention" / "01_attention.ipynb").write_text(submission())
    (submitted / "notes.txt").write_text("not a learner")
    (submitted / "alice" / "01_attention\n").mkdir()
    found = submissions.scan(submitted, ["01_attention"])
    handed = {student: h for (student, _), h in found.handed.items()}
    assert handed["alice"].path == good / "01_attention.ipynb" and not handed["alice"].problem
    for student in ("bob", "carol", "dave", "erin"):
        assert handed[student].status == "tampered" and handed[student].path is None, student
    assert handed["=1+1"].path is not None, "a learner's id is their folder's name, as it is"
    folder = ids.safe_name("=1+1")
    assert any("'=1+1' is not a safe folder name" in n and f"named {folder}" in n for n in found.notices)
    assert any("notes.txt" in n and "ignored" in n for n in found.notices)
    assert any("'alice' holds what is no lesson" in n and "'01_attention\\n'" in n for n in found.notices)


def test_a_notebook_over_the_bound_is_not_read(tmp_path, monkeypatch):
    monkeypatch.setattr(submissions, "MAX_NOTEBOOK_BYTES", 1000)
    folder = tmp_path / "submitted" / "alice" / "01_attention"
    folder.mkdir(parents=True)
    (folder / "01_attention.ipynb").write_text(submission() + " " * 1000)
    handed = submissions.scan(tmp_path / "submitted", ["01_attention"]).handed["alice", "01_attention"]
    assert handed.status == "error" and "are not read" in handed.problem
    with pytest.raises(submissions.NotebookProblem, match="over"):
        submissions.read_hand_in(folder / "01_attention.ipynb")


def test_a_notebook_that_cannot_be_read_is_a_problem_not_a_crash(tmp_path, monkeypatch):
    path = tmp_path / "01_attention.ipynb"
    path.write_text(submission())

    def failing_read(*args, **kwargs):
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(os, "fdopen", failing_read)
    with pytest.raises(submissions.NotebookProblem) as problem:
        submissions.read_hand_in(path)
    assert problem.value.status == "error" and "Input/output error" in problem.value.note


@pytest.mark.parametrize("text, ignored", [("2026-11-30 10:00:00.000000 UTC", False),
                                           ("handed in on time, promise", True), ("9" * 150, True)])
def test_a_timestamp_that_is_not_a_time_is_reported_and_ignored(tmp_path, text, ignored):
    from course_grader import exchange

    notebook = tmp_path / "01_attention.ipynb"
    notebook.write_text("{}")
    (tmp_path / "timestamp.txt").write_text(text)
    when = exchange.hand_in_time(notebook, None)
    assert bool(when.flag) == ignored and (when.when is None) == ignored


# ---------------------------------------------------------------- what the teacher reads


@pytest.mark.parametrize("value, field", [
    ("=HYPERLINK(\"http://x\")", "'=HYPERLINK(\"http://x\")"), ("+1", "'+1"), ("-2", "'-2"), ("@SUM(A1)", "'@SUM(A1)"),
    ("\tx", "' x"), ("\rx", "' x"), ("alice", "alice"), (2.0, "2"), (0.5, "0.5"), ("a\x1b[2Jb", "a [2Jb"),
])
def test_a_csv_field_is_plain_text_and_never_a_formula(value, field):
    assert csv_field(value) == field


def test_a_csv_file_keeps_one_row_per_result_whatever_the_text(tmp_path):
    rows = [("mallory\nbob,01,softmax", "=1+1", 'say "hi", then', 2.0)]
    write_csv(tmp_path / "out.csv", ("a", "b", "c", "d"), rows)
    [header, row] = list(csv.reader((tmp_path / "out.csv").read_text().splitlines()))
    assert header == ["a", "b", "c", "d"] and row == ["mallory bob,01,softmax", "'=1+1", 'say "hi", then', "2"]


def test_a_file_is_written_whole_with_the_umask_s_mode(tmp_path):
    path = tmp_path / "grades.csv"
    path.write_text("old")
    path.chmod(0o644)
    mask = os.umask(0o077)
    try:
        write_file(path, "new")
    finally:
        os.umask(mask)
    assert path.read_text() == "new" and path.stat().st_mode & 0o777 == 0o600
    assert [p.name for p in tmp_path.iterdir()] == ["grades.csv"]


def test_the_summary_prints_no_control_character():
    row = Result("eve\x1b[2J", "01_attention", "softmax", 0, 2, "error", note="boom\x1b[H\r\u202eok")
    text = summary_text([row], {"learners": 1, "lessons": 1, "handed_in": 1, "missing": 0, "regraded": 1,
                                       "reused": 0, "seconds": 1, "jobs": 1, "unsafe": False,
                                       "notices": ["submitted/'\\x1b' odd"], "machine": [("a", "b", "why\x07")]})
    assert text.isprintable() or set(text) - set("\n") <= {c for c in text if c.isprintable()}
    assert "\x1b" not in text and "\r" not in text and "\u202e" not in text and "\x07" not in text
    assert "NOT GRADED because the grader's machine failed" in text


def test_the_summary_of_a_flood_is_counts_and_the_first_few_and_what_matters_comes_first():
    """9,000 junk folders in inbound/ (issue 39) made 14.7 MB of summary, the machine's failures after line 9,000:
    each list now gives its count, its first ``MOST_NAMED`` and where the rest are; refusals before skips."""
    from course_grader.outputs import MOST_NAMED

    notices = [f"make collect 01_attention skipped inbound/'junk{i}': not a hand-in's name" for i in range(9000)]
    notices.append("make collect 01_attention refused inbound/'eve+01_attention+x': owned by another account")
    rows = [Result(f"l{i}", "01_attention", "softmax", 0, 2, "error", note="boom") for i in range(500)]
    text = summary_text(rows, {"learners": 500, "lessons": 1, "handed_in": 500, "missing": 0, "regraded": 500,
                               "reused": 0, "seconds": 1, "jobs": 1, "unsafe": False, "notices": notices,
                               "machine": [("ada", "01_attention", "the worker died")]})
    lines = text.splitlines()
    assert len(lines) < 4 * MOST_NAMED + 20 and len(text) < 20_000
    assert "in submitted/ and make collect's record (9001):" in text and f"and {9001 - MOST_NAMED} more" in text
    assert "error (500):" in text and f"and {500 - MOST_NAMED} more" in text
    assert text.index("NOT GRADED") < text.index("error (500)") < text.index("owned by another account") < \
        text.index("junk0")


# ---------------------------------------------------------------- library calls and judging


def test_a_library_call_far_larger_than_the_exercise_s_cases_is_refused_and_costs_that_exercise():
    cases = visible_cases("encoder_block")
    budget = CallBudget.of(cases, sandbox.Limits())
    allowed = {"multi_head_attention", "softmax"}
    small = serve({"name": "softmax", "args": [np.zeros((2, 3))], "kwargs": {}}, allowed, budget)
    assert small["kind"] == "value" and budget.refused == []
    huge = serve({"name": "multi_head_attention", "args": [np.zeros((20000, 1)), 1], "kwargs": {}},
                        allowed, budget)
    assert huge["kind"] == "error" and "refused" in huge["message"] and budget.refused
    status, points, note, *_ = mark(EXERCISES["encoder_block"], cases, [{"kind": "refused", "why":
                                            budget.refused[0]}], {"status": "done"}, sandbox.Limits())
    assert (status, points) == ("error", 0) and "refused" in note


def _call(name, *args):
    return wire.pack({"kind": "call", "name": name, "args": list(args), "kwargs": {}})


def test_a_call_on_a_visible_case_is_answered_again_from_the_memo_within_each_answer_s_own_budget():
    """The replies to calls on the visible cases (the same for every answer) are kept; those on the hidden cases
    (drawn for each answer cell) never; a kept reply is given only where this answer's exercise may call the
    function and its own budget allows the call, and only to the same exercise."""
    memo = CallMemo()
    cases = visible_cases("encoder_block")
    budget = CallBudget.of(cases, sandbox.Limits())
    calls = Calls("encoder_block", {"softmax", "layer_norm"}, budget, shared=len(cases), memo=memo)
    data = _call("softmax", np.array([[1.0, 2.0, 3.0]]))
    message = wire.unpack(data)
    reply = calls(message)
    sent = wire.pack(reply)
    assert calls.known(data, 0) is None  # nothing kept yet
    calls.keep(data, len(cases), message, reply, sent)  # on a hidden case: never kept
    assert calls.known(data, 0) is None
    calls.keep(data, 0, message, reply, sent)
    assert calls.known(data, 1) == sent and calls.answered == 1
    assert calls.known(data, len(cases)) is None, "a call on a hidden case is always computed"
    assert calls.known(_call("softmax", np.array([[1.0, 2.0, 3.5]])), 0) is None, "another input is another call"
    assert Calls("encoder", {"softmax"}, budget, shared=9, memo=memo).known(data, 0) is None, "another exercise"
    assert Calls("encoder_block", {"layer_norm"}, budget, shared=9, memo=memo).known(data, 0) is None, \
        "an answer whose exercise may not call it"
    tight = CallBudget(dimension=2, elements=2, seconds=10.0)
    assert Calls("encoder_block", {"softmax"}, tight, shared=9, memo=memo).known(data, 0) is None, \
        "an answer whose budget refuses it"
    refused = {"kind": "error", "type": "RuntimeError", "message": "refused"}
    calls.keep(_call("layer_norm", np.zeros(3)), 0, wire.unpack(_call("layer_norm", np.zeros(3))), refused,
               wire.pack(refused))
    assert calls.known(_call("layer_norm", np.zeros(3)), 0) is None, "a refusal is not the library's reply"
    failed = {"kind": "error", "type": "RuntimeError", "message": "MemoryError"}
    calls.keep(_call("layer_norm", np.ones(3)), 0, wire.unpack(_call("layer_norm", np.ones(3))), failed,
               wire.pack(failed))
    assert calls.known(_call("layer_norm", np.ones(3)), 0) is None, "an error may be the grader's: computed again"
    small = CallMemo(limit=64 * 4000)
    for i in range(200):
        entry = _call("softmax", np.full(400, float(i)))
        small.put(("softmax", i), (entry, "softmax", 400, 400))
    assert small.bytes <= small.limit and small.get(("softmax", 0)) is None and small.get(("softmax", 199))


def test_an_answer_graded_with_the_memo_s_replies_is_graded_as_without_them(box):
    """A second learner's answer (a catalogued mistake's, then the right one) gets the marks it gets from a
    memo that knows nothing, with part of its calls answered from the replies the first answer's calls left."""
    from benchmarks.mutants import solutions
    from mistakes import MISTAKES

    wrong = next(m for m in MISTAKES if m.exercise == "encoder_block")
    for source in (solutions()["encoder_block"], wrong.source):
        marks = []
        for memo in (CallMemo(), CallMemo()):
            for _ in range(2):  # the second time, from the memo
                cases = visible_cases("encoder_block")
                calls = Calls("encoder_block", allowed_names(EXERCISES["encoder_block"], cases),
                              CallBudget.of(cases, sandbox.Limits()), shared=len(cases), memo=memo)
                events, ending = box.run("encoder_block", source, [(c.args, c.kwargs) for c in cases],
                                         EXERCISES["encoder_block"].uses, EXERCISES["encoder_block"].may_call,
                                         sandbox.Limits(), serve=calls, calls=calls.allowed)
                marks.append((mark(EXERCISES["encoder_block"], cases, events, ending, sandbox.Limits()),
                               calls.answered))
        assert [m for m, _ in marks] == [marks[0][0]] * 4, source
        assert marks[1][1] > marks[0][1], "the second answer's calls on the visible cases: from the memo"


def test_a_case_whose_input_was_changed_fails_and_names_the_parameter():
    exercise = EXERCISES["masked_softmax"]
    cases = visible_cases("masked_softmax")
    events = [{"kind": "result", "case": i, "value": c.expected, "changed": [0] if i == 1 else []}
              for i, c in enumerate(cases)]
    marked = mark(exercise, cases, events, {"status": "done"}, sandbox.Limits())
    assert marked.status == "failed" and f"{cases[1].description}: it changed its input `scores` in place" \
        in marked.note
    assert marked.diagnosis == "changed:scores" and marked.mistake == ""
    assert parameter_names(exercise, [1, "padding_mask"]) == ("padding_mask", "padding_mask")


def test_an_error_on_a_hidden_case_is_named_by_its_kind_only():
    cases = visible_cases("softmax") + hidden_cases("softmax", 1, "ab" * 32)
    visible = len(visible_cases("softmax"))
    events = [{"kind": "result", "case": i, "value": c.expected} for i, c in enumerate(cases[:visible])]
    events.append({"kind": "raised", "case": visible, "error": "LEAKClass: LEAK[1.5, 2.5]"})
    events += [{"kind": "result", "case": i, "value": c.expected} for i, c in enumerate(cases) if i > visible]
    note = mark(EXERCISES["softmax"], cases, events, {"status": "done"}, sandbox.Limits()).note
    assert "LEAK" not in note and "an exception (on a hidden check its message is not shown)" in note


def test_hidden_cases_are_drawn_for_each_submission():
    first = hidden_cases("layer_norm", 7, hashlib.sha256(b"one").hexdigest())
    again = hidden_cases("layer_norm", 7, hashlib.sha256(b"one").hexdigest())
    other = hidden_cases("layer_norm", 7, hashlib.sha256(b"two").hexdigest())
    assert all(np.array_equal(a.args[0], b.args[0]) for a, b in zip(first, again))
    assert not any(a.args[0].shape == b.args[0].shape and np.allclose(a.args[0], b.args[0])
                   for a in first for b in other)


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_worker_that_dies_costs_only_its_task(jobs):
    with workers.Workers(_dies_on_three, jobs=jobs) as pool:  # one worker: 4 was sent ahead to the one that died
        results = dict(pool.results([1, 2, 3, 4, 5]))
    assert results == {1: 10, 2: 20, 3: workers.WorkerDied(results[3].why), 4: 40, 5: 50}
    assert "died" in results[3].why


def _dies_on_three(task):
    if task == 3:
        os._exit(3)
    return task * 10


# ---------------------------------------------------------------- the sandbox


@pytest.fixture(scope="module")
def box():
    need_bubblewrap("the sandbox's own tests")
    with sandbox.Sandbox() as running:
        yield running


def run(box, source, name="softmax", cases=(((np.array([1.0, 2.0]),), {}),), may_call=(), seconds=5):
    events, ending = box.run(name, source, list(cases), (), may_call, sandbox.Limits(seconds=seconds),
                             serve=lambda message: {"kind": "error", "type": "TypeError", "message": "no calls here"})
    return events, ending


def test_the_sandbox_shows_neither_the_course_nor_the_library(box):
    library = str(__import__("pathlib").Path(encoder_lib.__file__).resolve().parent)
    source = ("import os\ndef softmax(x, axis=-1):\n"
              f"    return str([os.path.exists({library!r}), os.path.exists({library + '/attention.py'!r}), "
              "os.path.exists('/root/.ssh'), os.path.exists('/etc/passwd'), os.getuid()])\n")
    events, ending = run(box, source)
    assert ending["status"] == "done"
    exists_library, exists_source, ssh, passwd, uid = eval(events[0]["value"])  # noqa: S307 (our own list)
    assert not exists_library and not exists_source and not ssh and not passwd and uid == 65534


def test_an_answer_cannot_start_a_process_and_its_threads_are_bounded(box):
    source = ("import subprocess, threading\ndef softmax(x, axis=-1):\n"
              "    out = []\n"
              "    try:\n        t = threading.Thread(target=out.append, args=(1,)); t.start(); t.join()\n"
              "    except RuntimeError:\n        out.append('no threads')\n"
              "    try:\n        subprocess.run(['true'])\n    except OSError as exc:\n        out.append(type(exc).__name__)\n"
              "    return str(out)\n")
    events, _ = run(box, source)
    assert events[0]["value"] == ("[1, 'PermissionError']" if box.threads else "['no threads', 'PermissionError']")
    if box.procs is None:
        return  # no cgroups here: the tasks are bounded by RLIMIT_NPROC (not root) or there are no threads (root)
    bomb = ("import threading\nthreading.stack_size(32768)\nhold = threading.Event()\nn = 0\n"
            "def softmax(x, axis=-1):\n    global n\n    try:\n        for _ in range(5000):\n"
            "            threading.Thread(target=hold.wait, daemon=True).start(); n += 1\n"
            "    except RuntimeError:\n        pass\n    return n\n")
    events, _ = run(box, bomb)
    assert 0 < events[0]["value"] < sandbox.SANDBOX_TASKS


def test_an_answer_cannot_signal_trace_or_read_the_runner_and_its_sandbox_survives(box):
    source = """
import ctypes, os, resource, signal
libc = ctypes.CDLL(None, use_errno=True)
def attempt(call, *args):
    try:
        call(*args)
        return "done"
    except OSError as exc:
        return exc.errno
def syscall(*args):
    result = libc.syscall(*args)
    return ctypes.get_errno() if result == -1 else "done"
def softmax(x, axis=-1):
    out = {path: attempt(lambda p: open(p, "rb").read(1), path)
           for path in ("/proc/1/environ", "/proc/1/mem", "/proc/1/fd/0", "/proc/1/maps", "/proc/1/cwd/runner.py")}
    out["kill 1"] = attempt(os.kill, 1, signal.SIGKILL)
    out["kill -1"] = attempt(os.kill, -1, signal.SIGKILL)
    out["prlimit 1"] = attempt(resource.prlimit, 1, resource.RLIMIT_AS, (1, 1))
    for name, args in {"io_uring_setup": (425, 8, 0), "unshare": (272, 0x10000000), "setns": (308, 0, 0),
                       "process_vm_readv": (310, 1, 0, 1, 0, 1, 0), "ptrace": (101, 16, 1), "bpf": (321, 0, 0, 0),
                       "memfd_create": (319, 0, 0), "socket": (41, 2, 1, 0)}.items():
        out[name] = syscall(*args)
    out["environ"] = sorted(os.environ)
    return repr(out)
"""
    events, ending = run(box, source)
    assert ending["status"] == "done", ending
    found = eval(events[0]["value"])  # noqa: S307 (our own dict of numbers and names)
    environment = found.pop("environ")
    assert all(value in (1, 13) for value in found.values()), found  # EPERM or EACCES, every one
    assert set(environment) <= set(sandbox.SANDBOX_ENV) | {"PWD"}
    events, ending = run(box, "def softmax(x, axis=-1):\n    return x\n")
    assert ending["status"] == "done" and np.array_equal(events[0]["value"], [1.0, 2.0])


def test_the_answer_cell_runs_before_the_cases_exist_in_its_process(box):
    source = ("import gc\nFOUND = [o for o in gc.get_objects() if isinstance(o, dict) and 'cases' in o]\n"
              "def softmax(x, axis=-1):\n    return len(FOUND)\n")
    events, _ = run(box, source)
    assert events[0]["value"] == 0


def test_what_an_answer_says_on_its_own_channel_is_checked_and_cut(box):
    flood = ("def softmax(x, axis=-1):\n"
             "    channel = next(c.cell_contents for c in el.softmax.__closure__ if hasattr(c.cell_contents, 'send'))\n"
             "    channel.send({'kind': 'cell_failed', 'error': 'LEAK' * 10**5})\n    return x\n")
    events, ending = run(box, flood, may_call=("softmax",))
    assert events == [] and ending["status"] == "died" and "does not expect" in ending["detail"]
    events, _ = run(box, "raise ValueError('x' * 10**5)\n")
    assert events[0]["kind"] == "cell_failed" and len(events[0]["error"]) <= 300


def test_the_runner_reports_which_inputs_an_answer_changed_in_place(box):
    source = "def softmax(x, axis=-1, *, out=None):\n    x[0] = 9.0\n    out['seen'] = 1\n    return x\n"
    events, _ = run(box, source, cases=(((np.array([1.0, 2.0]),), {"out": {}}),))
    assert events[0]["changed"] == [0, "out"]


def test_erf_in_the_sandbox_is_scipy_s(box):
    events, _ = run(box, "def softmax(x, axis=-1):\n    return erf(x), np.vectorize(erf)(x)\n",
                    cases=(((np.linspace(-6, 6, 1001),), {}),))
    exact = scipy_erf(np.linspace(-6, 6, 1001))
    assert all(np.abs(value - exact).max() < 1e-15 for value in events[0]["value"])


def test_an_answer_that_loops_times_out_and_the_next_one_runs(box):
    events, ending = run(box, "def softmax(x, axis=-1):\n    while True:\n        pass\n", seconds=1)
    assert ending["status"] == "timeout" and events == []
    events, ending = run(box, "def softmax(x, axis=-1):\n    return x\n")
    assert ending["status"] == "done"


def test_the_scratch_tmp_bounds_its_files_as_well_as_its_bytes_and_the_next_sandbox_starts_empty(box):
    """181,000 empty files cost no bytes but 190 MB of the kernel's memory: the scratch /tmp holds at most
    SCRATCH_FILES files (its own tmpfs, mounted by scratch.py), and a new sandbox gets a new one."""
    if box.session.bounded_scratch is None:
        pytest.skip(f"the scratch /tmp cannot be bounded in files here: {box.session.scratch_problem}")
    source = ("import os\ndef softmax(x, axis=-1):\n    made = 0\n    try:\n        while made < 200000:\n"
              "            open(f'/tmp/f{made}', 'w').close()\n            made += 1\n"
              "    except OSError as exc:\n        return str([made, exc.errno, os.statvfs('/tmp').f_files])\n"
              "    return str([made, 0, 0])\n")
    events, ending = run(box, source)
    made, errno_, files = eval(events[0]["value"])  # noqa: S307 (our own list)
    assert ending["status"] == "done" and errno_ == 28 and files == sandbox.SCRATCH_FILES, (made, errno_, files)
    assert made < sandbox.SCRATCH_FILES
    with sandbox.Sandbox(session=box.session) as fresh:
        events, _ = run(fresh, "import os\ndef softmax(x, axis=-1):\n    return repr(sorted(os.listdir('/tmp')))\n")
    listed = eval(events[0]["value"])  # noqa: S307 (our own list)
    # the grader's folder, this answer's and, where the course itself lies under /tmp (a CI clone), its path
    made_before = [name for name in listed if name.startswith("f") and name[1:].isdigit()]
    assert not made_before and sum(name.startswith("answer-") for name in listed) <= 1, \
        f"a new sandbox's /tmp holds none of the last one's files: {listed}"


def _gone(pid):
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def test_scratch_py_ends_with_the_process_that_started_it_and_never_starts_without_it(tmp_path):
    """CI, stop 56: Ctrl+C in `make grade` killed a worker while scratch.py was starting a sandbox, and that
    sandbox outlived the grader (bubblewrap's --die-with-parent comes only once bubblewrap runs). scratch.py ends
    with the process that started it, and does nothing when that process is already gone."""
    script, folder, marker = Path(sandbox.__file__).parent / "scratch.py", tmp_path / "mount", tmp_path / "ran"
    folder.mkdir()
    if subprocess.run([sys.executable, "-I", "-S", str(script), "--probe", str(folder)]).returncode != 0:
        pytest.skip("scratch.py cannot make a mount namespace here")
    start = [sys.executable, "-I", "-S", str(script), str(folder), "65536", "16"]
    orphan = subprocess.run([*start, "1", "--", shutil.which("touch"), str(marker)], capture_output=True)
    assert orphan.returncode == 1 and not marker.exists(), orphan.stderr
    parent = subprocess.Popen(["/bin/sh", "-c", '"$@" $$ -- /bin/sleep 60 & echo $!; wait', "sh", *start],
                              stdout=subprocess.PIPE, text=True)
    child = int(parent.stdout.readline())
    deadline = time.monotonic() + 20
    while not Path(f"/proc/{child}/cmdline").read_bytes().startswith(b"/bin/sleep") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert Path(f"/proc/{child}/cmdline").read_bytes().startswith(b"/bin/sleep"), "scratch.py became its command"
    parent.kill()
    parent.wait()
    while not _gone(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _gone(child), "the sandbox's command ended with the process that started scratch.py"


def test_a_closed_sandbox_leaves_no_cgroup_and_a_session_no_folder():
    need_bubblewrap("the sandbox's own tests")
    session = sandbox.Session()
    with sandbox.Sandbox(session=session) as box:
        procs = box.procs
        run(box, "def softmax(x, axis=-1):\n    return x\n")
    assert procs is None or not any(p.parent.exists() for p in procs)
    folder, parents = session.folder, session.cgroups.parents if session.cgroups else []
    assert folder.is_dir() and all(p.is_dir() for p in parents)
    session.close()
    assert not folder.exists() and not any(p.exists() for p in parents)


# ---------------------------------------------------------------- erf, at the notebook's speed and SciPy's values


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(allow_nan=True, allow_infinity=True, width=64), min_size=1, max_size=50))
def test_erf_agrees_with_scipy_to_the_last_places(values):
    x = np.array(values)
    assert np.allclose(numeric.erf(x), scipy_erf(x), rtol=1e-15, atol=2e-16, equal_nan=True)
    assert all(numeric.erf(v) == pytest.approx(scipy_erf(v), rel=1e-15, abs=2e-16, nan_ok=True) for v in values[:5])


@pytest.mark.parametrize("value", [np.float32(0.3), np.arange(3), np.array([True]), np.ones(2, np.int8), 0.5, 2])
def test_erf_returns_what_scipy_s_returns(value):
    assert np.asarray(numeric.erf(value)).dtype == np.asarray(scipy_erf(value)).dtype
    assert type(numeric.erf(value)) is type(scipy_erf(value))


def test_erf_refuses_what_is_not_numbers():
    with pytest.raises(TypeError, match="erf takes numbers"):
        numeric.erf(np.array(["a"]))


# ---------------------------------------------------------------- framing and decoding, bounded


def test_a_frame_crosses_a_pipe_and_a_stalled_reader_or_writer_times_out():
    read, write = map(wire.channel, os.pipe())
    try:
        wire.send_message(write, wire.pack({"n": 1}), time.monotonic() + 5)
        assert wire.unpack(wire.receive_message(read, time.monotonic() + 5)) == {"n": 1}
        with pytest.raises(TimeoutError):
            wire.receive_message(read, time.monotonic() + 0.2)  # nothing comes
        with pytest.raises(TimeoutError):
            wire.send_message(write, b"0" * 2**20, time.monotonic() + 0.2)  # nobody reads a megabyte
    finally:
        os.close(read)
        os.close(write)


def test_a_frame_longer_than_the_bound_is_refused_before_it_is_read():
    read, write = map(wire.channel, os.pipe())
    try:
        os.write(write, struct.pack("<Q", wire.MAX_BYTES + 1))
        with pytest.raises(wire.WireError):
            wire.receive_message(read, time.monotonic() + 5)
    finally:
        os.close(read)
        os.close(write)


@pytest.mark.parametrize("header", [
    b"[" + b"[]," * 60_000 + b"[]]",  # more lists than MAX_ITEMS
    b"[" * 40 + b"]" * 40,  # deeper than MAX_DEPTH
    b'"' + b"x" * (wire.MAX_HEADER_BYTES + 1) + b'"',  # a header over its bound
], ids=["many lists", "deep", "long header"])
def test_a_header_of_too_many_objects_too_deep_or_too_long_is_refused(header):
    with pytest.raises(wire.WireError):
        wire.unpack(struct.pack("<II", len(header), 0) + header)


def test_a_64_mb_message_of_nested_empty_lists_is_refused_without_parsing_it():
    header = b"[" + b"[],".join([b""] * (2**24)) + b"[]]"
    message = struct.pack("<II", len(header), 0) + header
    started = time.process_time()
    with pytest.raises(wire.WireError):
        wire.unpack(message)
    assert time.process_time() - started < 5  # not a timing target: 27 s before the bound, a few ms with it


def test_a_list_result_crosses_as_an_array(box):
    events, _ = run(box, "def softmax(x, axis=-1):\n    return [[0.5] * 100] * 100\n")
    assert isinstance(events[0]["value"], np.ndarray) and events[0]["value"].shape == (100, 100)
    assert isinstance(wire.unpack(wire.pack([[0.5] * 1000] * 1000, lenient=True)), wire.Unsupported)


@pytest.mark.parametrize("returned, dtype, shape", [
    ("[[0.5] * 1000] * 1000", "float64", (1000, 1000)),
    ("np.zeros(60 * 2**20, np.uint8)", "uint8", (60 * 2**20,)),
    ("(np.ones(2), np.zeros((3, 2**20), np.complex64))", "complex64", (3, 2**20)),
])
def test_a_result_larger_than_any_right_one_crosses_as_its_dtype_and_shape_never_its_bytes(box, returned, dtype,
                                                                                           shape):
    """Issue 30: a 60 MB uint8 result once cost the grader 1.15 GB and 40 s; now the sandbox sends what it is,
    and the grader puts back an array of that dtype and shape that holds one number."""
    from course_grader.marking import outcome_of

    events, _ = run(box, f"def softmax(x, axis=-1):\n    return {returned}\n")
    assert events[0]["value"] is None or None in events[0]["value"]
    value = outcome_of(EXERCISES["softmax"], events[0]).value
    value = value[-1] if isinstance(value, tuple) else value
    assert value.dtype == np.dtype(dtype) and value.shape == shape and value.strides == (0,) * len(shape)


def test_a_verdict_past_its_budget_is_judged_as_far_as_it_allowed_never_a_stall(monkeypatch):
    from course_grader import marking
    from encoder_lib.grading.verdict import Outcome

    cases = visible_cases("softmax")
    wrong = [Outcome(value=np.broadcast_to(np.zeros((), np.uint8), (60 * 2**20,))) for _ in cases]
    started = time.perf_counter()
    made = marking.judged(EXERCISES["softmax"], cases, wrong, seconds=5)
    assert made.status == "failed" and "not of floating-point numbers" in made.note, made
    assert time.perf_counter() - started < 5

    def forever(*args, **kwargs):
        while True:
            pass

    monkeypatch.setattr(marking, "judge", forever)
    right_shape = [Outcome(value=np.zeros_like(c.expected)) for c in cases]
    made = marking.judged(EXERCISES["softmax"], cases, right_shape, seconds=0.5)
    assert made.status == "failed" and "Judged as far as time allowed (0.5 s)" in made.note, made


@pytest.mark.parametrize("before, after, same", [
    (np.array([1.0, np.nan]), np.array([1.0, np.nan]), True),
    (np.array([1.0, 2.0]), np.array([1.0, -np.inf]), False),
    ({"w": np.eye(2)}, {"w": np.eye(2), "extra": 1}, False),
    ([np.ones(2)], [np.ones(3)], False),
    (np.ones(2), np.ones(2, dtype=np.float32), False),
    (3, 4, True),
], ids=["nan", "value", "key added", "shape", "dtype", "numbers"])
def test_same_values_sees_what_an_answer_changed(before, after, same):
    assert wire.same_values(before, after) is same
