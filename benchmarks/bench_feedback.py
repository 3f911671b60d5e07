"""How well the feedback names wrong answers nobody listed: mutants of every exercise's solution.

    .venv/bin/python -m benchmarks.bench_feedback [--exercise softmax] [--show 3]

Every exercise's solution cell (the teachers' notebooks) is mutated one
small change at a time (``benchmarks.mutants``: operators, constants, axes,
keepdims, transposes, dropped terms, off-by-one). Mutants that compute what
the solution computes on every visible and hidden case are dropped
(equivalent). Each remaining mutant runs through the self-check's
judgement, and the table counts, per exercise: the mutants, how many fail
the self-check (goal: all), and how many get specific feedback: a catalogued
mistake named (fully or for some checks), or a diagnosis that says what was
measured, as against only "the values differ" (goal: at least 90% over the
course). ``diagnosed`` counts a property or probe; ``pattern`` a mutant whose
only finding is the pattern across checks (right on these, wrong on those).
"""

import argparse
import time
from collections import Counter

import nbformat

from encoder_lib.grading.exercises import EXERCISES
from tools.course import lesson_notebooks

from . import mutants as m
from ._report import table

GOAL = 0.90


def solutions():
    """{exercise: source of its solution cell} from the teachers' notebooks."""
    found = {}
    for path in lesson_notebooks():
        for cell in nbformat.read(path, as_version=4).cells:
            grade_id = cell.metadata.get("nbgrader", {}).get("grade_id", "")
            if grade_id.endswith("_answer"):
                found[grade_id.removesuffix("_answer")] = cell.source
    return found


def judge_exercise(name, source):
    """``[Judged]`` for every mutant of one exercise's solution that defines its function."""
    judged = []
    for mutant in m.mutants(source, name):
        result = m.judge_mutant(name, mutant)
        if result is not None:
            judged.append(result)
    return judged


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--exercise", action="append", help="only this exercise (may repeat)")
    parser.add_argument("--show", type=int, default=0, help="print this many unspecific mutants per exercise")
    args = parser.parse_args(argv)
    sources = solutions()
    names = args.exercise or list(EXERCISES)
    rows, totals, unspecific, slipped = [], Counter(), [], []
    started = time.perf_counter()
    for name in names:
        judged = [j for j in judge_exercise(name, sources[name]) if not j.equivalent]
        count = Counter(failed=sum(j.failed for j in judged), named=sum(j.named for j in judged),
                        diagnosed=sum(j.diagnosed and not j.named for j in judged),
                        pattern=sum(j.pattern_only and not j.named for j in judged),
                        specific=sum(j.specific for j in judged if j.failed), mutants=len(judged))
        totals.update(count)
        share = count["specific"] / count["failed"] if count["failed"] else 1.0
        rows.append((name, count["mutants"], count["failed"], count["named"], count["diagnosed"], count["pattern"],
                     count["specific"], f"{share:.0%}"))
        unspecific += [(name, j) for j in judged if j.failed and not j.specific][:args.show]
        slipped += [(name, j) for j in judged if not j.failed]
    share = totals["specific"] / totals["failed"] if totals["failed"] else 1.0
    rows.append(("all", totals["mutants"], totals["failed"], totals["named"], totals["diagnosed"], totals["pattern"],
                 totals["specific"], f"{share:.0%}"))
    print(f"Mutants of every exercise's solution through the self-check ({time.perf_counter() - started:.0f} s); "
          f"specific = named or diagnosed; goal {GOAL:.0%} of the failed.\n")
    table(rows, ("exercise", "mutants", "failed", "named", "diagnosed", "pattern only", "specific", "share"))
    missed = totals["mutants"] - totals["failed"]
    print(f"{missed} mutant{'s' * (missed != 1)} passed the self-check (goal: none); "
          f"specific feedback on {share:.1%} of the failed (goal: {GOAL:.0%}).")
    for name, judged in slipped:
        print(f"passed the self-check, failed a hidden case: {name}: {judged.mutant.kind}: {judged.mutant.description}")
    for name, judged in unspecific:
        print(f"\n{name}: {judged.mutant.kind}: {judged.mutant.description}\n  {judged.explanation or '(nothing)'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
