"""`make release-feedback`: every learner's page handed back, through nbgrader's feedback exchange and by mail.

    python -m course_grader.release [--root .]

After ``make grade`` (which wrote ``feedback/<student_id>/index.html``, one
page per learner):

1. **nbgrader's feedback exchange**, for the hand-ins ``make collect``
   collected: each one's page goes where ``nbgrader generate_feedback``
   puts its own, ``feedback/<student_id>/<lesson>/<lesson>.html``, beside the
   hand-in's ``timestamp.txt`` and ``submission_secret.txt`` (the secret
   ``nbgrader submit`` wrote, which only that learner's own copy of the
   hand-in also holds), and ``nbgrader release_feedback <lesson>`` puts it
   in the exchange under a name made from that secret. A learner then runs
   ``nbgrader fetch_feedback <lesson>`` and gets their own page only, in
   ``<lesson>/feedback/<time>/``; no learner can list the exchange's
   feedback folder or guess another's name. The page is readable by the
   learners' accounts there, and by no one else in ``feedback/``.
2. **For a course without a hub**: ``feedback.zip``, every learner's page
   (``<student_id>/index.html``, the folder names of ``feedback/``), and
   ``feedback_mail_merge.csv`` (``student_id,email,file``: the roster's
   e-mail, the page's path in the course folder and in the zip), for a mail
   merge or a learning platform's upload.

The lessons are those counted (``course_config.counted_lessons``). A
learner's secret and stamp are read bounded and never through a link; a
secret that is not what ``nbgrader submit`` writes (hexadecimal) is refused
and named, and so is one that another learner's hand-in carries too
(``secrets_of_others``): that learner's page is not released through the
exchange.
"""

import argparse
import io
import os
import re
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

from . import gradebook, ids
from .course_config import counted_lessons
from .exchange import read_stamp
from .lesson_links import unlinked_warning
from .files import make_folder, plain_text, write_csv, write_file

SECRET = "submission_secret.txt"
#: What ``nbgrader submit`` writes as a hand-in's secret: ``secrets.token_hex(64)``.
SECRET_FORM = re.compile(r"[0-9a-f]{32,256}")
ZIP, MAIL_MERGE = "feedback.zip", "feedback_mail_merge.csv"
MAIL_COLUMNS = ("student_id", "email", "file")


def pages(root):
    """``{student_id: page path}`` of the learners in grades_by_exercise.csv that have a feedback page."""
    from .class_report.rows import read_rows

    csv_path = Path(root) / "grades_by_exercise.csv"
    if not csv_path.is_file():
        raise FileNotFoundError(f"{csv_path} is missing: run `make grade` first")
    learners = dict.fromkeys(row.student_id for row in read_rows(csv_path)[0])
    found = {s: Path(root) / "feedback" / ids.folder(s) / "index.html" for s in learners}
    missing = [s for s, page in found.items() if not page.is_file()]
    if missing:
        raise FileNotFoundError(f"{len(missing)} learners have no feedback page (first: {plain_text(missing[0])!r}): "
                                f"run `make grade` first")
    return found


def read_secret(folder):
    """The hand-in's ``submission_secret.txt`` (bounded, never through a link), or ``(None, why)``."""
    try:
        fd = os.open(Path(folder) / SECRET, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None, "no submission_secret.txt (not handed in through the exchange)"
    with os.fdopen(fd, "rb") as f:
        text = f.read(300).decode("ascii", "replace").strip() if stat.S_ISREG(os.fstat(fd).st_mode) else ""
    if not SECRET_FORM.fullmatch(text):
        return None, "its submission_secret.txt is not one nbgrader submit writes"
    return text, ""


def stage(root, student, lesson, page):
    """nbgrader's feedback layout for one hand-in: ``feedback/<folder>/<lesson>/<lesson>.html`` (readable by the
    learners' accounts once in the exchange), its stamp and secret; returns a reason where it cannot be."""
    handed = Path(root) / "submitted" / student / lesson
    secret, why = read_secret(handed)
    if secret is None:
        return why
    folder = make_folder(Path(root) / "feedback" / ids.folder(student) / lesson)
    write_file(folder / f"{lesson}.html", page.read_bytes())
    os.chmod(folder / f"{lesson}.html", 0o644)  # the exchange's copy keeps this mode; feedback/<folder>/ is yours
    write_file(folder / SECRET, secret)
    write_file(folder / "timestamp.txt", (read_stamp(handed) or "").strip()[:64])
    return ""


def nbgrader_release(root, lesson):
    """``nbgrader release_feedback <lesson>`` in the course folder; its output (RuntimeError if it failed)."""
    nbgrader = Path(sys.executable).parent / "nbgrader"
    env = dict(os.environ, PATH=f"{nbgrader.parent}{os.pathsep}{os.environ.get('PATH', '')}")
    done = subprocess.run([str(nbgrader), "release_feedback", lesson], cwd=root, env=env, capture_output=True,
                          text=True, timeout=600)
    if done.returncode != 0:
        raise RuntimeError(f"nbgrader release_feedback {lesson} failed:\n{(done.stdout + done.stderr)[-2000:]}")
    return done.stdout + done.stderr


def secrets_of_others(root, lesson, students):
    """``{secret: {students}}`` of every hand-in of ``lesson`` in submitted/, each learner's current one and those
    a newer one replaced (``.replaced/``): a secret that two learners' hand-ins carry is not released to either,
    since its page would replace the other's (a hand-in carrying a classmate's secret, issue 39)."""
    held = {}
    for student in students:
        learner = Path(root) / "submitted" / student
        folders = [learner / lesson] + sorted((learner / ".replaced").glob(f"{lesson}+*"))
        for folder in folders:
            secret, _ = read_secret(folder) if folder.is_dir() else (None, "")
            if secret is not None:
                held.setdefault(secret, set()).add(student)
    return held


def through_exchange(root, found, lessons, out=print):
    """Stage every hand-in collected from the exchange and release them, lesson by lesson; ``(released,
    refused)``."""
    released, refused = 0, []
    for lesson in lessons:
        staged = 0
        shared = {secret: holders for secret, holders in secrets_of_others(root, lesson, found).items()
                  if len(holders) > 1}
        for student, page in found.items():
            if not (Path(root) / "submitted" / student / lesson).is_dir():
                continue
            secret, _ = read_secret(Path(root) / "submitted" / student / lesson)
            if secret in shared:
                others = ", ".join(sorted(shared[secret] - {student}))
                refused.append(plain_text(f"{student} {lesson}: its submission_secret.txt is also in the hand-in of "
                                          f"{others}: not released, as it would replace a classmate's page; ask "
                                          f"them to hand in again"))
                continue
            why = stage(root, student, lesson, page)
            if why.startswith("no submission_secret"):
                continue
            if why:
                refused.append(f"{student} {lesson}: {why}")
            else:
                staged += 1
        if staged:
            nbgrader_release(root, lesson)
            out(f"{lesson}: {staged} page{'s' * (staged != 1)} released through nbgrader's feedback exchange")
            released += staged
    return released, refused


def write_mail(root, found):
    """``feedback.zip`` and ``feedback_mail_merge.csv``, every learner's page."""
    roster = gradebook.students(root)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for student, page in found.items():
            info = zipfile.ZipInfo(f"{ids.folder(student)}/index.html", (2026, 1, 1, 0, 0, 0))
            info.external_attr, info.compress_type = 0o644 << 16, zipfile.ZIP_DEFLATED
            archive.writestr(info, page.read_bytes())
    write_file(Path(root) / ZIP, buffer.getvalue())
    write_csv(Path(root) / MAIL_MERGE, MAIL_COLUMNS,
              [(student, roster[student].email if student in roster else "",
                f"feedback/{ids.folder(student)}/index.html") for student in found])


def release(root, out=print):
    """Hand every learner's page back (the module's docstring); returns what was released, in words."""
    root = Path(root).resolve()
    found = pages(root)
    lessons = counted_lessons(root)[0] or sorted({p.name for s in found for p in (root / "submitted" / s).glob("*")
                                                 if p.is_dir() and not p.name.startswith(".")})
    released, refused = through_exchange(root, found, lessons, out)
    write_mail(root, found)
    said = [f"{released} page{'s' * (released != 1)} released through nbgrader's feedback exchange: each learner "
            f"fetches their own with `nbgrader fetch_feedback <lesson>`",
            f"{len(found)} pages in {ZIP}, with {MAIL_MERGE} (student_id, e-mail, file) for a mail merge"]
    said += [plain_text(f"not released through the exchange: {why}") for why in refused]
    return "\n".join(said)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="make release-feedback", description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path.cwd(), help="the course folder (default: here)")
    args = parser.parse_args(argv)
    if not args.root.is_dir():
        print(f"{args.root} is not a folder: --root must be the course folder", file=sys.stderr)
        return 2
    mask = os.umask(0o077)  # what it writes in the course folder is the teacher's, as make grade's is
    try:
        print(release(args.root))
        warning = unlinked_warning(args.root)
        if warning:
            print(warning, file=sys.stderr)
    except (FileNotFoundError, ValueError, RuntimeError) as exc:
        print(f"make release-feedback: {exc}", file=sys.stderr)
        return 2
    finally:
        os.umask(mask)
    return 0


if __name__ == "__main__":
    sys.exit(main())
