"""Everything the report shows, computed once by one function (``gather``) from the rows, the gradebook and the
answers as graded; ``page`` only draws it."""

import dataclasses
from dataclasses import KW_ONLY, dataclass, field

from encoder_lib.grading.exercises import EXERCISES

from .. import gradebook
from ..deadlines import Deadlines
from ..sections import read_sections
from .rows import roster
from .similarity import find_copying
from .examples import add_examples, merge_unnamed
from .cards import Links, card
from .counts import groups, learners, lesson_scores, tallies
from .pictures import draw_all, mistakes_picture, score_picture
from .sections_page import differences


@dataclass(frozen=True)
class LateHandIn:
    student_id: str
    lesson: str
    seconds: float
    penalty: float


@dataclass
class FromGradebook:
    """What the gradebook adds to grades_by_exercise.csv: the roster's ``names``, the scores and comments given by
    hand in formgrader (``manual``: ``{(student, lesson, exercise): gradebook.Manual}``), and the ``late``
    hand-ins with their recorded penalty: late as the CSV's ``late`` column says (``make grade`` wrote it, by the
    exchange's time), or, in an older CSV without it, by the gradebook's recorded time against the due date or
    the learner's extension."""

    names: dict = field(default_factory=dict)
    manual: dict = field(default_factory=dict)
    late: list = field(default_factory=list)
    sections: dict = field(default_factory=dict)  # {student: section} (course_grader.sections); empty: one section

    @classmethod
    def read(cls, root, rows):
        recorded, late = gradebook.late(root), []
        if any(r.late is not None for r in rows):  # the CSV says
            flagged = {(r.student_id, r.lesson): r.late for r in rows if r.late and r.status != "missing"}
            for (student, lesson), seconds in flagged.items():
                hand_in = recorded.get((student, lesson))
                late.append(LateHandIn(student, lesson, seconds, hand_in.penalty if hand_in else 0.0))
        else:
            rules = Deadlines.read(root)
            for student, lesson in dict.fromkeys((r.student_id, r.lesson) for r in rows if r.status != "missing"):
                hand_in = recorded.get((student, lesson))
                seconds = rules.seconds_late(student, lesson, hand_in.handed_in) if hand_in else 0.0
                if seconds > 0:
                    late.append(LateHandIn(student, lesson, seconds, hand_in.penalty))
        return cls(roster(root), gradebook.manual_marks(root), late, read_sections(root))

    def marked(self, rows):
        """The rows with the points given by hand as the gradebook has them now: the teacher's score where there
        is one (else the grader's), plus extra credit; from the grader's own points, so that a CSV ``make grade``
        wrote with the marks already in (``grader_points``) is not marked twice."""
        marked = []
        for row in rows:
            manual = self.manual.get((row.student_id, row.lesson, row.exercise))
            points = row.auto_points
            if manual:
                points = (points if manual.points is None else manual.points) + (manual.extra_credit or 0.0)
            marked.append(row if points == row.points else dataclasses.replace(row, points=points))
        return marked


def course_position(lesson, exercise):
    """Where an exercise comes in the course (one the course no longer has: last)."""
    names = list(EXERCISES)
    return (names.index(exercise) if exercise in names else len(names), lesson, exercise)


def by_exercise(found):
    """``{(lesson, exercise): [Group]}`` in course order, each largest first."""
    grouped = {}
    for group in found:
        grouped.setdefault((group.lesson, group.exercise), []).append(group)
    return dict(sorted(grouped.items(), key=lambda item: course_position(*item[0])))


@dataclass(frozen=True)
class ClassReport:
    """Everything the page and ``mistakes.csv`` show, computed once (``gather``)."""

    rows: list  # the rows counted, with the points given by hand
    lessons: list
    has_mistakes: bool
    known: FromGradebook
    links: Links
    _: KW_ONLY
    graded: dict  # (student, lesson, exercise) -> the grader's points, before any by hand
    tallied: dict  # (lesson, exercise) -> counts.Tally
    found: list  # counts.Group, largest first
    learners: dict  # student -> counts.LearnerTally
    copying: object  # similarity.Copying: who may have copied
    answers: object  # answers.Answers: the answers as graded, which the copying section shows
    by_key: dict  # (student, lesson, exercise) -> its row
    over_bound: list  # (student, lesson, exercise) of the answers over the report's bounds, compared with nothing
    cards: dict  # id(Group) -> cards.Card
    pictures: dict  # lesson or (lesson, exercise) -> ReportPicture
    drawn: dict  # ReportPicture -> data: address
    sections: dict  # {student: section} where the learners counted are in two sections or more, else None
    differences: list  # sections_page.Difference: what one section has more of than chance explains

    @property
    def names(self):
        return self.known.names


def gather(rows, lessons, has_mistakes, known, links, answers, *, jobs=None):
    """The ``ClassReport`` of ``rows`` (the lessons counted), with what the gradebook adds (``known``), the
    links of its cards and the answers as graded."""
    marked = known.marked(rows)
    tallied = tallies(marked)
    found = merge_unnamed(groups(marked, tallied), answers, marked)
    add_examples(found, answers, marked)
    pictures = {lesson: score_picture(lesson, *lesson_scores(marked, lesson)) for lesson in lessons
                if lesson_scores(marked, lesson)[1]}
    pictures.update({key: mistakes_picture(key[1], groups_of) for key, groups_of in by_exercise(found).items()})
    copying = find_copying(answers, marked)
    answers.too_large |= copying.too_large
    tallied_learners = learners(marked)
    named = {known.sections[s] for s in tallied_learners if s in known.sections}
    sections = known.sections if len(named) > 1 else None  # only where the learners counted are in two or more
    return ClassReport(marked, lessons, has_mistakes, known, links,
                       graded={(r.student_id, r.lesson, r.exercise): r.auto_points for r in rows},
                       tallied=tallied, found=found, learners=tallied_learners,
                       copying=copying, answers=answers, by_key={(r.student_id, r.lesson, r.exercise): r for r in marked},
                       over_bound=answers.over_bound(),
                       cards={id(g): card(g, links) for g in found},
                       pictures=pictures, drawn=draw_all(list(pictures.values()), jobs), sections=sections,
                       differences=differences(found, marked, sections) if sections else [])
