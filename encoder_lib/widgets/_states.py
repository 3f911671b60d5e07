"""Every state a widget's controls can reach, and where each move leads: what the course's website draws
(``tools/site``) without a kernel."""

import collections
import itertools

import ipywidgets as widgets

from ._base import Explorer
from ._controls import _same, control_kind, control_options


class StateSpace:
    """Every state a widget's controls can reach from where they start, and where each move leads.

    A state is the tuple of the control values, in the order of
    ``explorer.controls``; ``start`` is where they stand now. A widget whose
    controls are independent (it has no ``adjust_controls``) reaches every
    combination of their values. One that links them (a head slider whose
    maximum follows the number of heads) is explored move by move from
    ``start``, each move made on the widget's own controls (``settle``), so
    that its ``adjust_controls`` decides where the move leads. No picture is
    drawn; the controls are put back at ``start``.

    ``values[name]``: every value the control takes in some state, in its own
    order; ``labels[name]``: each value's label as the widget shows it.
    ``offered(state)`` and ``move(state, name, value)`` give, for one state,
    the values each control offers and the state a move leads to.

    >>> from encoder_lib.widgets.add_norm import AddNormExplorer
    >>> space = StateSpace(AddNormExplorer())
    >>> space.names, space.start, len(space.states)
    (('norm', 'residual'), ('post', True), 4)
    >>> space.move(('post', True), 'norm', 'pre'), space.labels['norm']['pre']
    (('pre', True), 'pre-norm')
    """

    def __init__(self, explorer, limit=100_000):
        if not isinstance(explorer, Explorer):
            raise TypeError(f"explorer must be a course widget (an Explorer), got {type(explorer).__name__}")
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise ValueError(f"limit must be a positive number of states, got {limit!r}")
        self.explorer = explorer
        self.names = tuple(explorer.controls)
        self.start = tuple(explorer.values().values())
        self.linked = type(explorer).adjust_controls is not Explorer.adjust_controls
        self.labels = {name: {} for name in self.names}
        self._offered, self._moves = {}, {}
        if self.linked:
            self.states = self._explore(limit)
        else:
            offered = self._read_offered()
            count = 1
            for values in offered.values():
                count *= len(values)
            if count > limit:
                raise ValueError(f"{type(explorer).__name__} has {count} states, more than limit={limit}")
            self.states = list(itertools.product(*offered.values()))
        self.values = {name: self._in_order(name) for name in self.names}

    def _read_offered(self):
        """``{name: [values]}`` that each control offers as it stands; records their labels."""
        offered = {}
        for name, control in self.explorer.controls.items():
            options = control_options(control)
            self.labels[name].update((value, label) for label, value in options)
            offered[name] = [value for _, value in options]
        return offered

    def _at(self, state):
        reached = tuple(self.explorer.settle(zip(self.names, state)).values())
        if reached != state:
            raise ValueError(f"{type(self.explorer).__name__}: moving its controls to {state} leaves them at {reached}")

    def _explore(self, limit):
        queue, seen = collections.deque([self.start]), {self.start}
        try:
            while queue:
                state = queue.popleft()
                self._at(state)
                offered = self._offered[state] = self._read_offered()
                for name, values in offered.items():
                    for value in values:
                        self._at(state)
                        after = tuple(self.explorer.settle([(name, value)]).values())
                        self._moves[state, name, value] = after
                        if after not in seen:
                            if len(seen) >= limit:
                                raise ValueError(f"{type(self.explorer).__name__} reaches more than limit={limit} "
                                                 "states")
                            seen.add(after)
                            queue.append(after)
        finally:
            self._at(self.start)
        return sorted(seen, key=self._order_key)

    def _order_key(self, state):
        return [self._rank(name, value) for name, value in zip(self.names, state)]

    def _rank(self, name, value):
        control = self.explorer.controls[name]
        if control_kind(control) == "slider" and not isinstance(control, widgets.SelectionSlider):
            return value
        return list(self.labels[name]).index(value)

    def _in_order(self, name):
        values = {state[self.names.index(name)] for state in self.states}
        return sorted(values, key=lambda value: self._rank(name, value))

    def offered(self, state):
        """``{name: [values]}``: what each control offers in ``state``."""
        if self.linked:
            return self._offered[self._known(state)]
        return {name: self.values[name] for name in self.names}

    def move(self, state, name, value):
        """The state that moving control ``name`` to ``value`` in ``state`` leads to."""
        state = self._known(state)
        if name not in self.names:
            raise ValueError(f"name must be one of the controls {self.names}, got {name!r}")
        if not any(_same(value, v) for v in self.offered(state)[name]):
            raise ValueError(f"in {state}, {name!r} offers {self.offered(state)[name]}, not {value!r}")
        if self.linked:
            return self._moves[state, name, value]
        return tuple(value if n == name else v for n, v in zip(self.names, state))

    def _known(self, state):
        state = tuple(state)
        if len(state) != len(self.names) or not all(
                any(_same(v, w) for w in self.values[n]) for n, v in zip(self.names, state)) or (
                self.linked and state not in self._offered):
            raise ValueError(f"state must be one of the widget's reachable states (values of {self.names}), "
                             f"got {state}")
        return state
