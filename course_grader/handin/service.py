"""The hand-in service: a JupyterHub service that takes a learner's lesson notebook and grades it at once.

    POST <prefix>api/hand-ins/<lesson>        the notebook's bytes; 202 and the hand-in's state
    GET  <prefix>api/hand-ins/<lesson>/<time> that hand-in's state and, once graded, its verdict
    GET  <prefix>api/hand-ins/<lesson>        the learner's hand-ins of the lesson kept, the earliest first
    GET  <prefix>api/solutions/<exercise>     the course's solution, once the learner's due date has passed
    GET  <prefix>                             the learner's page, through the hub's login (``page``)

Each request carries the learner's JupyterHub token; the hub says whose it is
at each request (``jupyterhub.services.auth``, no cache). All a request may
cost is counted from its headers before its body is read (docs/teaching/
hand-in-service.md says the bounds); the body goes to disk as it comes, and
the notebook is read in a process of its own (``check``), never on the event
loop, as is every listing. The hub starts it through ``supervise``, which
holds its sockets and starts it again at once when it ends.
"""

import argparse
import asyncio
import ctypes
import hashlib
import json
import os
import secrets
import shutil
import signal
import socket
import stat
import subprocess
import sys
import time
from collections import deque
from concurrent.futures.process import BrokenProcessPool, ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path
from urllib.parse import urlparse

from tornado import httpserver, netutil, web

from encoder_lib.grading.exercises import BY_LESSON

from .. import course_config, deadlines, gradebook, sandbox
from ..exchange import utc_now
from ..files import plain_text
from ..workers import PR_SET_PDEATHSIG
from . import store as stores
from .grading import Dispatcher
from .queue import QueueFull
from .views import Refusal, feedback_mode, learner_view

#: What one request may carry, and how often: a lesson notebook with its outputs is well under a megabyte.
MOST_BYTES, MOST_CELLS, PER_MINUTE, MOST_WAITING = 10 * 2**20, 1000, 10, 2000
#: A token's requests a minute and at once (a kernel waiting for its verdict asks once a second), all connections
#: at once, and how long one may take to send its headers and its body.
TOKEN_PER_MINUTE, AT_ONCE, MOST_CONNECTIONS, HEADER_SECONDS, BODY_SECONDS = 300, 3, 400, 10, 60
#: How long the course's roster, due dates and settings are taken as read; a notebook's reading at most.
SETTINGS_SECONDS, CHECK_SECONDS = 30, 30
UNKNOWN = "The hub does not know this token as a learner's: hand in from your own notebook on the course's hub."


class Course:
    """The course's roster, lessons, due dates and feedback setting, read again every ``SETTINGS_SECONDS``."""

    def __init__(self, root):
        self.root, self.read_at, self.settings = Path(root), -1e9, None

    def _fresh(self):
        if time.monotonic() - self.read_at > SETTINGS_SECONDS:
            config = course_config.course_config(self.root).EncoderCourse
            self.settings = {
                "roster": set(gradebook.roster(self.root)),
                "lessons": course_config.lessons_set(self.root) or list(BY_LESSON),
                "closed": set(config.get("hand_ins_closed", None) or ()),
                "mode": feedback_mode(config.get("hand_in_feedback", None)),
                "deadlines": deadlines.Deadlines.read(self.root)}
            self.read_at = time.monotonic()
        return self.settings

    def learner(self, name):
        """The roster's id of the hub's user ``name``, exactly as the hub gives it (the hub lowercases names and
        normalises nothing else: a name it tells apart is another learner); ``Refusal`` off the roster."""
        if name not in self._fresh()["roster"]:
            raise Refusal(403, f"You ({plain_text(name)!r} on this hub) are not on this course's roster, so nothing "
                               f"was handed in: ask your teacher to add you, exactly as the hub names you.")
        return name

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


def _count(table, key, most, what):
    """Count one more of ``what`` for ``key`` in ``table`` this minute; 429 where it would be more than ``most``."""
    now, times = time.monotonic(), table.setdefault(key, deque())
    while times and now - times[0] > 60:
        times.popleft()
    if len(times) >= most:
        raise Refusal(429, f"You have made {len(times)} {what} in the last minute, the most the course takes: the "
                           f"next is taken in {60 - (now - times[0]):.0f} s (only your latest hand-in counts).")
    times.append(now)


def check(path, lesson):
    """Read a notebook stored at ``path`` (in the checker's own process): ``(status, message)`` where it is refused,
    else ``(0, {"sha256", "bytes", "answers": {exercise: its answer cell's SHA-256}})``."""
    from ..submissions import answer_digest, cell_source, load_cells, managed

    data = Path(path).read_bytes()
    try:
        cells = load_cells(data)
    except (ValueError, MemoryError) as exc:
        return 400, f"What was sent is not a notebook ({exc}): nothing was handed in."
    if len(cells) > MOST_CELLS:
        return 413, f"The notebook has {len(cells)} cells, over the {MOST_CELLS} a hand-in may have."
    answers = {}
    for cell in cells:
        grade_id, source = (managed(cell) or {}).get("grade_id"), cell_source(cell)
        if isinstance(grade_id, str) and grade_id.endswith("_answer") and source is not None:
            answers[grade_id[:-len("_answer")]] = answer_digest(source)
    answers = {name: digest for name, digest in answers.items() if name in BY_LESSON[lesson]}
    if not answers:
        return 400, f"This notebook has none of {lesson}'s answer cells: is it another lesson's? Nothing was handed in."
    return 0, {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data), "answers": answers}


class Service:
    """The hand-ins of the ``Course``: taken, stored, queued for ``dispatcher``, shown."""

    def __init__(self, course, dispatcher, auth):
        self.course, self.dispatcher, self.auth, self.store = course, dispatcher, auth, dispatcher.store
        self.lanes = {True: asyncio.Semaphore(16), False: asyncio.Semaphore(4)}  # tokens seen a learner's; others
        self.known, self.refused, self.open, self.times, self.hand_ins = {}, {}, {}, {}, {}  # by token, learner
        self.checker, self.swept = None, time.monotonic()

    def enter(self, key):
        """What a token (its digest ``key``) may cost before the hub is asked whose it is: its requests a minute
        and at once; one the hub refused is refused again for a minute. The tables are swept every minute."""
        now = time.monotonic()
        if now - self.swept > 60:
            self.times, self.hand_ins = ({k: v for k, v in table.items() if v and now - v[-1] < 60}
                                         for table in (self.times, self.hand_ins))
            self.refused, self.swept = {k: v for k, v in self.refused.items() if now - v < 60}, now
        if now - self.refused.get(key, -1e9) < 60:
            raise Refusal(403, UNKNOWN)
        _count(self.times, key, TOKEN_PER_MINUTE, "requests")
        if self.open.get(key, 0) >= AT_ONCE:
            raise Refusal(429, f"You have {AT_ONCE} requests on their way already: wait for them.")
        self.open[key] = self.open.get(key, 0) + 1

    def leave(self, key):
        self.open[key] -= 1
        if not self.open[key]:
            del self.open[key]

    async def learner_of(self, token, key, handing_in=False):
        """The roster's id of the learner whose ``token`` is (its digest ``key``), as the hub says now."""
        if not token:
            raise Refusal(401, "No JupyterHub token came with the request: hand in from your notebook on the "
                               "course's hub (grading.hand_in()), which sends yours.")
        async with self.lanes[key in self.known]:
            try:
                model = await self.auth.user_for_token(token, use_cache=False, sync=False)
            except web.HTTPError as exc:
                raise Refusal(503, f"The hub could not be asked whose token this is ({exc.log_message}): try again "
                                   f"in a minute.") from None
        if not isinstance(model, dict) or model.get("kind", "user") != "user" or not isinstance(model.get("name"), str) \
                or (handing_in and model.get("session_id")):  # a browser's login to the page hands nothing in
            self.refused[key] = time.monotonic()
            raise Refusal(403, UNKNOWN)
        self.known[key] = time.monotonic()
        return self.course.learner(model["name"])

    def admit(self, student, lesson, size):
        """``Refusal`` for a hand-in of ``lesson`` announced as ``size`` bytes (None: not said), before any of it is
        read: the lesson, the bound, the learner's hand-ins this minute, the room in line."""
        self.course.lesson(lesson)
        if size is not None and size > MOST_BYTES:
            raise Refusal(413, f"The notebook is {size / 2**20:.1f} MB, over the {MOST_BYTES // 2**20} MB a hand-in "
                               f"may have: clear its outputs (Edit > Clear Outputs of All Cells), save, hand in again.")
        _count(self.hand_ins, student, PER_MINUTE, "hand-ins")
        if not self.dispatcher.queue.room((student, lesson)):
            raise Refusal(503, "The grader has as many hand-ins waiting as it keeps: hand in again in a few minutes "
                               "(nothing was handed in).")

    async def take(self, student, lesson, upload):
        """The notebook uploaded into ``upload`` read (in the checker's process), stored and queued: its summary."""
        self.checker = self.checker or ProcessPoolExecutor(1, mp_context=get_context("forkserver"))
        try:
            status, found = await asyncio.wait_for(asyncio.wrap_future(
                self.checker.submit(check, Path(upload) / f"{lesson}.ipynb", lesson)), CHECK_SECONDS)
        except (asyncio.TimeoutError, BrokenProcessPool):
            self.checker.shutdown(wait=False, cancel_futures=True)
            self.checker = None
            raise Refusal(503, "The notebook could not be read in time: hand in again in a minute.") from None
        if status:
            raise Refusal(status, found)
        if await asyncio.to_thread(self.store.answers_full, student, lesson, found["answers"]):
            raise Refusal(429, f"You have handed in {stores.MOST_ANSWERS} different answers to an exercise of "
                               f"{lesson}, the most the course keeps: ask your teacher.")
        try:
            hand_in = await asyncio.to_thread(self.store.commit, upload, student, lesson, found)
        except stores.Full as full:
            raise Refusal(507, str(full)) from None
        try:
            self.dispatcher.submit(hand_in)
        except QueueFull:  # filled between the look and the add: kept, graded by make grade
            pass
        return self.summary(hand_in, hand_in.folder.name)

    def summary(self, hand_in, latest):
        state = "grading" if self.dispatcher.grading(hand_in) else stores.state(hand_in, latest)
        summary = {"lesson": hand_in.lesson, "key": hand_in.key, "handed_in": hand_in.when.isoformat() + "Z",
                   "state": state, "sha256": hand_in.digest}
        if state == "waiting":
            summary["position"] = self.dispatcher.queue.position((hand_in.student, hand_in.lesson))
        return summary

    def listing(self, student, lesson):
        """The learner's hand-ins of ``lesson`` kept, each with its state (a few: ``store.KEPT``)."""
        history = self.store.history(student, lesson)
        return [self.summary(h, history[-1].folder.name) for h in history]

    def view(self, student, lesson, name):
        hand_in = self.store.get(student, lesson, name)
        if hand_in is None:
            raise Refusal(404, f"You have no hand-in of {lesson} at {plain_text(name)[:40]!r} (only the latest "
                               f"{stores.KEPT} are kept).")
        return learner_view(self.summary(hand_in, stores.latest_name(self.store, student, lesson)), hand_in.verdict(),
                            mode=self.course.mode, due=self.course.due(student, lesson), now=utc_now())

    def solution(self, student, exercise):
        """The course's solution of ``exercise`` once ``student``'s due date (their extension) has passed."""
        from encoder_lib.grading.solution_step import course_solutions

        found = course_solutions().get(exercise)
        lesson = found.get("lesson") if isinstance(found, dict) else None
        if lesson not in self.course.open_lessons():
            raise Refusal(404, f"{plain_text(exercise)[:60]!r} is no exercise of a lesson this class is set.")
        due = self.course.due(student, lesson)
        if due is None or utc_now() < due:
            raise Refusal(403, f"The course's solution of {exercise} opens " + (
                f"on {due:%d %B %Y at %H:%M} UTC, your due date for {lesson}." if due else
                f"after {lesson}'s due date, which your teacher has not set yet."))
        return {"exercise": exercise, "lesson": lesson, "source": found["source"]}


# ---------------------------------------------------------------- HTTP


@web.stream_request_body
class _Handler(web.RequestHandler):
    """Every request: its token checked and counted from its headers (``prepare``), before any body is read."""

    def initialize(self, service):
        self.service, self.key, self.upload, self.file, self.size = service, None, None, None, 0

    def check_xsrf_cookie(self):
        pass  # a token in a header, never a cookie: nothing for another site to forge

    def answer(self, status, body):
        self.set_status(status)
        self.set_header("Content-Type", "application/json; charset=utf-8")
        self.set_header("Cache-Control", "no-store")
        self.finish(json.dumps(body))

    def write_error(self, status_code, **kwargs):
        self.answer(status_code, {"message": "The hand-in service failed on this request: nothing was changed."})

    async def prepare(self):
        token = self.service.auth.get_token(self, in_cookie=False) or ""
        key = hashlib.sha256(token.encode("utf-8", "replace")).hexdigest()
        try:
            if token:  # none: refused at once (learner_of), counted nowhere
                self.service.enter(key)
                self.key = key
            self.student = await self.service.learner_of(token, key, handing_in=self.request.method == "POST")
            await self.admitted()
        except Refusal as refusal:
            if refusal.status == 429 and self.key:  # a flood's connection waits (and counts) before it is told
                await asyncio.sleep(1)
            self.answer(refusal.status, {"message": refusal.message})

    async def admitted(self):
        if self.request.headers.get("Content-Length", "0") != "0" or "Transfer-Encoding" in self.request.headers:
            raise Refusal(400, "This request carries a body it should not.")

    def data_received(self, chunk):
        pass  # refused already: what still comes is not kept

    def on_finish(self):
        if self.key is not None:
            self.service.leave(self.key)
            self.key = None
        self.drop()

    def drop(self):
        """A hand-in refused or cut off on its way: nothing of it kept."""
        if self.file is not None:
            self.file.close()
        if self.upload is not None:
            shutil.rmtree(self.upload, ignore_errors=True)
        self.file = self.upload = None

    on_connection_close = on_finish

    async def reply(self, status, pending):
        """Answer with what ``pending`` (an awaitable) gives, or its refusal."""
        try:
            body = await pending
        except Refusal as refusal:
            status, body = refusal.status, {"message": refusal.message}
        self.answer(status, body)


class HandInsHandler(_Handler):
    async def admitted(self):
        if self.request.method != "POST":
            return await super().admitted()
        lesson = self.path_args[0]
        length = self.request.headers.get("Content-Length")
        self.service.admit(self.student, lesson, int(length) if length and length.isdigit() else None)
        self.upload, self.file = self.service.store.upload(self.student, lesson)

    def data_received(self, chunk):
        if self.file is None or self._finished:
            return
        self.size += len(chunk)
        if self.size > MOST_BYTES:
            self.drop()
            self.answer(413, {"message": f"The notebook is over the {MOST_BYTES // 2**20} MB a hand-in may have: "
                                         f"clear its outputs (Edit > Clear Outputs of All Cells), save, hand in again."})
        else:
            self.file.write(chunk)

    async def post(self, lesson):
        if not self._finished:  # else refused while it came
            self.file.close()
            self.file = None  # the upload stays, to be removed on finish, unless it is stored (moved) now
            await self.reply(202, self.service.take(self.student, lesson, self.upload))

    async def get(self, lesson):
        await self.reply(200, asyncio.to_thread(lambda: {"hand_ins": self.service.listing(self.student, lesson)}))


class HandInHandler(_Handler):
    async def get(self, lesson, name):
        await self.reply(200, asyncio.to_thread(self.service.view, self.student, lesson, name))


class SolutionHandler(_Handler):
    async def get(self, exercise):
        await self.reply(200, asyncio.to_thread(self.service.solution, self.student, exercise))


def application(service, prefix):
    """The service's routes: the API a learner's kernel calls, and the page (``page``) for the browser."""
    from .page import routes

    prefix = "/" + prefix.strip("/") + "/" if prefix.strip("/") else "/"
    lesson, arguments = r"([A-Za-z0-9_]{1,64})", {"service": service}
    return web.Application([
        (rf"{prefix}api/hand-ins/{lesson}", HandInsHandler, arguments),
        (rf"{prefix}api/hand-ins/{lesson}/([0-9A-Za-z.:-]{{1,64}})", HandInHandler, arguments),
        (rf"{prefix}api/solutions/{lesson}", SolutionHandler, arguments),
        *routes(service, prefix)], cookie_secret=secrets.token_bytes(32), xsrf_cookies=False,
        default_handler_class=_Handler, default_handler_args=arguments)  # anything else: 405, its body unread


class _Server(httpserver.HTTPServer):
    """Tornado's server, with at most ``MOST_CONNECTIONS`` connections at once: one more is closed at once."""

    def handle_stream(self, stream, address):
        if len(self._connections) >= MOST_CONNECTIONS:
            stream.close()
            return
        super().handle_stream(stream, address)


# ---------------------------------------------------------------- where it listens, and its supervisor


def unix_socket(path):
    """A Unix socket at ``path``, in a folder that only this account may write (as may none of its parents but
    root): while the service is down, no other account can listen in its place. ValueError naming what is not."""
    path = Path(path)
    path.parent.mkdir(mode=0o700, exist_ok=True)
    os.chmod(path.parent, 0o711)  # learners' kernels may reach the socket, not list or change the folder
    for folder in (path.parent, *path.parent.parents):
        info = os.stat(folder)
        if info.st_uid not in (0, os.getuid()) or (info.st_mode & 0o022 and not info.st_mode & stat.S_ISVTX):
            raise ValueError(f"the hand-in service's socket cannot be at {path}: {folder} may be changed by another "
                             f"account than root and this one (give --socket another folder)")
    if len(str(path).encode()) > 100:
        raise ValueError(f"the hand-in service's socket path {path} is over 100 bytes (give --socket a shorter one)")
    return netutil.bind_unix_socket(str(path), mode=0o666)


def supervise(args, argv):
    """Hold the service's sockets and run the service in a process of its own, started again at once whenever it
    ends (after ten seconds where it ended five times in a minute), and killed when the supervisor dies (no orphan
    keeps the sockets from the supervisor the hub starts next: ``PR_SET_PDEATHSIG``, set before the service runs)."""
    url, libc, supervisor = urlparse(args.url), ctypes.CDLL(None), os.getpid()
    sockets = [*netutil.bind_sockets(url.port, address=url.hostname), unix_socket(args.socket)]
    command = [sys.executable, "-m", "course_grader.handin.service", *argv,
               "--listening", ",".join(str(s.fileno()) for s in sockets)]
    stopping, starts, child = [], deque(maxlen=5), None

    def stop(signum, _):
        stopping.append(signum)
        if child is not None:
            child.send_signal(signal.SIGTERM)

    def dies_with_supervisor():  # in the child, before the service runs (its supervisor may have died already)
        if libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) or os.getppid() != supervisor:
            os._exit(1)
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, stop)
    while not stopping:
        if len(starts) == starts.maxlen and time.monotonic() - starts[0] < 60:
            time.sleep(10)
        starts.append(time.monotonic())
        child = subprocess.Popen(command, pass_fds=[s.fileno() for s in sockets], preexec_fn=dies_with_supervisor)
        code = child.wait()
        if not stopping:
            print(f"the hand-in service ended ({code}): started again", file=sys.stderr, flush=True)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", default=".", help="the course's folder (the teacher's copy; default: here)")
    parser.add_argument("--url", default=os.environ.get("JUPYTERHUB_SERVICE_URL", "http://127.0.0.1:10101"),
                        help="where the hub's proxy reaches it (the page)")
    parser.add_argument("--socket", default=None, help="its Unix socket for the learners' kernels (default: "
                                                       "<root>/.hand-in-service/hand-in.sock)")
    parser.add_argument("--prefix", default=os.environ.get("JUPYTERHUB_SERVICE_PREFIX", "/services/encoder-hand-in/"))
    parser.add_argument("--api-url", default=os.environ.get("JUPYTERHUB_API_URL", "http://127.0.0.1:8081/hub/api"))
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="grader workers (default: one a core)")
    parser.add_argument("--seconds", type=float, default=sandbox.Limits.seconds,
                        help="time limit per exercise, as make grade's TIME_LIMIT (the same, or make grade grades "
                             "each hand-in again)")
    parser.add_argument("--memory-mib", type=int, default=sandbox.Limits.memory_bytes // 2**20)
    parser.add_argument("--unsafe", action="store_true", help="grade without a sandbox (never on a class's hub)")
    parser.add_argument("--listening", default=None, help=argparse.SUPPRESS)  # the supervisor's sockets
    args = parser.parse_args(argv)
    args.socket = args.socket or str(Path(args.root).resolve() / ".hand-in-service" / "hand-in.sock")
    os.umask(0o077)
    if args.listening is None:
        try:
            return supervise(args, argv)
        except (ValueError, OSError) as exc:
            sys.exit(f"the hand-in service cannot listen: {exc}")
    args.limits = sandbox.Limits(seconds=args.seconds, memory_bytes=args.memory_mib * 2**20)
    asyncio.run(serve(Path(args.root).resolve(), args))


async def serve(root, args):
    from jupyterhub.services.auth import HubOAuth

    course = Course(root)
    dispatcher = Dispatcher(root, stores.Store(root), jobs=args.jobs, limits=args.limits, unsafe=args.unsafe,
                            most_waiting=MOST_WAITING, due=course.due)
    service = Service(course, dispatcher, HubOAuth(api_url=args.api_url, cache_max_age=0))
    dispatcher.start()
    server = _Server(application(service, args.prefix), max_body_size=MOST_BYTES + 2**20, chunk_size=2**16,
                     body_timeout=BODY_SECONDS, idle_connection_timeout=HEADER_SECONDS)
    server.add_sockets([socket.socket(fileno=int(fd)) for fd in args.listening.split(",")])
    done = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, done.set)
    print(f"hand-in service of {root} at {args.url.rstrip('/')}/{args.prefix.lstrip('/')} and {args.socket}",
          flush=True)
    try:
        await done.wait()
    finally:
        server.stop()
        dispatcher.stop()


if __name__ == "__main__":
    main()
