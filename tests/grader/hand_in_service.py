"""The hand-in service run for a test or the benchmark: a stand-in for the hub's identity API, the service itself
as its own process, and what a learner's kernel sends. Free of pytest (``benchmarks/bench_hand_in.py`` uses it).

- ``FakeHubApi``: answers ``GET /hub/api/user`` as JupyterHub does for a token (``{"kind": "user", "name":
  ...}``), from a table of tokens, on a free loopback port; any other token gets 403.
- ``ServiceProcess``: ``python -m course_grader.handin.service`` on a course folder (its supervisor, which starts
  the service itself in a process of its own), started and stopped (SIGKILL too, for a crash), its log kept;
  ``url`` is its port's, ``socket_url`` its Unix socket's (the learners' kernels'), in a folder of its own under
  /tmp (``--socket``): a Unix socket's path holds at most 100 bytes, and a test's course folder is deeper.
- ``post`` / ``request``: a learner's requests, as ``encoder_lib.grading.handing_in`` makes them.
"""

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import quote

ROOT = Path(__file__).resolve().parents[2]
PREFIX = "/services/encoder-hand-in/"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class FakeHubApi:
    """``tokens``: {token: user name} (a name of None: a service's token). A context manager."""

    def __init__(self, tokens):
        self.tokens = dict(tokens)  # revoke one by deleting it
        self.asked = 0
        api = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 - http.server's name
                api.asked += 1
                token = self.headers.get("Authorization", "").partition(" ")[2]
                if self.path.rstrip("/") != "/hub/api/user" or token not in api.tokens:
                    self.send_response(403)
                    self.end_headers()
                    self.wfile.write(b'{"status": 403, "message": "Forbidden"}')
                    return
                name = api.tokens[token]
                body = {"kind": "service", "name": "other-service"} if name is None else \
                    {"kind": "user", "name": name, "session_id": None, "scopes": []}
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(json.dumps(body).encode())

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hub/api"

    def __enter__(self):
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()


class ServiceProcess:
    """The hand-in service of the course at ``root``, asking ``api_url`` whose a token is."""

    def __init__(self, root, api_url, *, jobs=1, seconds=5, log=None, env=None):
        self.root, self.api_url, self.jobs, self.seconds, self.env = Path(root), api_url, jobs, seconds, env
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}{PREFIX}"
        self.socket = Path(tempfile.mkdtemp(dir="/tmp", prefix="hand-in-")) / "hand-in.sock"
        self.socket_url = f"http+unix://{quote(str(self.socket), safe='')}{PREFIX}"
        self.log = Path(log or self.root / "hand-in-service.log")
        self.process = None

    def start(self, timeout=180):
        command = [sys.executable, "-m", "course_grader.handin.service", "--root", str(self.root),
                   "--url", f"http://127.0.0.1:{self.port}", "--prefix", PREFIX, "--api-url", self.api_url,
                   "--socket", str(self.socket), "--jobs", str(self.jobs), "--seconds", str(self.seconds)]
        with open(self.log, "ab") as log:
            self.process = subprocess.Popen(command, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
                                            stdin=subprocess.DEVNULL, start_new_session=True,
                                            env={**os.environ, **(self.env or {})})
        self.wait_ready(timeout)
        return self

    def wait_ready(self, timeout=180):
        """Until the service (not only its supervisor's sockets) answers."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the hand-in service exited ({self.process.returncode}):\n{self.log_tail()}")
            try:
                request(f"{self.url}api/hand-ins/none", None, timeout=2)
                return
            except OSError:
                time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"the hand-in service did not answer within {timeout} s:\n{self.log_tail()}")

    def service_pid(self):
        """The pid of the service itself (its supervisor's child)."""
        children = Path(f"/proc/{self.process.pid}/task/{self.process.pid}/children").read_text().split()
        return int(children[0])

    def log_tail(self, n=40):
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-n:])
        except OSError:
            return ""

    def stop(self, sig=signal.SIGTERM):
        if self.process is not None and self.process.poll() is None:
            try:
                os.killpg(self.process.pid, sig)
            except ProcessLookupError:
                pass
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(10)
        shutil.rmtree(self.socket.parent, ignore_errors=True)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()


def request(url, token=None, data=None, timeout=60):
    """``(status, JSON body)`` of a request as a learner's kernel makes it (OSError where none came)."""
    from encoder_lib.grading.handing_in import call

    return call(url, token, data, timeout)


def post(service, lesson, token, data):
    return request(f"{service.url}api/hand-ins/{lesson}", token, data)


def verdict(service, key, token, timeout=120):
    """The hand-in's state once it is no longer waiting or being graded (or after ``timeout`` s)."""
    deadline = time.monotonic() + timeout
    while True:
        status, body = request(f"{service.url}api/hand-ins/{key}", token)
        if status != 200 or body.get("state") not in ("waiting", "grading") or time.monotonic() > deadline:
            return status, body
        time.sleep(0.2)
