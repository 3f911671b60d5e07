"""The lessons' questions on the website: each page asks them above their widgets with the keys the widgets compute,
they are answered by keyboard and by mouse at a phone's and a desktop's width, the widget then shows the answer, and
the review page asks a missed question again a day later (the browser's clock set by the test), from file://, with
nothing fetched and nothing axe-core finds serious; over weeks of answers it asks, day after day, what the notebooks'
review (encoder_lib.questions.record, FSRS) asks for the same answers."""

import datetime
import json
import random
import re

import pytest

import site_pages
from encoder_lib.questions import QUESTIONS, record
from test_site_reading import axe_serious
from tools import question_keys
from tools.course import lesson_names

pytest_plugins = ["site_fixtures"]

LESSONS = [lesson for lesson in lesson_names() if lesson != "00_start_here"]
KEPT = json.loads(question_keys.KEYS.read_text())
T0 = datetime.datetime(2026, 3, 2, 9, 0, tzinfo=datetime.timezone.utc)
DAY = datetime.timedelta(days=1)


def page_questions(html):
    """Every question's data on a page, in page order."""
    return [json.loads(m) for m in re.findall(r'<script type="application/json" class="question-data">(.*?)</script>',
                                              html, flags=re.S)]


@pytest.mark.parametrize("lesson", LESSONS)
def test_each_page_asks_its_questions_above_their_widgets_with_the_keys_the_lessons_were_checked_on(site, lesson):
    html = (site.out / f"{lesson}.html").read_text()
    asked = page_questions(html)
    assert [q["id"] for q in asked] == [q.id for q in QUESTIONS if q.lesson == lesson]
    widgets = {w.widget_id: w for w in site.widgets if w.lesson == lesson}
    for q in asked:
        # the site's key comes from the notebook's own widget, as the notebook builds it
        assert not question_keys._differ(q["key"], KEPT[q["id"]]), (q["id"], q["key"], KEPT[q["id"]])
        assert q["show"] in widgets[q["widget"]].data["keys"], q
        assert html.index(f'id="{q["anchor"]}"') < html.index(f'id="{q["widget"]}"'), f"{q['id']} is not above its widget"


def review_data(site):
    html = (site.out / "review.html").read_text()
    return json.loads(re.search(r'<script type="application/json" id="review-data">(.*?)</script>', html, re.S).group(1))


def test_the_review_page_holds_every_question_and_the_notebooks_fsrs_settings(site):
    from tools.site import review

    data = review_data(site)
    assert [q["id"] for q in data["questions"]] == [q.id for q in QUESTIONS if q.lesson in lesson_names()]
    assert data["schedule"] == review.settings()
    html = (site.out / "review.html").read_text()
    assert review.schedule_words() in " ".join(html.split())
    assert '<script src="assets/ts-fsrs.js"></script>' in html and (site.out / "assets" / "ts-fsrs.LICENSE.txt").is_file()


def _answer(page, form, data, *, right, how):
    """Answer one question on the page, right or wrong, with the keyboard or the mouse; returns its verdict."""
    form.scroll_into_view_if_needed()
    choices = [key for key, _ in data["choices"]]
    if choices:
        wanted = data["key"] if right else next(c for c in choices if c != data["key"])
        if how == "mouse":
            form.locator(f'input[value="{wanted}"]').click()
        else:
            form.locator("input").first.focus()
            page.keyboard.press("Space")
            for _ in choices:
                if form.locator("input:checked").get_attribute("value") == wanted:
                    break
                page.keyboard.press("ArrowDown")
    else:
        typed = f"{data['key']}" if right else f"{data['key'] * 3 + 7}"
        box = form.locator("input[type=text]")
        box.click() if how == "mouse" else box.focus()
        page.keyboard.type(typed)
    if how == "mouse":
        form.locator("button").click()
    else:
        page.keyboard.press("Tab") if choices else None
        if choices:
            assert form.locator("button").evaluate("b => b === document.activeElement"), "Tab did not reach Check"
        page.keyboard.press("Enter")
    verdict = form.locator(".question-verdict")
    verdict.wait_for(state="visible", timeout=site_pages.WAIT_MS)
    return verdict.text_content()


@pytest.mark.parametrize("width", [375, 1280])
def test_every_question_is_answered_by_keyboard_and_mouse_and_its_widget_then_shows_the_answer(site, chromium, width):
    with site_pages.offline(chromium, viewport={"width": width, "height": 900}) as context:
        for lesson in LESSONS:
            page = site_pages.open_page(context, site.out / f"{lesson}.html")
            page.wait_for_function("() => [...document.querySelectorAll('section.explorer')].every("
                                   "(b) => b.classList.contains('explorer-ready'))", timeout=site_pages.WAIT_MS)
            forms = page.locator("form.question")
            for k in range(forms.count()):
                form, data = forms.nth(k), page_questions(forms.nth(k).inner_html())[0]
                right = k % 2 == 0
                said = _answer(page, form, data, right=right, how="keyboard" if k % 2 == 0 else "mouse")
                where = f"{lesson} at {width} px, {data['id']}"
                assert said.startswith("✓ Right." if right else "✗ Not this time."), (where, said)
                assert data["answer"] in said and data["why"] in said, (where, said)
                assert page.locator(f"#{data['widget']}").get_attribute("data-state") == data["show"], where
                assert form.locator("button").is_disabled(), where
            prefix = site.out.as_uri() + "/"
            assert [url for url in context.requests if not url.startswith(prefix)] == [], lesson
            assert not page.problems, page.problems
            page.close()


def _review(context, site, when):
    context.clock.set_system_time(when)
    page = site_pages.open_page(context, site.out / "review.html")
    page.locator("#review p").first.wait_for(timeout=site_pages.WAIT_MS)
    return page


def test_the_review_asks_a_missed_question_again_a_day_later_and_a_right_one_after_three_days(site, chromium):
    first, second = [q for q in QUESTIONS if q.lesson == "04_add_and_norm"][:2]
    with site_pages.offline(chromium, viewport={"width": 375, "height": 900}) as context:
        context.clock.install(time=T0)
        page = _review(context, site, T0)
        assert "Nothing to review yet" in page.locator("#review").text_content()
        page = site_pages.open_page(context, site.out / "04_add_and_norm.html")
        forms = page.locator("form.question")
        _answer(page, forms.nth(0), page_questions(forms.nth(0).inner_html())[0], right=False, how="mouse")
        _answer(page, forms.nth(1), page_questions(forms.nth(1).inner_html())[0], right=True, how="keyboard")

        page = _review(context, site, T0 + DAY / 2)
        assert "Nothing to review today" in page.locator("#review").text_content()
        page = _review(context, site, T0 + DAY * 1.5)  # the missed one is due, the right one not yet
        forms = page.locator("#review form.question")
        assert forms.count() == 1 and first.prompt in forms.nth(0).text_content()
        problems = axe_serious(page, "review, 375 px")
        page.emulate_media(color_scheme="dark")
        problems += axe_serious(page, "review, 375 px, dark")
        assert not problems, problems
        data = next(q for q in review_data(site)["questions"] if q["id"] == first.id)
        said = _answer(page, forms.nth(0), data, right=True, how="keyboard")
        assert said.startswith("✓ Right.") and "04_add_and_norm.html" in forms.nth(0).inner_html()

        page = _review(context, site, T0 + DAY * 3.2)  # the second, right once, after 2 days; the first after 1.5 + 2
        forms = page.locator("#review form.question")
        assert forms.count() == 1 and second.prompt in forms.nth(0).text_content()
        page.set_viewport_size({"width": 1280, "height": 900})
        assert not axe_serious(page, "review, 1280 px")
        page = _review(context, site, T0 + DAY * 4.6)
        assert page.locator("#review form.question").count() == 2
        prefix = site.out.as_uri() + "/"
        assert [url for url in context.requests if not url.startswith(prefix)] == []
        assert not page.problems, page.problems


def _stored(page):
    """The answers the page keeps in the browser (localStorage), as the notebooks' record holds them."""
    found = page.evaluate("() => JSON.parse(window.localStorage.getItem('encoder-course-answers') || 'null')")
    return {qid: {"answers": entry["answers"]} for qid, entry in (found or {"questions": {}})["questions"].items()}


def test_over_five_weeks_the_review_page_asks_each_day_what_the_notebooks_review_asks(site, chromium):
    """A learner answers lesson 04's and 05's questions, then opens the review on 20 days of five weeks and answers
    what it asks, right or wrong by chance: each day the page asks the questions, in the order, that the notebooks'
    review (record.due, fsrs) finds due for the same answers, and says nothing is due when nothing is."""
    rng = random.Random(53)
    by_anchor = {q["anchor"]: q for q in review_data(site)["questions"]}
    with site_pages.offline(chromium, viewport={"width": 1280, "height": 900}) as context:
        context.clock.install(time=T0)
        for lesson in ("04_add_and_norm", "05_encoder_block"):
            page = site_pages.open_page(context, site.out / f"{lesson}.html")
            forms = page.locator("form.question")
            for k in range(forms.count()):
                _answer(page, forms.nth(k), page_questions(forms.nth(k).inner_html())[0], right=rng.random() < 0.6,
                        how="mouse")
            page.close()
        days = sorted(rng.sample(range(1, 36), 20))
        asked = 0
        for day in days:
            now = T0 + DAY * day + datetime.timedelta(hours=rng.uniform(0, 12))
            page = _review(context, site, now)
            expected = record.due(_stored(page), now=now.timestamp())[:6]
            forms = page.locator("#review form.question")
            shown = [by_anchor[forms.nth(k).get_attribute("id").removeprefix("review-")]["id"]
                     for k in range(forms.count())]
            assert shown == expected, (day, shown, expected)
            if not expected:
                assert "Nothing to review today" in page.locator("#review").text_content(), day
            for k in range(forms.count()):
                data = by_anchor[forms.nth(k).get_attribute("id").removeprefix("review-")]
                _answer(page, forms.nth(k), data, right=rng.random() < 0.7, how="mouse")
            asked += len(shown)
            assert not page.problems, page.problems
            page.close()
        assert asked >= 15, "the simulated weeks should bring questions back"
