"""Show one lesson's widgets in the browser without its code, for presenting to a class.

    make present                           # lesson 04_add_and_norm
    make present NB=01_attention           # a lesson by name (or its number: NB=01)
    make present NB=notebooks/05_encoder_block/05_encoder_block.ipynb
    make present NB=01 PORT=9000           # another port than 8866
    .venv/bin/python -m tools.present [NB] [--port PORT]

Voila runs the teacher's version of the notebook (notebooks/<lesson>/, with the
solutions) and serves a page that shows the lesson's text, what every cell
prints and its widgets, but no code; the exercises' cells run and show nothing.
The page is served on 127.0.0.1 only (this computer: share the screen, not the
address) and loads nothing from the internet: the template in
tools/voila/templates/present/ drops the one stylesheet that Voila's "lab"
template would fetch from a CDN. Ctrl+C stops it.

Each page that opens runs the lesson in a kernel of its own; when the page
closes, its kernel ends within about a minute (``--close-seconds``): Voila's
kernel manager ends every kernel that has had no page connected to it and has
been idle that long, and a page left open keeps its kernel.

It is made to be read on a projector: the template sets the text at 18 px or
more, and the kernel runs with ENCODER_COURSE_PRESENT=1, which makes the
widgets (and encoder_lib.plots' figures) draw their pictures 1.6 times larger,
so that their smallest labels are 14 px or more on the screen.
"""

import argparse
import os
import socket
import sys
from pathlib import Path

from .course import ROOT, jupyter_env, lesson_names

DEFAULT_LESSON = "04_add_and_norm"
DEFAULT_PORT = 8866  # Voila's own default
HOST = "127.0.0.1"
TEMPLATE = "present"  # tools/voila/templates/present/
TEMPLATE_ROOT = ROOT / "tools"  # a Jupyter data folder: voila/templates/<name>/ is found under it
# read by encoder_lib.plots.presenting() in Voila's kernel, which inherits Voila's environment
PRESENT_ENV = "ENCODER_COURSE_PRESENT"
#: How long a kernel may stay idle with no page connected before it is ended (a closed page's kernel).
CLOSE_SECONDS = 45


def resolve_notebook(name=None):
    """The notebook for ``name``: a lesson (``04_add_and_norm``, or just ``04``), a lesson
    folder or a notebook's path (relative to the current folder or to the repository).
    None means the default lesson."""
    name = (name or DEFAULT_LESSON).strip()
    candidates = []
    for base in (Path.cwd(), ROOT):
        path = base / name
        if path.is_file() and path.suffix == ".ipynb":
            return path.resolve()
        if path.is_dir():
            candidates.append(path)
    lesson = name.strip("/").removeprefix("notebooks/")
    matches = [ROOT / "notebooks" / n for n in lesson_names() if n == lesson or n.split("_")[0] == lesson]
    for folder in candidates + matches:
        notebook = folder / f"{folder.name}.ipynb"
        if notebook.is_file():
            return notebook.resolve()
    raise SystemExit(f"no lesson or notebook {name!r}; the lessons are: {', '.join(lesson_names())}")


def port_is_free(port, host=HOST):
    with socket.socket() as sock:
        try:
            sock.bind((host, port))
        except OSError:
            return False
    return True


def free_port(host=HOST):
    """A port nothing listens on now (the operating system's choice)."""
    with socket.socket() as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


def command(notebook, port, close_seconds=CLOSE_SECONDS):
    """The Voila command line that serves ``notebook`` on HOST:``port``; a closed page's kernel ends after
    ``close_seconds`` idle (checked every quarter of that)."""
    return [
        sys.executable, "-m", "voila", str(notebook),
        f"--Voila.ip={HOST}", f"--port={port}", "--Voila.port_retries=0", "--no-browser",
        f"--template={TEMPLATE}", "--strip_sources=True", "--theme=light",
        # only this computer sees the page, so an error may show its traceback
        "--show_tracebacks=True",
        # a kernel with no page connected (its page closed) and idle this long is ended; an open page's is kept
        f"--MappingKernelManager.cull_idle_timeout={int(close_seconds)}",
        f"--MappingKernelManager.cull_interval={max(1, int(close_seconds) // 4)}",
        "--MappingKernelManager.cull_connected=False",
    ]


def environment():
    """Voila's environment: the course's template found first, kernels from this environment, and
    figures drawn for a projector."""
    env = jupyter_env()
    env["JUPYTER_PATH"] = os.pathsep.join(p for p in (str(TEMPLATE_ROOT), env.get("JUPYTER_PATH")) if p)
    env[PRESENT_ENV] = "1"
    return env


def url(port):
    return f"http://{HOST}:{port}/"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebook", nargs="?", default=None,
                        help=f"a lesson (name or number) or a notebook's path; default {DEFAULT_LESSON}")
    parser.add_argument("--port", type=int, default=None,
                        help=f"the port to serve on (default {DEFAULT_PORT}, or a free one if that is taken)")
    parser.add_argument("--close-seconds", type=int, default=CLOSE_SECONDS,
                        help=f"a closed page's kernel ends after this many idle seconds (default {CLOSE_SECONDS})")
    args = parser.parse_args(argv)
    if args.close_seconds < 1:
        parser.error(f"--close-seconds must be at least 1, got {args.close_seconds}")
    notebook = resolve_notebook(args.notebook)
    port = args.port
    if port is None:
        port = DEFAULT_PORT if port_is_free(DEFAULT_PORT) else free_port()
    elif not port_is_free(port):
        raise SystemExit(f"port {port} is in use: choose another with PORT=... (or --port ...)")
    shown = notebook.relative_to(ROOT) if notebook.is_relative_to(ROOT) else notebook
    print(f"Presenting {shown} at {url(port)}\n"
          f"Open that address in a browser on this computer; the page is ready once the notebook has run. "
          f"Ctrl+C stops it.", flush=True)
    cmd = command(notebook, port, args.close_seconds)
    os.execve(cmd[0], cmd, environment())  # Voila takes this process's place: Ctrl+C reaches it


if __name__ == "__main__":
    main()
