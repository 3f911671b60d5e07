"""The edits a model allows: each a small, typical slip, told as a clause that never quotes the model's code.

``edits_of(model, known)`` lists them: at a node (another axis, no keepdims,
a transpose dropped or reversing every axis, an operator swapped, a term or
a call left out, a call made twice, an argument not passed on or two
swapped, a reshape's sizes in the other order, another parameter of a dict
used (``params['w_q']`` for ``params['w_k']``), a constant changed, a range
one off, a mask's meaning flipped or its new axis on the other side, the
returned pair in the other order, an earlier exercise's function making one
of its catalogued mistakes), and at a parameter everywhere (ignored, or
swapped with its neighbour).
"""

import ast
import copy

from .around import MOVABLE, WRAPPED, moved_in, moved_out, residual_edit, wrap_edits
from .model import Mutation, replace, statement_lines
from .words import NOUNS, OPERATORS, call_name, noun, value_words

#: The calls whose result is a value of the same shape as their first argument: left out, or made twice.
SAME_SHAPE_CALLS = {"exp", "sqrt", "tanh", "erf", "abs", "log", "layer_norm", "softmax", "masked_softmax", "gelu",
                    "relu", "maximum", "sublayer", "feed_forward"}
_SWAPS = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Div, ast.Div: ast.Mult, ast.MatMult: ast.Mult}


# ---------------------------------------------------------------- the edits


def _at(index, make):  # noqa: D103
    """An ``apply`` that replaces node number ``index`` (in walk order) with ``make(node)``."""
    def apply(nodes, parents):
        node = nodes[index]
        return replace(parents, node, make(node))
    return apply


def edits_of(model, known=None):
    """Every ``Mutation`` of ``model``: the edits at each node of a line with an idea, then the edits of each
    parameter. ``known``: ``{function name: [Mistake]}``, an earlier exercise's catalogued mistakes, which the
    model's call of that function may make (its models stand in for it under the names ``substitutes`` gives)."""
    statements = statement_lines(model.tree)
    assigned = {t.id: n.value for n in ast.walk(model.tree) if isinstance(n, ast.Assign)
                for t in n.targets if isinstance(t, ast.Name)}
    keys = {n.slice.value for n in ast.walk(model.tree) if isinstance(n, ast.Subscript) and
            isinstance(n.slice, ast.Constant) and isinstance(n.slice.value, str)}
    found = []
    for index, node in enumerate(ast.walk(model.tree)):
        idea = model.idea_of(node, statements)
        if idea is None:
            continue
        edits = _edits_of_node(node, model, assigned, keys, known or {})
        for n, (kind, change, make) in enumerate(edits):
            found.append(Mutation(f"{kind}@{statements[id(node)] - model.tree.lineno}:{index}:{n}", change, idea,
                                  _at(index, make)))
    return found + _parameter_edits(model)


def substitutes(known):
    """The names under which the catalogued mistakes of ``known`` stand in a compiled variant."""
    return {_substitute(name, i): mistake.model for name, mistakes in (known or {}).items()
            for i, mistake in enumerate(mistakes)}


def _substitute(name, i):
    return f"_known_{name}_{i}"


def _edits_of_node(node, model, assigned, keys, known):
    """``[(kind, change, make)]``: the edits one node allows."""
    found = _kind_edits(node, model, assigned, keys, known)
    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in model.readable:
        found += _name_edits(node, model)
    if isinstance(node, ast.For) and isinstance(node.iter, ast.Name) and node.iter.id in model.parameters:
        found += _loop_edits(node)
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and type(node.slice.value) is int:
        found += _item_edits(node)
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Tuple):
        found += _new_axis_edits(node)
    elif isinstance(node, ast.Return) and isinstance(node.value, ast.Tuple) and len(node.value.elts) == 2:
        found.append(("order", "the two values are returned in the other order",
                      lambda n: ast.Return(ast.Tuple(n.value.elts[::-1], ast.Load()))))
    if isinstance(node, ast.Return) and node.value is not None and model.parameters:
        found.append(residual_edit(node, model.parameters[0]))
    return found


def _kind_edits(node, model, assigned, keys, known):
    """The edits of a node by its kind: an axis, a call, a key read, an operator, a transpose, a constant..."""
    if isinstance(node, ast.keyword) and node.arg == "axis":
        return _axis_edits(node)
    if isinstance(node, ast.Call):
        return _call_edits(node, model, assigned) + _known_edits(node, known)
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and node.slice.value in keys:
        return _key_edits(node, keys)
    if isinstance(node, ast.BinOp) and type(node.op) in OPERATORS:
        moved = [moved_in(node, model, assigned)] if isinstance(node.left, ast.Call) and \
            call_name(node.left) in MOVABLE and len(node.left.args) == 1 else []
        return _operator_edits(node, model, assigned) + moved
    if isinstance(node, ast.Attribute) and node.attr == "T":
        return [("transpose", "the transpose (.T) is left out", lambda n: n.value)]
    if isinstance(node, (ast.UnaryOp, ast.Compare)):
        return _unary_edits(node)
    if isinstance(node, ast.Constant) and type(node.value) in (int, float) and id(node) not in model.negated:
        return _constant_edits(node)
    if isinstance(node, ast.Slice):
        return _slice_edits(node)
    return []


def _unary_edits(node):
    """A negated constant's edits, a mask's meaning flipped, an ``is`` test the wrong way round."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant) \
            and type(node.operand.value) in (int, float):
        return _constant_edits(ast.Constant(-node.operand.value)) + _from_the_front(node.operand.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.Invert, ast.Not)):
        return [("flipped", "the mask's meaning is flipped (True read the other way)", lambda n: n.operand)]
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.Is, ast.IsNot)):
        other = ast.IsNot if isinstance(node.ops[0], ast.Is) else ast.Is
        return [("test", "the test is the wrong way round (`is` and `is not`)",
                 lambda n, other=other: ast.Compare(n.left, [other()], n.comparators))]
    return []


def _axis_edits(node):
    value = node.value
    given = value.id if isinstance(value, ast.Name) else None
    try:
        current = None if given else ast.literal_eval(value)
    except ValueError:
        return []
    edits = []
    for other in (-1, 0, -2, None):
        if not given and other == current:
            continue
        where = "over every entry at once" if other is None else f"along axis {other}"
        said = f"the {'`axis` passed' if given else f'axis {current}'}"
        edits.append(("axis", f"the reduction runs {where}, not along {said}",
                      lambda n, other=other: ast.keyword("axis", ast.Constant(other))))
    return edits


def _call_edits(node, model, assigned):
    name = call_name(node)
    edits = _keyword_edits(node, name)
    if name == "layer_norm" and node.args and isinstance(node.args[0], ast.BinOp) and \
            isinstance(node.args[0].op, ast.Add):
        edits.append(("residual", "the residual is added after the norm, which normalises the sub-layer's output "
                                  "alone", lambda n: ast.BinOp(n.args[0].left, ast.Add(), ast.Call(
                                      n.func, [n.args[0].right] + n.args[1:], n.keywords))))
    if name in SAME_SHAPE_CALLS and node.args:
        called = NOUNS.get(name, name)
        left_out = f"the {called} is left out"
        if name == "sqrt" and _size_words(node.args[0], model):
            # the scale found, whichever slip made it (no root, or a division by the root twice)
            left_out = f"the scale is {_size_words(node.args[0], model)} itself, not its square root"
        edits.append(("left out", left_out, lambda n: n.args[0]))
        edits.append(("twice", f"the {called} is applied twice", lambda n: ast.Call(n.func, [copy.deepcopy(n)] + n.args[
            1:], n.keywords)))
        edits += wrap_edits(node, model) if name in WRAPPED else []
    if name in MOVABLE and len(node.args) == 1 and isinstance(node.args[0], ast.BinOp) and \
            type(node.args[0].op) in OPERATORS:
        edits.append(moved_out(node, model, assigned))
    if name in ("swapaxes", "moveaxis", "transpose") and (node.args or isinstance(node.func, ast.Attribute)):
        edits += _swap_edits(name)
    if name == "where" and len(node.args) == 3:
        edits += _where_edits(node)
    if name == "arange" and len(node.args) == 1:
        edits.append(("off by one", "the range counts from 1 instead of 0", lambda n: ast.Call(n.func, [
            ast.Constant(1), ast.BinOp(n.args[0], ast.Add(), ast.Constant(1))], n.keywords)))
    return edits + _argument_edits(node, name, model, assigned)


def _size_words(node, model):
    """A size as a sentence says it (```d_k```, "the length of `q`'s last axis"), or '' for anything else."""
    if isinstance(node, ast.Name) and node.id in model.sizes:
        return f"`{node.id}`"
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) and node.value.attr == "shape" and \
            isinstance(node.value.value, ast.Name):
        index = node.slice.value if isinstance(node.slice, ast.Constant) else \
            -node.slice.operand.value if isinstance(node.slice, ast.UnaryOp) else None
        axis = "last axis" if index == -1 else f"axis {index}" if isinstance(index, int) else None
        return f"the length of `{node.value.value.id}`'s {axis}" if axis else ""
    return ""


def _keyword_edits(node, name):
    """A dropped keepdims, and each other keyword not passed on."""
    keywords = [k.arg for k in node.keywords]
    edits = []
    if "keepdims" in keywords:
        edits.append(("keepdims", "the reduction drops its axis (no keepdims=True)", lambda n: _without_keyword(
            n, "keepdims")))
    for keyword in keywords:
        if keyword not in (None, "axis", "keepdims"):
            edits.append(("argument", f"`{keyword}` is not passed on to the {NOUNS.get(name, name)}",
                          lambda n, keyword=keyword: _without_keyword(n, keyword)))
    return edits


def _swap_edits(name):
    """A swap of axes left out, or done as ``.T``."""
    def left_out(n):
        if isinstance(n.func, ast.Attribute) and n.func.attr in ("swapaxes", "transpose", "moveaxis") and \
                not (isinstance(n.func.value, ast.Name) and n.func.value.id == "np"):
            return n.func.value
        return n.args[0]

    return [("transpose", f"the {NOUNS[name]} is left out", left_out),
            ("transpose", "every axis is reversed (.T) in place of the swap",
             lambda n: ast.Attribute(_swapped_operand(n), "T", ast.Load()))]


def _known_edits(node, known):
    """The call of an earlier exercise's function, making one of that exercise's catalogued mistakes."""
    name = call_name(node)
    return [("known", f"its {name} makes a known mistake: {mistake.explanation}",
             lambda n, i=i, name=name: ast.Call(ast.Name(_substitute(name, i), ast.Load()), n.args, n.keywords))
            for i, mistake in enumerate(known.get(name, ()))]


def _key_edits(node, keys):
    """``params["w_k"]`` read as another key of its kind (``params["w_q"]``): a copied line not changed."""
    key = node.slice.value
    kind = key.rstrip("0123456789").split("_")[0]
    others = [k for k in sorted(keys) if k != key and k.rstrip("0123456789").split("_")[0] == kind]
    held = ast.unparse(node.value) if isinstance(node.value, ast.Name) else ""
    edits = [("key", f"`{held}[{other!r}]` is read in place of `{held}[{key!r}]`",
              lambda n, other=other: ast.Subscript(n.value, ast.Constant(other), n.ctx)) for other in others]
    if kind == "w":  # a weight matrix in the other layout: PyTorch's (out, in) where the course's is (in, out)
        edits.append(("transposed", f"`{held}[{key!r}]` is used transposed (.T)",
                      lambda n: ast.Attribute(n, "T", ast.Load())))
    return edits


#: What learners put in place of -inf: 0, and a large negative number (-1e9 and -10000 give the same weights).
_FILLS = (0.0, -1e9)


def _is_fill(node):
    """A replacement value: a number, or +-np.inf."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        node = node.operand
    return isinstance(node, ast.Constant) or (isinstance(node, ast.Attribute) and node.attr == "inf")


def _where_edits(node):
    """``np.where(condition, replacement, value)``: nothing replaced, everything replaced, or another fill."""
    _, first, second = node.args
    replacement = 1 if _is_fill(first) else 2 if _is_fill(second) else None
    if replacement is None:
        return [("where", "the choice is the other way round", lambda n: ast.Call(
            n.func, [n.args[0], n.args[2], n.args[1]], n.keywords))]
    kept = 3 - replacement
    edits = [("where", "nothing is replaced", lambda n, kept=kept: n.args[kept]),
             ("flipped", "the mask's meaning is flipped (True read as a real token)",
              lambda n: ast.Call(n.func, [ast.UnaryOp(ast.Invert(), n.args[0])] + n.args[1:], n.keywords)),
             ("where", "every entry is replaced", lambda n, replacement=replacement: n.args[replacement])]
    said = ast.unparse(node.args[replacement]).replace("np.", "")
    if replacement == 1:
        edits.append(("additive", f"a large negative number (such as -10000 or -1e9) is added to the masked scores, "
                                  f"with no guard, in place of replacing them with {said}", lambda n: ast.BinOp(
                                      n.args[2], ast.Add(), ast.Call(n.func, [n.args[0], ast.Constant(-1e9),
                                                                              ast.Constant(0.0)], []))))
    for fill in _FILLS:
        if said not in (repr(fill), f"{fill:g}"):
            words = "a large negative number (such as -1e9)" if fill < 0 else f"{fill:g}"
            edits.append(("fill", f"the replacement is {words} instead of {said}",
                          lambda n, fill=fill, at=replacement: ast.Call(n.func, _with_fill(n.args, at, fill),
                                                                        n.keywords)))
    return edits


def _with_fill(args, at, fill):
    new = list(args)
    new[at] = ast.Constant(fill) if fill >= 0 else ast.UnaryOp(ast.USub(), ast.Constant(-fill))
    return new


def _item_edits(node):
    """``f(...)[0]``: the item not taken (the whole pair used), or the other item."""
    index = node.slice.value
    edits = [("item", f"the [{index}] is left out, so the whole returned tuple is used", lambda n: n.value)]
    if index in (0, 1):
        edits.append(("item", f"item {1 - index} is taken in place of item {index}",
                      lambda n: ast.Subscript(n.value, ast.Constant(1 - index), n.ctx)))
    return edits


def _name_edits(node, model):
    """One array read in place of another the step could read (``x`` for ``h``)."""
    return [("name", f"`{other}` is read in place of `{node.id}`", lambda n, other=other: ast.Name(other, ast.Load()))
            for other in model.readable if other != node.id]


def _loop_edits(node):
    """A loop over a list parameter that skips its first or last item, or goes the other way."""
    name = node.iter.id
    ways = (("the loop skips the first item of", ast.Slice(ast.Constant(1), None, None)),
            ("the loop skips the last item of", ast.Slice(None, ast.UnaryOp(ast.USub(), ast.Constant(1)), None)),
            ("the loop runs backwards over", ast.Slice(None, None, ast.UnaryOp(ast.USub(), ast.Constant(1)))),
            ("the loop runs over only the first item of", ast.Slice(None, ast.Constant(1), None)))
    return [("loop", f"{said} `{name}`", lambda n, part=part: _loop_over(n, part)) for said, part in ways]


def _loop_over(node, part):
    new = copy.copy(node)
    new.iter = ast.Subscript(ast.Name(node.iter.id, ast.Load()), copy.deepcopy(part), ast.Load())
    return new


def _swapped_operand(node):
    if isinstance(node.func, ast.Attribute) and not (isinstance(node.func.value, ast.Name) and
                                                     node.func.value.id == "np"):
        return node.func.value
    return node.args[0]


def _without_keyword(node, name):
    return ast.Call(node.func, node.args, [k for k in node.keywords if k.arg != name])


def _argument_edits(node, name, model, assigned):
    """The call's arguments after the first: one left out (with those after it), or two neighbours swapped."""
    edits = []
    args = node.args
    if name == "reshape":
        return _reshape_edits(node, model, assigned)
    if len(args) < 2:
        return edits
    for i in range(1, len(args)):
        if isinstance(args[i], ast.Starred):
            break
        said = noun(args[i], model, assigned)
        dropped = [noun(a, model, assigned) for a in args[i:] if not isinstance(a, ast.Starred)]
        listed = dropped[0] if len(dropped) == 1 else ", ".join(dropped[:-1]) + " and " + dropped[-1]
        edits.append(("argument", f"{listed} {'is' if len(dropped) == 1 else 'are'} not passed on to the "
                                  f"{NOUNS.get(name, name)}", lambda n, i=i: ast.Call(n.func, n.args[:i], n.keywords)))
        if i + 1 < len(args) and not isinstance(args[i + 1], ast.Starred):
            other = noun(args[i + 1], model, assigned)
            if said != other:
                edits.append(("swapped", f"{said} and {other} are swapped in the {NOUNS.get(name, name)}",
                              lambda n, i=i: ast.Call(n.func, n.args[:i] + [n.args[i + 1], n.args[i]] + n.args[i + 2:],
                                                      n.keywords)))
    return edits


def _reshape_edits(node, model, assigned):
    """A reshape's neighbouring sizes in the other order (its last two, the ones a head split cuts), and the reshape
    made in column-major order (``order="F"``: the first axis runs fastest)."""
    args = node.args
    edits = [("reshape", "the reshape runs in column-major (Fortran) order, order='F', which fills the first axis "
                         "fastest instead of the last",
              lambda n: ast.Call(n.func, n.args, [*n.keywords, ast.keyword("order", ast.Constant("F"))]))]
    for i in range(len(args) - 1):
        if isinstance(args[i], ast.Starred) or isinstance(args[i + 1], ast.Starred):
            continue
        a, b = noun(args[i], model, assigned), noun(args[i + 1], model, assigned)
        edits.append(("reshape", f"the reshape's sizes {a} and {b} are in the other order",
                      lambda n, i=i: ast.Call(n.func, n.args[:i] + [n.args[i + 1], n.args[i]] + n.args[i + 2:],
                                              n.keywords)))
    return edits


def _operator_edits(node, model, assigned):
    kind, doing = OPERATORS[type(node.op)]
    edits = []
    if type(node.op) in _SWAPS:
        other = _SWAPS[type(node.op)]
        edits.append(("operator", f"{OPERATORS[other][0]} stands where there is {kind}",
                      lambda n, other=other: ast.BinOp(n.left, other(), n.right)))
    if type(node.op) in (ast.Add, ast.Sub, ast.Mult, ast.Div):
        edits.append(("term", f"without {doing} {noun(node.right, model, assigned)}", lambda n: n.left))
    if type(node.op) in (ast.Add, ast.Mult):
        edits.append(("term", f"without {doing} {noun(node.left, model, assigned)}", lambda n: n.right))
    if type(node.op) is ast.Sub:
        edits.append(("operator", "the subtraction is the other way round",
                      lambda n: ast.BinOp(n.right, ast.Sub(), n.left)))
    return edits


def _constant_edits(node):
    value = node.value
    if isinstance(value, bool):
        return []
    others = [value + 1, value - 1] if isinstance(value, int) else [value * 2, value / 2]
    if value in (0, 0.0):
        others = [1]
    if isinstance(value, float) and 0 < value < 1e-3:  # an eps: the values learners put there
        return [("eps", f"eps is {value_words(other)} instead of {value_words(value)}", lambda n, other=other: ast.Constant(other))
                for other in (1e-5, 1e-12, 1e-6, 1e-8) if other != value]
    return [("constant", f"the number {value_words(value)} is {value_words(other)} instead",
             lambda n, other=other: ast.Constant(other) if other >= 0 else ast.UnaryOp(ast.USub(), ast.Constant(-other)))
            for other in others]


def _from_the_front(value):
    """A negative axis or index (-``value``) counted from the front instead: -1 written 1 (the same where the array
    has 2 axes), 2 (3 axes) or 3 (4 axes); a negative float without its minus sign."""
    if not isinstance(value, int):
        return [("sign", f"the number {value_words(-value)} is {value_words(value)} instead",
                 lambda n: ast.Constant(value))]
    return [("sign", f"{-value} is written {front}, counted from the front: the same only where the array has "
                     f"{front + value} axes", lambda n, front=front: ast.Constant(front))
            for front in range(4) if 2 <= front + value <= 4]


def _slice_edits(node):
    edits = []
    for part in ("lower", "upper"):
        if getattr(node, part) is not None:
            for step, said in ((1, "one more"), (-1, "one less")):
                edits.append(("off by one", f"a slice's {part} bound is {said}",
                              lambda n, part=part, step=step: _shifted_slice(n, part, step)))
    return edits


def _shifted_slice(node, part, step):
    new = copy.copy(node)
    setattr(new, part, ast.BinOp(copy.deepcopy(getattr(node, part)), ast.Add(), ast.Constant(step)))
    return new


def _new_axis_edits(node):
    """``m[..., None, :]``: the new axis put on the other side, or left out."""
    items = node.slice.elts
    where = [i for i, item in enumerate(items) if isinstance(item, ast.Constant) and item.value is None]
    if len(where) != 1 or len(items) < 3:
        return []
    i = where[0]
    edits = []
    for j in (i - 1, i + 1):
        if 0 <= j < len(items) and not isinstance(items[j], ast.Constant) and \
                not (isinstance(items[j], ast.Constant) and items[j].value is Ellipsis):
            edits.append(("new axis", "the new axis (None) stands on the other side, so it lines up with the other "
                                      "axis", lambda n, i=i, j=j: _subscript_swapped(n, i, j)))
    return edits


def _subscript_swapped(node, i, j):
    items = list(node.slice.elts)
    items[i], items[j] = items[j], items[i]
    return ast.Subscript(node.value, ast.Tuple(items, ast.Load()), node.ctx)


def _parameter_edits(model):
    """Edits of a parameter wherever it is read: ignored (its default used), or swapped with a neighbour."""
    names = list(model.parameters)
    edits = []
    for name in names:
        if name in model.defaults:
            default = model.defaults[name]
            edits.append(Mutation(f"ignored:{name}", f"`{name}` is ignored (its default, {value_words(default)}, is used "
                                                     f"whatever is passed)", None, _everywhere(name, default=default)))
    for a, b in zip(names, names[1:]):
        if (a in model.defaults) == (b in model.defaults):  # two of a kind: inputs, or options
            edits.append(Mutation(f"swapped:{a}:{b}", f"`{a}` and `{b}` are swapped", None, _everywhere(a, swap=b)))
    return edits


def _everywhere(name, default=None, swap=None):
    def apply(nodes, parents):
        done = False
        for node in nodes:
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in (name, swap):
                if swap is None:
                    new = ast.Constant(default)
                else:
                    new = ast.Name(swap if node.id == name else name, ast.Load())
                done = replace(parents, node, new) or done
        return done
    return apply


