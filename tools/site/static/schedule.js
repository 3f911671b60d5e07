// When a question comes back on the review page: FSRS, the Free Spaced Repetition Scheduler, by ts-fsrs (npm,
// MIT; the review page loads it as assets/ts-fsrs.js, the global FSRS). The notebooks schedule the same questions
// with the fsrs package of PyPI (encoder_lib/questions/record.py): the same FSRS-6, its default parameters, and the
// settings the page's review data carries (the chance of still knowing a question when it comes back, the longest
// wait), with no learning steps of minutes and no fuzz; tests/test_review_schedule.py holds the two to one
// schedule. A question's answers ([[seconds since the epoch, right], ...], oldest first) are replayed: a right one
// rated Good, a wrong one Again, each at the whole days elapsed since the one before (as fsrs counts them).
var courseSchedule = (function () {
  'use strict';
  var DAY = 86400;

  function scheduler(FSRS, settings) {
    var fsrs = new FSRS.FSRS(FSRS.generatorParameters({
      request_retention: settings.desired_retention, maximum_interval: settings.maximum_days,
      enable_fuzz: false, enable_short_term: true, learning_steps: [], relearning_steps: []
    }));
    // seconds since the epoch when a question answered `answers` comes back; null for no answers
    return function dueAt(answers) {
      var memory = null, last = null, due = null;
      answers.forEach(function (answer) {
        var elapsed = last === null ? 0 : Math.max(0, Math.floor((answer[0] - last) / DAY));
        memory = fsrs.next_state(memory, elapsed, answer[1] ? FSRS.Rating.Good : FSRS.Rating.Again);
        due = answer[0] + fsrs.next_interval(memory.stability, elapsed) * DAY;
        last = answer[0];
      });
      return due;
    };
  }

  return { scheduler: scheduler, DAY: DAY };
})();
if (typeof module === 'object' && module.exports) module.exports = courseSchedule;
