"""The code stays readable: no function over 30 lines, no module over 500 (house style: "a file that reads like a
package (over 500 lines...): make it one"; each step fits on a screen).

A function's lines run from its ``def`` to its last line, its docstring left out (words are not code); the
count is measured over ``encoder_lib``, ``course_grader`` and ``tools`` whole, the library, the learner's and the
teacher's sides and the course's tools, so that a new module is held too.
"""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MAX_FUNCTION_LINES = 30
MAX_MODULE_LINES = 500
MODULES = sorted(path for folder in ("encoder_lib", "course_grader", "tools") for path in (ROOT / folder).rglob("*.py"))


def function_lines(node):
    """The lines of a function, from its ``def`` to its end, without its docstring."""
    lines = node.end_lineno - node.lineno + 1
    first = node.body[0] if node.body else None
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
        lines -= first.end_lineno - first.lineno + 1
    return lines


def long_functions(source):
    """``[(name, lines)]`` of the functions (methods and nested ones too) over ``MAX_FUNCTION_LINES``."""
    return [(node.name, function_lines(node)) for node in ast.walk(ast.parse(source))
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and function_lines(node) > MAX_FUNCTION_LINES]


@pytest.mark.parametrize("path", MODULES, ids=[str(p.relative_to(ROOT)) for p in MODULES])
def test_every_function_fits_in_30_lines_and_every_module_in_500(path):
    source = path.read_text()
    assert len(source.splitlines()) <= MAX_MODULE_LINES, f"{path.name}: make it a package"
    assert not long_functions(source), f"{path.name}: cut these into steps: {long_functions(source)}"


def test_the_count_sees_a_long_function_and_leaves_its_docstring_out():
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_FUNCTION_LINES))
    docstring = '    """' + "\n".join(["words"] * 10) + '"""\n'
    assert long_functions(f"def f():\n{docstring}{body}\n") == [("f", MAX_FUNCTION_LINES + 1)]
    assert long_functions(f"def f():\n{docstring}" + "\n".join(body.splitlines()[:-1]) + "\n") == []
