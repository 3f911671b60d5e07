"""The lessons' questions on the website: asked above the widgets that answer them, and asked again on a review page.

Each question's key, words and the state that shows it were computed when the
notebook ran (``encoder_lib.questions``, by the widget itself); a page holds
them as data, and ``static/questions.js`` judges an answer in the browser,
moves the widget to that state and keeps the answer in the browser's own
storage (no account, no server), from which the review page asks again the
questions due, scheduled as the notebooks' review schedules them (``review``).
"""

import json

from encoder_lib.questions import Questions
from encoder_lib.questions.panel import key_words

from . import pages
from .render import SiteError

def shown_questions(shown):
    """The ``Questions`` among what a cell showed."""
    return [obj for obj in shown if isinstance(obj, Questions)]


def show_state(grid, answer, where):
    """The state (a tuple of the widget's control values) that shows ``answer``, which the grid must keep."""
    state = tuple(answer.show.get(name) for name in grid.space.names)
    if state not in set(grid.states):
        raise SiteError(f"{where}: a question shows the state {answer.show}, which the widget cannot reach")
    return state


def record(question, answer, lesson, title):
    """What the page needs of one question: its words, choices, key and why, and where its widget is."""
    return {"id": question.id, "lesson": lesson, "title": title, "prompt": question.prompt,
            "choices": [[str(key), label] for key, label in (answer.choices or {}).items()],
            "key": answer.key if not answer.choices else str(answer.key), "answer": key_words(answer),
            "why": answer.why, "tolerance": question.tolerance, "relative": question.relative,
            "anchor": anchor(question)}


def anchor(question):
    return "q-" + question.id.replace("/", "-")


def _json(data):
    return json.dumps(data, ensure_ascii=False).replace("</", "<\\/")


def form_html(data, number, widget_id=None, show_key=None):
    """One question as a form: its words, its choices (radio buttons) or a box for a number, a button, a verdict."""
    qid = data["anchor"]
    if data["choices"]:
        inputs = "".join(f'<label class="question-choice"><input type="radio" name="{qid}-answer" '
                         f'value="{pages.esc(key)}"> {pages.esc(label)}</label>' for key, label in data["choices"])
    else:
        inputs = (f'<label class="question-number">Your answer <input type="text" name="{qid}-answer" '
                  'inputmode="decimal" autocomplete="off" placeholder="a number"></label>')
    page_data = {**data, "widget": widget_id, "show": show_key}
    return (f'<form class="question" id="{qid}" aria-labelledby="{qid}-prompt">'
            f'<fieldset><legend id="{qid}-prompt"><b>Predict {number}.</b> {pages.esc(data["prompt"])}</legend>'
            f'{inputs}</fieldset><button type="submit">Check, then show me</button>'
            f'<p class="question-verdict" role="status" aria-live="polite"></p>'
            f'<script type="application/json" class="question-data">{_json(page_data)}</script></form>')


def block_id(widget_id):
    """The id of the questions asked above the widget ``widget_id``: where the skip links lead."""
    return f"questions-{widget_id}"


def in_page_order(notebook, asked):
    """The widget ids of ``asked`` (``[(cell id, widget id)]``, the widgets with questions) in the order ``notebook``
    shows their cells."""
    order = {cell.get("id"): k for k, cell in enumerate(notebook.cells)}
    return [widget for _, widget in sorted(asked, key=lambda pair: (order.get(pair[0], len(order)), pair[1]))]


def skip_next(blocks, widget_id):
    """Under a widget with questions, a link past the code that follows to the next questions (``blocks``, in page
    order), seen when it takes the keyboard's focus; nothing under the last."""
    if widget_id not in blocks or blocks[-1] == widget_id:
        return ""
    following = blocks[blocks.index(widget_id) + 1]
    return f'<p class="skip-next"><a href="#{block_id(following)}">Skip the code to the next questions</a></p>'


def asked_html(records, widget_id, show_keys):
    """The questions asked above one widget, each moving it to its own state (``show_keys``) once answered."""
    forms = [form_html(data, f"{k + 1} of {len(records)}", widget_id, show_keys[k]) for k, data in enumerate(records)]
    return (f'<div class="questions" id="{block_id(widget_id)}"><p class="questions-intro">{pages.esc(Questions.INTRO)} They come back on '
            f'the <a href="review.html">review page</a> when they are due.</p>{"".join(forms)}</div>')
