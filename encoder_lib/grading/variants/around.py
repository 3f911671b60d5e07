"""Edits around a step rather than inside it: an operand moved across a call (``erf(x / s)`` written ``erf(x) / s``),
a step's result passed through another function the model uses (a layer norm too many), the function's input added
to what it returns (a residual connection inside it). ``edits`` makes them beside its own, told the same way."""

import ast
import copy

from .words import NOUNS, OPERATORS, call_name, noun


#: Calls an operand of their argument is moved out of (``erf(x / s)`` written ``erf(x) / s``), or into.
MOVABLE = {"erf", "sqrt", "exp", "tanh", "log"}
#: The functions whose result a step may be passed through by mistake, where the model uses them, and the calls
#: whose result may be: a sub-layer's, an activation's, a norm's.
WRAPPERS = ("layer_norm", "gelu", "relu")
WRAPPED = {"sublayer", "feed_forward", "multi_head_attention", "gelu", "relu", "maximum", "layer_norm"}


def moved_out(node, model, assigned):
    """``f(a op b)`` written ``f(a) op b``: the operation with ``b`` done outside the call."""
    inner = node.args[0]
    name = call_name(node)
    doing = OPERATORS[type(inner.op)][1]
    said = f"{doing} {noun(inner.right, model, assigned)} is done outside the {NOUNS.get(name, name)}, not inside it"
    return ("moved", said, lambda n: ast.BinOp(ast.Call(n.func, [n.args[0].left], n.keywords), n.args[0].op,
                                                n.args[0].right))


def moved_in(node, model, assigned):
    """``f(a) op b`` written ``f(a op b)``: the operation with ``b`` done inside the call."""
    name = call_name(node.left)
    doing = OPERATORS[type(node.op)][1]
    said = f"{doing} {noun(node.right, model, assigned)} is done inside the {NOUNS.get(name, name)}, not after it"
    return ("moved", said, lambda n: ast.Call(n.left.func, [ast.BinOp(n.left.args[0], n.op, n.right)],
                                              n.left.keywords))


def wrap_edits(node, model):
    """The call's result passed through one of the functions the model uses (``WRAPPERS``) as well."""
    called = {call_name(n): n for n in ast.walk(model.tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
    name = call_name(node)
    return [("wrapped", f"the {NOUNS.get(name, name)}'s result goes through a {NOUNS[wrapper]} as well",
             lambda n, wrapper=wrapper: ast.Call(ast.Name(wrapper, ast.Load()), [copy.deepcopy(n)], []))
            for wrapper in WRAPPERS if wrapper in called and wrapper != name]


def residual_edit(node, first):
    """The function's first input added to what it returns (to the first of a returned pair): a residual
    connection inside the step, where Add & Norm adds it outside."""
    def make(n):
        if isinstance(n.value, ast.Tuple):
            head, *rest = n.value.elts
            return ast.Return(ast.Tuple([ast.BinOp(head, ast.Add(), ast.Name(first, ast.Load())), *rest], ast.Load()))
        return ast.Return(ast.BinOp(n.value, ast.Add(), ast.Name(first, ast.Load())))
    return ("residual", f"the input `{first}` is added to what it returns (a residual connection inside it)", make)
