"""Each exercise's error model: the right answer with one idea broken, or two, each told in a learner's words.

An exercise's ``model`` is a plain numpy version of its right answer, every
line ending in a ``# step: <key>`` comment; the exercise's file gives each
key the idea of that step in words, as "in the step where ..." reads it::

    def softmax_model(x, axis=-1):
        shifted = x - x.max(axis=axis, keepdims=True)  # step: shifted
        e = np.exp(shifted)  # step: e
        return e / e.sum(axis=axis, keepdims=True)  # step: result

    [softmax.steps]   # in attention.toml
    shifted = "each row's own maximum (along `axis`) is subtracted from it"
    e = "the shifted scores are exponentiated"
    result = "each row is divided by its own sum (along `axis`)"

``singles(exercise)`` makes every variant of the model that one small,
typical edit gives (``MUTATIONS``: another axis, no keepdims, a transpose
dropped, an operator or a term changed, a call left out or doubled, an
argument not passed on, two arguments swapped, a parameter ignored, a
constant changed, a range one off, a mask flipped or put on the other
axis), plus the exercise's own ``variants`` (what learners of the field
write: GELU's tanh approximation, say); ``pair(a, b)`` makes both edits at
once. Each variant carries the idea it breaks and the change, in words that
never quote the model's code: the cause a learner reads when, and only
when, the variant reproduces what their answer computed (``causes``).
"""

import ast
import inspect
from dataclasses import KW_ONLY, dataclass, field


from ..._checks import non_finite_allowed
from ..compare import Raised, callable_inputs, quietly
from .edits import edits_of, substitutes
from .inputs import transformed
from .model import Model, Mutation

__all__ = ["Model", "Mutation", "Variant", "input_variants", "pair", "run", "singles"]


@dataclass(frozen=True)
class Variant:
    """A right answer with one or two ideas broken: its ``function`` has the exercise's signature.

    ``mutations`` are its edits of the model; ``transform`` (or None) changes
    the inputs before the model sees them (``inputs``: every weight matrix
    transposed, a bias left out)."""

    key: str
    words: str  # the change(s), as a sentence part: "in the step where ..., ..."
    function: object = field(compare=False)
    _: KW_ONLY
    ideas: tuple = ()  # the ideas of the steps it changes
    mutations: tuple = field(default=(), compare=False)
    count: int = 1  # how many edits it holds
    transform: object = field(default=None, compare=False)


@dataclass(frozen=True)
class _Parsed:
    model: Model
    mutations: tuple
    names: dict  # what a compiled variant may call besides the model's module: the catalogued mistakes' models


_PARSED = {}


def known_mistakes(exercise, model, catalogue):
    """``{name: [Mistake]}``: the catalogued mistakes of the other exercises whose function the model calls."""
    called = {n.func.id for n in ast.walk(model.tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
    return {name: list(catalogue[name].mistakes) for name in sorted(called)
            if name in catalogue and catalogue[name].mistakes and name != exercise.name}


def parsed(exercise, catalogue=None):
    """The exercise's model and every single edit of it (built once)."""
    if exercise.name not in _PARSED:
        model = Model.of(exercise.model, dict(exercise.steps))
        known = known_mistakes(exercise, model, catalogue or {})
        _PARSED[exercise.name] = _Parsed(model, tuple(edits_of(model, known)), substitutes(known))
    return _PARSED[exercise.name]


_SINGLES = {}


def singles(exercise, catalogue=None):
    """Every variant with one edit of the exercise's model, and the exercise's own ``variants``, each once
    (``catalogue``: every exercise by name, whose mistakes its calls of earlier exercises may make)."""
    if exercise.name not in _SINGLES:
        if getattr(exercise, "model", None) is None:
            _SINGLES[exercise.name] = tuple(getattr(exercise, "variants", ()))
            return _SINGLES[exercise.name]
        made = parsed(exercise, catalogue)
        found, seen = [], set()
        for mutation in made.mutations:
            compiled = made.model.compile([mutation], made.names, text=True)
            if compiled is None or compiled[1] in seen:
                continue
            function, text = compiled
            seen.add(text)
            found.append(Variant(mutation.key, mutation.words, function,
                                 ideas=(mutation.idea,) if mutation.idea else (), mutations=(mutation,)))
        _SINGLES[exercise.name] = tuple(found) + (_twice(exercise),) + tuple(getattr(exercise, "variants", ()))
    return _SINGLES[exercise.name]


def _twice(exercise):
    """The whole right answer applied to its own result (the first input replaced by it): a step run twice that is
    the whole function."""
    model = exercise.model

    def twice(first, *args, **kwargs):
        return model(model(first, *args, **kwargs), *args, **kwargs)

    return Variant("twice", f"the whole of it is applied twice: a right `{exercise.name}` of its own result", twice,
                   mutations=(Mutation("twice", "", None, None),))


def pair(exercise, a, b):
    """The variant with the edits of both ``a`` and ``b`` (variants of the model, or of its inputs), or None."""
    if a.key == b.key or (not a.mutations and a.transform is None) or (not b.mutations and b.transform is None) \
            or (a.transform is not None and b.transform is not None):
        return None
    made = _PARSED[exercise.name]
    edits = [*a.mutations, *b.mutations]
    function = made.model.compile(edits, made.names) if edits else exercise.model
    if function is None:
        return None
    change = a.transform or b.transform
    if change is not None:
        function = change(function)
    ideas = tuple(dict.fromkeys(a.ideas + b.ideas))
    return Variant(f"{a.key}+{b.key}", f"{a.words}; and {b.words}", function, ideas=ideas, mutations=tuple(edits),
                   count=2, transform=change)


def input_variants(exercise, case):
    """The variants of the right answer (the model) run on ``case``'s inputs changed (``inputs``): its weight
    matrices transposed, a bias left out, one parameter read for another."""
    if getattr(exercise, "model", None) is None:
        return ()
    inputs = inspect.signature(exercise.model).bind(*case.args, **case.kwargs).arguments
    return tuple(transformed(exercise.model, dict(inputs), lambda key, words, function, transform: Variant(
        key, words, function, transform=transform)))


def run(variant, args, kwargs):
    """What ``variant`` gives on one case's inputs (not copied: a variant is the course's own code, which leaves
    its inputs alone): its value, or the exception it raised."""
    with quietly(), non_finite_allowed():
        try:
            return variant.function(*callable_inputs(args, copy=False), **callable_inputs(kwargs, copy=False))
        except Exception as exc:  # the variant raises here: an answer that raises the same has it
            return Raised.of(exc)
