"""Is the feedback ever wrong about the cause? Mutants whose cause is known, natural wrong answers, and the time.

    .venv/bin/python -m benchmarks.bench_feedback [--exercise softmax] [--doubles 30] [--show 3]

Every exercise's model (its right answer written plainly, each line carrying
the idea of its step) is mutated one small change at a time
(``benchmarks.mutants``: operators, constants, axes, keepdims, transposes,
dropped terms and arguments, off-by-one), and two changes at a time on two
different lines; each mutant is labelled with the ideas of the lines it
touches. Mutants that compute what the right answer computes on every
visible and hidden case are dropped (equivalent). Each remaining one is
judged as the self-check judges an answer, and counted as:

- ``failed``: it fails the self-check (goal: all); ``passed``: it passes every
  visible, probe and hidden case (goal: none);
- ``accurate``: the cause the feedback names is the mutant's: it names the
  idea of the line the mutant changed, or its cause computes what the mutant
  computes on the hidden cases of three more seeds too (the same slip, said
  another way). Goal: 90% of single mutants, 60% of double ones;
- ``one of two``: a double mutant whose feedback names one of its two slips
  (each cause it names is one of them, by the same test), the other not yet
  seen: what the learner fixes first, then checks again;
- ``honest``: no cause, only what was measured;
- ``misleading``: a cause that is not the mutant's (goal: at most 1%).

Then the contract mutants of every solution (``mutants.CONTRACT``, issue 49: a cache, random numbers, a dtype
change, a contiguity assumption, a dropped refusal, precision lost at large offsets, the smallest input mishandled),
each right in its values on one call of the lesson's inputs: how many fail the self-check, the grader and the
hand-in service (the sandbox), and how many are told the promise they break, only what was measured, or a cause
that is not theirs (misleading). Then the natural wrong answers of ``tests/natural_mistakes.py`` (written
blind) with the causes ``tests/natural_causes.py`` allows, the older wrong
answers of ``tests/wrong_answers.py``, and the self-check's time on a wrong
answer, per exercise (goal: under 1 s, all-MiniLM-L6-v2's block under 3 s).
"""

import argparse
import ast
import contextlib
import copy
import inspect
import random
import textwrap
import time
from collections import Counter

import numpy as np

from encoder_lib.grading import compare
from encoder_lib.grading.exercises import EXERCISES
from encoder_lib.grading.self_check import verdict_for
from encoder_lib.grading.variants import run as run_variant
from encoder_lib.grading.verdict import Outcome, judge

from . import mutants as m
from ._report import table

SEEDS = (20261201, 7, 11, 13)  # the first draws the hidden cases the mutant is judged on; all four check a cause


# ---------------------------------------------------------------- mutants of the models, labelled


def model_source(exercise):
    return textwrap.dedent(inspect.getsource(exercise.model))


def line_ideas(source, exercise):
    """``{line number: idea}`` of a model's source: the words the exercise's file gives each line's ``# step:`` key
    (what a cause that names the step says)."""
    from encoder_lib.grading.variants.model import step_keys

    words = dict(exercise.steps)
    return {line: words[key] for line, key in step_keys(source).items() if key in words}


def _statement_line(tree, node):
    """The first line of the statement of the model that holds ``node``."""
    best = None
    for statement in ast.walk(tree):
        if isinstance(statement, ast.stmt) and not isinstance(statement, ast.FunctionDef) and \
                any(n is node for n in ast.walk(statement)):
            if best is None or statement.lineno >= best.lineno:
                best = statement
    return best.lineno if best else None


def labelled_mutants(exercise, doubles=0, seed=0):
    """``[(kind, description, source, ideas, parts)]``: every single mutant of the model, then up to ``doubles``
    with two changes on two lines (drawn at random from all such pairs, ``seed`` fixed); a double's ``parts`` are
    its two single mutants, each ``(source, ideas)``."""
    source = model_source(exercise)
    ideas = line_ideas(source, exercise)
    tree = ast.parse(source)
    function = tree.body[0]
    sites = [(kind, said, node, make) for kind, said, node, make in m._sites(function)]
    lines = [_statement_line(tree, node) for _, _, node, _ in sites]
    made, seen = [], set()

    def mutate(picks):
        mutated = copy.deepcopy(tree)
        targets = m._sites(mutated.body[0])
        for index in picks:
            _, _, node, make = targets[index]
            replacer = m._Replace(node, make)
            replacer.visit(mutated)
            if not replacer.done:
                return None
        try:
            return ast.unparse(ast.fix_missing_locations(mutated))
        except Exception:
            return None

    for i, (kind, said, _, _) in enumerate(sites):
        text = mutate([i])
        if text and text not in seen and lines[i] in ideas:
            seen.add(text)
            made.append((kind, said, text, (ideas[lines[i]],), ()))
    pairs = [(i, j) for i in range(len(sites)) for j in range(i + 1, len(sites))
             if lines[i] != lines[j] and lines[i] in ideas and lines[j] in ideas]
    random.Random(seed).shuffle(pairs)
    count = 0
    for i, j in pairs:
        if count >= doubles:
            break
        text = mutate([i, j])
        parts = (mutate([i]), mutate([j]))
        if text and text not in seen and all(parts):
            seen.add(text)
            made.append(("double", f"{sites[i][1]}; {sites[j][1]}", text, (ideas[lines[i]], ideas[lines[j]]),
                         tuple(zip(parts, ((ideas[lines[i]],), (ideas[lines[j]],))))))
            count += 1
    return made


def define_in_model(exercise, source):
    namespace = dict(exercise.model.__globals__)
    exec(compile(source, "<mutant>", "exec"), namespace)  # noqa: S102 - the benchmark's own mutant of the model
    return namespace[exercise.model.__name__]


def outcomes_of(fn, cases):
    """What ``fn`` (a mutant, run directly: it may call the library) gives on each case."""
    found = []
    for case in cases:
        try:
            with np.errstate(all="ignore"):
                found.append(Outcome(value=fn(*compare.callable_inputs(case.args),
                                              **compare.callable_inputs(case.kwargs))))
        except Exception as exc:
            found.append(Outcome(raised=compare.Raised.of(exc)))
    return found


_CASES = {}


def cases_of(exercise, seed):
    key = (exercise.name, seed)
    if key not in _CASES:
        _CASES[key] = compare.build_cases(exercise, compare.hidden_rngs(seed, exercise.name), probes=True,
                                          generated=True)
    return _CASES[key]


def same_slip(candidate, fn, exercise):
    """Does a cause's own function (a Variant or a Mistake) compute what the mutant computes on the cases of every
    seed?"""
    if candidate is None:
        return False
    for seed in SEEDS:
        for case, outcome in zip(cases_of(exercise, seed), outcomes_of(fn, cases_of(exercise, seed))):
            variant = candidate if hasattr(candidate, "words") else _as_variant(candidate)
            result = run_variant(variant, case.args, case.kwargs)
            if isinstance(result, compare.Raised) and result.kind == "NotApplicable":
                result = case.expected  # a catalogued mistake that does not apply here computes the right answer
            if outcome.raised is not None:
                if not isinstance(result, compare.Raised):
                    return False
            elif isinstance(result, compare.Raised) or not compare.close(outcome.value, result, equal_nan=True):
                return False
    return True


def _as_variant(mistake):
    from encoder_lib.grading.variants import Variant

    return Variant(f"mistake:{mistake.name}", "", mistake.model)


def _names_slip(cause, fn, ideas, exercise):
    """Does ``cause`` name the slip of a mutant (``fn``, its lines' ``ideas``): the idea of a line it changed, or a
    cause that computes what it computes on every seed?"""
    named = {idea for c in cause.alternatives for idea in getattr(c, "ideas", ())}
    return (named and named <= set(ideas)) or any(same_slip(c, fn, exercise) for c in cause.alternatives)


def judge_mutant(exercise, kind, said, source, ideas, parts=()):
    """``(verdict word, seconds)`` for one mutant: equivalent, passed, accurate, one of two (a double whose
    causes each name one of its two slips), honest or misleading."""
    fn = define_in_model(exercise, source)
    cases = cases_of(exercise, SEEDS[0])
    outcomes = outcomes_of(fn, cases)
    every = judge(exercise, cases, outcomes)
    if every.passed:
        return "equivalent", 0.0
    visible = [(c, o) for c, o in zip(cases, outcomes) if not c.hidden]
    started = time.perf_counter()
    verdict = judge(exercise, [c for c, _ in visible], [o for _, o in visible])
    seconds = time.perf_counter() - started
    if verdict.passed:
        return "passed", seconds
    if not verdict.causes:
        return "honest", seconds
    named = {idea for cause in verdict.causes for c in cause.alternatives for idea in getattr(c, "ideas", ())}
    if set(ideas) <= named or all(any(same_slip(c, fn, exercise) for c in cause.alternatives)
                                  for cause in verdict.causes):
        return "accurate", seconds
    singles = [(define_in_model(exercise, text), part_ideas) for text, part_ideas in parts]
    if singles and all(any(_names_slip(cause, f, i, exercise) for f, i in singles) for cause in verdict.causes):
        return "one of two", seconds
    return "misleading", seconds


# ---------------------------------------------------------------- the tables


def mutant_table(names, doubles, show):
    rows = {"single": [], "double": []}
    totals = {"single": Counter(), "double": Counter()}
    examples, times = [], {}
    for name in names:
        exercise = EXERCISES[name]
        counts = {"single": Counter(), "double": Counter()}
        for kind, said, source, ideas, parts in labelled_mutants(exercise, doubles):
            word, seconds = judge_mutant(exercise, kind, said, source, ideas, parts)
            if word == "equivalent":
                continue
            which = "double" if kind == "double" else "single"
            counts[which][word] += 1
            counts[which]["failed"] += word != "passed"
            counts[which]["mutants"] += 1
            times.setdefault(name, []).append(seconds)
            if word in ("misleading", "passed") and len(examples) < show:
                examples.append((name, word, said))
        for which in ("single", "double"):
            c = counts[which]
            totals[which].update(c)
            rows[which].append((name, c["mutants"], c["failed"], c["accurate"], c["one of two"], c["honest"],
                                c["misleading"], c["passed"]))
    for which in ("single", "double"):
        t = totals[which]
        rows[which].append(("all", t["mutants"], t["failed"], t["accurate"], t["one of two"], t["honest"],
                            t["misleading"], t["passed"]))
        share = lambda k: f"{t[k] / t['mutants']:.1%}" if t["mutants"] else "-"  # noqa: E731
        print(f"{which} mutants of the models: accurate {share('accurate')}, one of two {share('one of two')}, "
              f"honest {share('honest')}, misleading {share('misleading')}, passed {t['passed']}")
        table(rows[which], ("exercise", "mutants", "failed", "accurate", "one of two", "honest", "misleading",
                            "passed"))
    for name, word, said in examples:
        print(f"{word}: {name}: {said}")
    return times


def natural_table():
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    from natural_causes import CAUSES, SECOND
    from natural_mistakes import NATURAL
    from test_exercises import define
    from wrong_answers import OLDER

    rows, totals = {}, Counter()
    for wrong in NATURAL:
        verdict = verdict_for(define(wrong.source)[wrong.exercise])
        allowed = CAUSES.get(wrong.key, ()) + SECOND.get(wrong.key, ())
        if verdict.passed:
            word = "passed"
        elif verdict.causes:
            ok = all(any(p in c.sentence + " " + (c.mistake.name if c.mistake else "") for p in allowed)
                     for c in verdict.causes)
            word = "accurate" if ok else "misleading"
        else:
            word = "honest"
        row = rows.setdefault(wrong.exercise, Counter())
        row[word] += 1
        row["answers"] += 1
        totals[word] += 1
        totals["answers"] += 1
    print(f"natural wrong answers (tests/natural_mistakes.py, written blind): {totals['answers']}")
    table([(n, c["answers"], c["accurate"], c["honest"], c["misleading"], c["passed"]) for n, c in rows.items()]
          + [("all", totals["answers"], totals["accurate"], totals["honest"], totals["misleading"], totals["passed"])],
          ("exercise", "answers", "accurate", "honest", "misleading", "passed"))
    older = Counter()
    for name, source in OLDER:
        verdict = verdict_for(define(source)[name])
        older["passed" if verdict.passed else "cause" if verdict.causes else "measured"] += 1
    print(f"older wrong answers (tests/wrong_answers.py OLDER, {len(OLDER)}): {older['cause']} told a cause, "
          f"{older['measured']} only what was measured, {older['passed']} passed\n")


#: The kinds of mutant that test the checks' reach: the error model's newer slips, and the answers right on the
#: lessons' inputs only (``mutants.FIXTURE_ONLY``), which the self-check and the grader must both fail.
REACH = ("moved", "order", "residual", "twice") + m.FIXTURE_ONLY
#: More secrets: a mutant that passes the self-check and the grader under all of them is taken as right everywhere.
MORE_SECRETS = (3, 5, 8)


def reach_table(names):
    """By kind: mutants of the solutions of ``REACH``'s kinds, how many fail the self-check and the grader (goal:
    all), are told a cause, only what was measured, or pass; the self-check's time."""
    counts, times = {}, []
    solutions = m.solutions()
    for name in names:
        for mutant in m.mutants(solutions[name], name):
            if mutant.kind not in REACH:
                continue
            fn = m.define(mutant.source, name)
            started = time.perf_counter()
            mine = verdict_for(fn)
            times.append(time.perf_counter() - started)
            grader = verdict_for(fn, secret=m.SECRET)
            if mine.passed and grader.passed and all(verdict_for(fn, secret=s).passed for s in MORE_SECRETS):
                continue  # right on every input drawn: equivalent to the solution
            row = counts.setdefault(mutant.kind, Counter())
            row["mutants"] += 1
            row["failed self-check"] += not mine.passed
            row["failed grader"] += not grader.passed
            row["cause"] += bool(mine.causes)
            row["measured"] += not mine.passed and not mine.causes and mine.specific()
            if mine.passed or grader.passed:
                print(f"  passed: {name}: {mutant.kind}: {mutant.description} (self-check {mine.passed}, grader "
                      f"{grader.passed})")
    columns = ("mutants", "failed self-check", "failed grader", "cause", "measured")
    total = sum(counts.values(), Counter())
    print(f"mutants of the solutions that test the checks' reach (kinds {', '.join(REACH)}): {total['mutants']}; "
          f"self-check median {np.median(times):.2f} s, slowest {max(times):.2f} s")
    table([(kind, *(c[k] for k in columns)) for kind, c in counts.items()] + [("all", *(total[k] for k in columns))],
          ("kind", *columns))


#: What feedback on the cause of each contract kind of mutant says: a finding's key or words of its explanation.
CONTRACT_WORDS = {"cache": ("contract:kept", "contract:other-values", "contract:identity", "contract:again",
                            "contract:kept-array"),
                  "random": ("contract:random",), "dtype change": ("contract:dtype",), "contiguity": ("contract:layout",),
                  "dropped refusal": ("contract:refusal",),
                  "precision at large offsets": ("contract:precision", "float32", "significant digits"),
                  "smallest input": ("contract:smallest", "shape")}


def contract_table(names, hand_in=True, listed=False):
    """By kind: the contract mutants of the solutions (``mutants.CONTRACT``), each right in its values on one call of
    the lesson's inputs and wrong along one promise beyond them; how many fail the self-check, the grader (its hidden
    checks) and the hand-in service (the sandbox, ``hand_in``), are told the promise they break (on the cause), only
    what was measured, or a cause that is not theirs (misleading); and the self-check's time on them."""
    from course_grader import sandbox

    counts, times, solutions = {}, [], m.solutions()
    with (sandbox.Sandbox() if hand_in else contextlib.nullcontext()) as box:
        for name in names:
            for mutant in m.contract_mutants(solutions[name], name):
                word, seconds = _judge_contract_mutant(name, mutant, box, listed)
                if word is None:
                    continue  # right on every input drawn: the promise cannot break for this exercise
                times.append(seconds)
                row = counts.setdefault(mutant.kind, Counter())
                row.update(word)
    columns = ("mutants", "failed self-check", "failed grader", "failed hand-in", "on the cause", "honest",
               "misleading", "passed")
    total = sum(counts.values(), Counter())
    print(f"contract mutants of the solutions (issue 49): {total['mutants']}; self-check median "
          f"{np.median(times):.2f} s, slowest {max(times):.2f} s")
    table([(kind, *(c[k] for k in columns)) for kind, c in counts.items()] + [("all", *(total[k] for k in columns))],
          ("kind", *columns))
    return times


def _judge_contract_mutant(name, mutant, box, listed=False):
    """``(Counter of what happened, the self-check's seconds)``, the Counter None for a mutant right everywhere (never
    with ``listed``, which prints every mutant's line, to compare two runs mutant by mutant)."""
    from course_grader import sandbox
    from course_grader.marking import grade_answer

    fn = m.define(mutant.source, name)
    started = time.perf_counter()
    mine = verdict_for(fn)
    seconds = time.perf_counter() - started
    grader = verdict_for(fn, secret=m.SECRET)
    if not listed and mine.passed and grader.passed and all(verdict_for(fn, secret=s).passed for s in MORE_SECRETS):
        return None, seconds
    handed = grade_answer(box, name, mutant.source, m.SECRET, sandbox.Limits(), previewed=True) if box else None
    said = " ".join(mine.keys()) + " " + mine.explanation()
    wrong = [c for c in mine.causes if not any(w in c.sentence for w in CONTRACT_WORDS[mutant.kind])]
    word = Counter({"mutants": 1, "failed self-check": int(not mine.passed), "failed grader": int(not grader.passed),
                    "failed hand-in": int(handed is not None and handed.status != "passed"),  # no points there
                    "passed": int(mine.passed or grader.passed), "misleading": int(bool(wrong))})
    if not mine.passed and not wrong:
        word["on the cause" if any(w in said for w in CONTRACT_WORDS[mutant.kind]) else "honest"] += 1
    if listed:
        print(f"MUTANT\t{name}\t{mutant.kind}\t{seconds:.2f} s\t" +
              "\t".join(f"{k}={v}" for k, v in sorted(word.items())))
    if mine.passed or grader.passed or wrong:
        print(f"  {'misleading' if wrong else 'passed'}: {name}: {mutant.kind} (self-check {mine.passed}, grader "
              f"{grader.passed}) {mine.explanation()[:200]}")
    return word, seconds


def fresh_table():
    """Issue 37's forty wrong answers (``tests/fresh_answers.py``), half of them right on the lessons' inputs only:
    on the cause, honest, vague, misleading, passed the self-check, passed the grader; and its right ones."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    from fresh_answers import CAUSES, RIGHT, WRONG
    from test_fresh_answers import SECRET, answer

    rows = {"right on the fixtures only": Counter(), "wrong on the fixtures too": Counter()}
    for fresh in WRONG:
        fn = answer(fresh)
        mine, grader = verdict_for(fn), verdict_for(fn, secret=SECRET)
        said = mine.explanation() + " " + " ".join(c.mistake.name for c in mine.causes if c.mistake is not None)
        misleading = [c for c in mine.causes if not any(w in c.sentence + (c.mistake.name if c.mistake else "")
                                                         for w in CAUSES[fresh.key])]
        row = rows["right on the fixtures only" if fresh.fixture_only else "wrong on the fixtures too"]
        row["answers"] += 1
        row["passed self-check"] += mine.passed
        row["passed grader"] += grader.passed
        row["misleading"] += bool(misleading)
        if not mine.passed and not misleading:
            row["on the cause" if any(w in said for w in CAUSES[fresh.key]) else
                "honest" if mine.specific() else "vague"] += 1
    columns = ("answers", "on the cause", "honest", "vague", "misleading", "passed self-check", "passed grader")
    total = sum(rows.values(), Counter())
    print(f"issue 37's fresh wrong answers (tests/fresh_answers.py): {total['answers']}")
    table([(kind, *(c[k] for k in columns)) for kind, c in rows.items()] + [("all", *(total[k] for k in columns))],
          ("answers", *columns))
    right = sum(verdict_for(answer(f)).passed and verdict_for(answer(f), secret=SECRET).passed for f in RIGHT)
    print(f"right answers written unlike the lessons' solutions: {right} of {len(RIGHT)} pass the self-check and "
          f"the grader\n")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--exercise", action="append", help="only this exercise (may repeat)")
    parser.add_argument("--doubles", type=int, default=30, help="double mutants per exercise (default 30)")
    parser.add_argument("--show", type=int, default=10, help="print this many misleading or passing mutants")
    parser.add_argument("--contract-only", action="store_true", help="only the contract mutants' table")
    parser.add_argument("--no-sandbox", action="store_true", help="the contract mutants without the hand-in service")
    parser.add_argument("--list", action="store_true", help="every contract mutant, each on a line of its own")
    args = parser.parse_args(argv)
    names = args.exercise or list(EXERCISES)
    started = time.perf_counter()
    times = mutant_table(names, args.doubles, args.show) if not args.contract_only else {}
    contract_table(names, hand_in=not args.no_sandbox, listed=args.list)
    if args.contract_only:
        return 0
    reach_table(names)
    fresh_table()
    natural_table()
    table([(n, len(t), f"{np.median(t):.2f}", f"{max(t):.2f}") for n, t in times.items()],
          ("exercise", "wrong answers timed", "median s", "slowest s"))
    print(f"({time.perf_counter() - started:.0f} s in all)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
