"""What an exercise's inputs may be, as its docstring allows them, and the checks drawn from it.

Each exercise declares its input space in its lesson's file, in the table ``[<exercise>.space]``:

- ``lead``: the fewest and the most batch axes in front of the shape the docstring names (``(..., seq,
  d_model)``), and ``batch``: the sizes a batch axis takes;
- ``sizes``: each size the exercise's inputs have, with the values it takes (head counts other than the lesson's
  2, odd and even widths, a sequence of 1);
- ``regimes``: the value ranges, each with the words a check says of it (scores near 1000, rows that span 2,000,
  hidden values above 6, rows that are all padding);
- ``grid``: the sizes (and ``lead``, and ``regime``) whose every combination is drawn: where a wrong answer is
  wrong only at one corner (an ``axis=0`` of a 4-D array, a mask with no batch axis), the corner is always among
  the checks;
- ``once``: regimes drawn once per seed beside the grid (all-MiniLM-L6-v2's own block, whose inputs the sizes do
  not set);
- ``dtype``: the inputs' floating-point type, which the right result keeps;
- ``refuse``: the arguments whose values the library refuses (with an error that names them) where the statement
  says so, such as ``n_heads`` that does not divide ``d_model``: a contract check asks an answer to refuse them too
  (``contract``).

``Space.points(rng)`` draws the points a seed checks: every combination of the grid, and every value of every
other size and regime at least once (in shuffled runs), the ``once`` regimes once, batch sizes at random. The exercise's
``draw(rng, point)`` turns a point into inputs. The self-check draws from a public seed, the grader from the
course's secret and the hand-in: the same space, so that "Well done" in the notebook means that the grader
agrees on every input it may draw.
"""

import itertools
from dataclasses import KW_ONLY, dataclass, field

import numpy as np

#: The seed of the self-check's generated checks: public, the same for every learner.
PUBLIC_SEED = 2


@dataclass(frozen=True)
class Point:
    """One point of an exercise's input space: its ``regime`` (name and ``words``), its batch shape ``lead``, its
    ``sizes`` and the space's ``grid``."""

    regime: str
    words: str
    lead: tuple
    sizes: dict = field(default_factory=dict)
    grid: tuple = ()  # the space's grid: the features whose every combination is drawn

    def __getitem__(self, name):
        try:
            return self.sizes[name]
        except KeyError:
            raise KeyError(f"the space declares no size {name!r} (it has {', '.join(self.sizes)})") from None


@dataclass(frozen=True)
class Space:
    """An exercise's input space (the module's docstring says what each field holds)."""

    regimes: dict
    _: KW_ONLY
    lead: tuple = (0, 0)
    batch: tuple = (1, 2, 3)
    sizes: dict = field(default_factory=dict)
    grid: tuple = ()
    once: tuple = ()
    dtype: str = "float64"
    refuse: tuple = ()

    def __post_init__(self):
        if not self.regimes:
            raise ValueError("a space needs at least one regime")
        unknown = [name for name in self.grid if name not in ("lead", "regime") and name not in self.sizes]
        if unknown:
            raise ValueError(f"grid names {unknown[0]!r}, which is not one of the sizes ({', '.join(self.sizes)})")
        if [name for name in self.once if name not in self.regimes]:
            raise ValueError(f"once names a regime that is not one of the regimes ({', '.join(self.regimes)})")
        if not (0 <= self.lead[0] <= self.lead[1]):
            raise ValueError(f"lead is {list(self.lead)}: it must be [fewest, most] batch axes, 0 <= fewest <= most")

    def _options(self, name):
        if name == "lead":
            return tuple(range(self.lead[0], self.lead[1] + 1))
        if name == "regime":
            return tuple(r for r in self.regimes if r not in self.once) or tuple(self.regimes)
        return tuple(self.sizes[name])

    def points(self, rng):
        """The points one seed checks (the module's docstring says which)."""
        corners = list(itertools.product(*(self._options(name) for name in self.grid)))
        rotating = [name for name in (*self.sizes, "lead", "regime") if name not in self.grid]
        count = max(len(corners), *(len(self._options(n)) for n in rotating))
        cycles = {name: _cycle(rng, self._options(name), count) for name in rotating}
        chosen = [{**dict(zip(self.grid, corners[k % len(corners)])), **{n: cycles[n][k] for n in rotating}}
                  for k in range(count)]
        chosen += [{**chosen[0], "regime": regime} for regime in self.once]
        return [self._point(rng, values) for values in chosen]

    def _point(self, rng, values):
        values = dict(values)
        axes, regime = values.pop("lead"), values.pop("regime")
        lead = tuple(int(rng.choice(self.batch)) for _ in range(axes))
        return Point(regime, self.regimes[regime], lead, values, self.grid)


def _cycle(rng, options, count):
    """``count`` values of ``options``: shuffled runs through all of them, so that each comes up and no two sizes
    fall into step with each other or with the grid."""
    found = []
    while len(found) < count:
        found += [options[i] for i in rng.permutation(len(options))]
    return found[:count]


def drawn(exercise, rng):
    """``[(description, args, kwargs, point)]``: the exercise's checks at each point ``rng`` draws from its space,
    each description ending in its regime's words."""
    found = []
    for point in exercise.space.points(rng):
        description, args, kwargs = exercise.draw(rng, point)
        _check_dtype(exercise, (args, kwargs))
        found.append((f"{description}, {point.words}", tuple(args), dict(kwargs), point))
    return found


def _check_dtype(exercise, value):
    """The drawn inputs' arrays of floats are of the space's dtype (the declaration holds)."""
    if isinstance(value, np.ndarray):
        if value.dtype.kind == "f" and value.dtype != np.dtype(exercise.space.dtype):
            raise TypeError(f"{exercise.name}: its draw made a {value.dtype} input; its space declares "
                            f"{exercise.space.dtype}")
    elif isinstance(value, dict):
        for v in value.values():
            _check_dtype(exercise, v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            _check_dtype(exercise, v)
