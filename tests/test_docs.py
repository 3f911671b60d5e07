"""A page per reader: the README for learners and everyone's first screen, docs/teaching.md (an index) and
docs/teaching/ for teachers, a page per task, docs/contributing.md for whoever carries the course on; every link
between them and to the repository's files leads somewhere, and the six finds of docs/contributing.md walk to files
that exist, in the steps they say."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", ROOT / "docs" / "teaching.md", ROOT / "docs" / "contributing.md",
         *sorted((ROOT / "docs" / "teaching").glob("*.md"))]
#: The README is read whole on a first visit: at most this many bytes; the teachers' index fits on a screen.
README_BYTES = 15_000
INDEX_BYTES = 3_000
#: A teacher's page is read for one task: none as long as the one page it was split from (45.6 KB).
TEACHERS_PAGE_BYTES = 16_000
#: A markdown link: [words](target); a relative one is [words](path#anchor), not an address.
ANY_LINK = re.compile(r"\]\(([^)\s]*)\)")
LINK = re.compile(r"\]\((?!https?:|mailto:)([^)#\s]*)(#[^)\s]*)?\)")
MOST_STEPS = 4


def anchors(text):
    """GitHub's anchors of a page's headings: lower case, punctuation dropped, spaces as hyphens."""
    return {re.sub(r"[^\w\- ]", "", heading).strip().lower().replace(" ", "-")
            for heading in re.findall(r"^#+ (.+)$", text, re.M)}


def test_the_readme_is_short_and_points_each_reader_onward():
    readme = (ROOT / "README.md").read_text()
    assert len(readme.encode()) <= README_BYTES, f"README.md is {len(readme.encode())} bytes: move text to docs/"
    assert "(docs/teaching.md)" in readme and "(docs/contributing.md)" in readme


def test_the_teachers_index_fits_a_screen_and_links_every_teachers_page():
    index = (ROOT / "docs" / "teaching.md").read_text()
    assert len(index.encode()) <= INDEX_BYTES, f"docs/teaching.md is {len(index.encode())} bytes: an index only"
    linked = {path for path, _ in LINK.findall(index)}
    for page in sorted((ROOT / "docs" / "teaching").glob("*.md")):
        assert f"teaching/{page.name}" in linked, f"docs/teaching.md does not link {page.name}"
        assert len(page.read_text().encode()) <= TEACHERS_PAGE_BYTES, f"{page.name}: split it by task"


def broken_links(page, text=None):
    """Every relative link of ``page`` that leads nowhere (no file, or no such heading there), and every ``](``
    that starts no link the check reads (a title, a space): none may slip past it."""
    text = page.read_text() if text is None else text
    read = {match.start() for match in ANY_LINK.finditer(text)}
    problems = [f"{page.name}: {text[at:at + 40]!r} is a link the check cannot read"
                for at in (m.start() for m in re.finditer(r"\]\(", text)) if at not in read]
    for path, anchor in LINK.findall(text):
        target = (page.parent / path).resolve() if path else page
        if not target.exists():
            problems.append(f"{page.name} links to {path}, which is not there")
        elif anchor and target.suffix == ".md" and anchor[1:] not in anchors(target.read_text()):
            problems.append(f"{page.name} links to {path}{anchor}: no such heading")
    return problems


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_every_relative_link_leads_to_a_file_and_a_heading_there(page):
    text = page.read_text()
    assert ANY_LINK.findall(text), f"{page.name} links to nothing: its links no longer match the check's pattern?"
    assert broken_links(page) == []


@pytest.mark.parametrize("planted, problem", [
    ("[gone](docs/nowhere.md)", "links to docs/nowhere.md, which is not there"),
    ("[gone](docs/teaching.md#no-such-heading)", "no such heading"),
    ('[odd](docs/teaching.md "a title")', "a link the check cannot read"),
])
def test_the_link_check_fails_a_broken_link(planted, problem):
    readme = ROOT / "README.md"
    assert any(problem in found for found in broken_links(readme, readme.read_text() + f"\n{planted}\n"))


def walk(where, root=ROOT):
    """The steps of a find (``a/`` → ``b/`` → ``c.py``): every folder and file opened, from ``root``; each part's
    first name is the one walked, the others (in words after it) must stand in the place reached. A name such as
    ``.toml`` is a kind of file in the folder reached, one step. ``(steps, problems)``."""
    place, steps, problems = root, 0, []
    for part in where.split("→"):
        names = re.findall(r"`([\w./]+)`", part)
        if not names:
            problems.append(f"no file named in {part.strip()!r}")
            continue
        walked = names[0]
        steps += 1 if walked.startswith(".") else len(Path(walked).parts)
        for name in names:
            if name.startswith("."):
                if not list(place.glob(f"*{name}")):
                    problems.append(f"no {name} file in {place.relative_to(root)}")
            elif not (place / name).exists():
                problems.append(f"{name} is not in {place.relative_to(root) if place != root else 'the top'}")
        if not walked.startswith(".") and (place / walked).is_dir():
            place = place / walked
    return steps, problems


def finds():
    contributing = (ROOT / "docs" / "contributing.md").read_text()
    table = contributing[contributing.index("## Six things to find"):contributing.index("## What is where")]
    return [line.split("|")[1:4] for line in table.splitlines() if line.startswith("| ") and "`" in line]


@pytest.mark.parametrize("row", range(6))
def test_each_find_walks_to_files_that_exist_in_the_steps_it_says(row):
    rows = finds()
    assert len(rows) == 6
    what, where, said = rows[row]
    steps, problems = walk(where)
    assert problems == [], f"{what.strip()}: {problems}"
    assert steps == int(said), f"{what.strip()}: {steps} steps walked, the table says {said.strip()}"
    assert steps <= MOST_STEPS, f"{what.strip()}: {steps} steps"


@pytest.mark.parametrize("where, steps, problem", [
    ("`encoder_lib/grading/teacher/` → `feedback_page.py`", 4, "encoder_lib/grading/teacher/ is not in the top"),
    ("`encoder_lib/grading/` → `verdict.py`", 3, None),  # one arrow, two folders: two steps, not one
    ("`course_grader/` → `sandbox/` → `nothing.py`", 3, "nothing.py is not in course_grader/sandbox"),
])
def test_the_walk_counts_folders_not_arrows_and_sees_a_missing_file(where, steps, problem):
    walked, problems = walk(where)
    assert walked == steps
    assert (problem in " ".join(problems)) if problem else problems == []
