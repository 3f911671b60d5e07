"""Lesson 08's report on the learner's own block run as all-MiniLM-L6-v2: where it leaves the library, and by how much."""

import numpy as np
import pytest

import encoder_lib as el
from encoder_lib.experiments.your_block import BlockComparison, compare_your_block
from mistakes import BERT_BLOCK, MISTAKES
from test_exercises import define

TEXTS = ["The cat sat on the mat.", "A man is playing a guitar in the park."]


def learner(source=BERT_BLOCK):
    return define(source)["bert_block"]


def mistake(mistake_id):
    return learner(next(m.source for m in MISTAKES if m.id == mistake_id))


def test_a_right_block_gives_the_library_s_sentence_vectors():
    report = compare_your_block(learner(), TEXTS)
    assert report.share == 1.0 and report.n_values == 2 * 384 and report.largest < 1e-12
    assert "largest difference below 1e-12" in str(report)
    assert report.block is None and "every block agrees" in str(report)
    assert "768 of 768 values (100.0%) within 1e-05" in str(report)


@pytest.mark.parametrize("mistake_id, sub_layer, step", [
    ("bert_block_tanh_gelu", "the FFN", "its hidden layer"),
    ("bert_block_eps_1e-5", "Add & Norm 1", "the layer norm of that sum"),
    ("bert_block_without_the_mask", "attention", "its output"),
    ("bert_block_pre_norm", "attention", "its output"),  # it attends to LN(x), not x
])
def test_a_mistake_is_found_in_block_1_at_its_sub_layer(mistake_id, sub_layer, step):
    report = compare_your_block(mistake(mistake_id), TEXTS)
    assert report.block == 1 and report.sub_layer == sub_layer and report.step.startswith(step), str(report)
    assert report.close == (mistake_id != "bert_block_pre_norm"), str(report)
    assert report.difference > 1e-9
    assert f"in block 1, at {sub_layer}" in str(report) or not report.close


def test_what_matched_before_the_first_difference_is_said():
    report = compare_your_block(mistake("bert_block_tanh_gelu"), TEXTS)
    assert "before it, these match: attention's output; Add & Norm 1, the residual sum" in str(report)


def test_a_difference_that_starts_in_a_later_block_is_found_there():
    def block(x, params, n_heads, padding_mask=None):  # right, except in the last block (its norm2's beta is -0.0...)
        out = el.encoder_block(x, params, n_heads, norm="post", padding_mask=padding_mask, activation="gelu", eps=1e-12)
        return out + 1e-3 if params["norm2"]["beta"][0] == last_beta else out

    from encoder_lib.pretrained import load_minilm

    last_beta = np.float64(load_minilm().layers[-1]["norm2"]["beta"][0])
    report = compare_your_block(block, TEXTS)  # the block's parts are the library's: nothing of them to compare
    assert report.block == 6 and not report.close, str(report)
    assert "in block 6; the first of its steps that nothing in your code comes close to is attention" in str(report)


def test_an_error_or_a_wrong_shape_is_reported_not_raised():
    def raises(x, params, n_heads, padding_mask=None):
        raise ValueError("shapes do not line up")

    def shrinks(x, params, n_heads, padding_mask=None):
        return x[..., :10]

    assert "raised ValueError in block 1: shapes do not line up" in str(compare_your_block(raises, TEXTS))
    assert "of shape (2, 12, 10) in block 1; it must keep x's shape (2, 12, 384)" in str(compare_your_block(shrinks, TEXTS))


def test_an_unwritten_block_stops_with_not_implemented_and_a_non_function_is_refused():
    def stub(x, params, n_heads, padding_mask=None):
        raise NotImplementedError()

    with pytest.raises(NotImplementedError):
        compare_your_block(stub, TEXTS)
    with pytest.raises(TypeError, match="bert_block must be your block function"):
        compare_your_block("bert_block", TEXTS)


def test_the_report_prints_itself_in_a_notebook():
    report = BlockComparison(4, 3, 0.5, block=2, sub_layer="the FFN", step="its output", difference=0.25)
    assert str(report).splitlines() == [
        "sentence vectors: 3 of 4 values (75.0%) within 1e-05 of the library's; largest difference 5.0e-01",
        "your numbers first leave the library's in block 2, at the FFN: its output, by up to 2.5e-01"]


def test_a_block_that_makes_nan_is_told_the_first_step_that_is_not_finite():
    """NaN is where the report is needed most: it names the first step whose output is not finite, where the
    library's mean pooling would have refused it with a bare error."""
    making_nan = BERT_BLOCK.replace('return gelu(x @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"]',
                                    'return (gelu(x @ p["w1"] + p["b1"]) * np.log(x @ p["w1"])) @ p["w2"] + p["b2"]')
    assert making_nan != BERT_BLOCK
    report = compare_your_block(learner(making_nan), TEXTS)
    assert report.not_finite and report.block == 1 and report.sub_layer == "the FFN", str(report)
    assert "first become NaN or infinity in block 1, at the FFN" in str(report)
    assert "Add & Norm 1, the layer norm of that sum, h" in report.before


def test_a_block_computed_in_float32_fails_its_self_check_as_the_comparison_finds_it():
    """The self-check and lesson 08's comparison agree: a cast to float32 loses the digits both measure."""
    from encoder_lib.grading.self_check import verdict_for

    cast = BERT_BLOCK.replace("def bert_block(x, params, n_heads, padding_mask=None):\n",
                              "def bert_block(x, params, n_heads, padding_mask=None):\n    x = x.astype(np.float32)\n",
                              1)
    assert cast != BERT_BLOCK
    block = learner(cast)
    verdict = verdict_for(block)
    report = verdict.report()
    assert not verdict.passed and verdict.causes == []
    assert "float32" in report or "significant digits only" in report, report  # its dtype, or the digits it keeps
    report = compare_your_block(block, TEXTS)
    assert report.block is not None and report.largest > 1e-9, str(report)
