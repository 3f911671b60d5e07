"""What every lesson's exercises are made of: ``Exercise``, ``Mistake``, and the helpers their cases share."""

from dataclasses import dataclass

import numpy as np

from ...params import init_block_params, off_defaults


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
    - ``cases(rng, hidden)``: ``[(description, args, kwargs)]``, the inputs it is
      checked on. ``hidden=False`` gives the cases the self-check and the
      visible tests show (always drawn from seed 0); ``hidden=True`` gives
      random shapes for the grader, drawn from the course's secret;
    - ``formula``: LaTeX, for the feedback page;
    - ``model``: the right answer written plainly in numpy, each line ending in a comment that says its idea
      ("# each row's own maximum is subtracted"): the error model's base, whose edits (``variants``) are the
      causes the feedback can verify; ``variants``: more ``variants.Variant``s, what learners of the field
      write that no single edit of the model gives;
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
    mistakes: tuple = ()
    uses: tuple = ()
    may_call: tuple = ()
    properties: tuple = ()
    outputs: tuple = ("result",)
    model: object = None
    variants: tuple = ()
    probes: object = None
    locate: object = None
    hints: tuple = ()


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
