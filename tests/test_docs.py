"""A page per reader: the README for learners and everyone's first screen, docs/teaching.md for teachers,
docs/contributing.md for whoever carries the course on; every link between them and to the repository's files
leads somewhere, and the five finds of docs/contributing.md name files that exist."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", ROOT / "docs" / "teaching.md", ROOT / "docs" / "contributing.md"]
#: The README is read whole on a first visit: at most this many bytes.
README_BYTES = 15_000
#: A relative link in markdown: [words](path#anchor), not an address.
LINK = re.compile(r"\]\((?!https?:|mailto:)([^)#\s]*)(#[^)\s]*)?\)")


def anchors(text):
    """GitHub's anchors of a page's headings: lower case, punctuation dropped, spaces as hyphens."""
    return {re.sub(r"[^\w\- ]", "", heading).strip().lower().replace(" ", "-")
            for heading in re.findall(r"^#+ (.+)$", text, re.M)}


def test_the_readme_is_short_and_points_each_reader_onward():
    readme = (ROOT / "README.md").read_text()
    assert len(readme.encode()) <= README_BYTES, f"README.md is {len(readme.encode())} bytes: move text to docs/"
    assert "(docs/teaching.md)" in readme and "(docs/contributing.md)" in readme


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_every_relative_link_leads_to_a_file_and_a_heading_there(page):
    text = page.read_text()
    for path, anchor in LINK.findall(text):
        target = (page.parent / path).resolve() if path else page
        assert target.exists(), f"{page.name} links to {path}, which is not there"
        if anchor and target.suffix == ".md":
            assert anchor[1:] in anchors(target.read_text()), f"{page.name} links to {path}{anchor}: no such heading"


def test_the_five_finds_name_files_that_exist_within_three_steps():
    contributing = (ROOT / "docs" / "contributing.md").read_text()
    table = contributing[contributing.index("## Five things to find"):contributing.index("## What is where")]
    rows = [line for line in table.splitlines() if line.startswith("| ") and "`" in line]
    assert len(rows) == 5
    for row in rows:
        where = row.split("|")[2]
        steps = where.split("→")
        assert len(steps) <= 3, f"{row}: more than three steps"
        place = ROOT
        for step in steps:
            for name in re.findall(r"`([\w./]+)`", step):
                if name.startswith("."):  # the lesson's .py and .toml: a kind of file in the folder reached
                    assert list(place.glob(f"*{name}")), f"{row}: no {name} file in {place}"
                    continue
                assert (place / name).exists(), f"{row}: {name} is not in {place.relative_to(ROOT)}"
                if (place / name).is_dir():
                    place = place / name
