"""What one grading run makes outside its sandboxes (``Session``: the runner's folder, the unsafe mode's scratch
folders, the cgroups), and the bubblewrap command that starts a sandbox around ``runner.py``."""

import atexit
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from . import syscalls
from .cgroups import PREFIX, Cgroups, alive, cgroup_mounts, kill_and_remove, own_cgroups, grader_pid_of

SCRATCH_BYTES = 64 * 2**20
#: How long a sandbox may take to start on a loaded machine before the grader gives up (and tries again later).
START_SECONDS = 60.0
#: The runner and what it imports, copied into the folder the sandbox reads: ``{name: where it is}``.
HERE = Path(__file__).resolve().parent
FILES = {"runner.py": HERE / "runner.py", "answer.py": HERE / "answer.py", "numeric.py": HERE / "numeric.py",
         "wire.py": HERE.parents[1] / "wire.py"}
INSTALL_HINT = ("install bubblewrap: `sudo apt-get install bubblewrap` (Debian, Ubuntu), "
                "`sudo dnf install bubblewrap` (Fedora), `sudo pacman -S bubblewrap` (Arch)")


class Session:
    """What one grading run makes outside the sandboxes: a folder with the runner's files (readable by the
    sandbox), the unsafe mode's scratch folders in it, and the cgroups. ``close`` removes them all."""

    def __init__(self):
        self.owner = os.getpid()
        self.folder = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{self.owner}-"))  # encoder-grader-<pid>-<random>
        for name, source in FILES.items():
            shutil.copyfile(source, self.folder / name)
            (self.folder / name).chmod(0o644)
        self.folder.chmod(0o755)
        self.cgroups = Cgroups.find(self.folder.name)
        self.count = 0

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
    """Where ``encoder_lib`` lives on disk (to hide it): its package folder, wherever it was installed from."""
    import encoder_lib

    return [Path(encoder_lib.__file__).resolve().parent]


def sandbox_python():
    """This Python, by a path that holds inside the sandbox: through its environment's real folder
    (a venv reached through a symbolic link must still find its pyvenv.cfg)."""
    executable, prefix = Path(sys.executable), Path(sys.prefix)
    if executable.is_relative_to(prefix):
        return str(prefix.resolve() / executable.relative_to(prefix))
    return str(executable.resolve())


SANDBOX_ENV = {"PATH": "/usr/bin:/bin", "HOME": "/tmp", "LANG": "C.UTF-8", "OPENBLAS_NUM_THREADS": "1",
               "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "PYTHONDONTWRITEBYTECODE": "1", "PYTHONHASHSEED": "0"}


def bwrap_command(python=None, runner=None):
    """The bubblewrap command that runs ``runner.py`` with ``python`` (this one) as the sandbox's pid 1."""
    python = python or sandbox_python()
    runner = runner or open_session().folder
    command = [shutil.which("bwrap") or "bwrap", "--unshare-all", "--unshare-user", "--uid", "65534", "--gid",
               "65534", "--die-with-parent", "--new-session", "--as-pid-1", "--clearenv"]
    if os.geteuid() == 0:
        command += ["--cap-drop", "ALL"]
    for key, value in SANDBOX_ENV.items():
        command += ["--setenv", key, value]
    # the scratch folder first: the Python below may live under /tmp (a clone in /tmp), mounted on top of it
    command += ["--size", str(SCRATCH_BYTES), "--tmpfs", "/tmp"]
    # the system's programs and libraries
    command += ["--ro-bind", "/usr", "/usr"]
    for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        path = Path("/") / name
        if path.is_symlink():
            command += ["--symlink", os.readlink(path), str(path)]
        elif path.is_dir():
            command += ["--ro-bind", str(path), str(path)]
    for name in ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/localtime"):
        command += ["--ro-bind-try", name, name]
    # the Python installation and its packages, without encoder_lib
    roots = {Path(sys.base_prefix).resolve(), Path(sys.prefix).resolve(), Path(python).resolve().parent.parent}
    for root in sorted(roots):
        if not root.is_relative_to("/usr"):
            command += ["--ro-bind", str(root), str(root)]
    for location in _library_locations():
        if any(location.is_relative_to(root) for root in roots | {Path("/usr")}):
            command += ["--tmpfs", str(location), "--remount-ro", str(location)]
    command += ["--proc", "/proc", "--dev", "/dev", "--remount-ro", "/dev",
                "--ro-bind", str(runner), "/tmp/grader",
                "--remount-ro", "/",  # the sandbox's own root folder too: nothing but /tmp is writable
                "--chdir", "/tmp", python, "-I", "/tmp/grader/runner.py"]
    return command


def sandbox_problem():
    """None when a sandbox works here, else a sentence saying why not and how to fix it."""
    if shutil.which("bwrap") is None:
        return f"bubblewrap (bwrap) is not installed; {INSTALL_HINT}"
    seccomp = syscalls.problem()
    if seccomp:
        return ("the sandbox's system-call allow-list needs libseccomp (`sudo apt-get install libseccomp2`, "
                f"`sudo dnf install libseccomp`) and the pyseccomp package of requirements.txt ({seccomp})")
    command = bwrap_command()[:-2] + ["-I", "-c", "import numpy; print('sandbox ok')"]
    try:
        result = subprocess.run(command, capture_output=True, text=True, timeout=START_SECONDS, env={})
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bubblewrap could not start a sandbox: {exc}"
    if "sandbox ok" in result.stdout:
        return None
    return (f"bubblewrap could not start a sandbox here ({result.stderr.strip()[:300]}); on some systems "
            f"unprivileged user namespaces must be allowed (sysctl kernel.unprivileged_userns_clone=1)")
