"""One failing case as the facts read it (``Evidence``), and what a fact finds (``Finding``)."""

import inspect
from dataclasses import dataclass

import numpy as np

from ..compare import callable_inputs, quietly
from ..in_words import numbers


@dataclass(frozen=True)
class Finding:
    """One measured fact about a failing case. ``key`` says which fact (the same on every case it holds on)."""

    key: str
    sentence: str


# ---------------------------------------------------------------- one failing case


#: A result with more than this many times the right answer's numbers is not converted to measure it.
MOST_CONVERTED = 4


class Evidence:
    """One failing case of one exercise: its inputs by parameter name, what the answer gave, what is right."""

    def __init__(self, exercise, case, outcome):
        self.exercise, self.case, self.outcome = exercise, case, outcome
        signature = inspect.signature(exercise.reference)
        self.parameters = signature.parameters
        self.inputs = dict(signature.bind(*case.args, **case.kwargs).arguments)  # as the case holds them
        self.got, self.expected = outcome.value, case.expected
        self._arrays = {}  # item -> the answer's output as floats, converted once

    @property
    def description(self):
        return self.case.description

    def quote(self, values, digits=3):
        """`` (0.13, -1.2, 0.5)``: some of the inputs, in a sentence; nothing for a hidden case, whose inputs the
        grader never shows."""
        return "" if getattr(self.case, "hidden", False) else " " + numbers(values, digits)

    @property
    def raised(self):
        return self.outcome.raised

    def value(self, name):
        """The input ``name`` as the answer got it (a sub-layer as a function); its default where not passed."""
        if name in self.inputs:
            return callable_inputs(self.inputs[name])
        default = self.parameters[name].default
        return None if default is inspect.Parameter.empty else default

    def given(self, name):
        """Was the input ``name`` passed, with a value other than its default?"""
        if name not in self.inputs:
            return False
        default = self.parameters[name].default
        value = self.inputs[name]
        if default is inspect.Parameter.empty:
            return True
        return not (value is default or (isinstance(value, (str, int, float)) and value == default))

    def reference(self, **changes):
        """The right answer on these inputs with some of them changed; None if it cannot be computed."""
        inputs = {name: callable_inputs(v) for name, v in {**self.inputs, **changes}.items()}
        try:
            with quietly():
                return self.exercise.reference(**inputs)
        except Exception:  # the change makes the inputs invalid: no variant to compare with
            return None

    def got_array(self, item=None):
        """The answer's output (or item ``item`` of its tuple) as a float array, converted once; None where it is
        not numbers, or has many more of them than the right answer (a result of any size converted to float64
        could cost the grader gigabytes: its shape is said by the check instead)."""
        if item not in self._arrays:
            self._arrays[item] = self._as_floats(item)
        return self._arrays[item]

    def _as_floats(self, item):
        got, expected = self.got, self.expected
        if item is not None:
            if not isinstance(got, tuple) or len(got) <= item or not isinstance(expected, tuple):
                return None
            got, expected = got[item], expected[item]
        if isinstance(got, np.ndarray) and (got.dtype == object or
                                            got.size > MOST_CONVERTED * max(1, np.size(expected))):
            return None
        try:
            return np.asarray(got, dtype=np.float64)
        except (TypeError, ValueError):
            return None

    def expected_array(self, item=None):
        expected = self.expected if item is None else self.expected[item]
        return np.asarray(expected, dtype=np.float64)

    def outputs(self):
        """``[(name, got, expected)]`` for each array output with the right shape: one, or each item of a tuple."""
        if isinstance(self.expected, tuple):
            names = output_names(self.exercise)
            pairs = [(names[i], self.got_array(i), self.expected_array(i)) for i in range(len(self.expected))]
        else:
            pairs = [("result", self.got_array(), self.expected_array())]
        return [(n, g, e) for n, g, e in pairs if g is not None and g.shape == e.shape]

    def where(self):
        return f"On the check \u201c{self.description}\u201d,"


def output_names(exercise):
    """What an exercise's outputs are called in its sentences: ``("out", "weights")``, ``("result",)``."""
    return getattr(exercise, "outputs", None) or ("result",)
