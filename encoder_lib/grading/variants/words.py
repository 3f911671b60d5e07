"""How an edit of a model is told: what a call computes (``NOUNS``), what an operator does, and a node in words
(``noun``: ```gamma```, "the maximum"), never quoting the model's code."""

import ast


#: What a call computes, as a sentence names it.
NOUNS = {"max": "maximum", "min": "minimum", "sum": "sum", "mean": "mean", "var": "variance", "std":
         "standard deviation", "sqrt": "square root", "exp": "np.exp", "tanh": "np.tanh", "erf": "erf", "log":
         "np.log", "layer_norm": "layer norm", "softmax": "softmax", "masked_softmax": "masked softmax", "gelu":
         "GELU", "relu": "ReLU", "maximum": "np.maximum", "sublayer": "sub-layer", "feed_forward": "feed-forward "
         "network", "multi_head_attention": "multi-head attention", "where": "np.where", "swapaxes": "swap of axes",
         "reshape": "reshape", "transpose": "transpose", "moveaxis": "move of axes", "matmul": "matrix product",
         "concatenate": "concatenation", "einsum": "np.einsum", "arange": "range", "sin": "sine", "cos": "cosine"}
OPERATORS = {ast.Add: ("an addition", "adding"), ast.Sub: ("a subtraction", "subtracting"),
              ast.Mult: ("a multiplication", "multiplying by"), ast.Div: ("a division", "dividing by"),
              ast.MatMult: ("a matrix product (@)", "the matrix product with"), ast.Pow: ("a power", "the power")}



def call_name(node):
    func = node.func if isinstance(node, ast.Call) else None
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def noun(node, model, assigned):
    """What ``node`` is, in words: ```gamma```, "the maximum", "the square root"."""
    if isinstance(node, ast.Name):
        if node.id in model.parameters or node.id in model.sizes:
            return f"`{node.id}`"
        value = assigned.get(node.id)
        return noun(value, model, {}) if value is not None else "a term"
    if isinstance(node, ast.BinOp) and all(isinstance(n, (ast.Name, ast.Constant, ast.operator, ast.Load, ast.BinOp))
                                           for n in ast.walk(node)) and \
            all(n.id in model.parameters or n.id in model.sizes for n in ast.walk(node) if isinstance(n, ast.Name)):
        return f"`{ast.unparse(node)}`"
    if isinstance(node, ast.Call):
        name = call_name(node)
        return f"the {NOUNS[name]}" if name in NOUNS else "a term"
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
        return f"{node.value:g}"
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return "-" + noun(node.operand, model, assigned)
    if isinstance(node, ast.Subscript):
        if isinstance(node.value, ast.Name) and node.value.id in model.parameters and \
                isinstance(node.slice, ast.Constant):
            return f"`{ast.unparse(node)}`"
        return noun(node.value, model, assigned)
    return "a term"


def value_words(value):
    return "None" if value is None else f"{value:g}" if isinstance(value, (int, float)) else repr(value)
