// The course's pages without Python (tools/site): widgets, boxes that scroll, contents, search.
//
// Each widget is a <section class="explorer"> whose controls are plain HTML (range inputs, radio
// buttons, check boxes) and whose <script type="application/json" class="explorer-data"> lists its
// states: for each, its picture's file (drawn for a wide screen, and again for a phone, which a
// <picture> shows on a narrow screen), alt text and readout, and (where a control's range depends on the
// others) what each control offers. A widget whose states are numbers (the attention maps: drawn.py)
// carries them instead, and is drawn here as SVG. Moving a control looks up the state the move leads
// to (data.redirect, where the widget moves other controls too or the page keeps a reduced grid) and
// shows it: picture, alt text, readout and every control, together. Nothing is fetched but the
// pictures and the search's two scripts, from the site's own folder; the pictures a move away are
// loaded ahead.
(function () {
  'use strict';

  function setUp(box) {
    var data = JSON.parse(box.querySelector('script.explorer-data').textContent);
    var index = {};
    data.keys.forEach(function (key, i) { index[key] = i; });
    var picture = data.drawing ? drawn(box, data) : pictures(box, data);
    var readout = box.querySelector('.explorer-readout');
    var controls = data.controls.map(function (spec, ci) { return bind(box, spec, ci, moved); });
    var current = data.start;

    function values(i) { return data.keys[i] === '' ? [] : data.keys[i].split(',').map(Number); }

    function target(ci, vi) {
      var candidate = values(current);
      candidate[ci] = vi;
      var key = candidate.join(',');
      var to = data.redirect[ci + ':' + key];
      return to === undefined ? index[key] : to;
    }

    function show(i) {
      var state = data.states[i];
      current = i;
      picture.show(i);
      readout.innerHTML = state[3];
      var at = values(i);
      controls.forEach(function (control, ci) { control.show(at[ci], state[4] ? state[4][ci] : null); });
      box.dataset.state = data.keys[i];
      // the pictures one move away, so that the next move shows its picture at once
      controls.forEach(function (control, ci) {
        control.near(at[ci]).forEach(function (vi) {
          var to = target(ci, vi);
          if (to !== undefined) picture.preload(to);
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

    show(current);
    // a question above the widget, once answered, shows the state its answer names (questions.js)
    box.courseShow = function (key) { if (index[key] !== undefined) show(index[key]); };
    box.classList.add('explorer-ready');
  }

  // A widget's states as pictures drawn at build time: an <img>, and the <source> a <picture> shows on a
  // narrow screen (the phone's drawing). show(i) puts state i's in place; preload(i) loads them ahead.
  function pictures(box, data) {
    var img = box.querySelector('img.explorer-picture');
    var source = box.querySelector('.explorer-figure source');
    var narrow = source ? window.matchMedia(source.media) : null;
    var loaded = {};
    loaded[data.states[data.start][narrow && narrow.matches ? 1 : 0]] = img;
    return {
      show: function (i) {
        var state = data.states[i];
        if (source && source.getAttribute('srcset') !== state[1]) source.setAttribute('srcset', state[1]);
        if (img.getAttribute('src') !== state[0]) img.setAttribute('src', state[0]);
        img.setAttribute('alt', state[2]);
      },
      preload: function (i) {
        var src = data.states[i][narrow && narrow.matches ? 1 : 0];
        if (loaded[src]) return;
        loaded[src] = new Image();
        loaded[src].src = src;
      }
    };
  }

  // A widget whose states are numbers (attention weights: tools/site/drawn.py): drawn here as SVG, from the
  // widget's own figure as the build read it: the places of its panels, ticks and words in the layout for a
  // wide screen or for a phone (whichever the page has room for), the colour map's 256 colours, and for
  // each state its titles, heatmap, bars, texts and outlines. Printed, the widget shows its first state.
  function drawn(box, data) {
    var drawing = data.drawing;
    var figure = box.querySelector('.explorer-figure');
    var narrow = window.matchMedia('screen and (max-width: ' + (drawing.layouts.wide.size[0] + 80) + 'px)');
    var current = data.start;
    function show(i) {
      current = i;
      var layout = drawing.layouts[narrow.matches ? 'phone' : 'wide'];
      figure.innerHTML = svg(drawing, layout, i, data.states[i][2], 'explorer-drawing');
    }
    if (narrow.addEventListener) narrow.addEventListener('change', function () { show(current); });
    var printed = box.querySelector('.explorer-print .explorer-printed-drawing');
    if (printed) printed.innerHTML = svg(drawing, drawing.layouts.wide, data.start, data.states[data.start][2], '');
    return { show: show, preload: function () {} };
  }

  var FONT = 'font-family="DejaVu Sans, Bitstream Vera Sans, Verdana, sans-serif"';

  function esc(text) {
    return String(text).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
  }

  function num(v) { return Math.round(v * 100) / 100; }

  // Data coordinates of a panel to the figure's pixels (from the top left).
  function mapper(panel) {
    var b = panel.box, xl = panel.xlim, yl = panel.ylim;
    return {
      x: function (v) { return b[0] + b[2] * (v - xl[0]) / (xl[1] - xl[0]); },
      y: function (v) { return b[1] + b[3] * (yl[1] - v) / (yl[1] - yl[0]); }
    };
  }

  function text(words, x, y, size, rotation, anchor, baseline) {
    var turn = rotation ? ' transform="rotate(' + num(-rotation) + ' ' + num(x) + ' ' + num(y) + ')"' : '';
    return '<text x="' + num(x) + '" y="' + num(y) + '" font-size="' + num(size) + '" text-anchor="' +
      (anchor || 'middle') + '" dominant-baseline="' + (baseline || 'central') + '"' + turn + '>' + esc(words) + '</text>';
  }

  function rect(x0, y0, x1, y1, attrs) {
    return '<rect x="' + num(Math.min(x0, x1)) + '" y="' + num(Math.min(y0, y1)) + '" width="' +
      num(Math.abs(x1 - x0)) + '" height="' + num(Math.abs(y1 - y0)) + '" ' + attrs + '/>';
  }

  var ANCHOR = { center: 'middle', left: 'start', right: 'end' };
  var BASELINE = { bottom: 'text-after-edge', top: 'text-before-edge', center: 'central', baseline: 'alphabetic' };

  // Matplotlib's hatch "//" on a bar: lines rising to the right, every 6 px, cut at the bar's edges.
  function hatching(x0, y0, x1, y1) {
    var left = Math.min(x0, x1), right = Math.max(x0, x1), top = Math.min(y0, y1), bottom = Math.max(y0, y1);
    var lines = [];
    for (var c = left - (bottom - top); c < right; c += 6) {
      var t0 = Math.max(0, left - c), t1 = Math.min(bottom - top, right - c);
      if (t1 > t0) lines.push('M' + num(c + t0) + ' ' + num(bottom - t0) + 'L' + num(c + t1) + ' ' + num(bottom - t1));
    }
    return '<path class="hatched" d="' + lines.join('') + '" stroke="#000" stroke-width="1" fill="none"/>';
  }

  function svg(drawing, layout, i, alt, cls) {
    var w = layout.size[0], h = layout.size[1];
    var parts = ['<rect x="0" y="0" width="' + w + '" height="' + h + '" fill="#fff"/>'];
    var frame = drawing.frames[i];
    layout.panels.forEach(function (panel, p) {
      var m = mapper(panel), b = panel.box, state = frame[p], style = layout.styles[p];
      if (panel.kind === 'colorbar') {
        var n = panel.colors.length;
        panel.colors.forEach(function (color, k) {
          parts.push(rect(b[0], b[1] + b[3] * (n - k - 1) / n, b[0] + b[2], b[1] + b[3] * (n - k) / n + 0.3,
            'fill="' + color + '"'));
        });
        panel.yticks.forEach(function (y) {
          parts.push('<line x1="' + num(b[0] + b[2]) + '" y1="' + y + '" x2="' + num(b[0] + b[2] + panel.tick) +
            '" y2="' + y + '" stroke="#000" stroke-width="' + panel.spine + '"/>');
        });
      }
      if (state && state.image !== undefined) {
        var cells = drawing.matrices[state.image], e = panel.extent;
        var rows = cells.length, cols = cells[0].length;
        // the first row at the top of the extent (origin "upper", as imshow draws by default) or at its bottom
        var first = panel.origin === 'upper' ? e[3] : e[2], last = panel.origin === 'upper' ? e[2] : e[3];
        var cw = (e[1] - e[0]) / cols, ch = (last - first) / rows;
        cells.forEach(function (row, r) {
          row.forEach(function (c, k) {
            parts.push(rect(m.x(e[0] + k * cw), m.y(first + r * ch), m.x(e[0] + (k + 1) * cw), m.y(first + (r + 1) * ch),
              'fill="' + drawing.lut[c] + '" shape-rendering="crispEdges"'));
          });
        });
      }
      if (state && state.bars) {
        var places = drawing.bars[p];
        state.bars.forEach(function (height, k) {
          var x0 = m.x(places[k][0]), x1 = m.x(places[k][0] + places[k][1]), y0 = m.y(0), y1 = m.y(height);
          parts.push(rect(x0, y0, x1, y1, 'fill="' + drawing.palette[state.colors[k]] + '"'));
          if (state.hatched.indexOf(k) >= 0) parts.push(hatching(x0, y0, x1, y1));
          if (style.edge) parts.push(rect(x0, y0, x1, y1, 'fill="none" stroke="' + style.edge[0] + '" stroke-width="' + num(style.edge[1]) + '"'));
        });
      }
      if (panel.kind !== 'colorbar') {
        panel.xticks.forEach(function (x) {
          parts.push('<line x1="' + x + '" y1="' + num(b[1] + b[3]) + '" x2="' + x + '" y2="' + num(b[1] + b[3] + panel.tick) +
            '" stroke="#000" stroke-width="' + panel.spine + '"/>');
        });
        panel.yticks.forEach(function (y) {
          parts.push('<line x1="' + num(b[0] - panel.tick) + '" y1="' + y + '" x2="' + b[0] + '" y2="' + y +
            '" stroke="#000" stroke-width="' + panel.spine + '"/>');
        });
      }
      if (state && state.boxes) {
        state.boxes.forEach(function (o) {
          var x0 = m.x(o[0]), x1 = m.x(o[0] + o[2]), y0 = m.y(o[1]), y1 = m.y(o[1] + o[3]);
          if (style.box[2]) parts.push(rect(x0, y0, x1, y1, 'fill="none" stroke="#fff" stroke-width="' + num(style.box[2]) + '"'));
          parts.push(rect(x0, y0, x1, y1, 'fill="none" stroke="' + style.box[1] + '" stroke-width="' + num(style.box[0]) + '"'));
        });
      }
      parts.push(rect(b[0], b[1], b[0] + b[2], b[1] + b[3], 'fill="none" stroke="#000" stroke-width="' + panel.spine + '"'));
      panel.texts.forEach(function (t) { parts.push(text(t[0], t[1], t[2], t[3], t[4])); });
      if (state && state.texts && style.text) {
        state.texts.forEach(function (t) {
          parts.push(text(t[0], m.x(t[1]), m.y(t[2]), style.text[0], 0, ANCHOR[style.text[1]], BASELINE[style.text[2]]));
        });
      }
      if (state && state.title) parts.push(text(state.title, panel.title[0], panel.title[1], panel.title[2]));
    });
    return '<svg class="' + cls + '" role="img" aria-label="' + esc(alt) +
      '" viewBox="0 0 ' + w + ' ' + h + '" width="' + w + '" height="' + h + '" data-text-px="' + layout.text_px + '" ' +
      FONT + ' fill="#000">' + parts.join('') + '</svg>';
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

  // A block that scrolls sideways (code, an output, a wide table, a formula: class "scroll") takes the keyboard
  // focus while it is wider than its box, so that the arrow keys scroll it; it is named by its data-label.
  // Checked when the page loads and whenever a block's width changes (a phone turned, a window resized).
  function scrollable(box) {
    var scrolls = box.scrollWidth > box.clientWidth + 1;
    if (scrolls === box.hasAttribute('tabindex')) return;
    if (scrolls) {
      box.setAttribute('tabindex', '0');
      box.setAttribute('role', 'group');
      box.setAttribute('aria-label', (box.dataset.label || 'block') + ', scrolls sideways');
    } else {
      box.removeAttribute('tabindex');
      box.removeAttribute('role');
      box.removeAttribute('aria-label');
    }
  }

  var boxes = Array.prototype.slice.call(document.querySelectorAll('.scroll'));
  boxes.forEach(scrollable);
  if (window.ResizeObserver) {
    var watch = new ResizeObserver(function (entries) { entries.forEach(function (e) { scrollable(e.target); }); });
    boxes.forEach(function (box) { watch.observe(box); });
  }

  // The page's contents: open on a wide screen, folded on a phone (a tap opens it).
  var toc = document.querySelector('nav.toc details');
  if (toc && window.matchMedia('(min-width: 48em)').matches) toc.open = true;

  // Search: the box in the header searches every lesson's sections with MiniSearch. The library and the index
  // (built by `make site`: tools/site/search.py) are two scripts of the site, loaded the first time the box is
  // used: nothing is fetched, so the search works from file:// and offline.
  function search() {
    var form = document.querySelector('form.search');
    var results = document.getElementById('search-results');
    if (!form || !results) return;
    var input = form.querySelector('input');
    var status = results.querySelector('.search-status');
    var list = results.querySelector('ol');
    var assets = document.querySelector('script[src$="site.js"]').getAttribute('src').replace(/site\.js$/, '');
    var engine = null, loading = false, waiting = null;

    function load() {
      if (engine || loading) return;
      loading = true;
      var library = document.createElement('script');
      library.src = assets + 'minisearch.js';
      library.onload = function () {
        var index = document.createElement('script');
        index.src = assets + 'search-index.js';
        index.onload = function () {
          var built = window.courseSearch;
          engine = { search: window.MiniSearch.loadJS(built.index, built.options), options: built.options };
          if (waiting !== null) run(waiting);
        };
        document.head.appendChild(index);
      };
      document.head.appendChild(library);
    }

    function run(query) {
      waiting = query;
      if (!engine) { load(); return; }
      var found = query.trim() ? engine.search.search(query, engine.options.searchOptions).slice(0, 12) : [];
      list.innerHTML = found.map(function (hit) {
        var where = hit.title === hit.lesson ? '' : ' <span class="where">in ' + esc(hit.lesson) + '</span>';
        return '<li><a href="' + esc(hit.url) + '">' + esc(hit.title) + '</a>' + where + '</li>';
      }).join('');
      results.hidden = !query.trim();
      status.textContent = !query.trim() ? '' : found.length ? found.length + (found.length === 1 ? ' section' : ' sections') +
        ' of the course match "' + query.trim() + '"' : 'Nothing in the course matches "' + query.trim() + '"';
    }

    form.hidden = false;
    input.addEventListener('focus', load);
    input.addEventListener('input', function () { run(input.value); });
    input.addEventListener('keydown', function (event) {
      if (event.key === 'Escape') { input.value = ''; run(''); }
    });
    form.addEventListener('submit', function (event) {
      event.preventDefault();
      var first = list.querySelector('a');
      if (first) first.focus();
    });
  }
  search();

  // Offline after one visit (tools/site/offline.py). Served over http(s), the page registers the site's service
  // worker (sw.js) and asks it to keep the page, every picture of its widgets' states, its figures and its notebook;
  // the footer then says the page opens with no network. A page the worker served from its kept copy (no network)
  // says so at its top; and a page whose build differs from the one this browser last showed says the site was
  // updated since (its build is in <meta name="course-build">, the last one seen in localStorage).
  function offline() {
    var root = document.documentElement;
    var main = document.getElementById('main');
    var status = document.querySelector('.offline-status');
    var meta = document.querySelector('meta[name="course-build"]');
    var build = meta ? meta.content : null;
    function note(kind, words) {
      var p = document.createElement('p');
      p.className = 'site-note ' + kind;
      p.setAttribute('role', 'status');
      p.textContent = words;
      main.insertBefore(p, main.firstChild);
    }
    if (root.dataset.keptCopy) {
      note('kept-copy', 'No network: this is the copy of the page that this browser kept when you last opened it. ' +
        'Its widgets, questions and the search work as they did; other pages open only if you read them before.');
    }
    var seen = null;
    try { seen = window.localStorage.getItem('encoder-course-build'); } catch (err) { /* storage off */ }
    if (build && seen && seen !== build && !root.dataset.keptCopy) {
      note('updated', 'This site was updated since you last read it in this browser: a lesson may have changed. ' +
        'The pages you open now are kept for offline reading as they are now.');
    }
    if (build && !root.dataset.keptCopy) {
      try { window.localStorage.setItem('encoder-course-build', build); } catch (err) { /* storage off */ }
    }
    if (!('serviceWorker' in navigator) || !/^https?:$/.test(location.protocol) || !build) return;
    var assets = document.querySelector('script[src$="site.js"]').src.replace(/assets\/site\.js$/, '');
    navigator.serviceWorker.register(assets + 'sw.js').then(function () {
      return navigator.serviceWorker.ready;
    }).then(function (registration) {
      var urls = [location.href].concat(kept());
      var channel = new MessageChannel();
      channel.port1.onmessage = function (event) {
        var result = event.data || {};
        root.dataset.offline = result.missing && result.missing.length ? 'partly' : 'kept';
        if (!status) return;
        status.textContent = result.missing && result.missing.length ?
          'This browser kept this page for reading offline, except ' + result.missing.length + ' of its files.' :
          'This browser keeps this page, with every state of its widgets, for reading with no network.';
        status.hidden = false;
      };
      registration.active.postMessage({ type: 'keep', urls: urls }, [channel.port2]);
    }).catch(function (err) { root.dataset.offline = 'off'; console.info('offline reading is off: ' + err); });
  }

  // Every file the page shows or offers: its pictures (every state of each widget, wide and phone), the page's own
  // images and sources, its style sheets and scripts, and the notebook it offers to download.
  function kept() {
    var urls = [];
    function add(url) { if (url) urls.push(new URL(url, location.href).href); }
    document.querySelectorAll('script.explorer-data').forEach(function (script) {
      JSON.parse(script.textContent).states.forEach(function (state) {
        if (typeof state[0] === 'string') add(state[0]);
        if (typeof state[1] === 'string') add(state[1]);
      });
    });
    document.querySelectorAll('img[src]').forEach(function (img) { add(img.getAttribute('src')); });
    document.querySelectorAll('source[srcset]').forEach(function (source) { add(source.getAttribute('srcset')); });
    document.querySelectorAll('link[rel=stylesheet], script[src]').forEach(function (el) {
      add(el.getAttribute('href') || el.getAttribute('src'));
    });
    document.querySelectorAll('a[download]').forEach(function (a) { add(a.getAttribute('href')); });
    return urls;
  }

  document.querySelectorAll('section.explorer').forEach(setUp);
  offline();
})();
