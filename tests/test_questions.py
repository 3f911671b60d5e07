"""Predict, then look: every question's key is what its widget computes, a planted change to an experiment is
caught, answers are judged and kept, and the review brings questions back when FSRS schedules them."""

import html
import json
import time
import re

import numpy as np
import pytest

import encoder_lib
import encoder_lib.experiments.add_norm  # noqa: F401  the plants below read these modules' attributes, in
import encoder_lib.experiments.pretrained  # noqa: F401  whatever order the test runner imported them
import encoder_lib.fixtures  # noqa: F401
from encoder_lib import questions
from encoder_lib.questions import bank, panel, record
from tools import question_keys

DAY = record.DAY
LESSONS = ["01_attention", "02_multi_head_attention", "03_feed_forward", "04_add_and_norm", "05_encoder_block",
           "06_stacking_blocks", "07_gradients_and_training", "08_inside_a_real_encoder"]
KEPT = json.loads(question_keys.KEYS.read_text())


@pytest.fixture(scope="module")
def explorers():
    return question_keys.lesson_explorers()


@pytest.fixture(scope="module")
def found(explorers):
    return question_keys.computed(explorers)


@pytest.fixture
def answers_file(tmp_path, monkeypatch):
    path = tmp_path / "answers.json"
    monkeypatch.setenv(record.ENV, str(path))
    return path


def test_every_lesson_asks_at_least_three_questions():
    for lesson in LESSONS:
        assert sum(q.lesson == lesson for q in questions.QUESTIONS) >= 3, lesson
    assert len(questions.BY_ID) == len(questions.QUESTIONS)


@pytest.mark.parametrize("qid", [q.id for q in questions.QUESTIONS])
def test_each_key_is_what_the_widget_computes_and_what_the_lessons_were_checked_on(found, qid):
    question, answer = found[qid]
    assert question_keys.changes({qid: (question, answer)}, {qid: KEPT.get(qid)}) == []
    assert answer.why.endswith(".") and re.search(r"\d", answer.why), answer.why  # the numbers the widget shows
    if answer.choices:
        assert answer.key in answer.choices
    assert question.judge(answer.key, answer.key)


PLANTS = {
    # lesson: (a planted change to its experiment, the widget built after it, a question whose key it changes)
    "01": (lambda m: m.setattr("encoder_lib.widgets.attention.score_std", lambda q, k, scale=True, temperature=1.0: 1.0),
           lambda: __import__("encoder_lib.widgets.attention", fromlist=["x"]).AttentionExplorer(d_k=64),
           "01_attention/spread-ratio"),
    "02": (lambda m: m.setattr("encoder_lib.fixtures.lesson_input",
                               (lambda f: lambda: np.roll(f(), 1, axis=-2))(encoder_lib.fixtures.lesson_input)),
           lambda: __import__("encoder_lib.widgets.heads", fromlist=["x"]).HeadsExplorer(),
           "02_multi_head_attention/head-1-reads"),
    "03": (lambda m: m.setattr(encoder_lib, "relu", encoder_lib.gelu),
           lambda: __import__("encoder_lib.widgets.feed_forward", fromlist=["x"]).FeedForwardExplorer(),
           "03_feed_forward/relu-zeros"),
    "04": (lambda m: m.setattr("encoder_lib.widgets.add_norm.block_outputs",
                               (lambda f: lambda: {(("pre" if n == "post" else "post"), r): v
                                                   for (n, r), v in f().items()})(
                                   encoder_lib.experiments.add_norm.block_outputs)),
           lambda: __import__("encoder_lib.widgets.add_norm", fromlist=["x"]).AddNormExplorer(),
           "04_add_and_norm/unit-rows"),
    "05": (lambda m: m.setattr(encoder_lib, "positional_encoding",
                               lambda seq, d, dtype=np.float32: np.zeros((seq, d), dtype)),
           lambda: __import__("encoder_lib.widgets.block", fromlist=["x"]).PermutationExplorer(),
           "05_encoder_block/with-positions"),
    "06": (lambda m: m.setattr("encoder_lib.widgets.stack.residual_scale",
                               lambda x, layers, n_heads, norm: np.ones(len(layers) + 1)),
           lambda: __import__("encoder_lib.widgets.stack", fromlist=["x"]).StackScaleExplorer(),
           "06_stacking_blocks/pre-norm-scale"),
    "07": (lambda m: None,
           lambda: _swapped_gradients(), "07_gradients_and_training/post-norm-depth"),
    "08": (lambda m: m.setattr("encoder_lib.widgets.pretrained.similarities",
                               (lambda f: lambda texts: {(("cls" if p == "mean" else "mean"), k): v
                                                         for (p, k), v in f(texts).items()})(
                                   encoder_lib.experiments.pretrained.similarities)),
           lambda: __import__("encoder_lib.widgets.pretrained", fromlist=["x"]).SimilarityExplorer(
               question_keys.PAIRS), "08_inside_a_real_encoder/best-sentence-vector"),
}


def _swapped_gradients():
    from encoder_lib.widgets.gradients import GradientFlowExplorer, gradient_table

    table = gradient_table()
    return GradientFlowExplorer({(norm, residual): table["pre" if norm == "post" else "post", residual]
                                 for norm, residual in table})


@pytest.mark.parametrize("lesson", PLANTS)
def test_a_planted_change_to_a_lessons_experiment_changes_a_key_and_is_caught(monkeypatch, lesson):
    plant, build, qid = PLANTS[lesson]
    plant(monkeypatch)
    explorer = build()
    question = questions.BY_ID[qid]
    try:
        planted = {qid: (question, question.answer(explorer))}
    except questions.QuestionError:
        return  # the planted experiment no longer settles the question: caught as well
    lines = question_keys.changes(planted, {qid: KEPT[qid]})
    assert lines and lines[0].startswith(qid), lines


def test_the_check_names_new_and_gone_questions_and_keeps_numbers_within_rounding(found):
    qid = "01_attention/spread-ratio"
    one = {qid: found[qid]}
    assert question_keys.changes(one, {}) == [f"{qid}: new, no key kept"]
    assert question_keys.changes({}, {qid: 8.0}) == [f"{qid}: kept, but no such question now"]
    assert question_keys.changes(one, {qid: found[qid][1].key * 1.001}) == []
    assert question_keys.changes(one, {qid: found[qid][1].key * 1.2}) != []


def test_answering_leaves_the_widget_as_it_was_and_refuses_another_widget(explorers):
    explorer = explorers["AttentionExplorer"]
    before, state = explorer.values(), dict(explorer.state)
    questions.BY_ID["01_attention/unscaled-largest-weight"].answer(explorer)
    assert explorer.values() == before and explorer.state == state
    with pytest.raises(TypeError, match="explorer must be a AttentionExplorer"):
        questions.BY_ID["01_attention/temperature"].answer(explorers["HeadsExplorer"])


@pytest.mark.parametrize("call, match", [
    (lambda: bank.trend(1.0, 1.1), "too close to call"),
    (lambda: bank.ratio_trend(1.4), "too close to call"),
    (lambda: bank.clear_best({"a": 0.5, "b": 0.48}, 0.05), "too close to call"),
    (lambda: bank.yes_no(0.01, 1e-3, 0.05), "too close to call"),
])
def test_an_experiment_that_does_not_settle_a_question_gives_no_key(call, match):
    with pytest.raises(questions.QuestionError, match=match):
        call()


def test_trends_ratios_and_yes_no_that_are_clear():
    assert (bank.trend(1.0, 1.01), bank.trend(1.0, 3.0), bank.trend(1.0, 0.5)) == ("stays", "rises", "falls")
    assert (bank.ratio_trend(1.04), bank.ratio_trend(3.6), bank.ratio_trend(0.08)) == ("same", "larger", "smaller")
    assert bank.clear_best({"a": 0.7, "b": 0.35}, 0.05) == "a"
    assert (bank.yes_no(1e-5, 1e-3, 0.05), bank.yes_no(0.8, 1e-3, 0.05)) == ("yes", "no")


def test_a_number_is_right_within_its_tolerance_and_nothing_else_is():
    ratio = questions.BY_ID["01_attention/spread-ratio"]  # 15 % of the key
    assert ratio.judge(8.0, 8.0) and ratio.judge(9.1, 8.0) and not ratio.judge(9.3, 8.0)
    for wrong in (float("nan"), float("inf"), True, "8", None):
        assert not ratio.judge(wrong, 8.0)
    head = questions.BY_ID["08_inside_a_real_encoder/previous-token-head"]  # exact
    assert head.judge(2, 2) and head.judge(2.0, 2) and not head.judge(3, 2)
    assert [panel.parse_number(t) for t in ("8", " 0,5 ", "1/2", "50%", "x", "1/0", "nan", "")] == \
        [8.0, 0.5, 0.5, 0.5, None, None, None, None]


def _card(explorers, qid, answers_file):
    question = questions.BY_ID[qid]
    explorer = explorers[question.widget]
    made = panel.Questions(explorer, [question], record_path=answers_file)
    return made.cards[0], made.answers[0], explorer


def test_a_wrong_prediction_is_told_the_widgets_answer_and_why_and_the_widget_shows_it(explorers, answers_file):
    card, answer, explorer = _card(explorers, "01_attention/unscaled-largest-weight", answers_file)
    start = explorer.values()
    card.check()
    assert "Choose one answer first" in card.verdict.value and not answers_file.exists()
    card.input.value = "falls"
    card.check()
    assert "✗ Not this time" in card.verdict.value and answer.choices["rises"] in card.verdict.value
    assert answer.why in html.unescape(card.verdict.value) and card.button.disabled
    assert explorer.values() == answer.show and explorer.state["d_k"] == 256 and not explorer.state["scale"]
    assert record.read(answers_file)["01_attention/unscaled-largest-weight"]["answers"][0][1] is False
    explorer.settle(list(start.items()))
    explorer.update()


def test_a_right_number_is_told_so_and_kept(explorers, answers_file):
    card, answer, explorer = _card(explorers, "01_attention/spread-ratio", answers_file)
    start = explorer.values()
    card.input.value = "abc"
    card.check()
    assert "Type a number first" in card.verdict.value
    card.input.value = "8"
    card.check()
    assert "✓ Right" in card.verdict.value and record.read(answers_file)["01_attention/spread-ratio"]["key"] == answer.key
    explorer.settle(list(start.items()))
    explorer.update()


def _entry(*answers):
    return {"lesson": "01_attention", "key": "rises", "why": "w.", "choices": [], "answers": [list(a) for a in answers]}


def test_fsrs_brings_a_missed_question_back_a_day_later_and_a_right_one_after_longer_and_longer_waits():
    assert record.due_at([]) is None
    assert record.due_at([[0, False]]) == 1 * DAY
    assert record.due_at([[0, True]]) == 2 * DAY  # FSRS-6's first stability for Good, 2.31 days, rounded
    assert record.waits([True] * 6) == [2, 11, 46, 163, 365, 365]  # a year at most (record.MAXIMUM_DAYS)
    assert record.waits([False, True, True]) == [1, 2, 6]
    assert record.waits([True, True, False, True]) == [2, 11, 2, 5]  # a miss shortens the wait, and FSRS remembers
    # the same day again: FSRS's short-term stability, not a day's
    assert record.due_at([[0, True], [3600, True]]) == 3600 + 2 * DAY
    found = {"a": _entry((0, True)), "b": _entry((0, False)), "c": _entry((10 * DAY, False))}
    assert record.due(found, now=0.5 * DAY) == []
    assert record.due(found, now=3.5 * DAY) == ["b", "a"]  # the missed one first
    assert record.next_due(found) == DAY


def test_a_record_s_answer_with_a_time_that_is_no_time_is_left_out(tmp_path):
    path = tmp_path / record.FILE_NAME
    bad = [[float("nan"), True]], [[-1, True]], [[1e300, True]], [[True, True]], [["0", True]]
    path.write_text(json.dumps({"version": 1, "questions": {
        **{f"bad{k}": _entry() | {"answers": answers} for k, answers in enumerate(bad)}, "good": _entry((5, True))}}))
    assert list(record.read(path)) == ["good"]


def test_the_record_is_kept_in_the_course_folder_and_an_unreadable_one_is_kept_aside(tmp_path, monkeypatch):
    monkeypatch.delenv(record.ENV, raising=False)
    lesson = tmp_path / "01_attention"
    lesson.mkdir()
    monkeypatch.chdir(lesson)
    assert record.record_path() == tmp_path / record.FILE_NAME
    broken = tmp_path / record.FILE_NAME
    broken.write_text("{not json")
    with pytest.warns(UserWarning, match="could not be read"):
        assert record.read(broken) == {}
    kept = [p for p in tmp_path.iterdir() if ".unreadable-" in p.name]
    assert len(kept) == 1 and kept[0].read_text() == "{not json"
    broken.write_text(json.dumps({"version": 1, "questions": {"x": {"lesson": 3}, "y": _entry((0, True))}}))
    assert list(record.read(broken)) == ["y"]  # an entry of the wrong shape is left out
    with pytest.raises(TypeError, match="right must be True or False"):
        record.add(questions.QUESTIONS[0], None, "yes", path=broken)


def test_the_review_asks_what_is_due_and_says_when_nothing_is(answers_file, monkeypatch):
    shown = []
    monkeypatch.setattr("IPython.display.display", lambda obj: shown.append(obj))
    questions.review(now=0)
    assert "Nothing to review yet" in shown[-1].data
    question = questions.BY_ID["04_add_and_norm/unit-rows"]
    answer = bank.Answer("post", {}, "Post-norm ends in a layer norm.", {"post": "post-norm", "pre": "pre-norm"})
    record.add(question, answer, False, at=0)
    questions.review(now=0.5 * DAY)
    assert "Nothing to review today" in shown[-1].data
    questions.review(now=1.5 * DAY)
    card = shown[-1].cards[0]
    assert card.question is question and card.explorer is None
    card.input.value = "post"
    card.check()
    assert "✓ Right" in card.verdict.value and "Lesson 04_add_and_norm has the widget" in card.verdict.value
    assert record.due_at(record.read(answers_file)[question.id]["answers"]) > time.time() + DAY  # kept as of now
    assert card.button.description == "Check"  # no widget to show: the lesson's has it
    questions.review(now=2 * DAY)
    assert "the next question comes back on" in shown[-1].data
    with pytest.raises(ValueError, match="limit must be a positive number"):
        questions.review(limit=0)


def test_ask_refuses_a_widget_without_questions():
    from encoder_lib.widgets.gradients import TrainingMonitor

    with pytest.raises(ValueError, match="explorer must be one of the lessons' widgets"):
        questions.ask(TrainingMonitor(steps=10))


@pytest.mark.parametrize("lesson", LESSONS)
def test_each_lesson_asks_its_questions_above_the_widgets_that_answer_them(lesson):
    import nbformat

    from tools.course import ROOT

    notebook = nbformat.read(ROOT / "notebooks" / lesson / f"{lesson}.ipynb", as_version=4)
    asking = [c for c in notebook.cells if c.cell_type == "code" and "questions.ask(" in c.source]
    widgets = {q.widget for q in questions.QUESTIONS if q.lesson == lesson}
    assert len(asking) == len(widgets), f"{lesson}: {len(asking)} cells ask, for {len(widgets)} widgets"
    for cell in asking:
        assert "nbval-ignore-output" in cell.metadata.get("tags", []), cell.source
        assert any(name in cell.source for name in widgets), cell.source
