"""The hand-in service: a JupyterHub service that takes a learner's lesson notebook and grades it at once.

    POST <prefix>api/hand-ins/<lesson>        the notebook's bytes; 202 and the hand-in's state
    GET  <prefix>api/hand-ins/<lesson>/<time> that hand-in's state and, once graded, its verdict
    GET  <prefix>api/hand-ins/<lesson>        the learner's hand-ins of the lesson, the earliest first
    GET  <prefix>                             the learner's page, through the hub's login (``page``)

Each request carries the learner's own JupyterHub token (``Authorization:
token ...``; a learner's kernel has it as ``JUPYTERHUB_API_TOKEN``), and the
hub says whose it is (``GET <hub api>/user``): a hand-in is filed under
that name, never under one the request carries. The service's own clock
times it; it is on disk before the answer (``store``), graded by the course's
grader in its sandbox (``grading``) and shown as the course's setting allows
(``views``). Everything a request can carry is bounded: its bytes and
cells, a learner's hand-ins a minute, the hand-ins waiting in all. A learner
not on the roster, a lesson not released or closed, a missing or unknown
token: a refusal in words.

Started by the hub from ``jupyterhub_config.py`` (``tools.classroom``'s
``hand_in_service``), or by hand for Zero to JupyterHub (docs/teaching).
"""

import argparse
import asyncio
import datetime
import hashlib
import json
import os
import time
import unicodedata
from collections import deque
from pathlib import Path

from tornado import httpclient, web

from encoder_lib.grading.exercises import BY_LESSON

from .. import course_config, deadlines, gradebook_writer, sandbox
from ..files import plain_text
from ..submissions import load_cells, managed
from . import store as stores
from .grading import Dispatcher
from .queue import QueueFull
from .views import Refusal, feedback_mode, learner_view

#: What one request may carry, and how often: a lesson notebook with its outputs is well under a megabyte.
MOST_BYTES = 10 * 2**20
MOST_CELLS = 1000
PER_MINUTE = 10
MOST_WAITING = 2000
#: How long the course's roster, due dates and settings, and a token's owner, are taken as read.
SETTINGS_SECONDS = 30
TOKENS_KEPT = 10_000


class Course:
    """The course's roster, lessons, due dates and feedback setting, read again every ``SETTINGS_SECONDS``."""

    def __init__(self, root):
        self.root, self.read_at, self.settings = Path(root), -1e9, None

    def _fresh(self):
        if time.monotonic() - self.read_at > SETTINGS_SECONDS:
            config = course_config.course_config(self.root).EncoderCourse
            self.settings = {
                "roster": {unicodedata.normalize("NFC", s): s for s in gradebook_writer.gradebook_students(self.root)},
                "lessons": course_config.lessons_set(self.root) or list(BY_LESSON),
                "closed": set(config.get("hand_ins_closed", None) or ()),
                "mode": feedback_mode(config.get("hand_in_feedback", None)),
                "deadlines": deadlines.Deadlines.read(self.root)}
            self.read_at = time.monotonic()
        return self.settings

    def learner(self, name):
        """The roster's id of the hub's user ``name``; ``Refusal`` where they are not on it."""
        roster = self._fresh()["roster"]
        student = roster.get(unicodedata.normalize("NFC", name))
        if student is None:
            raise Refusal(403, f"You ({plain_text(name)!r} on this hub) are not on this course's roster, so nothing "
                               f"was handed in: ask your teacher to add you.")
        return student

    def lesson(self, lesson):
        """``Refusal`` unless ``lesson`` is one the class is set, released and open."""
        settings = self._fresh()
        if lesson not in BY_LESSON:
            raise Refusal(404, f"{plain_text(lesson)[:60]!r} is not a graded lesson of this course (they are "
                               f"{', '.join(BY_LESSON)}).")
        if lesson not in settings["lessons"] or not self.released(lesson):
            raise Refusal(403, f"{lesson} is not handed out to this class yet, so it cannot be handed in.")
        if lesson in settings["closed"]:
            raise Refusal(403, f"{lesson} is closed: your teacher takes no more hand-ins of it.")

    def released(self, lesson):
        return (self.root / "release" / lesson / f"{lesson}.ipynb").is_file()

    def open_lessons(self):
        return [lesson for lesson in self._fresh()["lessons"] if self.released(lesson)]

    def due(self, student, lesson):
        return self._fresh()["deadlines"].due_for(student, lesson)

    @property
    def mode(self):
        return self._fresh()["mode"]


class Identity:
    """Whose a JupyterHub token is, as the hub says (``GET <api_url>/user``), kept ``SETTINGS_SECONDS``."""

    def __init__(self, api_url):
        self.api_url, self.known = api_url.rstrip("/"), {}

    async def name(self, token):
        if not token:
            raise Refusal(401, "No JupyterHub token came with the hand-in: hand in from your notebook on the "
                               "course's hub (grading.hand_in()), which sends yours.")
        key = hashlib.sha256(token.encode()).hexdigest()
        known = self.known.get(key)
        if known and time.monotonic() - known[1] < SETTINGS_SECONDS:
            return known[0]
        request = httpclient.HTTPRequest(f"{self.api_url}/user", headers={"Authorization": f"token {token}"},
                                         request_timeout=20)
        try:
            response = await httpclient.AsyncHTTPClient().fetch(request, raise_error=False)
        except OSError as exc:
            raise Refusal(503, f"The hub could not be asked whose token this is ({exc}): try again in a minute.")
        model = json.loads(response.body or b"null") if response.code == 200 else None
        if not isinstance(model, dict) or model.get("kind", "user") != "user" or not isinstance(model.get("name"), str):
            raise Refusal(403, "The hub does not know this token as a learner's: hand in from your own notebook "
                               "on the course's hub.")
        if len(self.known) >= TOKENS_KEPT:
            self.known.clear()
        self.known[key] = (model["name"], time.monotonic())
        return model["name"]


class Service:
    """The hand-ins of the course at ``root``: taken, stored, queued for ``dispatcher``, shown."""

    def __init__(self, root, dispatcher, identity):
        self.course, self.dispatcher, self.identity = Course(root), dispatcher, identity
        self.store = dispatcher.store
        self.recent = {}  # learner -> deque of the monotonic times of their hand-ins this minute

    def _rate(self, student):
        times = self.recent.setdefault(student, deque())
        now = time.monotonic()
        while times and now - times[0] > 60:
            times.popleft()
        if len(times) >= PER_MINUTE:
            wait = 60 - (now - times[0])
            raise Refusal(429, f"You have handed in {len(times)} times in the last minute, the most the course "
                               f"takes: the next is taken in {wait:.0f} s (only the latest counts).")
        times.append(now)

    @staticmethod
    def _notebook(data, lesson):
        if len(data) > MOST_BYTES:
            raise Refusal(413, f"The notebook is {len(data) / 2**20:.1f} MB, over the {MOST_BYTES // 2**20} MB a "
                               f"hand-in may have: clear its outputs (Edit > Clear Outputs of All Cells), save, "
                               f"hand in again.")
        try:
            cells = load_cells(data)
        except ValueError as exc:
            raise Refusal(400, f"What was sent is not a notebook ({exc}): nothing was handed in.")
        if len(cells) > MOST_CELLS:
            raise Refusal(413, f"The notebook has {len(cells)} cells, over the {MOST_CELLS} a hand-in may have.")
        answers = {f"{name}_answer" for name in BY_LESSON[lesson]}
        if not any((managed(cell) or {}).get("grade_id") in answers for cell in cells):
            raise Refusal(400, f"This notebook has none of {lesson}'s answer cells: is it another lesson's? Nothing "
                               f"was handed in.")

    async def hand_in(self, token, lesson, data):
        student = self.course.learner(await self.identity.name(token))
        self.course.lesson(lesson)
        self._notebook(data, lesson)
        if not self.dispatcher.queue.room((student, lesson)):
            raise Refusal(503, "The grader has as many hand-ins waiting as it keeps: hand in again in a few "
                               "minutes (nothing was handed in).")
        self._rate(student)
        hand_in = await asyncio.to_thread(self.store.add, student, lesson, data)
        try:
            self.dispatcher.submit(hand_in)
        except QueueFull:  # filled between the look and the add: kept, graded by make grade
            pass
        return self.summary(hand_in)

    async def learner_of(self, token):
        return self.course.learner(await self.identity.name(token))

    def summary(self, hand_in, history=None):
        history = self.store.history(hand_in.student, hand_in.lesson) if history is None else history
        state = "grading" if self.dispatcher.grading(hand_in) else stores.state(hand_in, history)
        summary = {"lesson": hand_in.lesson, "key": hand_in.key, "handed_in": hand_in.when.isoformat() + "Z",
                   "state": state, "sha256": hand_in.digest}
        if state == "waiting":
            summary["position"] = self.dispatcher.queue.position((hand_in.student, hand_in.lesson))
        return summary

    def view(self, student, lesson, name):
        history = self.store.history(student, lesson)
        hand_in = next((h for h in history if h.folder.name == name), None)
        if hand_in is None:
            raise Refusal(404, f"You have no hand-in of {lesson} at {plain_text(name)[:40]!r}.")
        verdict = hand_in.verdict()
        now = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)
        return learner_view(self.summary(hand_in, history), verdict, mode=self.course.mode,
                            due=self.course.due(student, lesson), now=now)


# ---------------------------------------------------------------- HTTP


def _token(request):
    header = request.headers.get("Authorization", "")
    kind, _, value = header.partition(" ")
    return value.strip() if kind.lower() in ("token", "bearer") else ""


class _Handler(web.RequestHandler):
    def initialize(self, service):
        self.service = service

    def check_xsrf_cookie(self):
        pass  # a token in a header, never a cookie: nothing for another site to forge

    def answer(self, status, body):
        self.set_status(status)
        self.set_header("Content-Type", "application/json; charset=utf-8")
        self.set_header("Cache-Control", "no-store")
        self.finish(json.dumps(body))

    def write_error(self, status_code, **kwargs):
        self.answer(status_code, {"message": "The hand-in service failed on this request: nothing was changed."})

    async def guarded(self, work):
        try:
            status, body = await work()
        except Refusal as refusal:
            status, body = refusal.status, {"message": refusal.message}
        self.answer(status, body)


class HandInsHandler(_Handler):
    async def post(self, lesson):
        async def work():
            return 202, await self.service.hand_in(_token(self.request), lesson, self.request.body)
        await self.guarded(work)

    async def get(self, lesson):
        async def work():
            student = await self.service.learner_of(_token(self.request))
            history = self.service.store.history(student, lesson)
            return 200, {"hand_ins": [self.service.summary(h, history) for h in history]}
        await self.guarded(work)


class HandInHandler(_Handler):
    async def get(self, lesson, name):
        async def work():
            student = await self.service.learner_of(_token(self.request))
            return 200, self.service.view(student, lesson, name)
        await self.guarded(work)


def application(service, prefix, api_url):
    """The service's routes: the API a learner's kernel calls, and the page (``page``) for the browser."""
    import secrets

    from .page import routes

    prefix = "/" + prefix.strip("/") + "/" if prefix.strip("/") else "/"
    lesson = r"([A-Za-z0-9_]{1,64})"
    return web.Application([
        (rf"{prefix}api/hand-ins/{lesson}", HandInsHandler, {"service": service}),
        (rf"{prefix}api/hand-ins/{lesson}/([0-9A-Za-z.:-]{{1,64}})", HandInHandler, {"service": service}),
        *routes(service, prefix, api_url)], cookie_secret=secrets.token_bytes(32), xsrf_cookies=False)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", default=".", help="the course's folder (the teacher's copy; default: here)")
    parser.add_argument("--url", default=os.environ.get("JUPYTERHUB_SERVICE_URL", "http://127.0.0.1:10101"))
    parser.add_argument("--prefix", default=os.environ.get("JUPYTERHUB_SERVICE_PREFIX", "/services/encoder-hand-in/"))
    parser.add_argument("--api-url", default=os.environ.get("JUPYTERHUB_API_URL", "http://127.0.0.1:8081/hub/api"))
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="grader workers (default: one a core)")
    parser.add_argument("--seconds", type=float, default=sandbox.Limits.seconds,
                        help="time limit per exercise, as make grade's TIME_LIMIT (the same, or make grade grades "
                             "each hand-in again)")
    parser.add_argument("--memory-mib", type=int, default=sandbox.Limits.memory_bytes // 2**20)
    parser.add_argument("--unsafe", action="store_true", help="grade without a sandbox (never on a class's hub)")
    args = parser.parse_args(argv)
    args.limits = sandbox.Limits(seconds=args.seconds, memory_bytes=args.memory_mib * 2**20)
    os.umask(0o077)
    asyncio.run(serve(Path(args.root).resolve(), args))


async def serve(root, args):
    from urllib.parse import urlparse

    dispatcher = Dispatcher(root, stores.Store(root), jobs=args.jobs, limits=args.limits, unsafe=args.unsafe,
                            most_waiting=MOST_WAITING)
    service = Service(root, dispatcher, Identity(args.api_url))
    dispatcher.start(service.course.open_lessons())
    url = urlparse(args.url)
    server = application(service, args.prefix, args.api_url).listen(url.port, address=url.hostname,
                                                      max_body_size=MOST_BYTES + 2**20, body_timeout=60,
                                                      idle_connection_timeout=60)
    print(f"hand-in service of {root} at {args.url.rstrip('/')}/{args.prefix.lstrip('/')}", flush=True)
    try:
        await asyncio.Event().wait()
    finally:
        server.stop()
        dispatcher.stop()


if __name__ == "__main__":
    main()
