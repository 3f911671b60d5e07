"""Wrong answers made mechanically from the exercises' solutions: small mutations of their syntax trees.

Shared by ``benchmarks/bench_feedback.py`` (the table over the course) and
``tests/test_feedback_mutants.py`` (a few mutants per exercise). Nobody wrote
these wrong answers with the catalogue in mind: how often the feedback names
what is wrong in them measures the feedback, not the catalogue.

Each mutation changes one thing of one kind:

- ``operator``: a binary operator swapped (+ and -, * and /, ** and *, @ and *),
  a comparison turned (< and <=, == and !=, is and is not), a unary minus dropped;
- ``constant``: a number changed (n to n + 1, n - 1, 0 to 1, 1 to 2, a float halved);
- ``axis``: an ``axis=`` argument, or a ``swapaxes``/``moveaxis`` axis, changed (-1 and -2, 0 and -1);
- ``keepdims``: ``keepdims=True`` dropped;
- ``transpose``: ``.T`` or ``np.swapaxes(a, i, j)`` replaced by ``a``;
- ``dropped term``: ``a + b`` or ``a - b`` replaced by ``a`` (a term left out), a call such as
  ``np.sqrt(a)`` replaced by ``a``;
- ``dropped argument``: a keyword argument not passed on (``padding_mask=padding_mask`` left out);
- ``off by one``: a slice bound or an index moved by one.

``mutants(source, name)`` yields ``Mutant(kind, description, source)``; the
harness ``judge_mutant`` runs one through the self-check's judgement
(``encoder_lib.grading.self_check.verdict_for``) and says whether it computes the same as
the solution on every visible and hidden case (an equivalent mutant, dropped).
"""

import ast
import copy
from dataclasses import dataclass

import numpy as np
from scipy.special import erf

import encoder_lib as el
from encoder_lib.grading import compare, verdict as feedback
from encoder_lib.grading.self_check import run_cases, verdict_for
from encoder_lib.grading.exercises import EXERCISES

KINDS = ("operator", "constant", "axis", "keepdims", "transpose", "dropped term", "dropped argument", "off by one")
SECRET = 20261201  # any course's secret: the hidden cases a grader would draw from it

_SWAP = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Div, ast.Div: ast.Mult, ast.Pow: ast.Mult,
         ast.MatMult: ast.Mult, ast.FloorDiv: ast.Div}
_COMPARE = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq, ast.NotEq: ast.Eq,
            ast.Is: ast.IsNot, ast.IsNot: ast.Is}
_UNWRAP = {"sqrt", "exp", "maximum", "abs", "tanh", "erf", "log", "softmax", "gelu", "relu", "layer_norm"}


@dataclass(frozen=True)
class Mutant:
    kind: str
    description: str
    source: str


def _solution_body(source):
    """The solution cell without nbgrader's markers (the lines between them are the solution)."""
    return "\n".join(line for line in source.splitlines() if "### BEGIN SOLUTION" not in line
                     and "### END SOLUTION" not in line)


def _sites(tree):
    """``(kind, description, node path, replacement maker)`` for every mutation the tree allows."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp) and type(node.op) in _SWAP:
            new = _SWAP[type(node.op)]
            found.append(("operator", f"{type(node.op).__name__} -> {new.__name__} at line {node.lineno}",
                          node, lambda n, new=new: _with(n, op=new())))
            if isinstance(node.op, (ast.Add, ast.Sub)):
                found.append(("dropped term", f"the right term of the {type(node.op).__name__} at line "
                                              f"{node.lineno} left out", node, lambda n: n.left))
        elif isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _COMPARE:
            new = _COMPARE[type(node.ops[0])]
            found.append(("operator", f"{type(node.ops[0]).__name__} -> {new.__name__} at line {node.lineno}",
                          node, lambda n, new=new: _with(n, ops=[new()])))
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            found.append(("operator", f"a minus sign dropped at line {node.lineno}", node, lambda n: n.operand))
        elif isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
            for value in _constant_variants(node.value):
                found.append(("constant", f"{node.value!r} -> {value!r} at line {node.lineno}", node,
                              lambda n, value=value: ast.Constant(value)))
        elif isinstance(node, ast.keyword) and node.arg == "axis":
            for value in _axis_variants(node.value):
                found.append(("axis", f"axis={ast.unparse(node.value)} -> axis={value} at line "
                                      f"{node.value.lineno}", node.value, lambda n, value=value: ast.Constant(value)))
        elif isinstance(node, ast.keyword) and node.arg == "keepdims":
            found.append(("keepdims", f"keepdims dropped at line {node.value.lineno}", node.value,
                          lambda n: ast.Constant(False)))
        elif isinstance(node, ast.Attribute) and node.attr == "T":
            found.append(("transpose", f".T dropped at line {node.lineno}", node, lambda n: n.value))
        elif isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            for i, keyword in enumerate(node.keywords):
                if keyword.arg not in (None, "keepdims", "axis"):
                    found.append(("dropped argument", f"{keyword.arg}= not passed to {name} at line {node.lineno}",
                                  node, lambda n, i=i: _with(n, keywords=n.keywords[:i] + n.keywords[i + 1:])))
            if name in ("swapaxes", "moveaxis", "transpose") and node.args:
                found.append(("transpose", f"the {name} at line {node.lineno} dropped", node, lambda n: n.args[0]))
                for i, arg in enumerate(node.args[1:3], start=1):
                    for value in _axis_variants(arg):
                        found.append(("axis", f"axis {ast.unparse(arg)} of {name} -> {value} at line {node.lineno}",
                                      arg, lambda n, value=value: ast.Constant(value)))
            elif name in _UNWRAP and len(node.args) >= 1:
                found.append(("dropped term", f"the {name}(...) at line {node.lineno} left out", node,
                              lambda n: n.args[0]))
        elif isinstance(node, ast.Slice):
            for part in ("lower", "upper"):
                bound = getattr(node, part)
                if bound is not None:
                    found.append(("off by one", f"the slice's {part} bound + 1 at line {bound.lineno}", bound,
                                  lambda n: ast.BinOp(copy.deepcopy(n), ast.Add(), ast.Constant(1))))
    return found


def _with(node, **fields):
    new = copy.copy(node)
    for key, value in fields.items():
        setattr(new, key, value)
    return new


def _constant_variants(value):
    if isinstance(value, int):
        return [v for v in (value + 1, value - 1) if v != value]
    return [value / 2, value * 2] if value not in (0.0,) else [1.0]


def _axis_variants(node):
    try:
        value = ast.literal_eval(node)
    except (ValueError, SyntaxError):
        return []
    if not isinstance(value, int):
        return []
    return [v for v in (-1, -2, 0) if v != value][:2]


class _Replace(ast.NodeTransformer):
    def __init__(self, target, make):
        self.target, self.make, self.done = target, make, False

    def generic_visit(self, node):
        for field, old in ast.iter_fields(node):
            if isinstance(old, list):
                for i, item in enumerate(old):
                    if item is self.target:
                        old[i] = self.make(item)
                        self.done = True
                    elif isinstance(item, ast.AST):
                        self.visit(item)
            elif old is self.target:
                setattr(node, field, self.make(old))
                self.done = True
            elif isinstance(old, ast.AST):
                self.visit(old)
        return node


def mutants(source, name):
    """Every single-mutation variant of the solution ``source`` that still defines ``name``."""
    body = _solution_body(source)
    tree = ast.parse(body)
    function = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name)
    docstring = function.body[0] if function.body and isinstance(function.body[0], ast.Expr) else None
    seen = set()
    for index, (kind, description, _, _) in enumerate(_sites(function)):
        mutated = copy.deepcopy(tree)
        target_function = next(n for n in mutated.body if isinstance(n, ast.FunctionDef) and n.name == name)
        sites = _sites(target_function)
        _, _, node, make = sites[index]
        if docstring is not None and node is target_function.body[0].value:
            continue
        replacer = _Replace(node, make)
        replacer.visit(mutated)
        if not replacer.done:
            continue
        try:
            text = ast.unparse(ast.fix_missing_locations(mutated))
        except Exception:
            continue
        if text in seen:
            continue
        seen.add(text)
        yield Mutant(kind, description, text)


def solutions():
    """{exercise: source of its solution cell} from the teachers' notebooks."""
    import nbformat

    from tools.course import lesson_notebooks

    found = {}
    for path in lesson_notebooks():
        for cell in nbformat.read(path, as_version=4).cells:
            grade_id = cell.metadata.get("nbgrader", {}).get("grade_id", "")
            if grade_id.endswith("_answer"):
                found[grade_id.removesuffix("_answer")] = cell.source
    return found


def define(source, name):
    """The function ``name`` that ``source`` defines, in a namespace like an answer cell's."""
    namespace = {"np": np, "el": el, "erf": erf, "__name__": "__main__"}
    exec(compile(source, "<mutant>", "exec"), namespace)
    return namespace[name]


_CASES = {}


def all_cases(name):
    """An exercise's visible and hidden cases (under ``SECRET``), built once."""
    if name not in _CASES:
        exercise = EXERCISES[name]
        _CASES[name] = compare.build_cases(exercise, compare.hidden_rngs(SECRET, name))
    return _CASES[name]


@dataclass(frozen=True)
class Judged:
    mutant: Mutant
    equivalent: bool  # computes what the solution computes on every visible and hidden case
    failed: bool  # fails the self-check (visible cases)
    named: bool  # a cause named (a catalogued mistake or a verified edit)
    diagnosed: bool  # what was measured, where no cause is named
    specific: bool  # a cause, a measurement or changed inputs: more than "values differ"
    explanation: str


def judge_mutant(name, mutant, seconds=5.0):
    """Run one mutant through the self-check's judgement; ``None`` if it does not even define the function."""
    try:
        fn = define(mutant.source, name)
    except Exception:
        return None
    try:
        every = feedback.judge(EXERCISES[name], all_cases(name), _timed(fn, all_cases(name), seconds))
    except _TooSlow:
        return None
    verdict = verdict_for(fn)
    if verdict is None:
        return None
    return Judged(mutant, every.passed, not verdict.passed, bool(verdict.causes), bool(verdict.symptoms),
                  verdict.specific(), verdict.explanation())


class _TooSlow(Exception):
    pass


def _timed(fn, cases, seconds):
    import time

    start = time.perf_counter()
    outcomes = run_cases(fn, cases)
    if time.perf_counter() - start > seconds:
        raise _TooSlow
    return outcomes
