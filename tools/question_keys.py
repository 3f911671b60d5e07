"""The lessons' questions with the keys their widgets compute, against the keys the lessons' texts were checked on.

    .venv/bin/python -m tools.question_keys           # a table of every question, its key and why; exit 1 on a change
    .venv/bin/python -m tools.question_keys --write   # after reading the lessons again: keep today's keys

``tests/data/question_keys.json`` holds the keys as last written (never typed: this tool writes them).
A change of a model, an experiment or a widget that changes a key fails ``tests/test_questions.py`` until
someone has read the question and its lesson again and written the keys anew.
"""

import argparse
import json
import sys

from .course import ROOT

KEYS = ROOT / "tests" / "data" / "question_keys.json"
#: The texts lesson 08's widgets are built on, as its notebook builds them.
SENTENCES = ["The cat sat on the mat because the cat was tired.", "Tokenisation splits unfamiliar words."]
PAIRS = ["A man is playing a guitar.", "Someone is playing an instrument.", "The stock market fell sharply today.",
         "Share prices dropped this afternoon.", "The cat is sleeping on the sofa.", "A kitten naps on the couch."]


def lesson_explorers():
    """``{widget class name: explorer}``, each built as its lesson's notebook builds it."""
    from encoder_lib.pretrained import encode
    from encoder_lib.widgets import add_norm, attention, block, feed_forward, gradients, heads, modern, pretrained, stack

    made = [attention.AttentionExplorer(d_k=64, scale=True), heads.HeadsExplorer(n_heads=2, head=0),
            feed_forward.FeedForwardExplorer(), add_norm.AddNormExplorer(), block.BlockStepExplorer(),
            block.PaddingExplorer(), block.PermutationExplorer(), stack.StackScaleExplorer(),
            gradients.GradientFlowExplorer(gradients.gradient_table()),
            pretrained.AttentionHeadExplorer(encode(SENTENCES), index=0, query=9),
            pretrained.SimilarityExplorer(PAIRS), *(explorer() for explorer in modern.EXPLORERS)]
    return {type(explorer).__name__: explorer for explorer in made}


def computed(explorers=None):
    """``{question id: (Question, Answer)}`` for every question, from ``explorers`` (``lesson_explorers()``)."""
    from encoder_lib.questions import QUESTIONS

    explorers = lesson_explorers() if explorers is None else explorers
    return {q.id: (q, q.answer(explorers[q.widget])) for q in QUESTIONS}


def _differ(key, kept):
    """Whether two keys differ: numbers by more than 1 % (their last rounded digit may move with the machine)."""
    numbers = all(isinstance(k, (int, float)) and not isinstance(k, bool) for k in (key, kept))
    return abs(key - kept) > 0.01 * max(abs(kept), 1e-3) if numbers else key != kept


def changes(found, kept):
    """Lines naming each question whose key differs from ``kept`` (``{id: key}``), or is new or gone."""
    keys = {qid: answer.key for qid, (_, answer) in found.items()}
    lines = [f"{qid}: the widget now computes {keys[qid]!r}, the lessons were checked on {kept[qid]!r}"
             for qid in keys if qid in kept and _differ(keys[qid], kept[qid])]
    lines += [f"{qid}: new, no key kept" for qid in keys if qid not in kept]
    lines += [f"{qid}: kept, but no such question now" for qid in kept if qid not in keys]
    return lines


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="keep today's keys in tests/data/question_keys.json")
    args = parser.parse_args(argv)
    from encoder_lib.questions.panel import key_words

    found = computed()
    for qid, (question, answer) in found.items():
        print(f"| {qid} | {question.prompt} | {key_words(answer)} | {answer.why} |")
    if args.write:
        KEYS.write_text(json.dumps({qid: a.key for qid, (_, a) in found.items()}, indent=1) + "\n")
        print(f"kept {len(found)} keys in {KEYS.relative_to(ROOT)}")
        return 0
    lines = changes(found, json.loads(KEYS.read_text()) if KEYS.is_file() else {})
    print("\n".join(lines) or f"all {len(found)} keys as kept")
    return 1 if lines else 0


if __name__ == "__main__":
    sys.exit(main())
