"""Questions on the page: a card per question (choices or a number, a button, the verdict), above its widget.

A learner answers, presses **Check, then show me**, and reads whether it was
right, the answer the widget computed and why; then the widget moves to the
state that shows it. A review's card, with no widget to move, has a **Check**
button and names the lesson whose widget shows the answer. Each answer is kept in the record (``record``) for the review.
Cards work from the keyboard (Tab to the choices, arrow keys between them,
Tab to the button, Enter) and their verdict is announced (a live region).
"""

import html
import math

import ipywidgets as widgets

from . import record

# Makes the verdict's box a live region when it is first shown (ipywidgets gives a widget's box no attributes), so
# that the verdict written into it later is announced.
VERDICT_JS = ("var box = this.closest('.course-question-verdict'); "
              "if (box) { box.setAttribute('role', 'status'); box.setAttribute('aria-live', 'polite'); }")
#: A 1x1 transparent GIF: an image that loads, so that its onload runs (a broken one would show as broken).
PIXEL = "data:image/gif;base64,R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7"
LIVE = f"<img alt=\"\" src=\"{PIXEL}\" width=\"1\" height=\"1\" onload=\"{html.escape(VERDICT_JS)}\">"


#: The button's words: above a widget it moves the widget to show the answer; in a review there is no widget.
CHECK_AND_SHOW = "Check, then show me"
CHECK = "Check"


def key_words(answer):
    """The answer's key as a learner reads it: a choice's label, or the number."""
    if answer.choices:
        return answer.choices.get(answer.key, str(answer.key))  # a review's record names choices it may not have
    return f"{answer.key:g}" if isinstance(answer.key, float) else str(answer.key)


def parse_number(text):
    """The number a learner typed (``"8"``, ``"0.5"``, ``"1/2"``, ``"50%"``), or None."""
    text = str(text).strip().replace(",", ".").replace(" ", "")
    try:
        if text.endswith("%"):
            value = float(text[:-1]) / 100
        elif text.count("/") == 1:
            top, bottom = text.split("/")
            value = float(top) / float(bottom)
        else:
            value = float(text)
    except (ValueError, ZeroDivisionError):
        return None
    return value if math.isfinite(value) else None


class Card:
    """One question: its words, the learner's input, a **Check** button, and the verdict once checked.

    ``explorer``: the widget to move to the answer's state (None in a review, which names the lesson instead);
    ``on_answer(right)``: called once the learner has answered (recording it)."""

    def __init__(self, question, answer, number, *, explorer=None, on_answer=None):
        self.question, self.answer, self.explorer, self.on_answer = question, answer, explorer, on_answer
        prompt = widgets.HTML(f"<b>Predict {number}.</b> {html.escape(question.prompt)}")
        if answer.choices:
            self.input = widgets.RadioButtons(options=[(label, key) for key, label in answer.choices.items()],
                                              value=None, layout=widgets.Layout(width="auto"))
        else:
            self.input = widgets.Text(placeholder="a number", description="your answer",
                                      layout=widgets.Layout(width="16em"))
        self.button = widgets.Button(description=CHECK if explorer is None else CHECK_AND_SHOW,
                                     layout=widgets.Layout(width="auto"))
        self.button.on_click(lambda _: self.check())
        self.verdict = widgets.HTML(LIVE)
        self.verdict.add_class("course-question-verdict")
        self.right = None
        self.widget = widgets.VBox([prompt, self.input, self.button, self.verdict])
        self.widget.add_class("course-question")

    def given(self):
        """What the learner gave: a choice's key, a number, or None."""
        if self.answer.choices:
            return self.input.value
        return parse_number(self.input.value)

    def check(self):
        """Judge the learner's answer, say so and why, record it, and move the widget to show it."""
        given = self.given()
        if given is None:
            self.verdict.value = ("<span>Choose one answer first.</span>" if self.answer.choices else
                                  "<span>Type a number first, such as 8, 0.5 or 1/2.</span>")
            return
        self.right = self.question.judge(given, self.answer.key)
        said = "Right" if self.right else "Not this time"
        where = (" The widget below now shows it." if self.explorer is not None else
                 f" Lesson {self.question.lesson} has the widget that shows it.")
        self.verdict.value = (f"<p><b>{'✓' if self.right else '✗'} {said}.</b> The widget's answer: "
                              f"<b>{html.escape(key_words(self.answer))}</b>. {html.escape(self.answer.why)}"
                              f"{where}</p>")
        self.input.disabled = self.button.disabled = True
        if self.explorer is not None:
            self.explorer.settle(list(self.answer.show.items()))
            self.explorer.update()
        if self.on_answer is not None:
            self.on_answer(self.right)


class Questions:
    """The questions asked before ``explorer``, computed from it; shown in a notebook as their cards."""

    INTRO = ("Before you move the widget below: what do you expect? Answer, then Check: the widget moves to show "
             "the answer. These count for nothing; they are for you.")

    def __init__(self, explorer, questions, *, record_path=None):
        self.explorer, self.questions = explorer, list(questions)
        self.answers = [q.answer(explorer) for q in self.questions]
        self.cards = [Card(q, a, f"{k + 1} of {len(self.questions)}", explorer=explorer,
                           on_answer=recorder(q, a, record_path))
                      for k, (q, a) in enumerate(zip(self.questions, self.answers))]
        self._box(self.INTRO)

    @classmethod
    def of_cards(cls, cards, intro):
        """Cards made elsewhere (a review's), under ``intro``."""
        made = cls.__new__(cls)
        made.explorer, made.cards = None, list(cards)
        made.questions, made.answers = [c.question for c in cards], [c.answer for c in cards]
        made._box(intro)
        return made

    def _box(self, intro):
        self.widget = widgets.VBox([widgets.HTML(f"<i>{html.escape(intro)}</i>"), *(c.widget for c in self.cards)])
        self.widget.add_class("course-questions")

    def _repr_mimebundle_(self, **kwargs):
        return self.widget._repr_mimebundle_(**kwargs)


def recorder(question, answer, path):
    def on_answer(right):
        try:
            record.add(question, answer, right, path=path)
        except OSError as exc:  # a read-only folder: the answer still counts on the page
            print(f"(your answer could not be kept for the review: {exc})")
    return on_answer
