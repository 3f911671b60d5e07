// Predict, then look (tools/site/questions.py): each <form class="question"> above a widget is judged here, from
// the key the build computed with the widget's own code; the verdict says the widget's answer and why, and the
// widget moves to the state that shows it. Answers are kept in this browser's localStorage (nothing is sent),
// and the review page (#review) asks again the questions due, each when FSRS schedules it from the reader's answers
// to it (schedule.js, with ts-fsrs), as encoder_lib.questions.record does in the notebooks with fsrs.
(function () {
  'use strict';
  var STORE = 'encoder-course-answers';
  var KEPT = 20;  // the answers kept per question, as encoder_lib.questions.record's
  var LATEST = 1e11;  // a time after this (the year 5138) is no answer's, as record's

  function esc(text) {
    return String(text).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
  }

  function load() {
    try {
      var found = JSON.parse(window.localStorage.getItem(STORE) || 'null');
      if (found && typeof found.questions === 'object' && found.questions) return found;
    } catch (err) { /* storage off, or not ours: start anew */ }
    return { version: 1, questions: {} };
  }

  function answersOf(found, id) {
    var entry = found.questions[id];
    if (!entry || !Array.isArray(entry.answers)) return [];
    return entry.answers.filter(function (a) {
      return Array.isArray(a) && typeof a[0] === 'number' && isFinite(a[0]) && a[0] >= 0 && a[0] <= LATEST &&
        typeof a[1] === 'boolean';
    });
  }

  function keep(id, right) {
    var found = load();
    var answers = answersOf(found, id).concat([[Date.now() / 1000, right]]).slice(-KEPT);
    found.questions[id] = { answers: answers };
    try { window.localStorage.setItem(STORE, JSON.stringify(found)); } catch (err) { /* private mode: not kept */ }
  }

  // "8", "0,5", "1/2", "50%" as numbers, as encoder_lib.questions.panel.parse_number reads them; else null
  function parseNumber(text) {
    var t = String(text).trim().replace(/,/g, '.').replace(/ /g, '');
    var value = NaN;
    var number = /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i;
    if (/%$/.test(t) && number.test(t.slice(0, -1))) value = Number(t.slice(0, -1)) / 100;
    else if (t.split('/').length === 2 && t.split('/').every(function (p) { return number.test(p); })) {
      var parts = t.split('/');
      value = Number(parts[1]) === 0 ? NaN : Number(parts[0]) / Number(parts[1]);
    } else if (number.test(t)) value = Number(t);
    return isFinite(value) ? value : null;
  }

  function judge(q, given) {
    if (q.choices.length) return given === q.key;
    var room = q.relative ? q.tolerance * Math.abs(q.key) : q.tolerance;
    return Math.abs(given - q.key) <= room + 1e-12;
  }

  function setUp(form, q, where) {
    var verdict = form.querySelector('.question-verdict');
    form.addEventListener('submit', function (event) {
      event.preventDefault();
      var given;
      if (q.choices.length) {
        var picked = form.querySelector('input[type=radio]:checked');
        given = picked ? picked.value : null;
      } else {
        given = parseNumber(form.querySelector('input[type=text]').value);
      }
      if (given === null) {
        verdict.textContent = q.choices.length ? 'Choose one answer first.' : 'Type a number first, such as 8, 0.5 or 1/2.';
        return;
      }
      var right = judge(q, given);
      verdict.innerHTML = '<b>' + (right ? '\u2713 Right.' : '\u2717 Not this time.') + "</b> The widget's answer: <b>" +
        esc(q.answer) + '</b>. ' + esc(q.why) + ' ' + where;
      form.querySelectorAll('input, button').forEach(function (el) { el.disabled = true; });
      keep(q.id, right);
      var box = q.widget && document.getElementById(q.widget);
      if (box && box.courseShow) box.courseShow(q.show);
    });
  }

  document.querySelectorAll('form.question').forEach(function (form) {
    setUp(form, JSON.parse(form.querySelector('script.question-data').textContent), 'The widget below now shows it.');
  });

  function review(root, data) {
    var found = load();
    var now = Date.now() / 1000;
    var dueAt = courseSchedule.scheduler(window.FSRS, data.schedule);
    var waiting = data.questions.map(function (q) {
      var answers = answersOf(found, q.id);
      return { q: q, at: answers.length ? dueAt(answers) : null, missed: answers.length > 0 && !answers[answers.length - 1][1] };
    }).filter(function (w) { return w.at !== null; });
    var due = waiting.filter(function (w) { return w.at <= now; }).sort(function (a, b) {
      return (a.missed === b.missed ? a.at - b.at : (a.missed ? -1 : 1));
    }).slice(0, data.limit);
    if (!due.length) {
      var next = waiting.reduce(function (soonest, w) { return soonest === null || w.at < soonest ? w.at : soonest; }, null);
      root.innerHTML = '<p class="review-empty">' + (next === null ?
        "Nothing to review yet: answer the questions above a lesson's widgets, and they come back here when they are due." :
        'Nothing to review today; the next question comes back on ' + esc(new Date(next * 1000).toLocaleString()) + '.') + '</p>';
      return;
    }
    root.innerHTML = '<p>' + due.length + ' to review, the ones you missed first.</p>' + due.map(function (w, k) {
      var q = w.q;
      var id = 'review-' + q.anchor;
      var inputs = q.choices.length ? q.choices.map(function (c) {
        return '<label class="question-choice"><input type="radio" name="' + id + '-answer" value="' + esc(c[0]) + '"> ' + esc(c[1]) + '</label>';
      }).join('') : '<label class="question-number">Your answer <input type="text" name="' + id +
        '-answer" inputmode="decimal" autocomplete="off" placeholder="a number"></label>';
      return '<form class="question" id="' + id + '" aria-labelledby="' + id + '-prompt"><fieldset><legend id="' + id +
        '-prompt"><b>Predict ' + (k + 1) + ' of ' + due.length + '</b> (from <a href="' + esc(q.lesson) + '.html#' +
        esc(q.anchor) + '">' + esc(q.title) + '</a>). ' + esc(q.prompt) + '</legend>' + inputs +
        '</fieldset><button type="submit">Check</button><p class="question-verdict" role="status" aria-live="polite"></p></form>';
    }).join('');
    due.forEach(function (w) {
      setUp(document.getElementById('review-' + w.q.anchor), w.q,
        'Its widget is in <a href="' + esc(w.q.lesson) + '.html#' + esc(w.q.anchor) + '">' + esc(w.q.title) + '</a>.');
    });
  }

  var root = document.getElementById('review');
  if (root) review(root, JSON.parse(document.getElementById('review-data').textContent));
})();
