"""The certificates that admit only the course's hosts to its Dask cluster: ``make dask-certificates``.

    python -m course_grader.cluster_tls [--root .]

A certificate authority of the course's own and one certificate it signed, in ``.dask-tls/`` beside
``gradebook.db``, readable by the teacher alone (docs/teaching/several-machines.md says why and how); ``make grade``
refuses a ``tcp://`` scheduler unless the course takes the risk in a setting named for it.
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

#: The folder of the course's certificates, beside ``gradebook.db``.
FOLDER = ".dask-tls"
FILES = ("ca.pem", "cert.pem", "key.pem")
#: The setting that lets ``make grade`` hand work to a scheduler without TLS: its name says what it risks.
UNENCRYPTED = "grade_on_an_unencrypted_scheduler_anyone_who_reaches_it_can_change_grades"
#: How long the certificates last: a term or two.
DAYS = 400


def files(root):
    """``(ca, cert, key)`` paths of the course's certificates, or None where they are not all there."""
    found = tuple(Path(root) / FOLDER / name for name in FILES)
    return found if all(path.is_file() for path in found) else None


def security(root):
    """The ``distributed.security.Security`` of the course's certificates, requiring encryption; None without them."""
    found = files(root)
    if found is None:
        return None
    from distributed.security import Security

    ca, cert, key = (str(path) for path in found)
    return Security(tls_ca_file=ca, tls_client_cert=cert, tls_client_key=key, tls_scheduler_cert=cert,
                    tls_scheduler_key=key, tls_worker_cert=cert, tls_worker_key=key, require_encryption=True)


def unencrypted_allowed(root):
    """Did the course say that ``make grade`` may use a scheduler without TLS (``UNENCRYPTED``)?"""
    from .course_config import course_config

    return root is not None and course_config(root).EncoderCourse.get(UNENCRYPTED) is True


def _openssl(*args, cwd):
    openssl = shutil.which("openssl")
    if openssl is None:
        raise RuntimeError("openssl is not installed: sudo apt-get install openssl (Debian, Ubuntu)")
    done = subprocess.run([openssl, *args], cwd=cwd, capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        raise RuntimeError(f"openssl {args[0]} failed: {done.stderr.strip()[-500:]}")


def make_certificates(root):
    """A certificate authority and one certificate it signed, in ``root/.dask-tls/`` (made anew; the old ones
    stop working); returns the folder."""
    folder = Path(root) / FOLDER
    with tempfile.TemporaryDirectory(dir=root) as scratch:
        os.chmod(scratch, 0o700)
        _openssl("req", "-x509", "-newkey", "rsa:3072", "-nodes", "-keyout", "ca-key.pem", "-out", "ca.pem",
                 "-days", str(DAYS), "-subj", "/CN=encoder-course grading CA", cwd=scratch)
        _openssl("req", "-newkey", "rsa:3072", "-nodes", "-keyout", "key.pem", "-out", "cert.csr",
                 "-subj", "/CN=encoder-course grading host", cwd=scratch)
        _openssl("x509", "-req", "-in", "cert.csr", "-CA", "ca.pem", "-CAkey", "ca-key.pem", "-CAcreateserial",
                 "-out", "cert.pem", "-days", str(DAYS), cwd=scratch)
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(mode=0o700)
        for name in FILES:
            shutil.copy(Path(scratch) / name, folder / name)
            os.chmod(folder / name, 0o600)
    return folder


def main(argv=None):
    parser = argparse.ArgumentParser(description="Make the certificates of the course's Dask cluster.")
    parser.add_argument("--root", type=Path, default=Path.cwd(), help="the course folder")
    args = parser.parse_args(argv)
    try:
        folder = make_certificates(args.root.resolve())
    except RuntimeError as exc:
        print(f"make dask-certificates: {exc}", file=sys.stderr)
        return 2
    print(f"the course's Dask certificates: {folder}/ (ca.pem, cert.pem, key.pem). Copy the folder to each grading "
          f"host's copy of the course; start the scheduler and the workers with them and a tls:// address "
          f"(docs/teaching/several-machines.md)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
