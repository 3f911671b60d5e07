"""The website's review page: the questions a reader answered, asked again when FSRS says they are due.

The notebooks' review (``encoder_lib.questions.record``) schedules each
question with the ``fsrs`` package of PyPI; the page schedules it with
ts-fsrs (npm, pinned in package.json; `make site` installs it with `npm ci`),
the same FSRS-6 with the same parameters, given the same settings here
(``settings``), so that a question comes back on the same day in both for
the same answers (``static/schedule.js``; ``tests/test_review_schedule.py``).
The library is a script of the site's own (``assets/ts-fsrs.js``, with its
licence beside it), loaded by the review page alone: nothing is fetched from
elsewhere. What the page says of the schedule is computed from the
notebooks' scheduler (``record.waits``), so that its words are the schedule.
"""

import json
import shutil

from encoder_lib.questions import record

from ..course import ROOT
from .render import SiteError

PACKAGE = "ts-fsrs"
LIBRARY = ROOT / "node_modules" / PACKAGE / "dist" / "index.umd.js"  # a plain script: the global FSRS
LICENSE = ROOT / "node_modules" / PACKAGE / "LICENSE"
SCRIPT = "ts-fsrs.js"
LIMIT = 6  # questions asked at once, as encoder_lib.questions.review's


def settings():
    """FSRS's settings, as the notebooks' scheduler has them, for ``static/schedule.js``."""
    return {"desired_retention": record.DESIRED_RETENTION, "maximum_days": record.MAXIMUM_DAYS}


def copy_library(assets):
    """Copy ts-fsrs into ``assets`` (``ts-fsrs.js`` and its licence); a SiteError if it is not installed."""
    if not LIBRARY.is_file():
        raise SiteError("the site's review needs ts-fsrs: run `npm ci` in the course's folder (`make site` does), "
                        "which installs the version package-lock.json pins into node_modules/")
    version = json.loads((LIBRARY.parents[1] / "package.json").read_text())["version"]
    (assets / SCRIPT).write_text(f"// ts-fsrs {version} (MIT, {PACKAGE} on npm): FSRS for the review page "
                                 "(tools/site/review.py)\n" + LIBRARY.read_text())
    shutil.copy2(LICENSE, assets / f"{PACKAGE}.LICENSE.txt")


def _days(waits):
    return ", ".join(f"{w:g}" for w in waits[:-1]) + f" and {waits[-1]:g} days"


def schedule_words():
    """When a question comes back, in words, with the numbers the scheduler gives."""
    missed, right = record.waits([False])[0], record.waits([True] * 4)
    return (f"A question you miss the first time comes back {_in_days(missed)}, one you get right "
            f"{_in_days(right[0])}. From then on FSRS, the Free Spaced Repetition Scheduler of flashcard tools, sets "
            "each wait from all your answers to that question: a right answer when it comes back makes the next "
            f"wait longer ({_days(right[1:])} for a question right every time, {record.MAXIMUM_DAYS} days at most), "
            "a miss makes it shorter.")


def _in_days(days):
    return "a day later" if days == 1 else f"{days:g} days later"


def body(records):
    """The review page: every question's data for ``questions.js``, which asks again the ones due in this browser."""
    data = {"schedule": settings(), "limit": LIMIT, "questions": records}
    return (f'<h1 id="review-title">Review</h1>\n<p>The questions you answered in the lessons come back here when '
            f"they are due, the missed ones first. {schedule_words()} Your answers stay in this browser: nothing is "
            'sent anywhere.</p>\n<div id="review" aria-labelledby="review-title">'
            '<p class="review-empty">The review needs JavaScript, which this browser does not run.</p></div>\n'
            f'<script type="application/json" id="review-data">{_json(data)}</script>')


def _json(data):
    return json.dumps(data, ensure_ascii=False).replace("</", "<\\/")
