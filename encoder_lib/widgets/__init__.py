"""The course's interactive widgets, one module per lesson (imported only by the notebooks).

Every widget is an ``Explorer`` (see ``_base``): controls, a picture redrawn
in place, a caption that says what to look for, and ``state``, the numbers it
currently shows. Each module lists its widget builders in ``EXPLORERS``;
``all_explorers()`` collects them for the tests and the benchmark.
"""

import importlib

#: Lesson modules, in course order.
MODULES = ("attention", "heads", "feed_forward", "add_norm", "block", "stack", "gradients", "pretrained", "modern")


def all_explorers():
    """``[(module name, builder), ...]``: every widget builder, each callable with no arguments."""
    found = []
    for name in MODULES:
        module = importlib.import_module(f"{__name__}.{name}")
        found.extend((name, builder) for builder in module.EXPLORERS)
    return found
