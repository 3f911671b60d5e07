"""A real JupyterHub on 127.0.0.1 for the classroom test and the hand-out benchmark; learners driven in Chromium.

Shared by ``tests/test_classroom_hub.py`` and ``benchmarks/bench_handout.py``;
free of pytest.

- ``LocalHub``: JupyterHub (from the server environment `make hub-install`
  made) with configurable-http-proxy from npm, the dummy authenticator and
  the simple local process spawner (every learner's home is a folder of the
  scratch directory; servers run as this user, with ``--allow-root`` as root),
  on free loopback ports. A context manager: on exit, or on any error, the hub,
  its proxy, every learner's server and kernel end (each process it started
  carries a marker in its environment, and every process with the marker is
  killed by its process group), whatever state they are in.
- ``teacher_course(scratch)``: the teacher's copy of this repository (a clone
  of its HEAD) with a bare repository as its ``origin``: the git URL the
  learners' nbgitpuller link pulls from.
- ``click_link`` / ``answer_exercise``: what a learner does in the browser
  (Playwright's async API, so that many learners can click at once).
- ``run_as_learner``: a learner's terminal commands (the teachers' page's, from
  ``tools.classroom``), with the environment their server gives its terminals.
"""

import asyncio
import contextlib
import json
import os
import re
import secrets
import shlex
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from tools import classroom
from tools.course import ROOT

MARKER = "ENCODER_COURSE_HUB_TEST"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage"]
PASSWORD = "classroom"


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def proxy_command():
    """configurable-http-proxy's path, or None."""
    import shutil

    return shutil.which("configurable-http-proxy")


def missing_tools():
    """Why the hub cannot run here (a sentence), or None."""
    import shutil

    if not proxy_command():
        how = (f"npm install -g {classroom.PROXY_NPM}" if shutil.which("npm")
               else f"npm is not installed either (Debian: apt-get install npm; then npm install -g {classroom.PROXY_NPM})")
        return f"configurable-http-proxy (JupyterHub's proxy, from npm) is not on PATH: {how}; `.ci/run` installs it"
    if not shutil.which("git"):
        return "git is not installed (nbgitpuller runs it)"
    return None


# ------------------------------------------------------------------ processes

def marked_processes(token):
    """Pids of every process whose environment carries ``MARKER=token``."""
    needle = f"{MARKER}={token}".encode()
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as f:
                if needle in f.read().split(b"\0"):
                    pids.append(int(entry))
        except OSError:
            pass
    return pids


def kill_marked(token, grace=5.0):
    """End every marked process: SIGTERM to each one's process group, then SIGKILL to what is left."""
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 5.0)):
        pids = marked_processes(token)
        if not pids:
            return
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                pgid = os.getpgid(pid)
                if pgid != os.getpgid(0):
                    os.killpg(pgid, sig)
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, sig)
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline and marked_processes(token):
            time.sleep(0.1)


def _cpu_seconds(pid, children=True):
    """utime + stime (+ the reaped children's, cutime + cstime) of ``pid``, in seconds."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    ticks = int(fields[11]) + int(fields[12]) + (int(fields[13]) + int(fields[14]) if children else 0)
    return ticks / os.sysconf("SC_CLK_TCK")


def descendants(root):
    """Pids of ``root``'s descendants (not ``root``)."""
    parents = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError, IndexError):
                parents[int(entry)] = int(Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1])
    found, frontier = set(), {root}
    while frontier:
        frontier = {pid for pid, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def cpu_by_part(token):
    """CPU seconds used so far: ``{"browser": this process's descendants (Chromium), "server": each learner's
    single-user server, "kernel": their kernels, "hub": the hub and its proxy}`` (reaped children included)."""
    parts = {"browser": 0.0, "server": 0.0, "kernel": 0.0, "hub": 0.0}
    marked = set(marked_processes(token))
    for pid in marked:
        command = _cmdline(pid)
        part = ("server" if "jupyterhub-singleuser" in command else "kernel" if "ipykernel" in command else "hub")
        parts[part] += _cpu_seconds(pid, children=part != "hub")  # the hub reaps the servers it stopped
    for pid in descendants(os.getpid()) - marked:
        if "chrom" in _cmdline(pid):
            parts["browser"] += _cpu_seconds(pid)
    return parts


def parent_of(pid):
    """The parent's pid of ``pid``, or None."""
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return None


def rss_mib(pid):
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def _cmdline(pid):
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def _environ(pid):
    try:
        raw = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    except OSError:
        return {}
    return dict(item.decode(errors="replace").split("=", 1) for item in raw if b"=" in item)


# ------------------------------------------------------------------ the course's git remote

def git(args, cwd, env=None):
    result = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, env=env)
    if result.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} in {cwd} failed: {result.stderr.strip()}")
    return result.stdout.strip()


def teacher_course(scratch):
    """A teacher's copy of the course (a clone of this repository's HEAD) and its 'remote' (a bare repository).

    The copy uses this checkout's .venv (a symbolic link; its files get an old
    time stamp, so that `make` finds the environment up to date and installs
    nothing into it). Returns ``(course folder, remote's git URL)``.
    """
    scratch = Path(scratch)
    remote = scratch / "remote.git"
    course = scratch / "teacher" / "encoder-course"
    git(["init", "--quiet", "--bare", str(remote)], scratch)
    git(["clone", "--quiet", "--no-hardlinks", str(ROOT), str(course)], scratch)
    git(["remote", "set-url", "origin", str(remote)], course)
    for name in ("user.email", "user.name"):
        git(["config", name, "teacher@example.org" if name == "user.email" else "Teacher"], course)
    (course / ".venv").symlink_to(ROOT / ".venv")
    old = time.time() - 10 * 365 * 86400
    for path in course.rglob("*"):
        if ".git" not in path.relative_to(course).parts[:1] and not path.is_symlink():
            os.utime(path, (old, old))
    return course, remote.as_uri()


def run_teacher(course, command, env=None, timeout=600):
    """One of the teachers' page's teacher commands (``tools.classroom.TEACHER``) in the teacher's course copy.

    Returns ``(seconds, output)``; a failing command raises with its output.
    """
    env = dict(os.environ if env is None else env)
    env.pop("MAKEFLAGS", None)
    t0 = time.perf_counter()
    result = subprocess.run(command, shell=True, cwd=course, env=env, capture_output=True, text=True,
                            timeout=timeout)
    seconds = time.perf_counter() - t0
    output = result.stdout + result.stderr
    if result.returncode != 0:
        raise RuntimeError(f"teacher's `{command}` failed ({result.returncode}):\n{output[-4000:]}")
    return seconds, output


# ------------------------------------------------------------------ the hub

class LocalHub:
    """JupyterHub on 127.0.0.1 with the learners' servers from ``prefix``; a context manager that always cleans up."""

    def __init__(self, scratch, prefix, users, admin="teacher", startup_timeout=90):
        self.scratch = Path(scratch)
        self.prefix = Path(prefix)
        self.users = list(users)
        self.admin = admin
        self.token = secrets.token_hex(8)
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.startup_timeout = startup_timeout
        self.process = None
        self.log_path = self.scratch / "jupyterhub.log"
        self.extra_config = ""  # lines added to jupyterhub_config.py (the hand-in service's)

    def home(self, user):
        return self.scratch / "home" / user

    def config(self):
        hub_port, api_port = free_port(), free_port()
        lines = {
            "c.JupyterHub.ip": "127.0.0.1",
            "c.JupyterHub.port": self.port,
            "c.JupyterHub.hub_ip": "127.0.0.1",
            "c.JupyterHub.hub_port": hub_port,
            "c.ConfigurableHTTPProxy.api_url": f"http://127.0.0.1:{api_port}",
            "c.ConfigurableHTTPProxy.command": [proxy_command()],
            "c.JupyterHub.db_url": f"sqlite:///{self.scratch / 'jupyterhub.sqlite'}",
            "c.JupyterHub.cookie_secret_file": str(self.scratch / "jupyterhub_cookie_secret"),
            "c.JupyterHub.pid_file": str(self.scratch / "jupyterhub.pid"),
            "c.JupyterHub.authenticator_class": "dummy",
            "c.DummyAuthenticator.password": PASSWORD,
            "c.Authenticator.allowed_users": set(self.users) | {self.admin},
            "c.Authenticator.admin_users": {self.admin},
            "c.JupyterHub.spawner_class": "simple",
            "c.SimpleLocalProcessSpawner.home_dir_template": str(self.scratch / "home" / "{username}"),
            "c.Spawner.cmd": [str(self.prefix / "bin" / "jupyterhub-singleuser")],
            "c.Spawner.args": ["--allow-root"] if os.geteuid() == 0 else [],
            "c.Spawner.default_url": "/lab",
            "c.Spawner.start_timeout": 180,
            "c.Spawner.http_timeout": 180,
            "c.Spawner.environment": {
                MARKER: self.token,
                # the server environment's programs (nbgrader, git from the system) and its kernel
                "PATH": f"{self.prefix / 'bin'}:/usr/local/bin:/usr/bin:/bin",
                "JUPYTER_PREFER_ENV_PATH": "1",
                "OPENBLAS_NUM_THREADS": "1",
            },
            "c.JupyterHub.concurrent_spawn_limit": 50,
            "c.JupyterHub.active_server_limit": 0,
            "c.JupyterHub.shutdown_on_logout": False,
            "c.JupyterHub.cleanup_servers": True,
        }
        return "".join(f"{key} = {value!r}\n" for key, value in lines.items()) + self.extra_config

    def environment(self):
        env = {key: value for key, value in os.environ.items() if not key.startswith(("JUPYTER", "JPY_"))}
        env[MARKER] = self.token
        env["PATH"] = f"{self.prefix / 'bin'}:" + env.get("PATH", "")
        return env

    def start(self):
        (self.scratch / "home").mkdir(parents=True, exist_ok=True)
        config = self.scratch / "jupyterhub_config.py"
        config.write_text(self.config())
        log = open(self.log_path, "wb")
        self.process = subprocess.Popen([str(self.prefix / "bin" / "jupyterhub"), "-f", str(config)],
                                        cwd=self.scratch, env=self.environment(), stdout=log,
                                        stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
        log.close()
        deadline = time.monotonic() + self.startup_timeout
        while True:
            if self.process.poll() is not None:
                self.stop()
                raise RuntimeError(f"JupyterHub exited with code {self.process.returncode}:\n{self.log_tail()}")
            try:
                with urllib.request.urlopen(f"{self.base}/hub/api/", timeout=2) as response:
                    if response.status == 200:
                        return self
            except (OSError, urllib.error.URLError):
                pass
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"JupyterHub did not answer within {self.startup_timeout} s:\n{self.log_tail()}")
            time.sleep(0.3)

    def log_tail(self, lines=60):
        from tests.browser import log_tail

        return log_tail(self.log_path, lines)

    def stop(self):
        """The hub first (it stops the servers it spawned), then every process left with the marker."""
        process = self.process
        if process is not None and process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                pass
        kill_marked(self.token)
        if process is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=5)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    # ---------------------------------------------------------- reading the learners' servers

    def memory(self, user):
        """``(server MiB, kernels MiB)``: the resident memory of a learner's single-user server and kernels."""
        server = kernels = 0.0
        for pid in marked_processes(self.token):
            if _environ(pid).get("JUPYTERHUB_USER") != user:
                continue
            command = _cmdline(pid)
            if "jupyterhub-singleuser" in command:
                server += rss_mib(pid)
            elif "ipykernel" in command:
                kernels += rss_mib(pid)
        return server, kernels

    def learner_env(self, user):
        """The environment a learner's terminal has: their home, their hub name, the server environment first."""
        env = {key: value for key, value in os.environ.items() if not key.startswith(("JUPYTER", "JPY_"))}
        env.update(HOME=str(self.home(user)), USER=user, JUPYTERHUB_USER=user, JUPYTER_PREFER_ENV_PATH="1",
                   PATH=f"{self.prefix / 'bin'}:/usr/local/bin:/usr/bin:/bin")
        env[MARKER] = self.token
        return env

    def server_environment(self, user):
        """The environment of ``user``'s running single-user server, which their kernels inherit: their own
        JupyterHub token in it (``JUPYTERHUB_API_TOKEN``)."""
        for pid in marked_processes(self.token):
            environ = _environ(pid)
            if environ.get("JUPYTERHUB_USER") == user and "jupyterhub-singleuser" in _cmdline(pid):
                return environ
        raise RuntimeError(f"{user} has no running server")

    def in_learner_kernel(self, user, code, cwd, timeout=300):
        """Run Python ``code`` as ``user``'s kernel would: their server's Python and environment (their token), in
        ``cwd``; returns its output."""
        result = subprocess.run([str(self.prefix / "bin" / "python"), "-c", code], cwd=cwd, timeout=timeout,
                                env=self.server_environment(user), capture_output=True, text=True)
        if result.returncode != 0:
            raise RuntimeError(f"{user}'s kernel code failed:\n{result.stdout[-2000:]}{result.stderr[-3000:]}")
        return result.stdout

    def run_as_learner(self, user, commands, timeout=300):
        """The teachers' page's terminal commands (``tools.classroom.LEARNER_*``) for ``user``; returns the output."""
        home = self.home(user)
        cwd, output = home, []
        for command in commands:
            words = shlex.split(command)
            if words[0] == "cd":
                cwd = Path(words[1].replace("~", str(home), 1)) if len(words) > 1 else home
                continue
            result = subprocess.run(words, cwd=cwd, env=self.learner_env(user), capture_output=True, text=True,
                                    timeout=timeout)
            output.append(f"$ {command}\n{result.stdout}{result.stderr}")
            if result.returncode != 0:
                raise RuntimeError(f"{user}'s `{command}` failed:\n" + "\n".join(output)[-4000:])
        return "\n".join(output)


# ------------------------------------------------------------------ learners in the browser

def link_for(readme_template, hub_base, repo_url):
    """The teachers' page's nbgitpuller link template with this hub and this git URL put in (the URL quoted)."""
    from urllib.parse import quote

    return (readme_template.replace("https://<hub>", hub_base)
            .replace("<git URL>", quote(repo_url, safe="/:")))


_JS_STATE = """() => {
    const cells = [...document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell')];
    const prompts = cells.filter(c => c.classList.contains('jp-CodeCell'))
        .map(c => (c.querySelector('.jp-InputPrompt') || {}).textContent || '');
    const item = document.querySelector('.jp-StatusBar-TextItem[title^="Change kernel"]');
    const text = item ? item.textContent.trim() : '';
    return {cells: cells.length, ran: prompts.filter(p => /\\[\\d+\\]/.test(p)).length,
            queued: prompts.filter(p => p.includes('*')).length,
            kernel: /^No Kernel/.test(text) ? 'none' : (text.split('|').pop() || '').trim().toLowerCase()};
}"""

# A widget is shown: its box in an output, with a picture that has loaded (an ipywidgets Image, or an
# <img> inside an HTML widget; both are an <img> in the box).
_JS_WIDGET_SHOWN = """() => [...document.querySelectorAll(
        '.jp-NotebookPanel:not(.lm-mod-hidden) .jp-OutputArea-output .course-explorer img')]
    .some(img => img.complete && img.naturalWidth > 0)"""

_JS_PICTURE = """() => { const img = document.querySelector(
        '.jp-NotebookPanel:not(.lm-mod-hidden) .jp-OutputArea-output .course-explorer img');
    return img ? img.src.length + ':' + img.src.slice(-64) + ':' + img.alt : null; }"""


async def login(page, user, timeout):
    """On the hub's login page (where the link leads a learner not yet logged in): log in."""
    await page.wait_for_selector("#username_input", timeout=timeout * 1000)
    await page.fill("#username_input", user)
    await page.fill("#password_input", PASSWORD)
    await page.click("#login_submit")


async def open_notebook_page(page, timeout):
    await page.wait_for_selector(".jp-NotebookPanel .jp-Notebook .jp-Cell", timeout=timeout * 1000)
    await page.wait_for_function(f"() => ({_JS_STATE})().kernel === 'idle'", timeout=timeout * 1000, polling=200)


async def run_all(page, timeout):
    await page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Run$")).click()
    await page.locator('.lm-Menu-item[data-command="runmenu:run-all"]').click()
    await page.wait_for_function(
        f"() => {{ const s = ({_JS_STATE})(); return s.ran > 0 && s.queued === 0 && s.kernel === 'idle'; }}",
        timeout=timeout * 1000, polling=200)


#: Each step of a click (the page, the pull and the server's start, the kernel, Run All), sized for a 2-core
#: machine busy with other work: a server may take the spawner's whole start_timeout (180 s) to start.
CLICK_SECONDS = 300


async def click_link(context, link, user, timeout=CLICK_SECONDS, logged_in=False, run=True):
    """A learner clicks the nbgitpuller link: logs in if asked, the lessons are pulled, the start notebook opens
    in JupyterLab; with ``run``, Run All and the widget shows its picture. Returns the page and the timings (s
    from the click)."""
    page = await context.new_page()
    t0 = time.perf_counter()
    await page.goto(link, wait_until="domcontentloaded", timeout=timeout * 1000)
    if not logged_in:
        await login(page, user, timeout)
    await open_notebook_page(page, timeout)
    t_open = time.perf_counter() - t0
    if not run:
        return page, {"notebook": t_open}
    await run_all(page, timeout)
    await page.wait_for_function(_JS_WIDGET_SHOWN, timeout=timeout * 1000, polling=100)
    t_widget = time.perf_counter() - t0
    return page, {"notebook": t_open, "widget": t_widget}


async def widget_responds(page, timeout=120):
    """Move one control of the start notebook's widget as a learner would (a slider one step with the
    keyboard, else a click on a toggle button not selected); True once the picture changed."""
    before = await page.evaluate(_JS_PICTURE)
    view = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-OutputArea-output .course-explorer").first
    await view.scroll_into_view_if_needed()
    handles = view.locator(".widget-slider .noUi-handle")
    if await handles.count():
        await handles.first.focus()
        await page.keyboard.press("ArrowRight")
    else:
        await view.locator(".widget-toggle-buttons button:not(.mod-active)").first.click()
    await page.wait_for_function(f"(before) => ({_JS_PICTURE})() !== before", arg=before,
                                 timeout=timeout * 1000, polling=100)
    return True


async def answer_exercise(context, hub_base, user, notebook, answers, timeout=CLICK_SECONDS):
    """Open ``notebook`` (a path in the learner's home) in JupyterLab, replace answer cells' text, save.

    ``answers``: ``{cell index: new source}``. The text is put in as a paste would, then Ctrl+S.
    """
    page = await context.new_page()
    await page.goto(f"{hub_base}/user/{user}/lab/tree/{notebook}", wait_until="domcontentloaded")
    await open_notebook_page(page, timeout)
    cells = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell")
    for index, source in answers.items():
        editor = cells.nth(index).locator(".cm-content")
        await editor.scroll_into_view_if_needed()
        await editor.click()
        await page.keyboard.press("Control+a")
        await page.keyboard.insert_text(source)
    await page.keyboard.press("Escape")
    await page.keyboard.press("Control+s")
    return page


async def press_hand_in(context, hub_base, user, notebook, timeout=CLICK_SECONDS):
    """Open ``notebook`` in JupyterLab, Run All, press the Hand in button the lesson ends with; returns the text
    its output shows once graded."""
    page = await context.new_page()
    await page.goto(f"{hub_base}/user/{user}/lab/tree/{notebook}", wait_until="domcontentloaded")
    # JupyterLab may restore the learner's other tabs: the notebook asked for is the one shown
    await page.wait_for_selector(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell", timeout=timeout * 1000)
    await page.wait_for_function(f"() => ({_JS_STATE})().kernel === 'idle'", timeout=timeout * 1000, polling=200)
    await run_all(page, timeout)
    button = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-OutputArea-output button",
                          has_text=re.compile(r"^\s*Hand in"))
    await button.scroll_into_view_if_needed(timeout=timeout * 1000)
    await button.click()
    shown = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .encoder-hand-in")
    await page.wait_for_function(
        "() => [...document.querySelectorAll('.encoder-hand-in')].some(e => / points/.test(e.textContent))",
        timeout=timeout * 1000, polling=250)
    text = await shown.last.inner_text()
    await page.close()
    return text


def wait_for_file(path, predicate, timeout=90):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError, ValueError):
            if predicate(Path(path).read_text()):
                return True
        time.sleep(0.2)
    return False


@contextlib.asynccontextmanager
async def chromium():
    from playwright.async_api import async_playwright

    from tests.browser import chromium_path

    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS,
                                                   headless=True)
        try:
            yield browser
        finally:
            await browser.close()


def answer_cells(notebook_path):
    """{grade_id: cell index} of a notebook's answer cells."""
    cells = json.loads(Path(notebook_path).read_text())["cells"]
    return {c.get("metadata", {}).get("nbgrader", {}).get("grade_id"): i for i, c in enumerate(cells)
            if c.get("metadata", {}).get("nbgrader", {}).get("grade_id", "").endswith("_answer")}


if __name__ == "__main__":  # pragma: no cover
    print(classroom.gitpuller_link(), file=sys.stderr)
    asyncio.run(asyncio.sleep(0))
