"""No public function of the library takes more than six arguments by position; options go by keyword.

Options that travel together are one object (``BlockConfig``) or keywords:
``encoder_block(x, params, n_heads, norm="pre")``, never
``encoder_block(x, params, n_heads, "pre")``. The count is of the named
parameters that may be given by position (``self`` and ``cls`` left out); a
``*parts`` of like things (``sentences(*parts)``) is not an option and does
not count. It covers everything in ``encoder_lib.__all__`` and every public
function, class and method of the library's modules: the math core, the
backward pass, training, the pretrained model, the experiments, the
widgets and the grader (``encoder_lib.grading``, its exercises too).
"""

import importlib
import inspect
import pkgutil
import types

import course_grader
import encoder_lib

MOST = 6
#: The sandbox's own scripts, run there beside copies of wire.py and numeric.py, never imported as modules.
SANDBOX_SCRIPTS = ("course_grader.sandbox.runner", "course_grader.sandbox.answer")


def modules():
    names = ["encoder_lib", "course_grader"] + [
        m.name for package in (encoder_lib, course_grader)
        for m in pkgutil.walk_packages(package.__path__, package.__name__ + ".")
        if m.name != "encoder_lib.pretrained" and not m.name.endswith(".__main__") and m.name not in SANDBOX_SCRIPTS]
    try:  # it needs the model's packages; without them it is not part of the library here
        importlib.import_module("encoder_lib.pretrained")
        names.append("encoder_lib.pretrained")
    except ImportError:
        pass
    return [importlib.import_module(name) for name in names]


def public_callables(module):
    """``(name, callable)`` for the module's public functions and classes, and the classes' public methods."""
    exported = set(getattr(module, "__all__", ()))
    for name, obj in sorted(vars(module).items()):
        if name.startswith("_") or not callable(obj):
            continue
        if getattr(obj, "__module__", None) != module.__name__ and name not in exported:
            continue  # imported from elsewhere: counted where it is defined
        yield f"{module.__name__}.{name}", obj
        if inspect.isclass(obj):
            for method_name, method in sorted(vars(obj).items()):
                if not method_name.startswith("_") and isinstance(method, (types.FunctionType, classmethod,
                                                                           staticmethod)):
                    yield f"{module.__name__}.{name}.{method_name}", getattr(obj, method_name)


def by_position(fn):
    """The names of the parameters ``fn`` takes by position, ``self`` and ``cls`` left out."""
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):  # a builtin without a signature
        return []
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    names = [p.name for p in signature.parameters.values() if p.kind in kinds]
    return names[1:] if names[:1] in (["self"], ["cls"]) else names


def too_many(objects):
    return [f"{name}({', '.join(by_position(fn))})" for name, fn in objects if len(by_position(fn)) > MOST]


CALLABLES = [pair for module in modules() for pair in public_callables(module)]


def test_no_public_function_takes_more_than_six_arguments_by_position():
    assert len(CALLABLES) > 100, "the count must see the library's functions"
    assert not too_many(CALLABLES), "give these options by keyword (after a *) or as one config:\n" + \
        "\n".join(too_many(CALLABLES))


def test_every_exported_name_is_counted():
    counted = {name.rsplit(".", 1)[1] for name, _ in CALLABLES if name.startswith("encoder_lib.")}
    assert set(encoder_lib.__all__) <= counted


def test_the_block_functions_take_x_params_and_n_heads_by_position_and_grad_out_too():
    from encoder_lib import grad

    for fn in (encoder_lib.encoder_block, encoder_lib.encoder, encoder_lib.trace_encoder_block,
               encoder_lib.trace_encoder):
        assert by_position(fn)[2:] == ["n_heads"], fn.__name__
        assert list(inspect.signature(fn).parameters)[3:5] == ["norm", "padding_mask"], fn.__name__
    for fn in (grad.encoder_block_grad, grad.encoder_grad):
        assert by_position(fn)[2:] == ["n_heads", "grad_out"], fn.__name__
        assert "config" in inspect.signature(fn).parameters


def test_the_count_sees_a_function_with_seven_positional_arguments():
    """The check itself would fail: a function like the old encoder_block is caught, its keyword version is not."""
    def old(x, params, n_heads, norm="post", padding_mask=None, activation="relu", eps=1e-5):
        """x, params and five options, all by position."""

    def new(x, params, n_heads, *, norm="post", padding_mask=None, activation="relu", eps=1e-5):
        """The same options, by keyword only."""

    class Options:
        def run(self, a, b, c, d, e, f, g):  # self is not counted: seven more are
            """Seven by position."""

    assert too_many([("old", old), ("new", new), ("Options.run", Options().run)]) == [
        "old(x, params, n_heads, norm, padding_mask, activation, eps)", "Options.run(a, b, c, d, e, f, g)"]
