"""The hint ladder's words for a broken promise: how to see a contract check's failure for yourself (the first
rung's), and, where the values are right and only a promise is broken, the idea and a worked step (rungs 2 and 3)
in place of the exercise's own, which are about its values."""

#: How to see each kind of contract check fail, by ``How.kind``: ``{name}`` is the exercise's, ``{base}`` the check
#: it is derived from, ``{words}`` what it varies.
TRY = {
    "again": "Call `{name}` on fresh copies of the inputs of \u201c{base}\u201d twice and compare the two results: "
             "the library's are equal.",
    "rolled": "Call `{name}` on the inputs of \u201c{base}\u201d, then on inputs of the same shapes with other values "
              "(each input's first axis rolled, `np.roll(x, 1, axis=0)`), and compare the second result with the "
              "library's.",
    "refilled": "Call `{name}` on some arrays, change their values in place (`x[...] = other_x`), and call it again "
                "on those same arrays: compare with the library's second result.",
    "layout": "Give `{name}` the inputs of \u201c{base}\u201d with the same values in another layout "
              "(`np.asfortranarray(x)`, `x.T.copy().T`, `np.repeat(x, 2, axis=-1)[..., ::2]`, or a copy with "
              "`y.flags.writeable = False`) and compare with its result on `x` itself.",
    "dtype": "Give `{name}` the inputs of \u201c{base}\u201d cast with `.astype(np.{words})` and look at the "
             "result's `.dtype`.",
    "strings": "Call `{name}` as \u201c{base}\u201d does, with {words} made at run time (`\"\".join(list(...))` of "
               "the literal): the same text, another object.",
    "names": "Call `{name}` on the inputs of \u201c{base}\u201d with every argument by its name ({words}).",
    "positions": "Call `{name}` on the inputs of \u201c{base}\u201d with every argument by position.",
    "refused": "Call `{name}` as \u201c{base}\u201d does, but with {words}: the library raises a ValueError there.",
    "smallest": "Call `{name}` on the first entry of the inputs of \u201c{base}\u201d (`x[0, ...]`), of shape "
                "{words}, and compare its result's shape with the library's.",
}

_STATE = (
    "The library's function is a function of its inputs' values and of nothing else: nothing it computed in an "
    "earlier call, no object's identity, no random number. A result kept in a dictionary (keyed by shape, by "
    "`id(x)`, by the first call's settings) is given back for inputs it was not computed from. NumPy is fast enough "
    "that nothing here needs a cache: compute every result from the inputs of its own call.",
    "Try it: `y1 = f(x)`, then `y2 = f(np.roll(x, 1, axis=0))`, then `y3 = f(x)`. The library's `y1` and `y3` are "
    "equal, and `y2` is the result of the rolled input, not `y1` again. Look in your cell for a dictionary or a "
    "global your function writes into, or a default argument such as `_cache={}`: each call's work belongs in its "
    "own local variables.")
#: Rungs 2 and 3 (the idea, a worked step) by the key of the broken promise's finding (``said.findings``).
RUNGS = {
    "contract:again": _STATE, "contract:kept": _STATE, "contract:identity": _STATE, "contract:other-values": _STATE,
    "contract:random": (
        "A function of this course gives the same result for the same input on every call. Dropout, stochastic "
        "depth and LayerDrop draw random numbers while a model trains; the functions here compute the model, as it "
        "runs once trained, and draw none. Drawing from `np.random`, or from `np.random.default_rng()`, also moves "
        "the caller's own random numbers.",
        "Run your function twice on the same input: `np.array_equal(f(x), f(x))` must be True, and it is for the "
        "library's. Then look for `np.random`, `default_rng` and Python's `random` in your cell and take those lines "
        "out (a dropout mask, a layer skipped at random): what remains is the function the exercise asks for."),
    "contract:view": (
        "NumPy's reshape, swapaxes, transpose, `.T` and slices return views where they can: new array objects over "
        "the same memory. A result that is a view of an input ties the two together, so a caller who writes into the "
        "result changes the input too. The library's function returns a new array; `.copy()` makes one.",
        "Try it: `y = f(x)`, then `np.shares_memory(y, x)`: the library's is False. With `x` of shape (3, 4), "
        "`x.reshape(3, 2, 2).swapaxes(0, 1)` shares `x`'s memory, and writing `y[0, 0, 0] = 9` changes `x[0, 0]`; "
        "`.copy()` after it gives an array of its own, whose values are the same."),
    "contract:kept-array": (
        "A function that keeps an array between calls (a table made once, a buffer it fills each time) and returns "
        "that array, or a slice of it, hands every caller the same memory: one caller's change is every other's "
        "result. The library's function returns a new array on every call.",
        "Try it: `a = f(x)`, then `b = f(x)`, then `np.shares_memory(a, b)`: the library's is False, and changing "
        "`a` in place leaves `b` as it was. Where your function keeps a table or a buffer between calls, return a "
        "copy of it (`table[...].copy()`); better still, compute the result on each call."),
    "contract:layout": (
        "A numpy array's values do not say how they lie in memory: a transposed or sliced array, or one in Fortran "
        "order, has strides of its own. Indexing, reshape, swapaxes, einsum and @ read values whatever the layout; "
        "`np.frombuffer`, `as_strided` with strides worked out by hand, or writing into `out.reshape(...)` of a "
        "Fortran-ordered `out` assume one layout.",
        "Try it: `f(np.asfortranarray(x))` against `f(x)`. Where yours differs, look for `strides`, `frombuffer`, "
        "`as_strided`, `.data` or an `np.empty_like(x)` filled through a reshape: reshape a Fortran-ordered array "
        "and you get a copy, and what you write into the copy never reaches the array."),
    "contract:read-only": (
        "An input may be read-only (`x.flags.writeable` is False: a view of a model's weights, an array from a "
        "file), and writing into it raises. Even where you put the values back afterwards, the caller's array is "
        "not yours to write into: compute into new arrays.",
        "Try it: `x = x.copy(); x.flags.writeable = False; f(x)`. Where yours raises, look for `x[...] = `, `x -= ` or "
        "`out=x`, and write `y = np.where(mask, -np.inf, x)` or `y = x - m` instead: a new array, the input left as "
        "it was."),
    "contract:dtype": (
        "NumPy 2 keeps a float32 array float32 when it meets a Python number (2.0, `math.sqrt(d)`), but computes in "
        "float64 when it meets a float64 array or a NumPy float64 number: `np.sqrt(d)` of an integer, "
        "`np.zeros(shape)` without a dtype, an integer array such as a count. SciPy's erf returns float32 for "
        "float16. The library keeps the inputs' dtype throughout.",
        "Try it: `(np.ones(3, np.float32) / np.sqrt(4)).dtype` is float64, `(np.ones(3, np.float32) / "
        "math.sqrt(4)).dtype` is float32. Give your function float32 inputs and print the dtype after each line: "
        "the first line whose dtype is float64 is the one to change (a Python number, `dtype=x.dtype`, or "
        "`.astype(x.dtype)` at the end)."),
    "contract:strings": (
        "`a is b` asks whether two names point at one object; `a == b` whether two strings have the same text. "
        "Python happens to keep one object for a literal such as \"gelu\" written in two places, so `is` works on "
        "literals and fails on the same text made at run time: read from a file, typed in, or joined.",
        "Try it: `s = \"\".join([\"ge\", \"lu\"])`; then `s == \"gelu\"` is True and `s is \"gelu\"` is False "
        "(Python even warns about `is` with a literal, a SyntaxWarning). Compare strings with `==` everywhere in "
        "your function, and an unknown string with a ValueError that names it."),
    "contract:names": (
        "A caller may pass any argument by its name, as the statement's first line names it: `params=...`, "
        "`padding_mask=...`. A function whose arguments are named otherwise fails for that caller with a TypeError, "
        "even where its body is right: the names are part of what the exercise asks for, as the library's are part "
        "of what it promises.",
        "Try it: call your function with every argument by name, as the statement's signature writes them, on the "
        "inputs of a check it passes. Where it raises TypeError (an unexpected keyword argument), rename your "
        "parameters to the statement's names, and the lines that use them."),
    "contract:positions": (
        "A caller may pass the statement's arguments by position, in the statement's order, as the library takes "
        "them. A keyword-only argument (after a `*`), or arguments in another order than the statement's, fail or "
        "mix up that caller's call, even where the body is right.",
        "Try it: call your function with every argument by position, in the order of the statement's first line, "
        "and compare with the call by name on the same inputs: the library gives the same result for both. Where "
        "yours differs or raises, make your first line the statement's."),
    "contract:refusal": (
        "Some inputs have no right answer: 10 columns cannot be split evenly into 3 heads, and an activation that is "
        "neither \"relu\" nor \"gelu\" names nothing the exercise computes. The library raises a ValueError that "
        "says which argument is wrong; a function that returns something anyway hides the caller's mistake.",
        "Check the argument first, before computing: `if d_model % n_heads: raise ValueError(f\"n_heads ({n_heads}) "
        "must divide d_model ({d_model})\")`, or `if activation not in (\"relu\", \"gelu\"): raise "
        "ValueError(...)`. NumPy's own errors (a reshape that cannot be done) count too, where they come."),
    "contract:smallest": (
        "The smallest inputs the statement allows are inputs too: one position, one head, a single number (a 0-d "
        "array) where the function works entry by entry. `np.atleast_1d`, `.squeeze()` and shortcuts for a size of "
        "1 change the shape the result should have.",
        "Try it: call your function on the first entry of a check's input, `x[0, ...]`, and compare the result's "
        "shape with the library's: a 0-d input gives a 0-d result, `()`, where the function works entry by entry. "
        "Then try one position and one head: the result keeps every axis, each of size 1."),
}
RUNGS["contract:precision"] = RUNGS["contract:dtype"]
