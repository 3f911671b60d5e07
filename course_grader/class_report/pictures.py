"""The report's pictures: a lesson's scores and an exercise's mistakes, as plain values (``ReportPicture``) drawn with
matplotlib in forked processes, each with a text alternative that says every number it shows."""

import base64
import io
import os
from collections import Counter
from dataclasses import dataclass

from .answers import in_parallel
from ..files import plain_text

#: The course's blue and its text colour (WCAG AA on white).
BAR, TEXT = "#0072B2", "#1a1a1a"



def _figure(width, height, left=0.1, bottom=0.2):
    from matplotlib.figure import Figure

    figure = Figure(figsize=(width, height), dpi=100)
    figure.subplots_adjust(left=left, right=0.97, top=0.93, bottom=bottom)  # fixed: a layout engine costs 40%
    return figure


def _png(figure):
    """The figure as a ``data:`` address (a picture inside the page, nothing fetched)."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", facecolor="white")
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


@dataclass(frozen=True)
class ReportPicture:
    """What a picture shows, as plain values (drawn in another process): ``kind`` "scores" (``labels`` the
    scores, ``counts`` the learners at each) or "mistakes" (``labels`` the groups, ``counts`` their learners)."""

    kind: str
    title: str  # the lesson or the exercise
    labels: tuple
    counts: tuple
    most: float = 0.0

    def alt(self):
        """The picture's text alternative: what it plots, and every number it shows."""
        if self.kind == "scores":
            spread = ", ".join(f"{v} points: {n}" for v, n in zip(self.labels, self.counts))
            return (f"Histogram of the scores in {self.title} of the {sum(self.counts)} learners who handed it "
                    f"in, out of {self.most:g} points. Learners per score: {spread}.")
        listed = "; ".join(f"{label}: {n}" for label, n in zip(self.labels, self.counts))
        return f"Bar chart of the mistakes in {self.title}, by the learners who lost its points to each: {listed}."


def score_picture(lesson, most, scores):
    """The ``ReportPicture`` of a lesson's scores: learners at each whole score from 0 to ``most``."""
    counts = Counter(round(s) for s in scores)
    values = list(range(0, int(round(most)) + 1)) if most <= 30 else sorted(counts)
    return ReportPicture("scores", lesson, tuple(values), tuple(counts.get(v, 0) for v in values), most)


def mistakes_picture(exercise, found):
    """The ``ReportPicture`` of an exercise's groups, largest first."""
    return ReportPicture("mistakes", exercise, tuple(plain_text(g.label) for g in found),
                   tuple(len(g.students) for g in found))


def draw(picture):
    """A ``ReportPicture`` drawn with matplotlib: its ``data:`` address."""
    import matplotlib

    with matplotlib.rc_context({"text.parse_math": False}):
        if picture.kind == "scores":
            figure = _figure(6.4, 2.8, left=0.13, bottom=0.24)
            axes = figure.add_subplot()
            bars = axes.bar(picture.labels, picture.counts, color=BAR, width=0.8)
            axes.set_xticks(picture.labels)
            axes.set_xlabel(f"points, of {picture.most:g}", fontsize=14, color=TEXT)
            axes.set_ylabel("learners", fontsize=14, color=TEXT)
        else:
            labels = [_short(label) for label in picture.labels]
            left = min(0.6, 0.03 + 8.6 * max(len(label) for label in labels) / 800)  # 14 px text, 800 px wide
            figure = _figure(8.0, 0.5 * len(labels) + 1.0, left=left, bottom=0.9 / (0.5 * len(labels) + 1.0))
            axes = figure.add_subplot()
            bars = axes.barh(range(len(labels)), picture.counts, color=BAR, height=0.7)
            axes.set_yticks(range(len(labels)), labels)
            axes.invert_yaxis()
            axes.set_xlabel("learners who lost its points", fontsize=14, color=TEXT)
        axes.bar_label(bars, fontsize=13, color=TEXT, padding=2)
        axes.margins(x=0.08) if picture.kind != "scores" else axes.margins(y=0.15)
        for side in ("top", "right"):
            axes.spines[side].set_visible(False)
        axes.tick_params(labelsize=14, colors=TEXT)
        return _png(figure)


def draw_all(pictures, jobs=None):
    """``{picture: data: address}``, drawn in ``jobs`` forked processes."""
    import matplotlib.figure  # noqa: F401 (imported once, before the fork)

    unique = list(dict.fromkeys(pictures))
    return in_parallel(_draw_share, None, unique, jobs or min(2, os.cpu_count() or 1), at_least=8)


def _draw_share(_, pictures):
    return {picture: draw(picture) for picture in pictures}


def _short(text, most=44):
    text = plain_text(text)
    return text if len(text) <= most else text[:most - 1] + "\u2026"


