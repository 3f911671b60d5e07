"""The course's layers: every import points down, never up, and no module imports itself round a circle
(docs/contributing.md: What is where).

Two packages. ``encoder_lib`` is what a learner's kernel imports; from the
bottom: ``_display`` (a figure's text alternative in notebooks, which
``import encoder_lib`` registers, so it imports no other part); the math
core; the backward pass; what is built on both (training, the pretrained
model); side by side on one level, what the lessons compute and the
learner's side of the exercises, which never import each other; then the
pictures (plots, widgets). ``course_grader``, the teacher's side (what
``make grade`` and ``make report`` run), sits above the learner's side and
imports it; ``encoder_lib`` never imports it, and it never imports the
pictures. The tools, tests and benchmarks use both and are never imported
by either. An import inside a function counts as much as one at the top of
a module.
"""

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "encoder_lib"
GRADER_PACKAGE = ROOT / "course_grader"
#: The teacher's side is one part: the whole of the package ``course_grader``.
GRADER = "course_grader"
PACKAGES = ("encoder_lib", GRADER)

#: Bottom first. A module may import its own layer and the ones below it.
LAYERS = [
    # a figure's text alternative for notebooks, registered by `import encoder_lib`: it imports no other part
    ("the notebook's display", {"_display"}),
    ("the math core", {"_checks", "threads", "fixtures", "attention", "ffn", "norm", "block", "positional",
                       "pooling", "params", "config", "modern"}),
    ("the backward pass", {"grad", "grad_parts", "__init__"}),  # encoder_lib itself re-exports the core and the backward pass
    ("built on both", {"training", "pretrained"}),
    ("what the lessons compute, and beside it the learner's side of the exercises", {"experiments", "grading"}),
    ("the teacher's side (make grade, make report), and beside it the pictures and the questions they answer",
     {GRADER, "plots", "widgets", "questions"}),
]
LEVEL = {part: level for level, (_, parts) in enumerate(LAYERS) for part in parts}
#: Parts on one level that must not import each other either: no import runs between them.
SIDE_BY_SIDE = [{"experiments", "grading"}, {GRADER, "plots"}, {GRADER, "widgets"}, {GRADER, "questions"}]
OUTSIDE = ("tools", "tests", "benchmarks")


def module_of(path, package=None):
    """``course_grader.plan`` or ``encoder_lib.grading.verdict`` for that file (a package's ``__init__.py`` is the
    package)."""
    package = package or PACKAGE
    parts = path.relative_to(package.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def part_of_module(module):
    """The part a module belongs to: ``attention``, ``grading``, ``__init__`` (encoder_lib itself), or
    ``course_grader`` for every module of the teacher's package."""
    names = module.split(".")
    if names[0] == GRADER:
        return GRADER
    return names[1] if len(names) > 1 else "__init__"


def part_of(path, package=None):
    return part_of_module(module_of(path, package))


def _is_module(dotted, root):
    path = root.joinpath(*dotted.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def imported_modules(path, package=None):
    """``(line, module)`` for every module of the two packages (or an outside package's name) the file imports;
    ``from a import b`` imports ``a.b`` where that is a module, else ``a``."""
    package = package or (GRADER_PACKAGE if path.is_relative_to(GRADER_PACKAGE) else PACKAGE)
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
                found.append((node.lineno, whole if _is_module(whole, package.parent) else base))
    return [(line, m if m.split(".")[0] in PACKAGES else m.split(".")[0]) for line, m in found
            if m.split(".")[0] in (*PACKAGES, *OUTSIDE)]


def imported_parts(path, package=None):
    """``(line, part)`` for every part of the two packages (or outside package) the file imports."""
    return [(line, module if module in OUTSIDE else part_of_module(module))
            for line, module in imported_modules(path, package)]


FILES = sorted(PACKAGE.rglob("*.py")) + sorted(GRADER_PACKAGE.rglob("*.py"))


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(ROOT)) for p in FILES])
def test_every_import_points_down(path, package=None):
    package = package or (GRADER_PACKAGE if path.is_relative_to(GRADER_PACKAGE) else PACKAGE)
    part = part_of(path, package)
    where = path.relative_to(package.parent)
    assert part in LEVEL, f"{part} belongs to no layer: add it to LAYERS (and to the picture in docs/contributing.md)"
    for line, target in imported_parts(path, package):
        assert target not in OUTSIDE, f"{where}:{line} imports {target}: the library never imports the course's tools"
        if target in LEVEL:
            assert LEVEL[target] <= LEVEL[part] and not (target == GRADER != part), (
                f"{where}:{line} imports {target} ({LAYERS[LEVEL[target]][0]}), "
                f"which sits above {part} ({LAYERS[LEVEL[part]][0]})")
        for apart in SIDE_BY_SIDE:
            assert not (part != target and {part, target} <= apart), (
                f"{where}:{line} imports {target}, which sits beside {part}: "
                f"{' and '.join(sorted(apart))} never import each other")


def circles(package=None, node=lambda module: module):
    """Every set of the two packages' modules that import each other round a circle (Tarjan's strongly connected
    components of more than one module, or a module that imports itself); ``node`` takes a module to what is
    checked (``grader_part``: a subpackage of the grader whole)."""
    packages = [package] if package else [PACKAGE, GRADER_PACKAGE]
    graph = {}
    for root in packages:
        for path in sorted(root.rglob("*.py")):
            module = node(module_of(path, root))
            graph.setdefault(module, set()).update(node(m) for _, m in imported_modules(path, root)
                                                   if m.split(".")[0] in PACKAGES and node(m) != module)
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


def grader_part(module):
    """``course_grader.handin.store`` -> ``course_grader.handin``: each of the grader's subpackages as one part."""
    names = module.split(".")
    return ".".join(names[:2]) if names[0] == GRADER and len(names) > 2 else module


def test_the_grader_s_parts_import_no_circle():
    """The grader's own layers: no circle between its modules and its subpackages (``handin``, ``sandbox``,
    ``class_report``), each taken whole: ``plan`` imported ``handin.store`` while ``handin.grading`` imported
    ``plan`` for the course's secret, which ``version`` now holds for both."""
    assert circles(GRADER_PACKAGE, node=grader_part) == []


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
    """A self-check that imported the grader would fail, even inside a function: the learner's side sits below the
    teacher's package."""
    fake = _fake_package(tmp_path, {"grading/__init__.py": "", "grading/self_check.py":
                                    "def f():\n    from course_grader import marking\n"})
    (tmp_path / GRADER).mkdir()
    (tmp_path / GRADER / "__init__.py").write_text("")
    (tmp_path / GRADER / "marking.py").write_text("")
    assert imported_parts(fake / "grading" / "self_check.py", fake) == [(2, GRADER)]
    with pytest.raises(AssertionError, match="sits above grading"):
        test_every_import_points_down(fake / "grading" / "self_check.py", fake)


def test_the_check_sees_the_grader_import_a_widget(tmp_path):
    """The grader never imports the pictures, which sit beside it."""
    grader = tmp_path / GRADER
    grader.mkdir()
    (grader / "__init__.py").write_text("")
    (grader / "report.py").write_text("from encoder_lib.widgets import attention\n")
    (tmp_path / "encoder_lib" / "widgets").mkdir(parents=True)
    (tmp_path / "encoder_lib" / "widgets" / "__init__.py").write_text("")
    (tmp_path / "encoder_lib" / "widgets" / "attention.py").write_text("")
    assert imported_parts(grader / "report.py", grader) == [(1, "widgets")]
    with pytest.raises(AssertionError, match="imports widgets, which sits beside course_grader"):
        test_every_import_points_down(grader / "report.py", grader)


def test_the_check_sees_a_circle_held_by_an_import_inside_a_function(tmp_path):
    fake = _fake_package(tmp_path, {"grading/__init__.py": "", "grading/a.py": "from . import b\n",
                                    "grading/b.py": "def f():\n    from .c import g\n",
                                    "grading/c.py": "from .a import x\n"})
    assert circles(fake) == [["encoder_lib.grading.a", "encoder_lib.grading.b", "encoder_lib.grading.c"]]


def contributing_picture():
    """The drawing of the layers in docs/contributing.md: its ``text`` code block under "What is where"."""
    text = (ROOT / "docs" / "contributing.md").read_text()
    section = text[text.index("## What is where"):]
    return section[section.index("```text") + len("```text"):section.index("```", section.index("```text") + 3)]


#: Parts too small to draw: they sit with the core (``_checks``, ``threads``, ``fixtures``) or under it.
UNDRAWN = ("__init__", "_checks", "threads", "fixtures", "_display")
#: The picture's names stand in its first columns; what follows describes them in words.
NAMES_WIDTH = 45


def picture_lines(picture):
    """For each drawn part, the line of the picture (top first) where its name stands as a whole word: ``grad`` is
    not named by ``grading``, nor ``block`` by ``blocks``."""
    lines = [line[:NAMES_WIDTH] for line in picture.splitlines()]
    found = {}
    for part in LEVEL:
        if part not in UNDRAWN:
            word = re.compile(rf"(?<![\w./-]){re.escape(part)}(?![\w-])")
            found[part] = next((n for n, line in enumerate(lines) if word.search(line)), None)
    return found


def picture_problems(picture):
    """What the picture of the layers gets wrong: a part it leaves out, a part drawn below one under it, parts side
    by side drawn on different lines."""
    found = picture_lines(picture)
    problems = [f"the picture leaves out {part}" for part, line in found.items() if line is None]
    drawn = {part: line for part, line in found.items() if line is not None}
    for part, line in drawn.items():
        for other, other_line in drawn.items():
            if LEVEL[part] > LEVEL[other] and line >= other_line:
                problems.append(f"the picture draws {part} at or below {other}, which sits under it")
    for apart in SIDE_BY_SIDE:
        if all(part in drawn for part in apart) and len({drawn[part] for part in apart}) > 1:
            problems.append(f"the picture should draw {' and '.join(sorted(apart))} side by side, on one line")
    return problems


def test_the_picture_draws_every_layer_in_its_place():
    assert picture_problems(contributing_picture()) == []


@pytest.mark.parametrize("edit, problem", [
    # "grad" removed from its line: "grading" must not stand for it
    (lambda p: p.replace(" grad   ", " gradx  "), "the picture leaves out grad"),
    # the backward pass drawn above the lessons' experiments
    (lambda p: p.replace(" grad   ", " xxxx   ").replace(" experiments", " experiments grad"),
     "the picture draws experiments at or below grad"),
    # the pictures moved to a line of their own
    (lambda p: p.replace("plots, widgets", "              ") + "\n plots, widgets\n",
     "the picture should draw course_grader and plots side by side"),
])
def test_the_picture_check_fails_a_wrong_picture(edit, problem):
    picture = contributing_picture()
    wrong = edit(picture)
    assert wrong != picture, "the planted change did not apply: the picture's text changed, change the plant"
    assert any(problem in found for found in picture_problems(wrong)), picture_problems(wrong)
