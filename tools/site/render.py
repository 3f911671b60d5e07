"""A notebook's text and stored outputs as HTML: markdown with typeset formulas, highlighted code, outputs.

Formulas (``$...$`` inline, ``$$...$$`` on their own) become MathML, which
browsers draw themselves: nothing is loaded to typeset them. Each ``<math>``
keeps its LaTeX source as an ``annotation``, so that the page can be checked
against the notebook formula by formula. Code is highlighted by Pygments into
CSS classes (``highlight_css`` writes their colours, each 4.5:1 or more on
the code's background).
"""

import base64
import binascii
import html
import re
from html.parser import HTMLParser

import mistune
from latex2mathml.converter import convert as latex_to_mathml
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import PythonLexer

#: Pygments' style whose every colour has 4.5:1 or more on white, and the code's background.
CODE_STYLE = "xcode"
CODE_BACKGROUND = "#fbfbfb"
DARK_CODE_STYLE = "github-dark"  # its background is the dark palette's code background, #0d1117
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_PLACEHOLDER = "MATHPLACEHOLDER{}X"
_PLACED = re.compile(r"MATHPLACEHOLDER(\d+)X")


class SiteError(Exception):
    """Something in the course keeps the site from being built; the message says what and where."""


# ------------------------------------------------------------------ formulas

def math_spans(markdown):
    """``[(start, end, latex, display)]``: the formulas of ``markdown``, outside code spans and code blocks.

    >>> math_spans("Divide by $\\\\sqrt{d_k}$, not by `$x$`.")
    [(10, 22, '\\\\sqrt{d_k}', False)]
    """
    if not isinstance(markdown, str):
        raise TypeError(f"markdown must be a str, got {type(markdown).__name__}")
    spans, i = [], 0
    while i < len(markdown):
        past = _past_code(markdown, i)
        span = _formula_at(markdown, i) if past is None else None
        if span:
            spans.append(span)
        i = past if past is not None else span[1] if span else i + 1
    return spans


def _past_code(markdown, i):
    """Where a code block, a code span or an escaped character that starts at ``i`` ends; None if none does."""
    line_start = i == 0 or markdown[i - 1] == "\n"
    fence = re.match(r"[ \t]{0,3}(```|~~~)", markdown[i:]) if line_start else None
    if fence:  # a code block: up to the line that closes it
        close = markdown.find("\n" + fence.group(1), i + fence.end())
        return len(markdown) if close < 0 else _end_of_line(markdown, close + 1)
    if markdown[i] == "\\":  # an escaped character, \$ say
        return i + 2
    if markdown[i] == "`":  # a code span: up to the same run of backticks
        run = re.match(r"`+", markdown[i:]).group(0)
        close = markdown.find(run, i + len(run))
        return i + len(run) if close < 0 else close + len(run)
    return None


def _formula_at(markdown, i):
    """The formula ``(start, end, latex, display)`` that starts at ``i``, or None."""
    if markdown.startswith("$$", i) and (close := markdown.find("$$", i + 2)) > i + 2:
        return i, close + 2, markdown[i + 2:close].strip(), True
    inline = re.match(r"\$([^\s$](?:[^$\n]*[^\s$])?)\$", markdown[i:]) if markdown[i] == "$" else None
    return (i, i + inline.end(), inline.group(1), False) if inline else None


def _end_of_line(text, i):
    end = text.find("\n", i)
    return len(text) if end < 0 else end + 1


def formula(latex, display=False):
    """``latex`` as MathML, its source kept in an annotation (``display``: a formula on its own line)."""
    try:
        mathml = latex_to_mathml(latex, display="block" if display else "inline")
    except Exception as exc:  # the converter's errors are of many kinds
        raise SiteError(f"the formula {latex!r} cannot be converted to MathML: {exc}") from exc
    open_end = mathml.index(">") + 1
    inner = mathml[open_end:mathml.rindex("</math>")]
    math = (f"{mathml[:open_end]}<semantics>{inner}<annotation encoding=\"application/x-tex\">"
            f"{html.escape(latex)}</annotation></semantics></math>")
    # a formula on its own line scrolls sideways in its own box on a narrow screen (a span: it may sit in a <p>)
    return f'<span class="scroll math-box" data-label="formula">{math}</span>' if display else math


# ------------------------------------------------------------------ markdown

def slug(text):
    """An ``id`` for a heading: its words, lower case, joined by hyphens."""
    words = re.findall(r"\w+", html.unescape(re.sub(r"<[^>]*>", " ", text)).lower())
    return "-".join(words) or "section"


class _Renderer(mistune.HTMLRenderer):
    def __init__(self, link_for, ids, headings):
        super().__init__(escape=False)
        self.link_for, self.ids, self.headings = link_for, ids, headings

    def link(self, text, url, title=None):
        url = self.link_for(url)
        if url is None:  # nowhere to lead (a file of a repository the course does not name): its words alone
            return text
        out = super().link(text, url, title)
        published = getattr(self.link_for, "published", None)  # the site's own address, where it is known
        if published and re.match(r"[\w.-]+\.html(#|$)", url):  # a page of the site: printed with its address
            out = out.replace("<a ", f'<a data-address="{html.escape(published + url, quote=True)}" ', 1)
        return out

    def heading(self, text, level, **attrs):
        base = slug(_PLACED.sub("", text))
        anchor, k = base, 2
        while anchor in self.ids:
            anchor, k = f"{base}-{k}", k + 1
        self.ids.add(anchor)
        self.headings.append((level, anchor, text))
        return f'<h{level} id="{anchor}">{text}</h{level}>\n'

    def block_code(self, code, info=None):
        return code_block(code, "python" if (info or "").strip() in ("python", "py", "ipython3") else None)


def markdown_html(source, link_for=lambda url: url, ids=None, headings=None):
    """A markdown cell's ``source`` as HTML; ``link_for`` rewrites each link's address, ``ids`` (a set)
    collects the page's heading ids so that they stay unique, ``headings`` (a list) each heading's
    ``(level, id, HTML)``, for the page's contents."""
    if not isinstance(source, str):
        raise TypeError(f"source must be a markdown str, got {type(source).__name__}")
    spans = math_spans(source)
    formulas, pieces, last = [], [], 0
    for k, (start, end, latex, display) in enumerate(spans):
        pieces += [source[last:start], _PLACEHOLDER.format(k)]
        formulas.append(formula(latex, display))
        last = end
    pieces.append(source[last:])
    render = mistune.create_markdown(renderer=_Renderer(link_for, set() if ids is None else ids,
                                                        [] if headings is None else headings),
                                     plugins=["table", "strikethrough"])
    out = render("".join(pieces))
    # a table scrolls sideways in its own box on a narrow screen, not the page
    out = out.replace("<table>", '<div class="scroll table-box" data-label="table"><table>').replace(
        "</table>", "</table></div>")
    return _PLACED.sub(lambda m: formulas[int(m.group(1))], out)


# ------------------------------------------------------------------ code and outputs

def code_block(code, language="python", label="code", classes="highlight"):
    """``code`` in a ``<pre>``, highlighted when ``language`` is python. It scrolls sideways when its lines
    are longer than the screen is wide; then the page's script lets it take the keyboard focus, named by
    ``label``, so that it scrolls from the keyboard too (site.js, ``.scroll``)."""
    body = (highlight(code, PythonLexer(), HtmlFormatter(nowrap=True)) if language == "python"
            else html.escape(code))
    return (f'<pre class="{classes} scroll" data-label="{html.escape(label, quote=True)}"><code>{body.rstrip()}'
            '</code></pre>')


def highlight_css():
    """The code's colours, for the site's style sheet: ``CODE_STYLE`` on the light page, ``DARK_CODE_STYLE`` on a
    screen that asks for the dark palette (each colour 4.5:1 or more on its background: tests/test_site.py)."""
    light = HtmlFormatter(style=CODE_STYLE).get_style_defs(".highlight").replace(
        "background: #ffffff", f"background: {CODE_BACKGROUND}")
    dark = HtmlFormatter(style=DARK_CODE_STYLE).get_style_defs(".highlight")
    return f"{light}\n@media screen and (prefers-color-scheme: dark) {{\n{dark}\n}}"


class _Image(HTMLParser):
    """The one ``<img>`` of an output's HTML (what ``encoder_lib._display`` writes for a figure)."""

    def __init__(self):
        super().__init__()
        self.images, self.other = [], False

    def handle_starttag(self, tag, attrs):
        if tag == "img":
            self.images.append(dict(attrs))
        else:
            self.other = True

    def handle_data(self, data):
        self.other = self.other or bool(data.strip())


def figure_of(output_html):
    """``(png bytes, alt)`` when ``output_html`` is a lone ``<img>`` holding a PNG; else None."""
    parser = _Image()
    parser.feed(output_html)
    if parser.other or len(parser.images) != 1:
        return None
    src, alt = parser.images[0].get("src", ""), parser.images[0].get("alt", "")
    prefix = "data:image/png;base64,"
    if not src.startswith(prefix):
        return None
    try:
        return base64.b64decode(src[len(prefix):], validate=True), alt
    except binascii.Error:
        return None


def outputs_html(outputs, save_figure, where):
    """A code cell's stored ``outputs`` as HTML. ``save_figure(png, alt)`` stores a figure's picture and
    returns its ``<img>``; ``where`` names the cell in error messages."""
    parts = []
    for output in outputs:
        kind = output.get("output_type")
        if kind == "stream":
            text = ANSI.sub("", output.get("text", ""))
            parts.append(code_block(text.rstrip("\n"), language=None, label="output",
                                    classes=f'output {html.escape(output.get("name", "stdout"))}'))
        elif kind in ("display_data", "execute_result"):
            data = output.get("data", {})
            if "text/html" in data and (figure := figure_of(data["text/html"])):
                parts.append(save_figure(*figure))
            elif "image/png" in data:
                raise SiteError(f"{where}: a figure without alt text (encoder_lib._display gives every "
                                "figure one; re-run the notebook with `import encoder_lib`)")
            elif "text/html" in data:
                parts.append(f'<div class="output html scroll" data-label="output">{data["text/html"]}</div>')
            elif "text/plain" in data:
                parts.append(code_block(data["text/plain"], language=None, label="output", classes="output result"))
        elif kind == "error":
            trace = ANSI.sub("", "\n".join(output.get("traceback", [])))
            parts.append(code_block(trace, language=None, label="error", classes="output error"))
    return "".join(parts)
