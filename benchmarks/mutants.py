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
- ``off by one``: a slice bound or an index moved by one;
- ``moved``: an operand moved out of a call (``erf(x / s)`` written ``erf(x) / s``);
- ``order``: a reshape made in column-major order (``order="F"``);
- ``residual``: the first input added to what the function returns;
- ``twice``: the whole function applied to its own result.

And the kinds that are right on the lessons' inputs only (``FIXTURE_ONLY``), which every check must fail all the
same, since the docstrings allow other inputs:

- ``float32``: the result computed in float32 (the inputs cast with ``astype(np.float32)``);
- ``clipped``: the result clipped to the largest magnitude the lesson's inputs give;
- ``hard-coded``: a whole-number argument that the lesson's checks always give the same value written as that
  value (2 heads);
- ``no shift``: a softmax's maximum not subtracted before ``exp`` (right while the scores are small).

And the kinds right in their values on one call of the lesson's inputs, each breaking one promise beyond the values
that every exercise keeps (``CONTRACT``, issue 49: ``contract_mutants``), each a wrapper around the whole solution:

- ``cache``: the result of the first call for each shape of the inputs kept, and a copy of it given back;
- ``random``: dropout of one entry in ten on the result, drawn from ``np.random``;
- ``dtype change``: the result cast to float64, whatever the inputs' dtype;
- ``contiguity``: each input array read from its memory as if it were C-ordered (its bytes in the order they lie);
- ``dropped refusal``: an input the solution refuses (raises for) answered with a result;
- ``precision at large offsets``: every input of 1000 or more computed in float32;
- ``smallest input``: every axis of size 1 squeezed out of the result (a 0-d one made 1-d).

``mutants(source, name)`` yields ``Mutant(kind, description, source)``; the
harness ``judge_mutant`` runs one through the self-check's judgement
(``encoder_lib.grading.self_check.verdict_for``) and says whether it computes the same as
the solution on every visible and hidden case (an equivalent mutant, dropped).
"""

import ast
import copy
import math
from dataclasses import dataclass

import numpy as np
from scipy.special import erf

import encoder_lib as el
from encoder_lib.grading import compare, verdict as feedback
from encoder_lib.grading.self_check import run_cases, verdict_for
from encoder_lib.grading.exercises import EXERCISES

FIXTURE_ONLY = ("float32", "clipped", "hard-coded", "no shift")
#: The kinds made on the whole function, not at one of its nodes (``_whole_function_mutants``).
WHOLE_FUNCTION = ("twice", "residual", "float32", "clipped", "hard-coded")
CONTRACT = ("cache", "random", "dtype change", "contiguity", "dropped refusal", "precision at large offsets",
            "smallest input")
#: Each contract kind's wrapper: the lines of ``def <name>(*args, **kwargs)`` around ``once``, the solution renamed.
_CONTRACT_BODIES = {
    "cache": ("the first result for each shape of the inputs kept and given back", (
        "    key = repr([getattr(a, 'shape', a) for a in args if not isinstance(a, (dict, list)) and not callable(a)])\n"
        "    if key not in _KEPT:\n        _KEPT[key] = {once}(*args, **kwargs)\n"
        "    out = _KEPT[key]\n"
        "    return tuple(o.copy() for o in out) if isinstance(out, tuple) else out.copy()\n")),
    "random": ("dropout of one entry in ten on the result", (
        "    out = {once}(*args, **kwargs)\n    first = out[0] if isinstance(out, tuple) else out\n"
        "    first = first * (np.random.random(first.shape) >= 0.1).astype(first.dtype) / first.dtype.type(0.9)\n"
        "    return (first, *out[1:]) if isinstance(out, tuple) else first\n")),
    "dtype change": ("the result cast to float64", (
        "    out = {once}(*args, **kwargs)\n"
        "    return tuple(np.asarray(o, np.float64) for o in out) if isinstance(out, tuple) else "
        "np.asarray(out, np.float64)\n")),
    "contiguity": ("each input array read from memory as if C-ordered", (
        "    args = [np.frombuffer(a.tobytes(order='A'), a.dtype).reshape(a.shape) if isinstance(a, np.ndarray) "
        "and a.ndim else a for a in args]\n    return {once}(*args, **kwargs)\n")),
    "dropped refusal": ("a result (zeros) where the solution raises", (
        "    try:\n        return {once}(*args, **kwargs)\n    except Exception:\n        return np.zeros(1)\n")),
    "precision at large offsets": ("every input of 1000 or more computed in float32", (
        "    args = [a.astype(np.float32).astype(a.dtype) if isinstance(a, np.ndarray) and a.dtype.kind == 'f' and "
        "a.size and np.abs(a).max() >= 1000 else a for a in args]\n    return {once}(*args, **kwargs)\n")),
    "smallest input": ("every axis of size 1 squeezed out of the result", (
        "    out = {once}(*args, **kwargs)\n"
        "    return tuple(np.atleast_1d(np.squeeze(o)) for o in out) if isinstance(out, tuple) else "
        "np.atleast_1d(np.squeeze(out))\n")),
}
KINDS = ("operator", "constant", "axis", "keepdims", "transpose", "dropped term", "dropped argument", "off by one",
         "moved", "order", "residual", "twice") + FIXTURE_ONLY
_MOVABLE = {"erf", "sqrt", "exp", "tanh", "log"}
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
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub) and isinstance(node.right, ast.Call) and \
                getattr(node.right.func, "attr", getattr(node.right.func, "id", "")) in ("max", "amax"):
            found.append(("no shift", f"the maximum not subtracted at line {node.lineno}", node, lambda n: n.left))
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
            if name in _MOVABLE and len(node.args) == 1 and isinstance(node.args[0], ast.BinOp):
                found.append(("moved", f"the {ast.unparse(node.args[0].right)} moved out of the {name} at line "
                                       f"{node.lineno}", node, lambda n: ast.BinOp(
                                           _with(n, args=[n.args[0].left]), n.args[0].op, n.args[0].right)))
            if name == "reshape":
                found.append(("order", f"the reshape at line {node.lineno} in column-major order", node,
                              lambda n: _with(n, keywords=[*n.keywords, ast.keyword("order", ast.Constant("F"))])))
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
    for kind, description, text in _whole_function_mutants(tree, function, name):
        yield Mutant(kind, description, text)


def _whole_function_mutants(tree, function, name):
    """``(kind, description, source)`` of the mutations of the whole function: its result with its first input
    added, the function applied twice, computed in float32, clipped, or a whole-number argument hard-coded."""
    first = function.args.args[0].arg
    body = ast.unparse(tree)
    once = f"_{name}_once"
    renamed = body.replace(f"def {name}(", f"def {once}(", 1)
    wrap = f"\n\n\ndef {name}(*args, **kwargs):\n"
    if not isinstance(_lesson_cases(name)[0].expected, tuple):  # a pair cannot be its own input
        yield ("twice", "the whole function applied to its own result",
               renamed + wrap + f"    return {once}({once}(*args, **kwargs), *args[1:], **kwargs)\n")
    yield ("residual", f"{first} added to the result",
           renamed + wrap + f"    out = {once}(*args, **kwargs)\n"
                            f"    return (out[0] + args[0], *out[1:]) if isinstance(out, tuple) else out + args[0]\n")
    yield ("float32", "computed in float32", renamed + wrap + (
        "    cast = [a.astype(np.float32) if isinstance(a, np.ndarray) and a.dtype.kind == 'f' else a for a in args]\n"
        f"    return {once}(*cast, **kwargs)\n"))
    limit = _largest_output(name)
    if limit is not None:
        yield ("clipped", f"the result clipped to +-{limit:.3g}", renamed + wrap + (
            f"    out = {once}(*args, **kwargs)\n"
            f"    return tuple(np.clip(o, -{limit!r}, {limit!r}) for o in out) if isinstance(out, tuple) else "
            f"np.clip(out, -{limit!r}, {limit!r})\n"))
    for parameter, value in _constant_whole_numbers(name).items():
        yield ("hard-coded", f"{parameter} written as {value}", body.replace(
            ast.unparse(function).split("\n", 1)[0], ast.unparse(function).split("\n", 1)[0] +
            f"\n    {parameter} = {value}", 1))


def contract_mutants(source, name):
    """The mutants of the solution ``source`` of the ``CONTRACT`` kinds, each the solution renamed and wrapped."""
    body = ast.unparse(ast.parse(_solution_body(source))).replace(f"def {name}(", f"def _{name}_once(", 1)
    for kind, (description, wrapper) in _CONTRACT_BODIES.items():
        yield Mutant(kind, description, f"_KEPT = {{}}\n\n\n{body}\n\n\ndef {name}(*args, **kwargs):\n"
                                        + wrapper.format(once=f"_{name}_once"))


def _lesson_cases(name):
    return compare.build_cases(EXERCISES[name])


def _largest_output(name):
    """Just above the largest magnitude of the right results on the lesson's checks: a clip there changes none."""
    values = [np.abs(np.ravel(e)).max() for c in _lesson_cases(name)
              for e in (c.expected if isinstance(c.expected, tuple) else (c.expected,)) if np.size(e)]
    return float(max(values)) * 1.01 if values else None


def _constant_whole_numbers(name):
    """``{parameter: value}``: the whole-number arguments that every lesson's check gives the same value."""
    import inspect

    names = list(inspect.signature(EXERCISES[name].reference).parameters)
    seen = {}
    for case in _lesson_cases(name):
        bound = dict(zip(names, case.args)) | case.kwargs
        for parameter, value in bound.items():
            if isinstance(value, int) and not isinstance(value, bool):
                seen.setdefault(parameter, set()).add(value)
    return {p: v.pop() for p, v in seen.items() if len(v) == 1}


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
    namespace = {"np": np, "el": el, "erf": erf, "math": math, "__name__": "__main__"}
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
