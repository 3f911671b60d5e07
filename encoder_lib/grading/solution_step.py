"""The hint ladder's fourth step: the course's solution of an exercise beside the learner's own code, the lines
that differ marked.

The solutions come from the installed library (``solutions.json``, package
data written from the teachers' notebooks by ``tools/solutions.py``), never
from the student notebooks; on a graded class's hub, whose install leaves
them out (``tools/hub_install.py``), from the hand-in service, which gives
one once the learner's own due date has passed. The learner's code is read with
``inspect.getsource``, which works for a function defined in a notebook's
cell; where it cannot be read (a function made by ``exec``, a cell's code
gone), the course's solution is shown alone, and the step says why.

The two are laid side by side (``difflib`` pairs their lines), each row led
by a marker, so that colour is never the only sign: ``~`` the line differs,
``-`` only in yours, ``+`` only in the course's. In a notebook they are a
table, the differing lines highlighted (``<mark>``); printed, two columns of
text with the markers alone.
"""

import difflib
import html
import inspect
import json
import re
import textwrap

from .hint_area import Part

FILE = "solutions.json"
LEGEND = "`~` the line differs, `-` it is only in yours, `+` only in the course's"


def course_solutions():
    """``{exercise: {"lesson": ..., "source": ...}}`` as the installed library holds them ({} if it holds none)."""
    from importlib import resources

    try:
        return json.loads(resources.files(__package__).joinpath(FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


#: What the hand-in service said of an exercise's solution it did not give: {exercise: its words}.
NOT_GIVEN = {}


def course_solution(name):
    """The course's solution of exercise ``name`` (its whole function, as the learner writes it), or None: from
    the installed library, else from the course hub's hand-in service (``NOT_GIVEN`` keeps why it gave none)."""
    found = course_solutions().get(name)
    if isinstance(found, dict):
        return found.get("source")
    from .handing_in import solution

    source, NOT_GIVEN[name] = solution(name)
    return source


def learner_source(fn):
    """``(source, why)``: the code of the learner's function ``fn``, or None and why it cannot be read."""
    if fn is None:
        return None, "this session has not self-checked it"
    try:
        return textwrap.dedent(inspect.getsource(fn)), ""
    except (OSError, TypeError) as exc:
        return None, f"Python cannot read its code here ({exc})"


def rows(yours, course):
    """``[(marker, your line or None, the course's line or None)]``: the two codes' lines paired by ``difflib``,
    the marker ``" "`` (the same), ``"~"``, ``"-"`` or ``"+"``."""
    mine, theirs = yours.rstrip("\n").splitlines(), course.rstrip("\n").splitlines()
    matcher = difflib.SequenceMatcher(None, [line.rstrip() for line in mine], [line.rstrip() for line in theirs],
                                      autojunk=False)
    paired = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            paired += [(" ", a, b) for a, b in zip(mine[i1:i2], theirs[j1:j2])]
        else:
            paired += _pair(mine[i1:i2], theirs[j1:j2])
    return paired


def _likeness(a, b):
    """How alike two lines' code is, from 0 to 1 (their comments left out)."""
    def code(line):
        return re.sub(r"\s#.*$", "", line).strip()

    return difflib.SequenceMatcher(None, code(a), code(b), autojunk=False).ratio()


def _pair(left, right, least=0.5):
    """Lines that differ, in order: each of yours beside the most alike of the course's still to come (if alike at
    all, ``least``), the course's lines it skips on their own."""
    paired, j = [], 0
    for a in left:
        best = max(range(j, len(right)), key=lambda k: _likeness(a, right[k]), default=None)
        if best is None or _likeness(a, right[best]) < least:
            paired.append(("-", a, None))
            continue
        paired += [("+", None, b) for b in right[j:best]] + [("~", a, right[best])]
        j = best + 1
    return paired + [("+", None, b) for b in right[j:]]


def _escaped(text):
    """Code as HTML text (``[`` too: never read as a link)."""
    return html.escape(text).replace("[", "&#91;")


def _cell(text, marked):
    """One side of a row: a ``<pre>`` (empty where the side has no line), in ``<mark>`` where it differs."""
    if text is None:
        return '<td style="text-align: left"></td>'
    shown = f"<mark>{_escaped(text.rstrip())}</mark>" if marked else _escaped(text.rstrip())
    return f'<td style="text-align: left"><pre>{shown or " "}</pre></td>'


def table(paired):
    """The rows as an HTML table: the marker, your line, the course's line; the lines that differ in ``<mark>``
    (each side's line wraps in its own column on a narrow screen, the rows still side by side)."""
    head = "<tr><th>differs</th><th style=\"text-align: left\">yours</th><th style=\"text-align: left\">the " \
           "course's</th></tr>"
    body = "".join(f"<tr><td>{f'<code>{marker}</code>' if marker != ' ' else ''}</td>{_cell(a, marker != ' ')}"
                   f"{_cell(b, marker != ' ')}</tr>" for marker, a, b in paired)
    return f"<table>\n<thead>{head}</thead>\n<tbody>{body}</tbody>\n</table>"


def text(paired):
    """The rows as plain text, for a terminal: each row's marker, your line, ``│``, the course's line."""
    width = max([len("yours")] + [len(a.rstrip()) for _, a, _ in paired if a is not None])
    lines = [f"  {'yours'.ljust(width)} │ the course's"]
    lines += [f"{marker} {(a or '').rstrip().ljust(width)} │ {(b or '').rstrip()}".rstrip() for marker, a, b in paired]
    return "\n".join(lines)


def step(name, fn):
    """The fourth step for exercise ``name`` and the learner's last self-checked function ``fn`` (None: unknown):
    a ``hint_area.Part``, markdown with an HTML table in a notebook, plain text printed."""
    course = course_solution(name)
    if course is None:
        said = f"**The course's solution** of `{name}`: " + (NOT_GIVEN.get(name) or (
            "it is not in this installation of the course's library (`encoder_lib`): ask your teacher."))
        return Part(said, said)
    yours, why = learner_source(fn)
    if yours is None:
        said = (f"**The course's solution** of `{name}`. Your code cannot be shown beside it: {why}. Compare it "
                "with your answer cell yourself.")
        return Part(f"{said}\n\n```python\n{course.rstrip()}\n```", f"{said}\n\n{course.rstrip()}")
    said = (f"**The course's solution**, beside your `{name}`: {LEGEND}. It is one right answer; yours may be "
            "right written another way. Read where they differ, then change your own code and run its self-check "
            "again.")
    paired = rows(yours, course)
    return Part(f"{said}\n\n{table(paired)}", f"{said}\n\n{text(paired)}")
