"""The code stays readable: no function over 30 lines, no module over 500 (house style: "a file that reads like a
package (over 500 lines...): make it one"; each step fits on a screen).

Each part of the course (the math core, the pictures, the learner's grading, the grader, the site) has a budget of
lines, today's figure, that only a diff raises (``BUDGETS``).

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


#: Each part's budget in lines (every line of its files, docstrings and comments too), today's figure: a part that
#: grows past it fails here, so that growth is a decision written in a diff (raise the figure, and say why in the
#: commit), not drift. ``(files, limit)``; the files as globs from the course's folder.
BUDGETS = {
    "the math core": (["encoder_lib/*.py"], ["encoder_lib/plots.py"], 4269),
    "widgets and experiments": (["encoder_lib/widgets/*.py", "encoder_lib/experiments/*.py", "encoder_lib/plots.py"],
                                [], 3389),
    "the learner's grading": (["encoder_lib/grading/**/*.py"], [], 8000),
    "the grader": (["course_grader/**/*.py", "course_grader/**/*.css"], [], 11449),
    "the questions": (["encoder_lib/questions/*.py"], [], 999),
    "the site": (["tools/site/**/*.py", "tools/site/**/*.js", "tools/site/**/*.css"], [], 3327),
}


def part_lines(included, left_out, root=ROOT):
    """The lines of a part's files, every line counted, each file once."""
    paths = {path for pattern in included for path in root.glob(pattern)} - {root / p for p in left_out}
    return sum(len(path.read_text().splitlines()) for path in paths)


@pytest.mark.parametrize("part", BUDGETS)
def test_each_part_keeps_to_its_budget(part):
    included, left_out, limit = BUDGETS[part]
    lines = part_lines(included, left_out)
    assert lines > 0, f"{part}: its globs match no file ({included})"
    assert lines <= limit, (f"{part} has {lines} lines, over its budget of {limit}: take some out, or raise the "
                            f"budget in tests/test_sizes.py and say why in the commit")


def test_the_budget_sees_a_part_grow(tmp_path):
    (tmp_path / "core").mkdir()
    (tmp_path / "core" / "a.py").write_text("x = 1\n" * 10)
    (tmp_path / "core" / "left_out.py").write_text("x = 1\n" * 99)
    assert part_lines(["core/*.py"], ["core/left_out.py"], tmp_path) == 10
    (tmp_path / "core" / "b.py").write_text("y = 2\n")
    assert part_lines(["core/*.py"], ["core/left_out.py"], tmp_path) == 11
