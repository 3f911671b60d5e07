// The course's widgets without Python: every state was drawn when the site was built (tools/site).
//
// Each widget is a <section class="explorer"> whose controls are plain HTML (range inputs, radio
// buttons, check boxes) and whose <script type="application/json" class="explorer-data"> lists the
// states kept: for each, its picture's file, alt text and readout, and (where a control's range
// depends on the others) what each control offers. Moving a control looks up the state the move leads
// to (data.redirect, where the widget moves other controls too or the page keeps a reduced grid) and
// shows it: picture, alt text, readout and every control, together. Nothing is fetched but the
// pictures, from the site's own folder; the pictures a move away are loaded ahead.
(function () {
  'use strict';

  function setUp(box) {
    var data = JSON.parse(box.querySelector('script.explorer-data').textContent);
    var index = {};
    data.keys.forEach(function (key, i) { index[key] = i; });
    var img = box.querySelector('img.explorer-picture');
    var readout = box.querySelector('.explorer-readout');
    var controls = data.controls.map(function (spec, ci) { return bind(box, spec, ci, moved); });
    var current = data.start;
    var loaded = {};

    function values(i) { return data.keys[i] === '' ? [] : data.keys[i].split(',').map(Number); }

    function target(ci, vi) {
      var candidate = values(current);
      candidate[ci] = vi;
      var key = candidate.join(',');
      var to = data.redirect[ci + ':' + key];
      return to === undefined ? index[key] : to;
    }

    function preload(i) {
      var src = data.states[i][0];
      if (loaded[src]) return;
      loaded[src] = new Image();
      loaded[src].src = src;
    }

    function show(i) {
      var state = data.states[i];
      current = i;
      if (img.getAttribute('src') !== state[0]) img.setAttribute('src', state[0]);
      img.setAttribute('alt', state[1]);
      readout.innerHTML = state[2];
      var at = values(i);
      controls.forEach(function (control, ci) { control.show(at[ci], state[3] ? state[3][ci] : null); });
      box.dataset.state = data.keys[i];
      // the pictures one move away, so that the next move shows its picture at once
      controls.forEach(function (control, ci) {
        control.near(at[ci]).forEach(function (vi) {
          var to = target(ci, vi);
          if (to !== undefined) preload(to);
        });
      });
    }

    function moved(ci, vi) {
      var to = target(ci, vi);
      if (to === undefined) {  // the build keeps a state for every move; this would be its bug
        console.error('course widget ' + box.id + ': no state for control ' + ci + ' at ' + vi);
        show(current);
        return;
      }
      show(to);
    }

    loaded[data.states[current][0]] = img;
    show(current);
    box.classList.add('explorer-ready');
  }

  // One control: show(value index, allowed indices or null) puts it at a state; near(value index) lists
  // the value indices one move away; a move calls moved(control index, value index).
  function bind(box, spec, ci, moved) {
    if (spec.kind === 'slider') {
      var input = box.querySelector('input[type=range][data-control="' + ci + '"]');
      var output = box.querySelector('output[data-control="' + ci + '"]');
      input.addEventListener('input', function () { moved(ci, Number(input.value)); });
      return {
        show: function (vi, allowed) {
          input.min = allowed ? allowed[0] : 0;
          input.max = allowed ? allowed[allowed.length - 1] : spec.labels.length - 1;
          input.value = vi;
          input.setAttribute('aria-valuetext', spec.labels[vi]);
          output.textContent = spec.labels[vi];
        },
        near: function (vi) {
          return [vi - 1, vi + 1].filter(function (v) { return v >= Number(input.min) && v <= Number(input.max); });
        }
      };
    }
    if (spec.kind === 'toggle') {
      var radios = Array.prototype.slice.call(box.querySelectorAll('input[type=radio][data-control="' + ci + '"]'));
      radios.forEach(function (radio) {
        radio.addEventListener('change', function () { if (radio.checked) moved(ci, Number(radio.value)); });
      });
      return {
        show: function (vi, allowed) {
          radios.forEach(function (radio) {
            var k = Number(radio.value);
            radio.checked = k === vi;
            radio.disabled = allowed ? allowed.indexOf(k) < 0 : false;
          });
        },
        near: function (vi) {
          return radios.filter(function (r) { return !r.disabled && Number(r.value) !== vi; })
            .map(function (r) { return Number(r.value); });
        }
      };
    }
    var check = box.querySelector('input[type=checkbox][data-control="' + ci + '"]');
    var on = spec.labels.indexOf('on');
    var off = spec.labels.indexOf('off');
    check.addEventListener('change', function () { moved(ci, check.checked ? on : off); });
    return {
      show: function (vi) { check.checked = vi === on; },
      near: function (vi) { return [vi === on ? off : on]; }
    };
  }

  document.querySelectorAll('section.explorer').forEach(setUp);
})();
