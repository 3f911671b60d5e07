"""The grader's parts on their own: the wire format, reading submissions, the sandbox.

The whole pipeline, with a class of attackers, is tests/test_grading_pipeline.py.
"""

import json
import shutil
import struct

import numpy as np
import pytest

import encoder_lib
from conftest import in_ci
from encoder_lib.grading import sandbox, wire
from encoder_lib.grading.submissions import NOTEBOOK, ReleasedLesson, as_released, read_submission

# ---------------------------------------------------------------- the wire


def test_plain_values_cross_and_come_back_equal():
    value = {"x": np.arange(6.0).reshape(2, 3).T, "mask": np.array([True, False]), "n": 3, "eps": 1e-12,
             "nan": float("nan"), "none": None, "name": "post", "pair": (np.int64(2), [1.5, "a"]),
             "f32": np.float32(0.5), "call": wire.Call("feed_forward", {"w1": np.eye(2)})}
    back = wire.decode(wire.encode(value))
    assert np.array_equal(back["x"], value["x"]) and back["x"].dtype == np.float64
    assert back["mask"].dtype == bool and back["n"] == 3 and back["eps"] == 1e-12 and np.isnan(back["nan"])
    assert back["pair"][0] == 2 and isinstance(back["pair"], tuple) and back["pair"][1] == [1.5, "a"]
    assert back["f32"].dtype == np.float32 and np.ndim(back["f32"]) == 0
    assert back["call"].name == "feed_forward" and np.array_equal(back["call"].args[0]["w1"], np.eye(2))


@pytest.mark.parametrize("value", [object(), np.array(["text"]), np.array([{}], dtype=object), {1: 2},
                                   (x for x in [])], ids=["object", "strings", "objects", "int keys", "generator"])
def test_what_is_not_plain_does_not_cross_but_a_result_says_what_it_was(value):
    with pytest.raises(wire.WireError):
        wire.encode(value)
    assert isinstance(wire.decode(wire.encode(value, lenient=True)), wire.Unsupported)


def test_an_array_in_several_cases_crosses_once_and_each_case_gets_its_own_copy():
    weights = np.arange(2.0 * 2**20)  # 16 MB, as one of all-MiniLM-L6-v2's blocks in float64
    cases = [{"params": {"w": weights}, "x": np.ones(3)} for _ in range(5)]
    data = wire.encode(cases)
    assert len(data) < weights.nbytes + 2**16  # 5 times as many bytes would be over wire.MAX_BYTES
    back = wire.decode(data)
    assert all(np.array_equal(case["params"]["w"], weights) for case in back)
    back[0]["params"]["w"][0] = -1.0  # an answer that changes its input in place changes only its own case
    assert back[1]["params"]["w"][0] == 0.0
    assert len(wire.encode([weights.copy() for _ in range(2)])) > 2 * weights.nbytes  # equal, not the same: sent twice


def test_a_small_message_that_names_one_array_many_times_cannot_fill_the_grader_s_memory():
    big = np.zeros(2**20)  # 8 MB, sent once
    data = wire.encode([big] * (wire.MAX_DECODED_BYTES // big.nbytes + 1), lenient=True)  # as a learner's result
    assert len(data) < 2 * big.nbytes
    with pytest.raises(wire.WireError, match="decode to more than"):
        wire.decode(data)


def test_a_cycle_is_refused_not_a_crash():
    cycle = []
    cycle.append(cycle)
    with pytest.raises(wire.WireError):
        wire.encode(cycle)


@pytest.mark.parametrize("data", [
    b"", b"\x00" * 7, b"not a message at all",
    struct.pack("<II", 2, 0) + b"{}",  # an empty dict is no value
    struct.pack("<II", 44, 1) + b'{"__array__": 0, "dtype": "O", "shape": [1]}' + struct.pack("<Q", 8) + b"\0" * 8,
    struct.pack("<II", 46, 1) + b'{"__array__": 0, "dtype": "f8", "shape": [99]}' + struct.pack("<Q", 8) + b"\0" * 8,
    b"\x80\x04\x95" + b"\0" * 20,  # the start of a pickle
], ids=["empty", "short", "text", "empty dict", "object dtype", "wrong length", "pickle"])
def test_anything_else_is_refused_when_read(data):
    with pytest.raises(wire.WireError):
        wire.decode(data)


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


# ---------------------------------------------------------------- the sandbox


@pytest.fixture(scope="module")
def box():
    if shutil.which("bwrap") is None:
        if in_ci():
            pytest.fail("CI must test the grader's sandbox: bubblewrap is missing (.ci/run installs it)")
        pytest.skip("bubblewrap (bwrap) is not installed")
    with sandbox.Sandbox() as running:
        yield running


def run(box, source, name="softmax", cases=(((np.array([1.0, 2.0]),), {}),), may_call=(), seconds=5):
    events, ending = box.run(name, source, list(cases), (), may_call, sandbox.Limits(seconds=seconds),
                             lambda message: {"kind": "error", "type": "TypeError", "message": "no calls here"})
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


def test_an_answer_cannot_start_a_process_but_may_start_a_thread(box):
    source = ("import subprocess, threading\ndef softmax(x, axis=-1):\n"
              "    out = []\n"
              "    t = threading.Thread(target=out.append, args=(1,)); t.start(); t.join()\n"
              "    try:\n        subprocess.run(['true'])\n    except OSError as exc:\n        out.append(type(exc).__name__)\n"
              "    return str(out)\n")
    events, _ = run(box, source)
    assert events[0]["value"] == "[1, 'PermissionError']"


def test_an_answer_that_kills_its_sandbox_ends_that_sandbox_only(box):
    with sandbox.Sandbox() as doomed:
        with pytest.raises(sandbox.SandboxDied):
            run(doomed, "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\n")
        assert doomed.process.poll() is not None
    events, ending = run(box, "def softmax(x, axis=-1):\n    return x\n")
    assert ending["status"] == "done" and np.array_equal(events[0]["value"], [1.0, 2.0])
