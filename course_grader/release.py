"""`make release-feedback`: every learner's pages handed back, through nbgrader's feedback exchange and by mail.

    python -m course_grader.release [--root .] [--force]

After ``make grade``: each hand-in ``make collect`` collected from the exchange gets its lesson's page staged where
``nbgrader generate_feedback`` puts its own (beside the hand-in's ``submission_secret.txt``, which names it in the
exchange) and released by ``nbgrader release_feedback``, only where it changed since it was last released
(``feedback/.released/<lesson>.json``, written once nbgrader said it released it); a secret that is not nbgrader's,
or that another learner's hand-in carries too (``secrets_of_others``), is refused and named. Every learner's whole
page goes in ``feedback.zip`` with ``feedback_mail_merge.csv``; a lesson collected from Canvas or Moodle gets the zip
its platform takes back (``write_platform_zips``). docs/teaching/feedback.md (section 4) says it for teachers.
"""

import argparse
import hashlib
import io
import json
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

from . import gradebook, ids
from .course_config import counted_lessons
from .downloads import CANVAS, platform_hand_ins
from .exchange import read_stamp
from .feedback_page import lesson_page_path
from .lesson_links import unlinked_warning
from .files import make_folder, plain_text, read_json, read_regular, write_csv, write_file

SECRET = "submission_secret.txt"
#: What ``nbgrader submit`` writes as a hand-in's secret: ``secrets.token_hex(64)``.
SECRET_FORM = re.compile(r"[0-9a-f]{32,256}")
ZIP, MAIL_MERGE = "feedback.zip", "feedback_mail_merge.csv"
MAIL_COLUMNS = ("student_id", "email", "file")
#: Where the digests of what was released are kept, in ``feedback/`` (hidden: no learner's folder, and never in
#: nbgrader's ``feedback/*/<lesson>``), one file per lesson; the largest read.
RECORDS, MOST_RECORD_BYTES = ".released", 16 * 2**20
#: What ``nbgrader release_feedback --log-level=INFO`` says of each page it releases.
RELEASING = re.compile(r"Releasing feedback for student '([^'\n]*)' on assignment")


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
        text = (read_regular(Path(folder) / SECRET, 299) or b"").decode("ascii", "replace").strip()
    except OSError:
        return None, "no submission_secret.txt (not handed in through the exchange)"
    if not SECRET_FORM.fullmatch(text):
        return None, "its submission_secret.txt is not one nbgrader submit writes"
    return text, ""


def stage(root, student, lesson, page):
    """nbgrader's feedback layout for one hand-in: ``feedback/<folder>/<lesson>/<lesson>.html`` (readable by the
    learners' accounts once in the exchange), its stamp and secret; ``page``: ``(its bytes, secret, stamp)``."""
    content, secret, stamp = page
    folder = make_folder(Path(root) / "feedback" / ids.folder(student) / lesson)
    write_file(folder / f"{lesson}.html", content)
    os.chmod(folder / f"{lesson}.html", 0o644)  # the exchange's copy keeps this mode; feedback/<folder>/ is yours
    write_file(folder / SECRET, secret)
    write_file(folder / "timestamp.txt", stamp)


def nbgrader_release(root, lesson, exclude=()):
    """``nbgrader release_feedback <lesson>`` in the course folder, leaving out the folders of ``feedback/`` named
    in ``exclude``; its output (RuntimeError if it failed)."""
    nbgrader = Path(sys.executable).parent / "nbgrader"
    env = dict(os.environ, PATH=f"{nbgrader.parent}{os.pathsep}{os.environ.get('PATH', '')}")
    done = subprocess.run([str(nbgrader), "release_feedback", lesson, "--log-level=INFO",
                           f"--CourseDirectory.student_id_exclude={','.join(sorted(exclude))}"],
                          cwd=root, env=env, capture_output=True, text=True, timeout=600)
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


def page_digest(lesson, page):
    """The SHA-256 of what releasing ``page`` (``(its bytes, secret, stamp)``) for ``lesson`` puts in the
    exchange and says: the page, and the name the secret gives it there."""
    digest = hashlib.sha256()
    for part in (lesson.encode(), *page[:1], *(text.encode() for text in page[1:])):
        digest.update(len(part).to_bytes(8, "big") + part)
    return digest.hexdigest()


def read_released(root, lesson):
    """``({student_id: digest}, problem)``: what the last release of ``lesson`` recorded (empty where none ran);
    a record that cannot be read, or is not one, is taken as empty (every page is sent again) and said."""
    path = Path(root) / "feedback" / RECORDS / f"{lesson}.json"
    try:
        record = read_json(path, MOST_RECORD_BYTES)
    except FileNotFoundError:
        return {}, ""
    except OSError as exc:
        return {}, f"{path} cannot be read ({exc.strerror}): every page of {lesson} is sent again"
    if not isinstance(record, dict) or not all(isinstance(v, str) for v in record.values()):
        return {}, f"{path} is not a record of what was released: every page of {lesson} is sent again"
    return record, ""


def write_released(root, lesson, record):
    make_folder(Path(root) / "feedback" / RECORDS)
    write_file(Path(root) / "feedback" / RECORDS / f"{lesson}.json", json.dumps(record, indent=0, sort_keys=True))


def releasable(root, found, lesson, refused):
    """``{student: (page bytes, secret, stamp)}`` of the hand-ins of ``lesson`` collected from the exchange whose
    lesson page may be released; why the others cannot is added to ``refused``."""
    shared = {secret: holders for secret, holders in secrets_of_others(root, lesson, found).items()
              if len(holders) > 1}
    ready = {}
    for student in found:
        handed = Path(root) / "submitted" / student / lesson
        secret, why = read_secret(handed) if handed.is_dir() else (None, "no submission_secret")
        page = lesson_page_path(root, student, lesson)
        if secret in shared:
            others = ", ".join(sorted(shared[secret] - {student}))
            why = (f"its submission_secret.txt is also in the hand-in of {others}: not released, as it would "
                   f"replace a classmate's page; ask them to hand in again")
        elif secret is not None and not page.is_file():
            why = "make grade wrote no page of this lesson alone: run make grade again"
        elif secret is not None:
            ready[student] = (page.read_bytes(), secret, (read_stamp(handed) or "").strip()[:64])
            continue
        if not why.startswith("no submission_secret"):
            refused.append(plain_text(f"{student} {lesson}: {why}"))
    return ready


def release_lesson(root, lesson, ready, force=False):
    """Stage and release the pages of ``ready`` (``releasable``'s) that differ from what the record says was
    released, then record those nbgrader says it released; ``(released, unchanged, not released, the record's
    problem)``."""
    record, problem = read_released(root, lesson)
    changed = {s: page for s, page in ready.items() if force or record.get(s) != page_digest(lesson, page)}
    if not changed:
        return [], len(ready), [], problem
    for student, page in changed.items():
        stage(root, student, lesson, page)
    folders = ids.by_folder(changed)
    staged = {p.parent.name for p in (Path(root) / "feedback").glob(f"*/{lesson}") if p.is_dir()}
    said = nbgrader_release(root, lesson, exclude=staged - set(folders))
    sent = [folders[f] for f in dict.fromkeys(RELEASING.findall(said)) if f in folders]
    record.update({student: page_digest(lesson, changed[student]) for student in sent})
    write_released(root, lesson, record)
    missed = [plain_text(f"{s} {lesson}: nbgrader release_feedback did not release it") for s in changed
              if s not in sent]
    return sent, len(ready) - len(changed), missed, problem


def through_exchange(root, found, lessons, out=print, force=False):
    """Release every lesson's pages that changed since they were last released (``release_lesson``), lesson by
    lesson; ``(released, unchanged, refused)``."""
    released, unchanged, refused = 0, 0, []
    for lesson in lessons:
        ready = releasable(root, found, lesson, refused)
        sent, same, missed, problem = release_lesson(root, lesson, ready, force)
        refused += missed
        if problem:
            out(plain_text(problem))
        if sent or same:
            out(f"{lesson}: {len(sent)} page{'s' * (len(sent) != 1)} released through nbgrader's feedback exchange, "
                f"{same} unchanged")
        released, unchanged = released + len(sent), unchanged + same
    return released, unchanged, refused


def write_mail(root, found):
    """``feedback.zip`` and ``feedback_mail_merge.csv``, every learner's page."""
    roster = gradebook.students(root)
    write_file(Path(root) / ZIP, zipped({f"{ids.folder(s)}/index.html": page.read_bytes() for s, page in found.items()}))
    write_csv(Path(root) / MAIL_MERGE, MAIL_COLUMNS,
              [(student, roster[student].email if student in roster else "",
                f"feedback/{ids.folder(student)}/index.html") for student in found])


def platform_name(hand_in, lesson):
    """The name a learner's page of ``lesson`` takes in its platform's zip, after the hand-in's own (``hand_in``:
    make collect's record of it): Canvas's ``<name>_<user id>_<file id>_<file>.html`` (its Re-Upload Submissions
    reads the first two numbers as the learner and the file handed in, so a number in the name is left out),
    Moodle's ``<full name>_<participant id>_assignsubmission_file_/<lesson>.html`` (its feedback-files import reads
    the second ``_`` part as the participant, so an ``_`` in the name is a space)."""
    entry, user = str(hand_in.get("entry") or ""), str(hand_in.get("platform_id") or "")
    if hand_in["source"] == CANVAS:
        split = f"_{user}_{hand_in.get('file_id')}_"
        who, _, name = entry.rpartition(split) if split in entry else ("", "", f"{lesson}.ipynb")
        who = "_".join(part for part in who.split("_") if part and not part.isdigit()) or "feedback"
        return f"{who}{split}{Path(name).stem}.html"
    who = entry.split("/")[0].split("_assignsubmission")[0].removesuffix(f"_{user}").replace("_", " ") or "Participant"
    return f"{who}_{user}_assignsubmission_file_/{lesson}.html"


def write_platform_zips(root, found, lessons):
    """For the lessons collected from Canvas or Moodle (``make collect FROM=``), the zip each platform takes back:
    ``feedback_<platform>_<lesson>.zip``, each learner's page of the lesson named after their hand-in
    (``platform_name``); what was written, in words."""
    hand_ins, _ = platform_hand_ins(root, lessons)
    by_zip = {}
    for (student, lesson), hand_in in sorted(hand_ins.items()):
        page = lesson_page_path(root, student, lesson)
        if student in found and page.is_file():
            by_zip.setdefault((hand_in["source"], lesson), {})[platform_name(hand_in, lesson)] = page.read_bytes()
    said = []
    for (platform, lesson), pages in sorted(by_zip.items()):
        name = f"feedback_{platform.lower()}_{lesson}.zip"
        write_file(Path(root) / name, zipped(pages))
        said.append(f"{name}: {len(pages)} page{'s' * (len(pages) != 1)} of {lesson}, each named after its hand-in, "
                    f"for {UPLOAD[platform]}")
    return said


#: Where each platform takes its zip back.
UPLOAD = {CANVAS: "Canvas's Re-Upload Submissions (the assignment's page, then Re-Upload Submissions): each page "
                  "becomes a comment on its learner's submission",
          "Moodle": "Moodle's Upload multiple feedback files in a zip (the assignment's View all submissions, then "
                    "Grading action): each page goes to its learner's feedback files"}


def zipped(pages):
    """A zip's bytes of ``pages`` (``{name: bytes}``), with fixed times and modes."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in pages.items():
            info = zipfile.ZipInfo(name, (2026, 1, 1, 0, 0, 0))
            info.external_attr, info.compress_type = 0o644 << 16, zipfile.ZIP_DEFLATED
            archive.writestr(info, data)
    return buffer.getvalue()


def release(root, out=print, force=False):
    """Hand every learner's pages back (the module's docstring); returns what was released, in words."""
    root = Path(root).resolve()
    found = pages(root)
    lessons = counted_lessons(root)[0] or sorted({p.name for s in found for p in (root / "submitted" / s).glob("*")
                                                 if p.is_dir() and not p.name.startswith(".")})
    released, unchanged, refused = through_exchange(root, found, lessons, out, force)
    write_mail(root, found)
    said = [f"{len(found)} pages in {ZIP}, with {MAIL_MERGE} (student_id, e-mail, file) for a mail merge",
            f"{released} page{'s' * (released != 1)} released through nbgrader's feedback exchange, each one "
            f"learner's page of one lesson, which they fetch with `nbgrader fetch_feedback <lesson>`",
            f"{unchanged} page{'s' * (unchanged != 1)} unchanged since {'they were' if unchanged != 1 else 'it was'} "
            f"last released: not sent again (FORCE=1 sends every page again)"]
    said += [plain_text(f"not released through the exchange: {why}") for why in refused]
    return "\n".join(said + write_platform_zips(root, found, lessons))


def main(argv=None):
    parser = argparse.ArgumentParser(prog="make release-feedback", description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path.cwd(), help="the course folder (default: here)")
    parser.add_argument("--force", action="store_true", help="release every page again, changed or not")
    args = parser.parse_args(argv)
    if not args.root.is_dir():
        print(f"{args.root} is not a folder: --root must be the course folder", file=sys.stderr)
        return 2
    mask = os.umask(0o077)  # what it writes in the course folder is the teacher's, as make grade's is
    try:
        print(release(args.root, force=args.force))
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
