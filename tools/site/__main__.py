"""`make site`: build the course's website into site/ and print what it holds."""

import argparse
import sys
from pathlib import Path

from ..course import ROOT
from . import build
from .render import SiteError
from .states import MB, PAGE_BUDGET, SITE_BUDGET


def summary(site):
    """The site's pages and widgets, as lines of text."""
    lines = [f"site written to {site.out} in {site.seconds:.0f} s: {site.size() / MB:.1f} MB "
             f"(budget {SITE_BUDGET / MB:.0f} MB), {len(site.pages) + 1} pages; its search index "
             f"{site.search_bytes / MB:.2f} MB"]
    for page in [site.index, *site.pages]:
        over = "  OVER its budget" if page.size() > PAGE_BUDGET else ""
        lines.append(f"  {page.path.name:34s} {page.size() / MB:6.2f} MB of its {PAGE_BUDGET / MB:.0f} MB{over}")
    for widget in site.widgets:
        grid = widget.grid
        if grid.reduced:
            kept = f"{len(grid.kept)} of {len(grid.states)} states ({grid.why})"
        elif grid.drawn:
            kept = f"all {len(grid.states)} states, drawn on the page from their numbers"
        else:
            kept = f"all {len(grid.states)} states" if grid.space.names else "no controls: the picture it ended with"
        lines.append(f"  {widget.lesson:26s} {grid.name:28s} {kept}")
    return lines


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0].strip("`"))
    parser.add_argument("--out", type=Path, default=ROOT / "site", help="the folder to write (default: site/)")
    parser.add_argument("--solutions", choices=("on", "off"), default="on",
                        help="each exercise followed by the course's solution, folded (default: on; off for a graded "
                             "class that reads the public site)")
    args = parser.parse_args(argv)
    try:
        site = build(args.out, solutions=args.solutions == "on")
    except SiteError as exc:
        print(f"make site: {exc}", file=sys.stderr)
        return 1
    print("\n".join(summary(site)))
    print(f"open {site.index.path.as_uri()} in a browser")
    return 0


if __name__ == "__main__":
    sys.exit(main())
