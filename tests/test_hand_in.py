"""A learner's side of the hand-in service (``encoder_lib.grading.handing_in``), without a hub: outside one it says so
and sends nothing; a bad argument is named; a refusal is shown as the service words it, before the notebook is sent
where the service says so at once; a service that cannot be reached is asked again, and said, for as long as it may
take to come back; the verdict is rendered with every text escaped; the button's label is whole. The service itself:
tests/grader/test_hand_in_service.py; on a real hub: tests/test_classroom_hub.py."""

import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from encoder_lib.grading import handing_in as hand_in_module
from encoder_lib.grading import hand_in, hand_in_button


@pytest.fixture
def notebook(tmp_path):
    path = tmp_path / "01_attention.ipynb"
    path.write_text(json.dumps({"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    return path


def test_outside_a_hub_nothing_is_sent_and_the_learner_is_told_so(capsys, monkeypatch, notebook):
    monkeypatch.delenv(hand_in_module.URL_VARIABLE, raising=False)
    assert hand_in("01_attention", path=notebook) is None
    assert hand_in_button("01_attention") is None
    said = capsys.readouterr().out
    assert said.count("Nothing was handed in: this notebook is not on a course hub with the hand-in service.") == 2


class Service:
    """A stand-in service that answers every request with ``status`` and ``body``, and keeps what it was sent."""

    def __init__(self, status, body, port=0):
        self.sent, self.asked = [], 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # which answers Expect: 100-continue, as the service does

            def handle_expect_100(self):
                if status >= 400:  # refused from the headers: answered at once, the body never read
                    self.answer()
                    return False
                return super().handle_expect_100()

            def do_POST(self):  # noqa: N802
                outer.sent.append((self.path, self.headers.get("Authorization"),
                                   self.rfile.read(int(self.headers["Content-Length"]))))
                self.answer()

            def do_GET(self):  # noqa: N802
                outer.asked += 1
                self.answer()

            def answer(self):
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Length", str(len(data)))
                self.send_header("Connection", "close")
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/services/encoder-hand-in/"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


@pytest.fixture
def on_a_hub(monkeypatch):
    def start(status, body):
        service = Service(status, body)
        monkeypatch.setenv(hand_in_module.URL_VARIABLE, service.url)
        monkeypatch.setenv("JUPYTERHUB_API_TOKEN", "the-learner-s-own")
        return service
    return start


def test_the_saved_notebook_goes_with_the_server_s_own_token_and_the_state_is_shown(on_a_hub, notebook, capsys):
    graded = {"lesson": "01_attention", "key": "01_attention/t", "handed_in": "2026-12-05T10:00:00Z",
              "state": "graded", "points": 2.0, "max_points": 4.0, "full": False, "exercises": [
                  {"exercise": "softmax", "points": 2.0, "max_points": 2.0, "status": "passed", "visible": [5, 5],
                   "note": "", "hint": ""},
                  {"exercise": "scaled_dot_product_attention", "points": 0.0, "max_points": 2.0, "status": "failed",
                   "visible": [1, 3], "note": "<script>x</script> no 1/sqrt(d_k) scaling", "hint": "**What is wrong.**"}]}
    service = on_a_hub(202, graded)
    state = hand_in(path=notebook)
    assert state["state"] == "graded"
    [(path, token, body)] = service.sent
    assert path.endswith("/api/hand-ins/01_attention") and token == "token the-learner-s-own"
    assert body == notebook.read_bytes()
    said = capsys.readouterr().out
    assert "Handed in 01_attention at" in said and "2 of 4 points" in said and "visible checks passed: 1 of 3" in said
    markup, _ = hand_in_module.render(state)
    assert "<script>" not in markup and "&lt;script&gt;" in markup


def test_a_refusal_is_shown_in_the_service_s_words_and_the_notebook_is_not_sent(on_a_hub, notebook, capsys):
    service = on_a_hub(429, {"message": "You have made 10 hand-ins in the last minute, the most the course takes."})
    assert hand_in(path=notebook) is None
    said = capsys.readouterr().out.replace("<b>", "").replace("</b>", "")
    assert "Not handed in. You have made 10 hand-ins in the last minute" in said
    assert service.sent == [], "refused from its headers: the notebook was never sent"


@pytest.fixture
def quick_retries(monkeypatch):
    monkeypatch.setattr(hand_in_module, "RETRY_SECONDS", 4)
    monkeypatch.setattr(hand_in_module, "RETRY_EVERY", 0.5)


def test_a_service_that_cannot_be_reached_is_asked_again_said_and_nothing_is_claimed(monkeypatch, notebook, capsys,
                                                                                    quick_retries):
    monkeypatch.setenv(hand_in_module.URL_VARIABLE, "http://127.0.0.1:9/services/encoder-hand-in/")
    monkeypatch.setenv("JUPYTERHUB_API_TOKEN", "t")
    assert hand_in(path=notebook) is None
    said = capsys.readouterr().out
    assert said.count("not answering yet") >= 3 and "it may be restarting" in said
    assert "Not handed in. The hand-in service has not answered" in said.replace("<b>", "").replace("</b>", "")


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("down", ["hand-in", "poll"])
def test_a_restarting_service_loses_nothing_the_learner_sees(monkeypatch, notebook, capsys, down):
    """The service down when the notebook is sent, or while its verdict is awaited: asked again until it answers,
    and the verdict shown."""
    monkeypatch.setattr(hand_in_module, "RETRY_EVERY", 0.5)
    port = _free_port()
    waiting = {"lesson": "01_attention", "key": "01_attention/t", "handed_in": "2026-12-05T10:00:00Z",
               "state": "waiting", "position": 1}
    graded = {**waiting, "state": "graded", "points": 4.0, "max_points": 4.0, "exercises": []}
    first = Service(202, waiting, port) if down == "poll" else None
    monkeypatch.setenv(hand_in_module.URL_VARIABLE, f"http://127.0.0.1:{port}/services/encoder-hand-in/")
    monkeypatch.setenv("JUPYTERHUB_API_TOKEN", "t")

    def restart():
        time.sleep(1.5)
        if first is not None:
            first.server.shutdown()
            first.server.server_close()
            time.sleep(3)  # down for a while, as while the hub starts it again
        Service(202, graded, port)
    threading.Thread(target=restart, daemon=True).start()
    state = hand_in(path=notebook, wait=60)
    assert state["state"] == "graded", state
    said = capsys.readouterr().out
    assert "not answering yet" in said and "4 of 4 points" in said


@pytest.mark.parametrize("arguments, words", [({"path": "missing.ipynb"}, "hand_in(path=...) must name"),
                                               ({"wait": -1}, "hand_in(wait=...) must be a number")])
def test_a_bad_argument_is_named(on_a_hub, notebook, arguments, words):
    on_a_hub(202, {})
    arguments.setdefault("path", notebook)
    with pytest.raises(ValueError, match=words.replace("(", r"\(").replace(")", r"\)").replace(".", r"\.")):
        hand_in("01_attention", **arguments)


def test_the_button_s_label_is_whole(on_a_hub):
    on_a_hub(202, {})
    button = hand_in_button("01_attention").children[0]
    assert button.description == "Hand in 01_attention" and button.layout.width == "auto"


def test_the_first_hint_adds_what_the_note_does_not_say_and_the_cause_is_said_once():
    cause = "Your `f` gives exactly what this known mistake gives: no 1/sqrt(d_k) scaling."
    state = {"lesson": "01_attention", "handed_in": "2026-12-05T10:00:00Z", "state": "graded", "points": 0.0,
             "max_points": 2.0, "exercises": [{"exercise": "f", "points": 0.0, "max_points": 2.0, "status": "failed",
                                               "note": f"3 queries: the values differ. {cause}",
                                               "hint": f"**What is wrong.** Your `f` fails 2 of its 3 checks. {cause} "
                                                       f"To look at that check yourself, run `grading.failing_case(\"f\")`."}]}
    markup, text = hand_in_module.render(state)
    assert text.count("no 1/sqrt(d_k) scaling") == 1 and "To look at that check yourself" in text
    assert "<b>What is wrong.</b>" in markup and "<code>grading.failing_case(&quot;f&quot;)</code>" in markup
