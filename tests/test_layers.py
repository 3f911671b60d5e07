"""The library's layers: every import points down, never up, and no module imports itself round a circle
(docs/contributing.md: What is where).

From the bottom: ``_display`` (a figure's text alternative in notebooks,
which ``import encoder_lib`` registers, so it imports no other part); the
math core; the backward pass; what is built on both
(training, the pretrained model); side by side on one level, what the
lessons compute and the learner's side of the exercises (what a learner's
kernel imports), which never import each other; then, side by side again,
the teacher's side (``grading/teacher``: what ``make grade`` and ``make
report`` run, which the learner's side never imports) and the pictures
(plots, widgets). The tools, tests and benchmarks use the library and are
never imported by it. An import inside a function counts as much as one at
the top of a module.
"""

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "encoder_lib"
TEACHER = "grading.teacher"

#: Bottom first. A module may import its own layer and the ones below it.
LAYERS = [
    # a figure's text alternative for notebooks, registered by `import encoder_lib`: it imports no other part
    ("the notebook's display", {"_display"}),
    ("the math core", {"_checks", "threads", "fixtures", "attention", "ffn", "norm", "block", "positional",
                       "pooling", "params"}),
    ("the backward pass", {"grad", "__init__"}),  # encoder_lib itself re-exports the core and the backward pass
    ("built on both", {"training", "pretrained"}),
    ("what the lessons compute, and beside it the learner's side of the exercises", {"experiments", "grading"}),
    ("the teacher's side (make grade, make report), and beside it the pictures", {TEACHER, "plots", "widgets"}),
]
LEVEL = {part: level for level, (_, parts) in enumerate(LAYERS) for part in parts}
#: Parts on one level that must not import each other either: no import runs between them.
SIDE_BY_SIDE = [{"experiments", "grading"}, {TEACHER, "plots"}, {TEACHER, "widgets"}]
OUTSIDE = ("tools", "tests", "benchmarks")


def module_of(path, package=None):
    """``encoder_lib.grading.teacher.plan`` for that file (a package's ``__init__.py`` is the package)."""
    package = package or PACKAGE
    parts = path.relative_to(package.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def part_of_module(module):
    """The part of encoder_lib a module belongs to: ``attention``, ``grading``, ``grading.teacher``, ``__init__``."""
    names = module.split(".")[1:]
    if not names:
        return "__init__"
    return TEACHER if names[:2] == TEACHER.split(".") else names[0]


def part_of(path, package=None):
    return part_of_module(module_of(path, package))


def _is_module(dotted, package):
    path = package.parent.joinpath(*dotted.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def imported_modules(path, package=None):
    """``(line, module)`` for every module of encoder_lib (or an outside package's name) the file imports; ``from
    a import b`` imports ``a.b`` where that is a module, else ``a``."""
    package = package or PACKAGE
    here = module_of(path, package)
    is_package = path.name == "__init__.py"
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = here.split(".")[:len(here.split(".")) - node.level + (1 if is_package else 0)]
                base = ".".join(anchor + ([base] if base else []))
            for alias in node.names:
                whole = f"{base}.{alias.name}"
                found.append((node.lineno, whole if _is_module(whole, package) else base))
    return [(line, m if m.split(".")[0] == "encoder_lib" else m.split(".")[0]) for line, m in found
            if m.split(".")[0] in ("encoder_lib", *OUTSIDE)]


def imported_parts(path, package=None):
    """``(line, part)`` for every encoder_lib part (or outside package) the file imports."""
    return [(line, module if module in OUTSIDE else part_of_module(module))
            for line, module in imported_modules(path, package)]


FILES = sorted(PACKAGE.rglob("*.py"))


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(PACKAGE)) for p in FILES])
def test_every_import_points_down(path, package=None):
    package = package or PACKAGE
    part = part_of(path, package)
    assert part in LEVEL, f"{part} belongs to no layer: add it to LAYERS (and to the picture in docs/contributing.md)"
    for line, target in imported_parts(path, package):
        assert target not in OUTSIDE, f"{path.name}:{line} imports {target}: the library never imports the course's tools"
        if target in LEVEL:
            assert LEVEL[target] <= LEVEL[part], (
                f"{path.relative_to(package)}:{line} imports {target} ({LAYERS[LEVEL[target]][0]}), "
                f"which sits above {part} ({LAYERS[LEVEL[part]][0]})")
        for apart in SIDE_BY_SIDE:
            assert not (part != target and {part, target} <= apart), (
                f"{path.relative_to(package)}:{line} imports {target}, which sits beside {part}: "
                f"{' and '.join(sorted(apart))} never import each other")


def circles(package=None):
    """Every set of encoder_lib's modules that import each other round a circle (Tarjan's strongly connected
    components of more than one module, or a module that imports itself)."""
    package = package or PACKAGE
    graph = {}
    for path in sorted(package.rglob("*.py")):
        module = module_of(path, package)
        graph.setdefault(module, set()).update(m for _, m in imported_modules(path, package)
                                               if m.startswith("encoder_lib") and m != module)
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(module):
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for target in graph.get(module, ()):
            if target not in graph:
                continue
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in on_stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == module:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return found


def test_no_module_imports_itself_round_a_circle():
    assert circles() == []


def _fake_package(tmp_path, files):
    fake = tmp_path / "encoder_lib"
    for name, text in files.items():
        (fake / name).parent.mkdir(parents=True, exist_ok=True)
        (fake / name).write_text(text)
    return fake


def test_the_check_sees_an_upward_import(tmp_path):
    """The test would fail if the core imported the widgets (a file written here, under a fake package)."""
    fake = _fake_package(tmp_path, {"attention.py": "def f():\n    from .widgets import attention\n",
                                    "widgets/__init__.py": "", "widgets/attention.py": ""})
    assert imported_parts(fake / "attention.py", fake) == [(2, "widgets")]
    with pytest.raises(AssertionError, match="sits above attention"):
        test_every_import_points_down(fake / "attention.py", fake)


@pytest.mark.parametrize("importer, imported", [("grading", "experiments"), ("experiments", "grading")])
def test_the_check_sees_an_import_between_parts_side_by_side(tmp_path, importer, imported):
    """Neither of the grader and the experiments may import the other, although they share a level."""
    fake = _fake_package(tmp_path, {f"{importer}/__init__.py": "", f"{importer}/lesson.py":
                                    f"from ..{imported} import block\n", f"{imported}/__init__.py": ""})
    assert imported_parts(fake / importer / "lesson.py", fake) == [(1, imported)]
    with pytest.raises(AssertionError, match=f"imports {imported}, which sits beside {importer}"):
        test_every_import_points_down(fake / importer / "lesson.py", fake)


def test_the_check_sees_the_learner_s_side_import_the_teacher_s(tmp_path):
    """A self-check that imported the grader would fail: the learner's side sits below the teacher's."""
    fake = _fake_package(tmp_path, {"grading/__init__.py": "", "grading/self_check.py":
                                    "def f():\n    from .teacher import marking\n",
                                    "grading/teacher/__init__.py": "", "grading/teacher/marking.py": ""})
    assert imported_parts(fake / "grading" / "self_check.py", fake) == [(2, TEACHER)]
    with pytest.raises(AssertionError, match="sits above grading"):
        test_every_import_points_down(fake / "grading" / "self_check.py", fake)


def test_the_check_sees_a_circle_held_by_an_import_inside_a_function(tmp_path):
    fake = _fake_package(tmp_path, {"grading/__init__.py": "", "grading/a.py": "from . import b\n",
                                    "grading/b.py": "def f():\n    from .c import g\n",
                                    "grading/c.py": "from .a import x\n"})
    assert circles(fake) == [["encoder_lib.grading.a", "encoder_lib.grading.b", "encoder_lib.grading.c"]]


def readme_picture():
    text = (PACKAGE.parent / "docs" / "contributing.md").read_text()
    return text[text.index("## What is where"):text.index("| path |")]


def test_the_picture_draws_every_layer():
    picture = readme_picture()
    for part in LEVEL:
        if part not in ("__init__", "_checks", "threads", "fixtures", "_display"):
            assert part.replace(".", "/") in picture or part in picture, \
                f"the picture of the layers leaves out {part}"


def test_the_picture_draws_the_parts_side_by_side_on_one_line():
    lines = readme_picture().splitlines()
    for apart in SIDE_BY_SIDE:
        words = [part.replace(".", "/") for part in apart]
        assert any(all(re.search(rf"(?<![\w/]){re.escape(w)}\b", line) for w in words) for line in lines), \
            f"the picture should draw {' and '.join(sorted(words))} side by side, on one line"
