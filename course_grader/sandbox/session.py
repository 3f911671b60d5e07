"""What one grading run makes outside its sandboxes (``Session``: the runner's folder, the unsafe mode's scratch
folders, the cgroups), and the bubblewrap command that starts a sandbox around ``runner.py``."""

import atexit
import os
import py_compile
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from encoder_lib.grading import wire

from . import syscalls
from .shared import Shared
from .cgroups import PREFIX, Cgroups, alive, cgroup_mounts, kill_and_remove, own_cgroups, grader_pid_of

#: The sandbox's scratch /tmp: its bytes, and the files (inodes) it may hold, which cost the kernel memory but no
#: bytes (181,000 empty files in 8 s grew the kernel's slab by 190 MB); the runner's own files are a handful.
SCRATCH_BYTES = 64 * 2**20
SCRATCH_FILES = 4096
#: How long a sandbox may take to start on a loaded machine before the grader gives up (and tries again later).
START_SECONDS = 60.0
#: The runner and what it imports, copied into the folder the sandbox reads: ``{name: where it is}``.
HERE = Path(__file__).resolve().parent
FILES = {"runner.py": HERE / "runner.py", "answer.py": HERE / "answer.py", "numeric.py": HERE / "numeric.py",
         "wire.py": Path(wire.__file__).resolve()}
INSTALL_HINT = ("install bubblewrap: `sudo apt-get install bubblewrap` (Debian, Ubuntu), "
                "`sudo dnf install bubblewrap` (Fedora), `sudo pacman -S bubblewrap` (Arch)")


def compile_imports(folder):
    """The bytecode of the runner and the modules it imports, written beside them once a run: a sandbox reads
    its folder read-only and would otherwise compile them again for every learner (14 ms)."""
    for name in FILES:
        written = Path(py_compile.compile(str(folder / name), doraise=True,
                                          invalidation_mode=py_compile.PycInvalidationMode.TIMESTAMP))
        written.chmod(0o644)
        written.parent.chmod(0o755)


def numpy_folder():
    """The folder the sandbox's Python imports numpy from, given to the runner: it starts without the site
    module (``-S``), so without the .pth files and editable installs' finders of site-packages (20 ms a
    learner), and finds nothing there but numpy's folder (and what lies beside it)."""
    import numpy

    return str(Path(numpy.__file__).resolve().parent.parent)


class Session:
    """What one grading run makes outside the sandboxes: a folder with the runner's files (readable by the
    sandbox), the unsafe mode's scratch folders in it, and the cgroups. ``close`` removes them all."""

    def __init__(self):
        self.owner = os.getpid()
        self.folder = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{self.owner}-"))  # encoder-grader-<pid>-<random>
        for name, source in FILES.items():
            shutil.copyfile(source, self.folder / name)
            (self.folder / name).chmod(0o644)
        compile_imports(self.folder)
        self.folder.chmod(0o755)
        self.cgroups = Cgroups.find(self.folder.name)
        self.count = 0
        self.scratch_mount = self.folder / "scratch"  # where each sandbox's own tmpfs is mounted, in its namespace
        self.scratch_mount.mkdir(mode=0o755)
        self.scratch_problem = scratch_problem(self.folder, self.scratch_mount)  # None: the scratch /tmp's files are bounded
        self.shared = Shared(self.folder / "shared")  # large public arrays the sandboxes read from files

    @property
    def bounded_scratch(self):
        """The folder a sandbox's scratch tmpfs (bounded in files too) is mounted on, or None where it cannot be."""
        return None if self.scratch_problem else self.scratch_mount

    def scratch(self):
        """A fresh folder for one unsafe sandbox's answers."""
        self.count += 1
        folder = self.folder / f"unsafe-{os.getpid()}-{self.count}"
        folder.mkdir(mode=0o700)
        return folder

    def close(self):
        if os.getpid() != self.owner:
            return  # a worker's copy: the grader's main process cleans up
        if self.cgroups is not None:
            self.cgroups.remove_all()
        shutil.rmtree(self.folder, ignore_errors=True)


_session = None


def open_session():
    """The grading run's ``Session`` (made once per process tree; workers forked after it share it)."""
    global _session
    if _session is None or not _session.folder.is_dir():
        remove_stale()
        _session = Session()
        atexit.register(_session.close)
    return _session


def close_session():
    global _session
    if _session is not None:
        _session.close()
        _session = None


def remove_stale():
    """Remove the folders and cgroups of grading runs whose process is gone (killed before they could)."""
    for folder in Path(tempfile.gettempdir()).glob(f"{PREFIX}*"):
        pid = grader_pid_of(folder.name)
        if pid is not None and not alive(pid) and folder.is_dir() and not folder.is_symlink():
            shutil.rmtree(folder, ignore_errors=True)
    mounts, own = cgroup_mounts(), own_cgroups()
    for controller, mount in mounts.items():
        base = Path(mount + own.get(controller, "/").rstrip("/"))
        for folder in base.glob(f"{PREFIX}*") if base.is_dir() else ():
            pid = grader_pid_of(folder.name)
            if pid is not None and not alive(pid):
                kill_and_remove(folder)


# ---------------------------------------------------------------- the command


def _library_locations():
    """Where ``encoder_lib`` and the grader live on disk (to hide them): their package folders, wherever they
    were installed from."""
    import course_grader
    import encoder_lib

    return [Path(encoder_lib.__file__).resolve().parent, Path(course_grader.__file__).resolve().parent]


def sandbox_python():
    """This Python, by a path that holds inside the sandbox: through its environment's real folder
    (a venv reached through a symbolic link must still find its pyvenv.cfg)."""
    executable, prefix = Path(sys.executable), Path(sys.prefix)
    if executable.is_relative_to(prefix):
        return str(prefix.resolve() / executable.relative_to(prefix))
    return str(executable.resolve())


SANDBOX_ENV = {"PATH": "/usr/bin:/bin", "HOME": "/tmp", "LANG": "C.UTF-8", "OPENBLAS_NUM_THREADS": "1",
               "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "PYTHONDONTWRITEBYTECODE": "1", "PYTHONHASHSEED": "0"}


def _system_binds():
    """bubblewrap's arguments for the system's programs and libraries, read-only."""
    binds = ["--ro-bind", "/usr", "/usr"]
    for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        path = Path("/") / name
        if path.is_symlink():
            binds += ["--symlink", os.readlink(path), str(path)]
        elif path.is_dir():
            binds += ["--ro-bind", str(path), str(path)]
    for name in ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/localtime"):
        binds += ["--ro-bind-try", name, name]
    return binds


def _python_binds(python):
    """The Python installation and its packages, read-only, with encoder_lib and the grader hidden wherever they
    are installed."""
    binds = []
    roots = {Path(sys.base_prefix).resolve(), Path(sys.prefix).resolve(), Path(python).resolve().parent.parent}
    for root in sorted(roots):
        if not root.is_relative_to("/usr"):
            binds += ["--ro-bind", str(root), str(root)]
    for location in _library_locations():
        if any(location.is_relative_to(root) for root in roots | {Path("/usr")}):
            binds += ["--tmpfs", str(location), "--remount-ro", str(location)]
    return binds


#: What the sandbox's Python runs: the runner imported from its folder (its first argument), so that its bytecode
#: is read, not compiled (a script's never is); the runner puts numpy's folder (the second) on its path.
START_RUNNER = "import sys; sys.path[:0] = sys.argv[1:2]; import runner; runner.main()"


def runner_arguments(folder):
    """Python's arguments that start the runner in ``folder``: isolated (``-I``: no environment, no user's
    site-packages), without the site module (``-S``), and numpy's folder on its path."""
    return ["-I", "-S", "-c", START_RUNNER, str(folder), numpy_folder()]


def bwrap_command(python=None, runner=None, scratch=None):
    """The bubblewrap command that runs ``runner.py`` with ``python`` (this one) as the sandbox's pid 1; its
    scratch /tmp is the tmpfs ``scratch.py`` mounts on the folder ``scratch`` (bounded in bytes and files), or,
    where ``scratch`` is None, bubblewrap's own (bounded in bytes only)."""
    python = python or sandbox_python()
    runner = runner or open_session().folder
    command = [shutil.which("bwrap") or "bwrap", "--unshare-all", "--unshare-user", "--uid", "65534", "--gid",
               "65534", "--die-with-parent", "--new-session", "--as-pid-1", "--clearenv"]
    if os.geteuid() == 0:
        command += ["--cap-drop", "ALL"]
    for key, value in SANDBOX_ENV.items():
        command += ["--setenv", key, value]
    # the scratch folder first: the Python below may live under /tmp (a clone in /tmp), mounted on top of it
    command += ["--bind", str(scratch), "/tmp"] if scratch else ["--size", str(SCRATCH_BYTES), "--tmpfs", "/tmp"]
    command += _system_binds() + _python_binds(python)
    command += ["--proc", "/proc", "--dev", "/dev", "--remount-ro", "/dev",
                "--ro-bind", str(runner), "/tmp/grader",
                "--remount-ro", "/",  # the sandbox's own root folder too: nothing but /tmp is writable
                "--chdir", "/tmp", python, *runner_arguments("/tmp/grader")]
    if scratch:  # bubblewrap started by scratch.py, in the namespace where it mounted the sandbox's own tmpfs
        command = [sys.executable, "-I", "-S", str(HERE / "scratch.py"), str(scratch), str(SCRATCH_BYTES),
                   str(SCRATCH_FILES), str(os.getpid()), "--", *command]  # started by this process
    return command


def scratch_problem(runner, folder):
    """None where a sandbox starts with its scratch /tmp bounded in files (``scratch.py`` mounting it on
    ``folder``, ``runner`` the session's folder), else why not: the grader then takes bubblewrap's own."""
    if shutil.which("bwrap") is None:
        return "bubblewrap is not installed"
    command = bwrap_command(runner=runner, scratch=folder)[:-len(runner_arguments(""))] + \
        ["-I", "-c", "print('sandbox ok')"]
    try:
        result = subprocess.run(command, capture_output=True, text=True, timeout=START_SECONDS, env={})
    except (OSError, subprocess.TimeoutExpired) as exc:
        return str(exc)
    return None if "sandbox ok" in result.stdout else (result.stderr.strip()[-200:] or
                                                       f"exit status {result.returncode}")


def sandbox_problem():
    """None when a sandbox works here, else a sentence saying why not and how to fix it."""
    if shutil.which("bwrap") is None:
        return f"bubblewrap (bwrap) is not installed; {INSTALL_HINT}"
    seccomp = syscalls.problem()
    if seccomp:
        return ("the sandbox's system-call allow-list needs libseccomp (`sudo apt-get install libseccomp2`, "
                f"`sudo dnf install libseccomp`) and the pyseccomp package of requirements.txt ({seccomp})")
    command = bwrap_command()[:-len(runner_arguments(""))] + ["-I", "-c", "import numpy; print('sandbox ok')"]
    try:
        result = subprocess.run(command, capture_output=True, text=True, timeout=START_SECONDS, env={})
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bubblewrap could not start a sandbox: {exc}"
    if "sandbox ok" in result.stdout:
        return None
    return (f"bubblewrap could not start a sandbox here ({result.stderr.strip()[:300]}); on some systems "
            f"unprivileged user namespaces must be allowed (sysctl kernel.unprivileged_userns_clone=1)")
