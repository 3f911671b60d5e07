"""Predict, then look: questions asked before a lesson's widget, answered by it, and asked again days later.

In a lesson::

    explorer = AttentionExplorer()
    questions.ask(explorer)     # the cards: the learner answers, then the widget moves to show the answer
    explorer

and in ``00_start_here``, ``questions.review()`` asks again the questions
due, each when FSRS schedules it from the learner's own answers to it
(``record``). Every key is computed by the widget from its own states
(``bank``, ``lessons``); the questions count for nothing in a grade.
"""

import datetime

from . import record
from .bank import Answer, Question, QuestionError
from .lessons import QUESTIONS
from .panel import Card, Questions, recorder

BY_ID = {question.id: question for question in QUESTIONS}


def for_widget(explorer):
    """The questions that ``explorer``'s class answers, in course order."""
    return [q for q in QUESTIONS if q.widget == type(explorer).__name__]


def ask(explorer):
    """Show the questions that ``explorer`` answers, above where it is shown next; returns nothing."""
    from IPython.display import display

    asked = for_widget(explorer)
    if not asked:
        raise ValueError(f"explorer must be one of the lessons' widgets that answer questions "
                         f"({', '.join(sorted({q.widget for q in QUESTIONS}))}), got {type(explorer).__name__}")
    display(Questions(explorer, asked))


def review(now=None, limit=6, path=None):
    """Ask again, as cards, up to ``limit`` of the recorded questions due at ``now`` (seconds since the epoch)."""
    from IPython.display import Markdown, display

    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise ValueError(f"limit must be a positive number of questions, got {limit!r}")
    found = record.read(path)
    due = [qid for qid in record.due(found, now) if qid in BY_ID][:limit]
    if not due:
        display(Markdown(_nothing_due(found)))
        return
    cards = []
    for k, qid in enumerate(due):
        entry, question = found[qid], BY_ID[qid]
        answer = Answer(entry.get("key"), {}, entry["why"], {str(c): str(l) for c, l in entry.get("choices") or []})
        cards.append(Card(question, answer, f"{k + 1} of {len(due)} (from {question.lesson})",
                          on_answer=recorder(question, answer, path)))
    display(Questions.of_cards(cards, f"{len(due)} to review: the ones you missed first."))


def _nothing_due(found):
    if not found:
        return ("Nothing to review yet: answer the questions above a lesson's widget, and they come back here when "
                "they are due: one you miss a day later, one you get right 2 days later.")
    return f"Nothing to review today; the next question comes back on {_date(record.next_due(found))}."


def _date(seconds):
    return datetime.datetime.fromtimestamp(seconds).strftime("%A %d %B, %H:%M")


__all__ = ["Answer", "BY_ID", "QUESTIONS", "Question", "QuestionError", "ask", "for_widget",
           "review"]
