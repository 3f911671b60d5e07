"""The processes and cgroups of the sandboxes: one parent cgroup per grading run under the grader's own, one cgroup
per sandbox in it that bounds the memory and the tasks of everything in that sandbox, and how both are killed and
removed."""

import os
import signal
import time
from pathlib import Path

#: The names of what a grading run makes start with this, then the grader's pid: ``encoder-grader-<pid>-...``.
PREFIX = "encoder-grader-"


def _read(path):
    try:
        return path.read_text()
    except OSError:
        return ""


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def children_of(pid):
    """The processes whose parent is ``pid`` (from /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if int(_read(entry / "stat").rsplit(")", 1)[1].split()[1]) == pid:
                    found.append(int(entry.name))
            except (IndexError, ValueError):
                pass
    return found


def grader_pid_of(name):
    """The grader's pid in a name this module made (``encoder-grader-<pid>-...``), or None."""
    rest = name[len(PREFIX):] if name.startswith(PREFIX) else ""
    digits = rest.split("-", 1)[0]
    return int(digits) if digits.isdigit() else None


def cgroup_mounts():
    """{controller or "cgroup2": mount point} from /proc/self/mountinfo."""
    mounts = {}
    for line in _read(Path("/proc/self/mountinfo")).splitlines():
        left, _, right = line.partition(" - ")
        fields, kind = left.split(), right.split()
        if len(fields) < 5 or not kind:
            continue
        if kind[0] == "cgroup2":
            mounts.setdefault("cgroup2", fields[4])
        elif kind[0] == "cgroup" and len(kind) >= 3:
            for option in kind[2].split(","):
                if option in ("memory", "pids"):
                    mounts.setdefault(option, fields[4])
    return mounts


def own_cgroups():
    """{controller or "cgroup2": this process's cgroup path} from /proc/self/cgroup."""
    own = {}
    for line in _read(Path("/proc/self/cgroup")).splitlines():
        _, controllers, path = line.split(":", 2)
        for controller in controllers.split(",") if controllers else ["cgroup2"]:
            own[controller] = path
    return own


def kill_and_remove(folder, attempts=12):
    """Kill every process of a cgroup, then remove it (a cgroup goes once its last task has exited: tried again
    after 1, 2, 4 ... ms, two seconds in all)."""
    for attempt in range(attempts):
        try:
            pids = [int(p) for p in (folder / "cgroup.procs").read_text().split()]
        except (OSError, ValueError):
            pids = []
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        for child in sorted((p for p in folder.iterdir() if p.is_dir()), reverse=True) if folder.is_dir() else []:
            kill_and_remove(child, attempts)
        try:
            folder.rmdir()
            return True
        except FileNotFoundError:
            return True
        except OSError:
            time.sleep(0.001 * 2**attempt)
    return False


class Cgroups:
    """One parent cgroup per grading run under the grader's own (in each controller's hierarchy), and in it one
    cgroup per sandbox that bounds the memory and the tasks of everything in that sandbox.

    ``Cgroups.find(name)`` returns None where the machine has no usable
    controllers (no cgroup v1 ``memory`` and ``pids`` we may write, no cgroup v2
    with both delegated): the grader then relies on the limits per process.
    """

    def __init__(self, parents, version):
        self.parents, self.version, self.count = parents, version, 0

    @classmethod
    def find(cls, name):
        mounts, own = cgroup_mounts(), own_cgroups()
        for version, controllers in ((1, ("memory", "pids")), (2, ("cgroup2",))):
            if not all(c in mounts and c in own for c in controllers):
                continue
            parents = [Path(mounts[c] + own[c].rstrip("/")) / name for c in controllers]
            if version == 2 and not {"memory", "pids"} <= set(_read(parents[0].parent / "cgroup.subtree_control").split()):
                continue
            made = cls(parents, version)
            if made._make_parents():
                return made
        return None

    def _make_parents(self):
        made = []
        try:
            for parent in self.parents:
                parent.mkdir()
                made.append(parent)
            if self.version == 2:
                (self.parents[0] / "cgroup.subtree_control").write_text("+memory +pids")
            return True
        except OSError:
            for parent in made:
                kill_and_remove(parent)
            return False

    def box(self, memory_bytes, tasks):
        """A new cgroup with these bounds: the files a process writes its pid into to join it; None if it fails."""
        self.count += 1
        folders = [parent / f"box-{os.getpid()}-{self.count}" for parent in self.parents]
        settings = ({"memory.max": memory_bytes, "memory.swap.max": 0, "pids.max": tasks} if self.version == 2 else
                    {"memory.limit_in_bytes": memory_bytes, "memory.memsw.limit_in_bytes": memory_bytes,
                     "pids.max": tasks})
        try:
            for folder in folders:
                folder.mkdir()
                for setting, value in settings.items():
                    if (folder / setting).exists():
                        (folder / setting).write_text(str(value))
        except OSError:
            for folder in folders:
                kill_and_remove(folder)
            return None
        return [folder / "cgroup.procs" for folder in folders]

    @staticmethod
    def remove_box(procs):
        for path in procs or ():
            kill_and_remove(path.parent)

    def remove_all(self):
        for parent in self.parents:
            if parent.exists():
                kill_and_remove(parent)


