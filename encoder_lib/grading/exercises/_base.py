"""What every lesson's exercises are made of: ``Exercise``, ``Mistake``, the reader of their files
(``load_exercises``), and the helpers their cases share."""

import functools
import inspect
import textwrap
from dataclasses import dataclass
from importlib import resources

import numpy as np

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: the same reader, as the package tomli
    import tomli as tomllib

from ...params import init_block_params, off_defaults
from ..space import Space
from ..variants.model import step_keys


@dataclass(frozen=True)
class Mistake:
    """A typical wrong answer: its name, what is wrong in words, and a model that computes what it computes.

    ``model`` takes the exercise's arguments. It raises ``NotApplicable``
    (``grading.compare``) for inputs it does not describe. ``name`` is the key
    of the learners' versions of this mistake in ``tests/mistakes/``.
    """

    name: str
    explanation: str
    model: object
    hints: tuple = ()  # (the idea, a worked step): this mistake's own rungs 2 and 3 of the hint ladder


@dataclass(frozen=True, kw_only=True)
class Exercise:
    """One exercise: how to call it, what is right, what it may use, and what typical wrong answers compute.

    - ``reference``: the right answer, a callable with the exercise's signature;
    - ``cases(rng)``: ``[(description, args, kwargs)]``, the lesson's inputs it is
      checked on, which the self-check and the visible tests show (always drawn
      from seed 0);
    - ``space``: a ``space.Space``, every input its docstring allows (batch axes, sizes, value ranges, the
      dtype), from the table ``[<exercise>.space]``, and ``draw(rng, point)``: the inputs at one point of it. The
      self-check's generated checks are drawn from it with a public seed, the grader's hidden ones with the
      course's secret;
    - ``formula``: LaTeX, for the feedback page;
    - ``model``: the right answer written plainly in numpy, each line ending in ``# step: <key>``, and
      ``steps``: ``((key, words), ...)``, each step's idea as a learner reads it ("each row's own maximum is
      subtracted"), from the table ``[<exercise>.steps]``: the error model's base, whose edits (``variants``)
      are the causes the feedback can verify; ``variants``: more ``variants.Variant``s, what learners of the
      field write that no single edit of the model gives;
    - ``mistakes``: ``Mistake``s, the catalogue: a named cause, tried first;
    - ``uses``: earlier exercises' functions the answer may call by name (the
      learner gets the library's versions), ``may_call``: the library
      functions ``el.<name>`` it may use. Everything else of the library is
      blocked in the self-check and absent in the grader's sandbox;
    - ``properties``: the rules every right answer satisfies, each a function of a
      failing case's ``symptoms.Evidence`` returning a ``symptoms.Finding``
      (the rule and what the answer gives instead) when the answer breaks it: what
      the feedback says when no cause is verified;
    - ``outputs``: the names of the values it returns, as its sentences call them;
    - ``probes(rng)``: ``[(name, description, args, kwargs)]`` (a square case: ``square_probe``), inputs the answer
      also runs on, never graded (more evidence for a cause), and ``locate({name: right?})`` (None where the
      answer raised): a ``symptoms.Finding`` saying which probes it gets right (a block with its attention
      switched off, say);
    - ``hints``: rungs 2 and 3 of its hint ladder, (the idea it needs, with a
      link to the lesson's section that shows it; a worked step on a small
      example), in markdown (``grading.hints``).
    """

    name: str
    lesson: str
    points: int
    formula: str
    cases: object
    reference: object
    space: object
    draw: object
    mistakes: tuple = ()
    uses: tuple = ()
    may_call: tuple = ()
    properties: tuple = ()
    outputs: tuple = ("result",)
    model: object = None
    steps: tuple = ()
    variants: tuple = ()
    probes: object = None
    locate: object = None
    hints: tuple = ()


class ExerciseFileError(ValueError):
    """A lesson's exercise file that names an unknown function or key, or lacks a field."""


#: The keys of an exercise's table in its lesson's file, each with what it holds (``_Lesson``'s method that
#: reads it), and those it must have.
EXERCISE_KEYS = {"lesson": "word", "points": "whole", "formula": "word", "cases": "code", "reference": "code",
                 "space": "space", "draw": "code",
                 "model": "code", "probes": "code", "locate": "code", "properties": "codes", "variants": "objects",
                 "uses": "names", "may_call": "names", "outputs": "names", "hints": "rungs", "mistakes": "mistakes",
                 "steps": "steps"}
EXERCISE_REQUIRED = ("lesson", "points", "formula", "cases", "reference", "space", "draw", "model", "hints")
MISTAKE_KEYS = {"name": "word", "model": "code", "explanation": "text", "hints": "rungs"}
MISTAKE_REQUIRED = ("name", "model", "explanation")


def load_exercises(namespace):
    """The ``Exercise``s of the lesson module whose globals are ``namespace``, from the file beside it
    (``attention.py``'s is ``attention.toml``), in the file's order.

    Each of the file's tables is one exercise, named by its key: its texts (lesson, points, formula, outputs,
    uses, may_call, hints) as they are, and its code by the names of the module's functions (cases, reference,
    model, probes, locate, properties, variants). Each ``[[<exercise>.mistakes]]`` table is a ``Mistake``: its
    name, model, explanation and hints. A function with keyword arguments is ``{ function = "f", with = { k = v
    } }`` (``functools.partial``); a passage that several texts say is written once in the table ``[texts]`` and
    stands as ``{ text = "its key" }``.
    """
    package, stem = namespace["__name__"].rsplit(".", 1)
    path = resources.files(package) / f"{stem}.toml"
    try:
        with path.open("rb") as file:
            document = tomllib.load(file)
    except tomllib.TOMLDecodeError as exc:
        raise ExerciseFileError(f"{path}: {exc}") from None
    return read_exercises(document, namespace, path)


def read_exercises(document, namespace, path):
    """``load_exercises``' work on the file's ``document`` (as ``tomllib`` reads it), named ``path`` in errors.

    >>> def f(x): return x
    >>> table = {"lesson": "01", "points": 1, "formula": "x", "cases": "f", "reference": "f", "draw": "f",
    ...          "space": {"regimes": {"ordinary": "a few units"}}, "model": "f", "hints": ["idea", "step"]}
    >>> read_exercises({"f": table}, {"f": f, "__name__": "m"}, "m.toml")[0].points
    1
    >>> read_exercises({"f": {"lesson": "01", "points": 1}}, {"f": f, "__name__": "m"}, "m.toml")
    Traceback (most recent call last):
    encoder_lib.grading.exercises._base.ExerciseFileError: m.toml: exercise 'f': formula: missing
    >>> read_exercises({"f": {**table, "cases": "g"}}, {"f": f, "__name__": "m"}, "m.toml")
    Traceback (most recent call last):
    encoder_lib.grading.exercises._base.ExerciseFileError: m.toml: exercise 'f': cases: 'g' is not a function of m.py
    >>> read_exercises({"f": {**table, "space": {"regimes": {"a": "b"}, "grid": ["seq"]}}}, {"f": f, "__name__": "m"},
    ...                "m.toml")
    Traceback (most recent call last):
    encoder_lib.grading.exercises._base.ExerciseFileError: m.toml: exercise 'f': space: grid names 'seq', which is not one of the sizes ()
    """
    lesson = _Lesson(path, namespace)
    texts = document.get("texts", {})
    lesson.texts = {key: lesson.word("[texts]", key, value) for key, value in lesson.table("", "texts", texts).items()}
    exercises = []
    for name, table in document.items():
        if name != "texts":
            fields = lesson.fields(f"exercise {name!r}", table, EXERCISE_KEYS, EXERCISE_REQUIRED)
            lesson.check_steps(f"exercise {name!r}", fields)
            exercises.append(Exercise(name=name, **fields))
    return tuple(exercises)


class _Lesson:
    """One lesson's file being read: its name for errors, its module's namespace, its ``[texts]``. Each method
    named in ``EXERCISE_KEYS`` reads one key's value, or raises ``ExerciseFileError`` naming the file, the
    exercise (and mistake) and the key."""

    def __init__(self, path, namespace):
        self.path, self.namespace, self.texts = path, namespace, {}

    def fail(self, where, key, problem):
        raise ExerciseFileError(": ".join(str(part) for part in (self.path, where, key, problem) if part))

    def module(self):
        return self.namespace["__name__"].rsplit(".", 1)[-1] + ".py"

    def fields(self, where, table, kinds, required):
        """``{field: value}``: a table's keys, each read as ``kinds`` says."""
        for key in [*self.table(where, "", table), *required]:
            if key not in kinds:
                self.fail(where, key, f"not a key of this table (those are {', '.join(kinds)})")
            if key not in table:
                self.fail(where, key, "missing")
        return {key: getattr(self, kinds[key])(where, key, value) for key, value in table.items()}

    def steps(self, where, key, value):
        """``((key, words), ...)``: each model step's idea in words, by the key its ``# step:`` comment names."""
        return tuple((step, self.word(where, f"{key}.{step}", words)) for step, words in
                     self.table(where, key, value).items())

    def check_steps(self, where, fields):
        """Every ``# step:`` key of the model has its words in ``steps``, and every words' key is a step of it."""
        model = getattr(fields["model"], "func", fields["model"])
        marked = set(step_keys(textwrap.dedent(inspect.getsource(model))).values())
        written = {step for step, _ in fields.get("steps", ())}
        for step in sorted(marked - written):
            self.fail(where, f"steps.{step}", f"missing: {model.__name__} marks a step `# step: {step}`")
        for step in sorted(written - marked):
            self.fail(where, f"steps.{step}", f"no line of {model.__name__} ends in `# step: {step}`")

    def table(self, where, key, value):
        return value if isinstance(value, dict) else self.fail(where, key, "not a table")

    def word(self, where, key, value):
        return value if isinstance(value, str) else self.fail(where, key, "not a string")

    def whole(self, where, key, value):
        return value if isinstance(value, int) and not isinstance(value, bool) else \
            self.fail(where, key, "not a whole number")

    def text(self, where, key, value):
        """A string, or ``{ text = "key" }``: the passage ``key`` of ``[texts]``."""
        if not isinstance(value, dict):
            return self.word(where, key, value)
        if set(value) != {"text"} or value["text"] not in self.texts:
            self.fail(where, key, f"{value} is not {{ text = \"key\" }} with a key of [texts]")
        return self.texts[value["text"]]

    def names(self, where, key, value):
        return tuple(self.word(where, key, v) for v in self.listed(where, key, value))

    def rungs(self, where, key, value):
        if not isinstance(value, list) or len(value) != 2:
            self.fail(where, key, "not two rungs, [the idea, a worked step]")
        return tuple(self.text(where, key, v) for v in value)

    def listed(self, where, key, value):
        return value if isinstance(value, list) else self.fail(where, key, "not a list")

    def code(self, where, key, value):
        """A function of the module by name, or ``{ function = "f", with = { k = v } }``: f with those keyword
        arguments."""
        if isinstance(value, dict):
            if "function" not in value or set(value) - {"function", "with"}:
                self.fail(where, key, f"{value} is not {{ function = \"f\", with = {{ k = v }} }}")
            return functools.partial(self.code(where, key, value["function"]),
                                     **self.table(where, key, value.get("with", {})))
        found = self.namespace.get(value) if isinstance(value, str) else None
        return found if callable(found) else self.fail(where, key, f"{value!r} is not a function of {self.module()}")

    def codes(self, where, key, value):
        return tuple(self.code(where, key, v) for v in self.listed(where, key, value))

    def objects(self, where, key, value):
        """Names of the module's objects (``variants.Variant``s)."""
        missing = [v for v in self.names(where, key, value) if v not in self.namespace]
        return tuple(self.namespace[v] for v in value) if not missing else \
            self.fail(where, key, f"{missing[0]!r} is not defined in {self.module()}")

    def space(self, where, key, value):
        """``[<exercise>.space]``: a ``space.Space`` (its docstring says what each key holds)."""
        table = self.table(where, key, value)
        known = ("regimes", "lead", "batch", "sizes", "grid", "once", "dtype", "refuse")
        for name in table:
            if name not in known:
                self.fail(where, f"{key}.{name}", f"not a key of a space (those are {', '.join(known)})")
        sizes = self.table(where, f"{key}.sizes", table.get("sizes", {}))
        try:
            return Space(regimes=self.table(where, f"{key}.regimes", table.get("regimes", {})),
                         lead=tuple(self.listed(where, f"{key}.lead", table.get("lead", [0, 0]))),
                         batch=tuple(self.listed(where, f"{key}.batch", table.get("batch", [1, 2, 3]))),
                         sizes={k: tuple(self.listed(where, f"{key}.sizes.{k}", v)) for k, v in sizes.items()},
                         grid=self.names(where, f"{key}.grid", table.get("grid", [])),
                         once=self.names(where, f"{key}.once", table.get("once", [])),
                         dtype=self.word(where, f"{key}.dtype", table.get("dtype", "float64")),
                         refuse=self.names(where, f"{key}.refuse", table.get("refuse", [])))
        except ValueError as exc:
            self.fail(where, key, str(exc))

    def mistakes(self, where, key, value):
        """``[[<exercise>.mistakes]]``: a ``Mistake`` each."""
        return tuple(self.mistake(where, key, i, table) for i, table in enumerate(self.listed(where, key, value)))

    def mistake(self, where, key, i, table):
        if not isinstance(table, dict):
            self.fail(where, key, f"its entry {i + 1} is not a table")
        here = f"{where}, mistake {table.get('name', i + 1)!r}"
        return Mistake(**self.fields(here, table, MISTAKE_KEYS, MISTAKE_REQUIRED))


#: The probe name of a square case (as many positions as features): where a wrong answer's shapes broadcast by
#: accident and give numbers, not an error, those numbers tell which of its lines is wrong. Evidence, never graded.
SQUARE = "evidence:square"


def square_probe(description, *args, **kwargs):
    """``[(SQUARE, description, args, kwargs)]``: an exercise's square probe."""
    return [(SQUARE, description, list(args), kwargs)]


def cases(*items):
    """``[(description, args, kwargs)]`` with args a tuple and kwargs a dict."""
    return [(d, tuple(a), dict(k)) for d, a, k in items]


def normal(rng, *shape):
    return rng.standard_normal(shape)


def random_block(rng, d_model, d_ff):
    """A block's params (float64) with every gamma, beta and bias off its initial value."""
    return off_defaults(init_block_params(d_model, d_ff, rng, dtype=np.float64), rng)


def random_attention_params(rng, d_model):
    return off_defaults(init_block_params(d_model, 2 * d_model, rng, dtype=np.float64)["attn"], rng)


def random_ffn_params(rng, d_model, d_ff):
    return init_block_params(d_model, d_ff, rng, dtype=np.float64)["ffn"]
