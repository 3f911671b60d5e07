"""How the grader writes what a teacher reads: plain text only, every file whole and with the grader's umask.

Nothing a learner wrote reaches a terminal, a spreadsheet or a browser as anything but text: ``plain_text`` removes
control characters (ANSI escapes, carriage returns, bidirectional overrides), every CSV goes through ``csv_field``
(a spreadsheet's formula neutralised), the pages escape everything. A file is written whole (a temporary file
renamed over it) and only where its content changed.
"""

import csv
import html
import io
import json
import os
import stat
import tempfile
import unicodedata
from pathlib import Path

#: What a spreadsheet reads as the start of a formula (OWASP's list for CSV injection).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
#: The Content-Security-Policy of every page the grader writes (the feedback pages, the class report): nothing
#: fetched, no script run, no form sent, whatever a learner's text in it holds; pictures only from inside the page.
POLICY = "default-src 'none'; img-src data:; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'"


def page_head(title, style):
    """A page's head, up to ``<body>``: ``title`` (already escaped) and ``style``, under ``POLICY``, the one
    Content-Security-Policy of every page the grader writes (nothing fetched, no script run, whatever a learner's
    text holds)."""
    return (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<meta http-equiv=\"Content-Security-Policy\" content=\"{POLICY}\">"
            f"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>{title}</title><style>{style}</style></head><body>")


def html_table(columns, rows):
    """A page's table: ``columns``, its headings (HTML; a number's in a tuple, ``("points",)``, its column
    right-aligned), and ``rows``, each its cells' HTML."""
    classes = [" class=\"n\"" if isinstance(column, tuple) else "" for column in columns]
    head = "".join(f"<th scope=\"col\"{k}>{c[0] if k else c}</th>" for c, k in zip(columns, classes))
    body = "".join("<tr>" + "".join(f"<td{k}>{cell}</td>" for cell, k in zip(row, classes)) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def learner_html(student, names):
    """A learner's id as a page shows it, with their name in the roster (``names``) where it has one."""
    return html_text(student) + (f" ({html_text(names[student])})" if names.get(student) else "")


def plain_text(text):
    r"""``text`` without control or formatting characters: a control character or a line break becomes a space,
    a formatting one (a bidirectional override, a zero-width joiner) goes, so that no learner's text can move
    a terminal's cursor, colour or clear it, or reorder what it shows.

    >>> plain_text("ok\x1b[2J\x1b[Hall passed\r\nand \u202eevil")
    'ok [2J [Hall passed  and evil'
    """
    text = str(text)
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else " " if unicodedata.category(c) in ("Cc", "Zs", "Zl", "Zp") else ""
                   for c in text)


def html_text(text):
    """Learner-derived text as a page shows it: plain text (``plain_text``), escaped for HTML."""
    return html.escape(plain_text(text), quote=True)


def code_html(text):
    """A learner's code as a page shows it: its lines kept, each line plain text (``plain_text``: no control or
    bidirectional character to reorder what the teacher reads), escaped for HTML."""
    return "\n".join(html_text(line) for line in str(text).replace("\r", "").split("\n"))


def csv_field(value):
    """One field of a CSV file the grader writes: plain text, and a leading ``'`` before anything a spreadsheet
    would read as a formula. A later class report writes its CSVs through this too.

    >>> csv_field("=HYPERLINK(1)"), csv_field("-1"), csv_field(2.0), csv_field("alice")
    ("'=HYPERLINK(1)", "'-1", '2', 'alice')
    """
    raw = value if isinstance(value, str) else format(value, "g") if isinstance(value, float) else str(value)
    text = plain_text(raw)
    risky = raw.startswith(FORMULA_STARTS) or text.lstrip().startswith(FORMULA_STARTS)  # " =1+1" is one too
    return "'" + text if risky else text


def csv_value(field):
    """A field as ``csv_field`` wrote it, without the ``'`` it put before what looked like a formula.

    >>> csv_value(csv_field("=HYPERLINK(1)")), csv_value("'quoted"), csv_value("josé")
    ('=HYPERLINK(1)', "'quoted", 'josé')
    """
    return field[1:] if field.startswith("'") and field[1:].lstrip().startswith(FORMULA_STARTS) else field


def write_csv(path, columns, rows):
    """Write ``rows`` (sequences of values, in the order of ``columns``) as a CSV file, every field ``csv_field``."""
    lines = io.StringIO()
    writer = csv.writer(lines, lineterminator="\n")
    writer.writerow([csv_field(c) for c in columns])
    writer.writerows([csv_field(v) for v in row] for row in rows)
    write_file(path, lines.getvalue())


def write_file(path, content):
    """Write ``content`` (text or bytes) to ``path`` whole: a temporary file beside it, renamed over it, with the
    umask's mode (also where the old file had another). A file that already holds exactly ``content``, with that
    mode, is left as it is (its modification time too): a regrade rewrites only what changed."""
    path = Path(path)
    content = content.encode("utf-8") if isinstance(content, str) else content
    if _holds(path, content, 0o666 & ~_umask()):
        return
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        os.fchmod(fd, 0o666 & ~_umask())
        with os.fdopen(fd, "wb") as f:
            f.write(content)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def write_new(path, data):
    """``data`` as the new file ``path`` (mode 600), never through a link; FileExistsError where it is there."""
    with os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600), "wb") as f:
        f.write(data)


def _holds(path, content, mode):
    """Whether ``path`` is a regular file (not a link) with this mode that holds exactly ``content``."""
    try:
        return read_regular(path, len(content), mode=mode) == content
    except OSError:
        return False


def read_regular(path, most, mode=None):
    """The bytes of the regular file at ``path``, never read through a link, and at most ``most`` + 1 of them (one
    more than ``most``: the caller tells a file that is too large); None where it is not a regular file (or has
    not the ``mode`` asked); OSError (FileNotFoundError where nothing is there) where it cannot be opened."""
    with os.fdopen(os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC), "rb") as f:
        info = os.fstat(f.fileno())
        if not stat.S_ISREG(info.st_mode) or mode is not None and stat.S_IMODE(info.st_mode) != mode:
            return None
        return f.read(most + 1)


def made_from(path):
    """The digest of what a file was last made from, as ``path`` beside it records it, or None."""
    try:
        return Path(path).read_text().strip() or None
    except OSError:
        return None


def read_json(path, most):
    """The JSON of the regular file at ``path`` (``read_regular``), or None where it is over ``most`` bytes or is
    not JSON; OSError where it cannot be opened."""
    data = read_regular(path, most) or b""
    try:
        return json.loads(data) if len(data) <= most else None
    except ValueError:
        return None


def make_folder(path):
    """``path`` as a folder with the umask's mode (also when it was there with another)."""
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    path.chmod(0o777 & ~_umask())
    return path


def _umask():
    mask = os.umask(0o077)
    os.umask(mask)
    return mask

