"""An exercise's model parsed once (``Model``): its tree, each line's idea (the words its ``# step:`` key names in the
exercise's file), its parameters; and ``Mutation``, one edit of it, made on a fresh copy of the tree when a variant is
compiled."""

import ast
import inspect
import io
import re
import textwrap
import tokenize
import warnings
from dataclasses import KW_ONLY, dataclass, field


@dataclass(frozen=True)
class Mutation:
    """One edit of the model: ``key`` names it, ``change`` says it as a clause, ``idea`` is the step's (None
    for an edit of a parameter everywhere); ``apply(nodes, parents)`` makes it on a copy of the model's tree."""

    key: str
    change: str
    idea: str
    apply: object = field(compare=False)

    @property
    def words(self):
        return f"in the step where {self.idea}, {self.change}" if self.idea else self.change


#: The comment that ends each line of a model: the key of that step's words in the exercise's file.
STEP = re.compile(r"#\s*step:\s*(\w+)\s*$")


def step_keys(source):
    """``{line: key}`` of the ``# step: <key>`` comments that end a model's lines; the words a learner reads for
    each key are in the exercise's table ``[<exercise>.steps]``, where sentences are written, not in the code.

    >>> step_keys("def f(x):\\n    y = x + 1  # step: add\\n    return y  # a comment, not a step\\n")
    {2: 'add'}
    """
    keys = {}
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT and (match := STEP.match(token.string)):
            keys[token.start[0]] = match.group(1)
    return keys


@dataclass(frozen=True)
class Model:
    """An exercise's model, parsed once: its function's tree, each line's idea, its parameters' defaults."""

    function: object
    tree: object = field(compare=False)
    ideas: dict = field(compare=False)
    defaults: dict = field(compare=False)
    _: KW_ONLY
    parameters: tuple = ()
    sizes: tuple = ()  # the names of sizes unpacked from a shape (seq, d_model): the lesson's words, said as they are
    negated: frozenset = frozenset()  # id() of the constants under a minus sign: edited as negative numbers
    readable: tuple = ()  # the arrays a step may read by mistake in place of another: named in the model's comments

    @classmethod
    def of(cls, function, steps=None):
        """The model ``function`` parsed, each line's idea the words ``steps`` gives its ``# step:`` key."""
        source = textwrap.dedent(inspect.getsource(function))
        tree = ast.parse(source).body[0]
        tree.decorator_list = []
        signature = inspect.signature(function)
        defaults = {n: p.default for n, p in signature.parameters.items() if p.default is not inspect.Parameter.empty}
        sizes = tuple(t.id for n in ast.walk(tree) if isinstance(n, ast.Assign) and isinstance(n.targets[0], ast.Tuple)
                      for t in n.targets[0].elts if isinstance(t, ast.Name))
        negated = frozenset(id(n.operand) for n in ast.walk(tree) if isinstance(n, ast.UnaryOp) and
                            isinstance(n.op, ast.USub) and isinstance(n.operand, ast.Constant))
        ideas = {line: (steps or {})[key] for line, key in step_keys(source).items()}
        said = " ".join(ideas.values())
        assigned = {t.id for n in ast.walk(tree) if isinstance(n, ast.Assign) for t in n.targets
                    if isinstance(t, ast.Name)}
        readable = tuple(name for name in dict.fromkeys([*signature.parameters, *sorted(assigned)])
                         if name not in defaults and re.search(rf"(?<![\w`'\[]){re.escape(name)}(?![\w'\]])", said))
        return cls(function, tree, ideas, defaults, parameters=tuple(signature.parameters), sizes=sizes,
                   negated=negated, readable=readable)

    def idea_of(self, node, statements):
        """The idea of the statement that holds ``node`` (its first line's comment)."""
        line = statements.get(id(node))
        return self.ideas.get(line) if line else None

    def compile(self, mutations, names=None, text=False):
        """The model's function with ``mutations`` made (and, with ``text``, its source), or None where they do not
        make a valid function. The edits are made on the model's own tree and undone at once: no copy of it."""
        nodes, parents = self._walked()
        edits = Edits(parents)
        try:
            try:
                if not all(mutation.apply(nodes, edits) for mutation in mutations):
                    return None
            except (AttributeError, IndexError, TypeError):  # an earlier edit changed what this one edits
                return None
            source = ast.unparse(self.tree) if text else None
            module = ast.Module(body=[self.tree], type_ignores=[])
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # an edit may make code Python warns about (None["w_q"])
                try:  # every new node has its place already (``replace``): no walk of the whole tree
                    code = compile(module, "<variant>", "exec")
                except TypeError:  # a node without one: placed as Python's own fix does
                    code = compile(ast.fix_missing_locations(module), "<variant>", "exec")
            made = {}
            exec(code, {**self.function.__globals__, **names} if names else self.function.__globals__,  # noqa: S102
                 made)  # the course's own model, edited
        except (SyntaxError, TypeError, ValueError, RecursionError):
            return None
        finally:
            edits.undo()
        return (made[self.tree.name], source) if text else made[self.tree.name]

    def _walked(self):
        """The tree's nodes in walk order (how a mutation names its node) and each one's parent, made once."""
        if "_walk" not in self.__dict__:
            object.__setattr__(self, "_walk", (list(ast.walk(self.tree)), parents_of(self.tree)))
        return self._walk


class Edits:
    """The edits made on a tree while one variant compiles: where each new node stands, and how to undo them."""

    def __init__(self, parents):
        self.parents, self.added, self.done = parents, {}, []

    def get(self, key):
        return self.added.get(key, self.parents.get(key))

    def put(self, node, where):
        self.added[id(node)] = where

    def undo(self):
        for parent, name, i, old in reversed(self.done):
            if i is None:
                setattr(parent, name, old)
            else:
                getattr(parent, name)[i] = old
        self.done.clear()


def parents_of(tree):
    found = {}
    for node in ast.walk(tree):
        for name, value in ast.iter_fields(node):
            if isinstance(value, ast.AST):
                found[id(value)] = (node, name, None)
            elif isinstance(value, list):
                for i, item in enumerate(value):
                    if isinstance(item, ast.AST):
                        found[id(item)] = (node, name, i)
    return found


def replace(edits, node, new):
    """Put ``new`` where ``node`` is, as one of ``edits`` (undone after the compile); False if ``node`` is no
    longer in the tree (an earlier edit replaced what held it)."""
    where = edits.get(id(node))
    if where is None:
        return False
    parent, name, i = where
    if i is None:
        if getattr(parent, name) is not node:
            return False
        setattr(parent, name, new)
    else:
        items = getattr(parent, name)
        if i >= len(items) or items[i] is not node:
            return False
        items[i] = new
    edits.done.append((parent, name, i, node))
    edits.put(new, (parent, name, i))
    _place(new, node)
    return True


def _place(new, old):
    """Give the nodes of ``new`` that have no place in the source ``old``'s (a node of the model keeps its own), as
    ``ast.fix_missing_locations`` would, walking ``new`` alone rather than the whole tree at each compile."""
    if not isinstance(new, ast.AST):
        return
    if "lineno" in new._attributes and not hasattr(new, "lineno") and hasattr(old, "lineno"):
        ast.copy_location(new, old)
    ast.fix_missing_locations(new)


def statement_lines(tree):
    """``{id(node): the first line of the statement that holds it}`` for every node of the function's body."""
    found = {}

    def visit(statements):
        for statement in statements:
            for node in ast.walk(statement):
                found.setdefault(id(node), statement.lineno)
            for name in ("body", "orelse"):
                inner = getattr(statement, name, None)
                if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                    for sub in inner:  # a compound statement's inner lines carry their own ideas
                        for node in ast.walk(sub):
                            found[id(node)] = sub.lineno
                    visit(inner)

    visit(tree.body)
    return found


