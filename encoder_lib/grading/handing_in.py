"""Hand in a lesson from its notebook, on a course hub with the hand-in service: ``grading.hand_in()``.

It sends the notebook as saved (save first: Ctrl+S) to the course's hand-in
service with this server's own JupyterHub token, which tells the hub who you
are, then waits for the grader's verdict and shows it: the time you handed
in, then per exercise the points, the checks, what is wrong and the first
hint. Only your latest hand-in counts; each earlier one is kept.

The service's address comes from ``ENCODER_COURSE_HAND_IN_URL`` (the hub
sets it for every learner's server: ``http+unix://`` and the path of its Unix
socket, quoted, on a hub that runs the service beside the learners' servers);
outside such a hub, ``hand_in`` says so and sends nothing: hand in as your
teacher says. A service that cannot be reached (restarting, say) is asked
again for up to ``RETRY_SECONDS``, and the notebook shows that it is.
"""

import datetime
import html
import http.client
import json
import os
import re
import select
import socket
import time
import urllib.parse
from pathlib import Path

from . import hint_area

URL_VARIABLE = "ENCODER_COURSE_HAND_IN_URL"
#: The largest notebook sent (the service takes at most as much).
MOST_BYTES = 10 * 2**20
NOT_ON_A_HUB = "Nothing was handed in: {why}. Hand in as your teacher says."
WHY = {"url": "this notebook is not on a course hub with the hand-in service",
       "token": "this server has no JupyterHub token to hand in with (ask your teacher)"}
#: How long a service that cannot be reached is asked again (the hub starts one that ended within its poll of 30 s,
#: and a service takes up to a minute to start), how often, and how long the service may take to say whether it
#: takes a notebook before it is sent all the same.
RETRY_SECONDS, RETRY_EVERY, CONTINUE_SECONDS = 300, 2, 10


class HandInRefused(Exception):
    """The service refused the hand-in, or could not be reached: its sentence."""


def _service():
    """``(the service's address, this server's token)``, or ``(None, None)`` after saying why there is none."""
    url, token = os.environ.get(URL_VARIABLE), os.environ.get("JUPYTERHUB_API_TOKEN")
    if not url or not token:
        print(NOT_ON_A_HUB.format(why=WHY["url" if not url else "token"]))
        return None, None
    return url, token


class _UnixConnection(http.client.HTTPConnection):
    def __init__(self, path, timeout):
        super().__init__("localhost", timeout=timeout)
        self.socket_path = path

    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(self.timeout)
        self.sock.connect(self.socket_path)


def call(url, token=None, data=None, timeout=30):
    """``(status, the JSON body)`` of one request to the service (``http://``, ``https://`` or ``http+unix://``);
    POST when there is ``data``. OSError where it could not be reached or broke off."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme == "http+unix":
        connection = _UnixConnection(urllib.parse.unquote(parts.netloc), timeout)
    else:
        kind = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
        connection = kind(parts.hostname, parts.port, timeout=timeout)
    path = parts.path + (f"?{parts.query}" if parts.query else "")
    headers = {"Authorization": f"token {token}"} if token else {}
    try:
        if data is None:
            connection.request("GET", path, headers=headers)
        else:
            _post(connection, path, headers, data)
        response = connection.getresponse()
        body = response.read(MOST_BYTES)
    except http.client.HTTPException as exc:
        raise OSError(f"the service's answer broke off ({type(exc).__name__})") from None
    finally:
        connection.close()
    try:
        return response.status, json.loads(body or b"{}")
    except ValueError:
        return response.status, {}


def _post(connection, path, headers, data):
    """POST ``data`` once the service says it takes it (``Expect: 100-continue``): a hand-in it refuses before
    reading it (its size, the learner's rate, the token) is answered without the notebook being sent."""
    connection.putrequest("POST", path)
    for name, value in {**headers, "Content-Type": "application/x-ipynb+json", "Content-Length": str(len(data)),
                        "Expect": "100-continue"}.items():
        connection.putheader(name, value)
    connection.endheaders()
    sock = connection.sock
    while select.select([sock], [], [], CONTINUE_SECONDS)[0]:
        head = sock.recv(4096, socket.MSG_PEEK)
        if not head or not b"HTTP/1.1 100".startswith(head[:12]):
            return  # the service answered already (or closed): that answer is read, nothing is sent
        if b"\r\n\r\n" in head:
            sock.recv(head.index(b"\r\n\r\n") + 4)  # its "100 Continue", taken off
            break
        time.sleep(0.01)
    connection.send(data)


def _request(url, token, data=None, show=None, said=""):
    """The service's JSON answer to one request, asked again while it cannot be reached (for up to
    ``RETRY_SECONDS``, each try said with ``show``, after ``said``); ``HandInRefused`` with its words."""
    deadline = time.monotonic() + RETRY_SECONDS
    while True:
        try:
            status, body = call(url, token, data)
            if status < 400:
                return body
            why = body.get("message") if isinstance(body, dict) else None
            if status not in (502, 503, 504) or time.monotonic() > deadline:
                raise HandInRefused(why or f"the hand-in service answered {status}")
        except OSError as error:
            why = f"it could not be reached ({getattr(error, 'strerror', None) or error})"
            if time.monotonic() > deadline:
                raise HandInRefused(f"The hand-in service has not answered for {RETRY_SECONDS // 60} minutes ({why}): "
                                    f"try again later, or tell your teacher.") from None
        if show is not None:
            text = (f"{said}The hand-in service is not answering yet ({why}): it may be restarting. Asking again "
                    f"every {RETRY_EVERY} s for up to {RETRY_SECONDS // 60} minutes...")
            show(f"<p>{html.escape(text)}</p>", text)
        time.sleep(RETRY_EVERY)


def _notebook(lesson, path):
    """``(lesson, path)`` of the notebook to hand in: ``path``, else this kernel's notebook, else
    ``<lesson>.ipynb`` here."""
    path = path or hint_area.notebook_path() or (f"{lesson}.ipynb" if lesson else None)
    if path is None:
        raise ValueError("hand_in() needs the lesson, as in hand_in('01_attention'): this kernel does not know its "
                         "notebook's path")
    path = Path(path)
    lesson = lesson or path.stem
    if not path.is_file():
        raise ValueError(f"hand_in(path=...) must name the lesson's saved notebook: {str(path)!r} is not a file")
    if path.stat().st_size > MOST_BYTES:
        raise HandInRefused(f"The notebook is {path.stat().st_size / 2**20:.1f} MB, over the {MOST_BYTES // 2**20} "
                            f"MB a hand-in may have: clear its outputs (Edit > Clear Outputs of All Cells), save, and "
                            f"hand in again.")
    return lesson, path


def hand_in(lesson=None, *, path=None, wait=120, show=None):
    """Hand in ``lesson`` (default: this notebook's) as saved, and show the verdict as soon as it comes, waiting at
    most ``wait`` seconds (then ``status(...)`` asks again). Returns the last state the service gave (a dict), or
    None where there is no hand-in service."""
    url, token = _service()
    if url is None:
        return None
    if not isinstance(wait, (int, float)) or wait < 0:
        raise ValueError(f"hand_in(wait=...) must be a number of seconds, 0 or more, got {wait!r}")
    lesson, path = _notebook(lesson, path)
    saved = datetime.datetime.fromtimestamp(path.stat().st_mtime).strftime("%H:%M:%S")
    show = show or _Shown()
    try:
        state = _request(f"{url.rstrip('/')}/api/hand-ins/{lesson}", token, path.read_bytes(), show,
                         "Not handed in yet. ")
    except HandInRefused as refused:
        show(f"<b>Not handed in.</b> {html.escape(str(refused))}", f"Not handed in. {refused}")
        return None
    state["saved"] = saved
    for _ in range(int(wait) + 1):
        show(*render(state))
        if state.get("state") not in ("waiting", "grading"):
            return state
        time.sleep(1.0)
        try:
            state = {**_request(f"{url.rstrip('/')}/api/hand-ins/{state['key']}", token, None, show,
                                render(state)[1] + "\n"), "saved": saved}
        except HandInRefused as refused:
            show(f"<b>Handed in</b>, but its state could not be read: {html.escape(str(refused))}",
                 f"Handed in, but its state could not be read: {refused}")
            return state
    return state


def solution(exercise):
    """``(the course's solution of exercise, "")`` from the hand-in service, or ``(None, why in words)``: it gives
    one once the learner's own due date has passed."""
    url, token = os.environ.get(URL_VARIABLE), os.environ.get("JUPYTERHUB_API_TOKEN")
    if not url or not token:
        return None, ""
    try:
        status, body = call(f"{url.rstrip('/')}/api/solutions/{exercise}", token)
    except OSError as error:
        return None, f"the hand-in service, which gives it, could not be reached ({error}): try again in a minute."
    if status == 200 and isinstance(body.get("source"), str):
        return body["source"], ""
    return None, str(body.get("message") or f"the hand-in service answered {status}.")


def hand_in_button(lesson=None):
    """A "Hand in" button (ipywidgets) that hands this notebook in as saved when pressed, and shows the verdict
    beneath it; outside a course hub, the sentence that says so. Running the cell hands nothing in: only the press
    does (a Run All never hands in work that is not finished)."""
    if _service()[0] is None:
        return None
    import threading

    import ipywidgets as widgets

    button = widgets.Button(description=f"Hand in {lesson or 'this lesson'}", icon="paper-plane",
                            tooltip="Sends the notebook as saved (save first: Ctrl+S); only your latest counts",
                            layout=widgets.Layout(width="auto"))  # the whole label, never "Hand in 01_att..."
    shown = widgets.HTML("")

    def show(markup, text):
        shown.value = markup

    def pressed(_):
        button.disabled = True
        shown.value = "<p>Sending the notebook as saved...</p>"

        def work():
            try:
                hand_in(lesson, show=show)
            except (ValueError, HandInRefused) as error:
                shown.value = f"<b>Not handed in.</b> {html.escape(str(error))}"
            finally:
                button.disabled = False
        threading.Thread(target=work, daemon=True).start()

    button.on_click(pressed)
    return widgets.VBox([button, shown])


class _Shown:
    """Shows a text in one output that each call updates (in a notebook), else prints it."""

    def __init__(self):
        self.handle = None

    def __call__(self, markup, text):
        try:
            from IPython.display import HTML, display
            from IPython import get_ipython

            if get_ipython() is None or getattr(get_ipython(), "kernel", None) is None:
                raise ImportError
        except ImportError:
            print(text)
            return
        if self.handle is None:
            self.handle = display(HTML(markup), display_id=True)
        else:
            self.handle.update(HTML(markup))


def _when(state):
    stamp = state.get("handed_in", "")
    try:
        when = datetime.datetime.fromisoformat(stamp.rstrip("Z")).replace(tzinfo=datetime.timezone.utc)
        return when.astimezone().strftime("%Y-%m-%d %H:%M:%S %Z")
    except ValueError:
        return html.escape(stamp)


def _exercise_lines(item):
    lines = [f"{item['exercise']}: {item['points']:g} of {item['max_points']:g} points ({item['status']})"]
    if item.get("visible"):
        lines.append(f"  visible checks passed: {item['visible'][0]} of {item['visible'][1]}")
    if item.get("hidden"):
        lines.append(f"  hidden checks passed: {item['hidden'][0]} of {item['hidden'][1]}")
    if item.get("note"):
        lines.append("  " + item["note"])
    hint = _new_to(item.get("hint") or "", item.get("note") or "")
    if hint:
        lines.append("  " + hint)
    return lines


def _new_to(hint, note):
    """The hint's sentences that the note does not already say (the ladder's first rung restates the cause)."""
    sentences = re.split(r"(?<=[.!?\u201d])\s+(?=[A-Z*])", hint)
    kept = [sentence for sentence in sentences if sentence.strip() and sentence.strip() not in note]
    return " ".join(kept) if len(kept) > 1 or (kept and not kept[0].startswith("**")) else ""


def _markup(line):
    """A line as HTML: escaped, then the ladder's **bold** and `code` made so."""
    text = html.escape(line.strip())
    text = re.sub(r"\*\*(.+?)\*\*", r"<b>\1</b>", text)
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", text)


def render(state):
    """``(html, text)`` of a hand-in's state as the service gave it."""
    saved = f" (the notebook as saved at {state['saved']})" if state.get("saved") else ""
    lines = [f"Handed in {state.get('lesson', '')} at {_when(state)}{saved}."]
    kind = state.get("state")
    if kind == "waiting":
        lines.append(f"Waiting to be graded (number {state.get('position') or '?'} in line)...")
    elif kind == "grading":
        lines.append("Being graded...")
    elif kind == "replaced":
        lines.append("A later hand-in of this lesson replaced it before it was graded: only the latest counts.")
    if state.get("message"):
        lines.append(state["message"])
    if "exercises" in state:
        lines.append(f"{state['points']:g} of {state['max_points']:g} points" +
                     (" (the full feedback: the due date has passed)" if state.get("full") else
                      ": what the grader gives this notebook (the full feedback comes after the due date)"))
        for item in state["exercises"]:
            lines += _exercise_lines(item)
    text = "\n".join(lines)
    markup = "<div class='encoder-hand-in'>" + "".join(
        f"<p style='margin:0.2em 0'>{_markup(line)}</p>" if not line.startswith("  ") else
        f"<p style='margin:0.1em 0 0.1em 1.5em'>{_markup(line)}</p>" for line in lines) + "</div>"
    return markup, text
