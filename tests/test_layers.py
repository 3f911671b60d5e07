"""The library's layers: every import points down, never up (README: What is where).

From the bottom: ``_display`` (a figure's text alternative in notebooks,
which ``import encoder_lib`` registers, so it imports no other part); the
math core; the backward pass; what is built on both
(training, the pretrained model); side by side on one level, what the
lessons compute and the exercises with their grader, which never import each
other; the pictures (plots, widgets). The tools, tests and benchmarks
use the library and are never imported by it. An import inside a function
counts as much as one at the top of a module.
"""

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "encoder_lib"

#: Bottom first. A module may import its own layer and the ones below it.
LAYERS = [
    # a figure's text alternative for notebooks, registered by `import encoder_lib`: it imports no other part
    ("the notebook's display", {"_display"}),
    ("the math core", {"_checks", "threads", "fixtures", "attention", "ffn", "norm", "block", "positional",
                       "pooling", "params"}),
    ("the backward pass", {"grad", "__init__"}),  # encoder_lib itself re-exports the core and the backward pass
    ("built on both", {"training", "pretrained"}),
    ("what the lessons compute, and beside it the exercises and their grader", {"experiments", "grading"}),
    ("the pictures", {"plots", "widgets"}),
]
LEVEL = {part: level for level, (_, parts) in enumerate(LAYERS) for part in parts}
#: Parts on one level that must not import each other either: no import runs between them.
SIDE_BY_SIDE = [{"experiments", "grading"}]
OUTSIDE = ("tools", "tests", "benchmarks")


def part_of(path):
    """The top-level part of encoder_lib a file belongs to: ``attention``, ``grading``, ``__init__``..."""
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    return parts[0]


def imported_parts(path):
    """``(line, part)`` for every encoder_lib part (or outside package) the file imports."""
    tree = ast.parse(path.read_text())
    package_depth = len(path.relative_to(PACKAGE).parts) - 1  # 0 for encoder_lib/x.py, 1 for a subpackage's file
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                names = alias.name.split(".")
                if names[0] == "encoder_lib":
                    found.append((node.lineno, names[1] if len(names) > 1 else "__init__"))
                elif names[0] in OUTSIDE:
                    found.append((node.lineno, names[0]))
        elif isinstance(node, ast.ImportFrom):
            module = (node.module or "").split(".")
            if node.level == 0:
                if module[0] == "encoder_lib":
                    targets = [module[1]] if len(module) > 1 else [a.name for a in node.names]
                elif module[0] in OUTSIDE:
                    targets = [module[0]]
                else:
                    continue
            else:
                up = node.level - 1  # "." is this package, ".." its parent
                if up > package_depth:
                    continue
                inside = [] if package_depth - up == 0 else [part_of(path)]  # still inside this subpackage
                targets = [module[0]] if module[0] else [a.name for a in node.names]
                if inside:
                    targets = inside
            found += [(node.lineno, t) for t in targets]
    return found


FILES = sorted(PACKAGE.rglob("*.py"))


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(PACKAGE)) for p in FILES])
def test_every_import_points_down(path):
    part = part_of(path)
    assert part in LEVEL, f"{part} belongs to no layer: add it to LAYERS (and to the README's picture)"
    for line, target in imported_parts(path):
        assert target not in OUTSIDE, f"{path.name}:{line} imports {target}: the library never imports the course's tools"
        if target in LEVEL:
            assert LEVEL[target] <= LEVEL[part], (
                f"{path.relative_to(PACKAGE)}:{line} imports {target} ({LAYERS[LEVEL[target]][0]}), "
                f"which sits above {part} ({LAYERS[LEVEL[part]][0]})")
        for apart in SIDE_BY_SIDE:
            assert not (part != target and {part, target} <= apart), (
                f"{path.relative_to(PACKAGE)}:{line} imports {target}, which sits beside {part}: "
                f"{' and '.join(sorted(apart))} never import each other")


def test_the_check_sees_an_upward_import(tmp_path, monkeypatch):
    """The test would fail if the core imported the widgets (a file written here, under a fake package)."""
    fake = tmp_path / "encoder_lib"
    fake.mkdir()
    (fake / "attention.py").write_text("def f():\n    from .widgets import attention\n")
    monkeypatch.setattr(__import__(__name__), "PACKAGE", fake)
    assert imported_parts(fake / "attention.py") == [(2, "widgets")]
    with pytest.raises(AssertionError, match="sits above attention"):
        test_every_import_points_down(fake / "attention.py")


@pytest.mark.parametrize("importer, imported", [("grading", "experiments"), ("experiments", "grading")])
def test_the_check_sees_an_import_between_parts_side_by_side(tmp_path, monkeypatch, importer, imported):
    """Neither of the grader and the experiments may import the other, although they share a level."""
    fake = tmp_path / "encoder_lib"
    (fake / importer).mkdir(parents=True)
    (fake / importer / "lesson.py").write_text(f"from ..{imported} import block\n")
    monkeypatch.setattr(__import__(__name__), "PACKAGE", fake)
    assert imported_parts(fake / importer / "lesson.py") == [(1, imported)]
    with pytest.raises(AssertionError, match=f"imports {imported}, which sits beside {importer}"):
        test_every_import_points_down(fake / importer / "lesson.py")


def readme_picture():
    readme = (PACKAGE.parent / "README.md").read_text()
    return readme[readme.index("## What is where"):readme.index("| path |")]


def test_the_readme_draws_every_layer():
    picture = readme_picture()
    for part in LEVEL:
        if part not in ("__init__", "_checks", "threads", "fixtures", "_display"):
            assert part in picture, f"the README's picture of the layers leaves out {part}"


def test_the_readme_draws_the_parts_side_by_side_on_one_line():
    lines = readme_picture().splitlines()
    for apart in SIDE_BY_SIDE:
        assert any(all(re.search(rf"\b{part}\b", line) for part in apart) for line in lines), \
            f"the README's picture should draw {' and '.join(sorted(apart))} side by side, on one line"
