"""One learner, one name: the ids found in ``submitted/`` set against the course's roster before anything is graded.

An id that is the roster's written in another Unicode form (``josé`` as ``jose`` and a combining accent, as some
systems write it) is the roster's learner: graded under the roster's form, and said. An id that looks like a
roster's id, or like another id found, but is not it (a trailing space, an invisible character, a Cyrillic ``а``
for a Latin ``a``) is held, never graded, and the summary says whom it looks like and why: its rows would print
like the other's, and an import into a learning platform that trims or normalises ids would put its row over the
other's. Of two found ids that look alike, the plainer is graded. Any other id off the roster is graded and said
(a roster that gives names and e-mails to some learners only is common, and their grades are not dropped).

    >>> skeleton("dаemon "), skeleton("Daemon"), skeleton("jose\u0301")
    ('daemon', 'daemon', 'jose')
"""

import unicodedata
from dataclasses import dataclass, field

from .files import plain_text

#: Letters of other scripts that print as Latin ones (the common ones of Cyrillic and Greek), lower case.
LOOK_ALIKES = str.maketrans("аеорсуіјѕԁһӏхԛԝαοτνρκιυχ", "aeopcyijsdhlxqwaotvpkiux")


def skeleton(student_id):
    """What ``student_id`` looks like when printed: compatibility forms folded, case folded, accents, invisible and
    space characters gone, look-alike letters of other scripts as the Latin ones."""
    text = unicodedata.normalize("NFKD", student_id).casefold()
    kept = "".join(c for c in text if unicodedata.category(c) not in ("Mn", "Me", "Cf", "Cc", "Zs", "Zl", "Zp"))
    return kept.translate(LOOK_ALIKES).strip()


def why_alike(a, b):
    """In words, what tells ``a`` from ``b``, two ids with one skeleton."""
    if a.strip() != a or b.strip() != b:
        return "a space at an end"
    odd = [c for c in a + b if not c.isascii()]
    if any(unicodedata.category(c) in ("Cf", "Zs") for c in odd):
        return "an invisible character"
    if odd:
        c = odd[0]
        return f"a character that only looks like another ({unicodedata.name(c, f'U+{ord(c):04X}')})"
    return "letters in another case"


@dataclass
class Matched:
    """The roster's verdict on the ids found: ``graded`` ``{id as found: id graded}``, ``held`` ids, and the
    ``notices`` that say each."""

    graded: dict = field(default_factory=dict)
    held: list = field(default_factory=list)
    notices: list = field(default_factory=list)


def match(found, roster):
    """Set the ids ``found`` in submitted/ against ``roster`` (the gradebook's learners; empty: none yet)."""
    roster = list(roster)
    result = Matched()
    by_form = {unicodedata.normalize("NFC", r): r for r in roster}
    by_look = {}
    for r in roster:
        by_look.setdefault(skeleton(r), r)
    for student in sorted(found, key=lambda s: (s != s.strip() or not s.isascii(), s)):  # the plainest first
        same = by_form.get(unicodedata.normalize("NFC", student))
        if student in roster or (same is not None and same not in result.graded.values()):
            result.graded[student] = same if student not in roster else student
            if result.graded[student] != student:
                result.notices.append(plain_text(f"submitted/{student!r} is the roster's {same!r} written in another "
                                                 f"Unicode form: graded as {same!r}"))
            continue
        twin = by_look.get(skeleton(student))
        if twin is None:  # nobody it could be mistaken for: graded, and said where there is a roster
            result.graded[student] = student
            by_look[skeleton(student)] = student
            if roster:
                result.notices.append(plain_text(f"submitted/{student!r} is not on the course's roster: graded "
                                                 f"(nbgrader db student add gives it a name and an e-mail)"))
            continue
        result.held.append(student)
        whose = f"the roster's {twin!r}" if twin in roster else f"submitted/{twin!r}, graded instead"
        result.notices.append(plain_text(f"held, not graded: submitted/{student!r} looks like {whose} "
                                         f"({why_alike(student, twin)}); check who it is before grading it"))
    return result
