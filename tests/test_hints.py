"""The hint ladder: three rungs for every exercise and named mistake, of the right length, with links that lead
somewhere and nothing of the solutions, and a count that lives with the notebook. The fourth step, the course's
solution after the third rung, is tests/test_solutions.py's."""

import contextlib
import io
import json
import keyword
import re
from pathlib import Path

import nbformat
import pytest

from encoder_lib.grading import EXERCISES, hint_area, ladder, opening
from encoder_lib.grading.contract import hints as contract_hints
from encoder_lib.grading.self_check import FUNCTIONS, LAST, check as grading_check, defined_now, hint, verdict_for
from mistakes import MISTAKES
from test_exercises import ANSWERS, define

ROOT = Path(__file__).resolve().parent.parent
LOW, HIGH = ladder.WORDS


def heading_id(line):
    """The id JupyterLab gives a markdown heading: its text, spaces turned into hyphens."""
    text = line.lstrip("#").strip()
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text).replace("`", "").replace("**", "")
    return text.replace(" ", "-")


def heading_ids(path):
    return {heading_id(line) for cell in nbformat.read(path, as_version=4).cells if cell.cell_type == "markdown"
            for line in cell.source.splitlines() if line.startswith("#")}


def lesson_path(lesson):
    return ROOT / "notebooks" / lesson / f"{lesson}.ipynb"


def own_rungs():
    """(where, exercise, rung text) for every written rung: the exercises' and the mistakes' own."""
    found = []
    for name, exercise in EXERCISES.items():
        found += [(f"{name}, rung {i + 2}", exercise, text) for i, text in enumerate(exercise.hints)]
        for mistake in exercise.mistakes:
            found += [(f"{mistake.name}, rung {i + 2}", exercise, text) for i, text in enumerate(mistake.hints)]
    return found


RUNGS = own_rungs()
#: The rungs of a broken promise (``contract.hints``), one exercise's as any other's: plain, no link.
CONTRACT_RUNGS = [(f"{key}, rung {i + 2}", text) for key, pair in contract_hints.RUNGS.items()
                  for i, text in enumerate(pair)]


@pytest.mark.parametrize("where, text", CONTRACT_RUNGS, ids=[r[0] for r in CONTRACT_RUNGS])
def test_each_rung_of_a_broken_promise_is_plain_of_the_right_length_and_links_nowhere(where, text):
    assert LOW <= ladder.words(text) <= HIGH, f"{where}: {ladder.words(text)} words"
    assert "](" not in text and "?" not in text


def test_every_kind_of_contract_check_says_how_to_see_it_and_every_promise_has_its_rungs():
    from encoder_lib.grading.contract.said import SAID

    assert set(contract_hints.TRY) == set(SAID)
    keys = {f"contract:{k}" for k in ("again", "kept", "identity", "other-values", "random", "view", "kept-array",
                                      "layout", "read-only", "dtype", "precision", "strings", "names", "positions",
                                      "refusal", "smallest")}
    assert keys == set(contract_hints.RUNGS)


@pytest.mark.parametrize("name", sorted(EXERCISES))
def test_every_exercise_has_a_ladder_of_three(name):
    exercise = EXERCISES[name]
    assert len(exercise.hints) == 2, f"{name} needs its idea (rung 2) and a worked step (rung 3)"
    for mistake in exercise.mistakes:
        assert len(mistake.hints) in (0, 2), f"{mistake.name}: its own rungs are both given, or neither"


@pytest.mark.parametrize("where, exercise, text", RUNGS, ids=[r[0] for r in RUNGS])
def test_each_written_rung_is_plain_and_of_the_right_length(where, exercise, text):
    assert LOW <= ladder.words(text) <= HIGH, f"{where}: {ladder.words(text)} words"
    assert "NotImplementedError" not in text


@pytest.mark.parametrize("where, exercise, text", RUNGS, ids=[r[0] for r in RUNGS])
def test_each_link_of_a_rung_leads_to_a_section_of_the_course(where, exercise, text):
    for target in re.findall(r"\]\(([^)]*)\)", text):
        path, _, anchor = target.partition("#")
        notebook = (lesson_path(exercise.lesson).parent / path).resolve() if path else lesson_path(exercise.lesson)
        assert notebook.is_file(), f"{where}: {target} leads to no notebook"
        if anchor:
            assert anchor in heading_ids(notebook), f"{where}: no heading #{anchor} in {notebook.name}"


def test_the_idea_rung_of_every_exercise_links_to_its_lesson():
    for name, exercise in EXERCISES.items():
        assert re.search(r"\]\([^)]*#", exercise.hints[0]), f"{name}: rung 2 links to no section"


def code_tokens(text):
    """``text`` as a run of tokens with every name one token: two texts that differ only in names and spaces
    give the same run."""
    return ["NAME" if re.match(r"\w", t) and not keyword.iskeyword(t) else t for t in re.findall(r"\w+|[^\w\s]", text)]


def longest_shared_run(a, b):
    best, previous = 0, [0] * (len(b) + 1)
    for i in range(1, len(a) + 1):
        current = [0] * (len(b) + 1)
        for j in range(1, len(b) + 1):
            if a[i - 1] == b[j - 1]:
                current[j] = previous[j - 1] + 1
                best = max(best, current[j])
        previous = current
    return best


@pytest.mark.parametrize("name", sorted(ANSWERS))
def test_no_rung_holds_the_solution_or_a_line_of_it(name):
    """No rung quotes a line of the solution, and none holds a run of as many as half its tokens, names and spaces
    set aside: the worked step gives numbers, not the code."""
    source = ANSWERS[name][1]
    solution = source.split("### BEGIN SOLUTION", 1)[1].split("### END SOLUTION", 1)[0]
    lines = [line.split("#")[0].strip() for line in solution.splitlines() if line.split("#")[0].strip()]
    whole = code_tokens(" ".join(lines))
    for where, _, text in [r for r in RUNGS if r[1].name == name]:
        said = code_tokens(text)
        assert longest_shared_run(said, whole) < len(whole) / 2, f"{where} holds most of the solution"
        for line in lines:
            tokens = code_tokens(line)
            if len(tokens) >= 12:  # a line, not an idiom the lesson teaches (`*lead, seq, d = x.shape`)
                assert longest_shared_run(said, tokens) < len(tokens), f"{where} quotes the solution's {line!r}"


def run_hint(name):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        hint(name)
    return out.getvalue()


@pytest.fixture
def fresh_hints(monkeypatch):
    monkeypatch.delenv(opening.VARIABLE, raising=False)  # self-study: the course's solution after the third rung
    saved = dict(hint_area._opened), dict(LAST), dict(FUNCTIONS)
    hint_area._opened.clear()
    yield
    for live, kept in zip((hint_area._opened, LAST, FUNCTIONS), saved):
        live.clear()
        live.update(kept)


@pytest.mark.parametrize("mistake", MISTAKES, ids=[m.id for m in MISTAKES])
def test_the_ladder_climbs_one_rung_at_a_time_from_the_named_mistake(mistake, fresh_hints):
    passed, report = grading_check(define(mistake.source)[mistake.exercise])
    assert not passed
    first = run_hint(mistake.exercise)
    assert first.startswith("What is wrong, on one check.") and "has the smallest inputs" in said(first)
    assert said(report.splitlines()[-1][:80]) not in said(first), "the first rung repeats the self-check's words"
    assert LOW <= ladder.words(first) <= HIGH, ladder.words(first)
    second = run_hint(mistake.exercise)
    assert "The idea." in second and first.strip() in second
    third = run_hint(mistake.exercise)
    assert "A worked step." in third and "The course's solution" not in third
    fourth = run_hint(mistake.exercise)
    assert fourth.startswith(third.rsplit("\n\nOnce more", 1)[0]) and "The course's solution" in fourth
    assert run_hint(mistake.exercise) == fourth, "three rungs and the solution in all"


def said(text):
    """Words as a terminal shows them, whatever the wrapping."""
    return " ".join(hint_area.terminal(text).split())


def test_outside_a_notebook_a_hint_is_plain_text_wrapped_for_a_terminal(fresh_hints):
    grading_check(define(OVER_EVERY_ENTRY)["softmax"])
    for _ in range(3):
        shown = run_hint("softmax")
    assert not re.search(r"\*\*[A-Z]", shown) and "](#" not in shown and "`" not in shown, shown
    assert max(len(line) for line in shown.splitlines()) <= 88 + 40  # a long code span is not broken
    assert "The lesson's section The softmax shows" in " ".join(shown.split())  # a link, as its text


def test_a_hint_judges_the_function_defined_now(fresh_hints, monkeypatch):
    """Redefined after its self-check, the function the hint speaks of is the one defined now: a right one needs no
    hint, another wrong one starts its own ladder at rung 1 (issue 49, item 3)."""
    import __main__

    grading_check(define(OVER_EVERY_ENTRY)["softmax"])
    for _ in range(3):
        climbed = run_hint("softmax")
    assert "A worked step." in climbed
    monkeypatch.setattr(__main__, "softmax", define(ANSWERS["softmax"][1])["softmax"], raising=False)
    assert "passes its self-check: no hint needed" in run_hint("softmax")
    monkeypatch.setattr(__main__, "softmax", define(WITHOUT_MAX)["softmax"])
    fresh = run_hint("softmax")
    assert fresh.startswith("What is wrong, on one check.") and "The idea." not in fresh, fresh
    assert LAST["softmax"].answer == verdict_for(define(WITHOUT_MAX)["softmax"]).answer


def test_in_a_notebook_the_function_defined_now_is_the_kernel_s(fresh_hints, monkeypatch):
    """In a kernel the hint button's press finds the function in the notebook's namespace, which a cell run after
    the self-check has changed (the button's callback runs between cells)."""
    class Shell:
        user_ns = {"softmax": define(WITHOUT_MAX)["softmax"]}

    grading_check(define(OVER_EVERY_ENTRY)["softmax"])
    monkeypatch.setattr(hint_area, "shell", lambda: Shell())
    assert defined_now("softmax") is Shell.user_ns["softmax"]
    run_hint("softmax")
    assert FUNCTIONS["softmax"] is Shell.user_ns["softmax"]


def test_a_hint_waits_for_a_self_check_and_a_right_answer_needs_none(fresh_hints):
    LAST.pop("gelu", None)
    assert "Run the self-check of `gelu` first" in run_hint("gelu")
    grading_check(define(ANSWERS["gelu"][1])["gelu"])
    assert "no hint needed" in run_hint("gelu")
    with pytest.raises(ValueError, match="one of"):
        hint("not_an_exercise")


def test_a_measured_answer_s_first_rung_says_what_was_measured_and_guesses_nothing(fresh_hints):
    wrong = '''
def softmax(x, axis=-1):
    z = x - x.max(axis=axis, keepdims=True)
    return np.exp(z) / np.exp(z).sum(axis=axis, keepdims=True) + 1e-3
'''
    grading_check(define(wrong)["softmax"])
    first = run_hint("softmax")
    assert re.search(r"Its inputs are x = \[.*\]\. The right result is \[.*\]; yours is \[", said(first)), first
    assert "?" not in first and LOW <= ladder.words(first) <= HIGH, first


OVER_EVERY_ENTRY = '''
def softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum()
'''
WITHOUT_MAX = '''
def softmax(x, axis=-1):
    e = np.exp(x)
    return e / e.sum(axis=axis, keepdims=True)
'''


def test_the_rungs_opened_belong_to_one_failure_and_a_new_one_starts_at_rung_one(fresh_hints):
    grading_check(define(OVER_EVERY_ENTRY)["softmax"])
    for _ in range(3):
        climbed = run_hint("softmax")
    assert "A worked step." in climbed
    grading_check(define(WITHOUT_MAX)["softmax"])
    fresh = run_hint("softmax")
    assert fresh.startswith("What is wrong, on one check.") and "The idea." not in fresh, fresh
    grading_check(define(OVER_EVERY_ENTRY)["softmax"])  # back to the first failure: its count is kept
    assert "A worked step." in run_hint("softmax")


OVER_EVERY_ENTRY_AGAIN = '''
def softmax(x, axis=-1):
    top = np.max(x, axis=axis, keepdims=True)
    e = np.exp(x - top)
    return e / np.sum(e)
'''


def test_a_changed_answer_starts_the_ladder_again_even_where_its_checks_fail_with_the_same_words(fresh_hints):
    """Two answers with the same bug written two ways fail the same checks with the same words: the second is
    another attempt, and its ladder starts at rung one; running the same cell again keeps the count."""
    first, second = define(OVER_EVERY_ENTRY)["softmax"], define(OVER_EVERY_ENTRY_AGAIN)["softmax"]
    assert verdict_for(first).explanation() == verdict_for(second).explanation()
    grading_check(first)
    for _ in range(3):
        climbed = run_hint("softmax")
    assert "A worked step." in climbed
    grading_check(define(OVER_EVERY_ENTRY)["softmax"])  # the same cell run again: the same answer
    assert "A worked step." in run_hint("softmax")
    grading_check(second)
    fresh = run_hint("softmax")
    assert fresh.startswith("What is wrong, on one check.") and "The idea." not in fresh, fresh


def notebook_with_hints(tmp_path, counts):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("grading.self_check(softmax)", outputs=[
        nbformat.v4.new_output("display_data", data={"text/markdown": "rung"},
                               metadata={"encoder_course": {"hints": {"exercise": name, "opened": n}}})])
        for name, n in counts.items()]
    path = tmp_path / "lesson.ipynb"
    nbformat.write(nb, path)
    return path


def test_the_count_is_read_back_from_the_saved_notebook(tmp_path):
    path = notebook_with_hints(tmp_path, {"softmax": 2, "gelu": 3})
    assert hint_area.saved_count("softmax", path=str(path)) == 2
    assert hint_area.saved_count("gelu", path=str(path)) == 3
    assert hint_area.saved_count("layer_norm", path=str(path)) == 0


@pytest.mark.parametrize("content", ["not json", json.dumps({"cells": "no"}), json.dumps([1, 2]),
                                     "[" * 100_000, json.dumps({"cells": [{"outputs": [{"metadata": {
                                         "encoder_course": {"hints": {"exercise": "softmax", "opened": 99}}}}]}]})])
def test_a_broken_or_odd_notebook_gives_a_count_of_at_most_four_and_no_error(tmp_path, content):
    path = tmp_path / "odd.ipynb"
    path.write_text(content)
    assert 0 <= hint_area.saved_count("softmax", path=str(path)) <= ladder.STEPS


def test_the_grader_reads_no_hint_count_and_a_submission_with_hints_is_not_tampered(tmp_path):
    from course_grader.submissions import ReleasedLesson, read_submission

    lesson = "01_attention"
    released = nbformat.read(lesson_path(lesson), as_version=4)
    text = nbformat.writes(released)
    with_hints = nbformat.reads(text, as_version=4)
    for cell in with_hints.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") == "softmax_self_check":
            cell.outputs = [nbformat.v4.new_output("display_data", data={"text/markdown": "rung"}, metadata={
                "encoder_course": {"hints": {"exercise": "softmax", "opened": 3}}})]
    names = [n for n, e in EXERCISES.items() if e.lesson == lesson]
    plain = read_submission(text, ReleasedLesson.from_text(text), names)
    hinted = read_submission(nbformat.writes(with_hints), ReleasedLesson.from_text(text), names)
    assert hinted.answers == plain.answers and hinted.tampering == plain.tampering
