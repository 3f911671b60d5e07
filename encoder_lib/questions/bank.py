"""What a question is: its words, the widget that answers it, and how its answer is computed from that widget.

A ``Question`` names a widget class (by name: this module imports no widget)
and a ``compute(look)`` that reads the widget's own states: ``look(**values)``
moves the widget's controls to ``values`` (the others where they stand) and
returns what its ``draw`` returns, the numbers its picture shows. So the key
is never typed by hand: it is what the experiment the widget draws gives
today, and a change of the model or the widget that changes it changes the
key (``tests/test_questions.py`` holds the keys the lessons' texts rely on).

Where the experiment does not settle the question clearly (two numbers too
close to call a rise or a fall), ``compute`` raises ``QuestionError`` rather
than give a key a learner could argue with.
"""

import dataclasses
import math

class QuestionError(ValueError):
    """The experiment does not settle a question clearly, or cannot show what the question asks."""


@dataclasses.dataclass(frozen=True)
class Answer:
    """A question's answer as the widget computes it: ``key`` (a choice's key, or a number), ``show`` (the control
    values that show it; the others stay where they are), ``why`` (one or two sentences, with the numbers)."""

    key: object
    show: dict
    why: str
    choices: dict = None  # the choices, where they depend on the widget (lesson 02's positions)


@dataclasses.dataclass(frozen=True)
class Question:
    """A question asked before a widget. ``choices``: ``{key: label}``, or empty for a number, which is right
    within ``tolerance`` (of the key's size when ``relative``)."""

    id: str
    lesson: str
    widget: str
    prompt: str
    compute: object
    _: dataclasses.KW_ONLY
    choices: dict = dataclasses.field(default_factory=dict)
    tolerance: float = 0.0
    relative: bool = False

    def answer(self, explorer):
        """The ``Answer`` that ``explorer`` (a ``widget``) computes; its controls and picture are left as they were."""
        if type(explorer).__name__ != self.widget:
            raise TypeError(f"explorer must be a {self.widget} (question {self.id}), got {type(explorer).__name__}")
        start = explorer.values()
        try:
            found = self.compute(_Look(explorer))
        finally:
            explorer.frame(start, picture=False)  # the artists as they were: the next redraw starts from them
        choices = found.choices or self.choices
        if choices and found.key not in choices:
            raise QuestionError(f"question {self.id}: its computed key {found.key!r} is none of {list(choices)}")
        return found if found.choices else dataclasses.replace(found, choices=dict(choices))

    def judge(self, given, key):
        """Whether ``given`` (a choice's key, or a number) is right for the computed ``key``."""
        if self.choices or not isinstance(key, (int, float)):
            return given == key
        if isinstance(given, bool) or not isinstance(given, (int, float)) or not math.isfinite(given):
            return False
        room = self.tolerance * abs(key) if self.relative else self.tolerance
        return abs(given - key) <= room + 1e-12


class _Look:
    """``look(**values)``: the widget's ``draw`` numbers with its controls at ``values`` (the rest at the start)."""

    def __init__(self, explorer):
        self.explorer, self.start, self.seen = explorer, explorer.values(), {}

    def __call__(self, **values):
        unknown = set(values) - set(self.start)
        if unknown:
            raise QuestionError(f"{type(self.explorer).__name__} has no control {sorted(unknown)}")
        wanted = {**self.start, **values}
        key = tuple(wanted.items())
        if key not in self.seen:
            reached = self.explorer.settle(list(wanted.items()))
            if any(reached[name] != value for name, value in values.items()):
                raise QuestionError(f"{type(self.explorer).__name__} cannot show {values}: it settles at {reached}")
            self.seen[key] = self.explorer.draw(**reached)
        return self.seen[key]

    def full(self, **values):
        """Every control's value for a state that sets ``values`` (the rest at the start), for ``Answer.show``."""
        return {**self.start, **values}


def trend(before, after, same=0.1):
    """``"rises"``, ``"falls"`` or ``"stays"`` (within ``same`` of ``before``, relatively) for a change from
    ``before`` to ``after``; a change between half and twice ``same`` is too close to call (``QuestionError``)."""
    change = (after - before) / max(abs(before), 1e-12)
    if abs(change) <= same / 2:
        return "stays"
    if abs(change) >= 2 * same:
        return "rises" if change > 0 else "falls"
    raise QuestionError(f"a change from {before:.4g} to {after:.4g} is too close to call a rise, a fall or no change")


def ratio_trend(ratio, same=1.25, clear=1.5):
    """``"larger"``, ``"smaller"`` or ``"same"`` for a ratio: the same within a factor ``same``, clearly larger or
    smaller beyond ``clear``; between the two, too close to call."""
    if 1 / same <= ratio <= same:
        return "same"
    if ratio >= clear or ratio <= 1 / clear:
        return "larger" if ratio > 1 else "smaller"
    raise QuestionError(f"a ratio of {ratio:.3g} is too close to call larger, smaller or about the same")


def clear_best(scores, margin):
    """The key of the largest of ``scores`` (``{key: number}``), if it leads the next by at least ``margin``."""
    ranked = sorted(scores.items(), key=lambda item: item[1], reverse=True)
    if len(ranked) > 1 and ranked[0][1] - ranked[1][1] < margin:
        raise QuestionError(f"{ranked[0][0]!r} ({ranked[0][1]:.3g}) and {ranked[1][0]!r} ({ranked[1][1]:.3g}) are "
                            f"closer than {margin}: too close to call")
    return ranked[0][0]


def yes_no(value, yes_below, no_above):
    """``"yes"`` where ``value`` (a distance from what the question asks) is below ``yes_below``, ``"no"`` above
    ``no_above``; between them, too close to call."""
    if value < yes_below:
        return "yes"
    if value > no_above:
        return "no"
    raise QuestionError(f"{value:.3g} is between {yes_below} and {no_above}: too close to call yes or no")


YES_NO = {"yes": "yes", "no": "no"}
