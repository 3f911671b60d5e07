// The course's service worker (tools/site/offline.py writes it into the site as sw.js): a page read once opens
// with no network. Installed, it keeps the site's scripts, style sheet, search index, the index and the review page;
// then each page a reader opens asks it (site.js) to keep that page, every picture of its widgets' states, its
// figures and its notebook. Every request of the site goes to the network first, so that a reader online always
// reads the site as it is now, and the answer is kept; when the network fails, or has not answered in WAIT_MS and a
// kept copy is there, the kept copy is served: a page so served is marked (data-kept-copy), and site.js says so.
// Nothing outside the site is kept or served.
'use strict';
var BUILD = '__BUILD__';  // the site's build (its files' digest): the pages carry it too
var SHELL = __SHELL__;  // kept when the worker is installed, relative to this file
var CACHE = 'encoder-course';
var WAIT_MS = 4000;
var AT_ONCE = 6;  // requests at a time while a page's pictures are kept

self.addEventListener('install', function (event) {
  event.waitUntil(caches.open(CACHE).then(function (cache) {
    return cache.addAll(SHELL.map(function (path) { return new Request(path, { cache: 'reload' }); }));
  }).then(function () { return self.skipWaiting(); }));
});

self.addEventListener('activate', function (event) {
  event.waitUntil(self.clients.claim());
});

function ours(url) {
  return new URL(url, self.location.href).origin === self.location.origin;
}

function bare(url) {
  return new URL(url, self.location.href).href.split('#')[0];
}

// A page served from the kept copy says so: its <html> gets data-kept-copy.
function marked(response) {
  return response.text().then(function (text) {
    var headers = new Headers(response.headers);
    return new Response(text.replace('<html lang="en">', '<html lang="en" data-kept-copy="yes">'),
                        { status: response.status, statusText: response.statusText, headers: headers });
  });
}

function fromNetworkOrKept(request) {
  var navigation = request.mode === 'navigate';
  var kept = caches.match(request, { ignoreSearch: navigation }).then(function (found) {
    return found && navigation ? marked(found) : found;
  });
  var network = fetch(request).then(function (response) {
    if (response.status === 200 && !response.redirected && ours(response.url || request.url)) {
      var copy = response.clone();
      caches.open(CACHE).then(function (cache) { return cache.put(request, copy); });
    }
    return response;
  });
  return new Promise(function (resolve, reject) {
    var settled = false;
    function keptOr(fail) {
      kept.then(function (found) {
        if (found && !settled) { settled = true; resolve(found); } else if (fail && !settled) { settled = true; reject(fail); }
      });
    }
    var timer = setTimeout(function () { keptOr(null); }, WAIT_MS);
    network.then(function (response) {
      clearTimeout(timer);
      if (!settled) { settled = true; resolve(response); }
    }, function (error) { clearTimeout(timer); keptOr(error); });
  });
}

self.addEventListener('fetch', function (event) {
  if (event.request.method !== 'GET' || !ours(event.request.url)) return;
  event.respondWith(fromNetworkOrKept(event.request));
});

// Keep every URL of `urls` (a page, its pictures and files): a page again, from the network where it answers (it
// may have changed), anything else only when it is not kept yet (pictures' names are their contents' digests).
function keep(urls) {
  var queue = urls.filter(ours).map(bare).filter(function (url, k, all) { return all.indexOf(url) === k; });
  var result = { kept: 0, missing: [] };
  return caches.open(CACHE).then(function (cache) {
    function one(url) {
      return cache.match(url).then(function (found) {
        if (found && !/\.html$/.test(new URL(url).pathname)) return true;
        return fetch(url, { cache: 'no-cache' }).then(function (response) {
          if (!response.ok) throw new Error(url + ': ' + response.status);
          return cache.put(url, response).then(function () { return true; });
        }).catch(function () { return Boolean(found); });
      }).then(function (ok) { if (ok) result.kept++; else result.missing.push(url); });
    }
    function next() {
      var url = queue.shift();
      return url === undefined ? Promise.resolve() : one(url).then(next);
    }
    var workers = [];
    for (var k = 0; k < AT_ONCE; k++) workers.push(next());
    return Promise.all(workers);
  }).then(function () { return result; });
}

self.addEventListener('message', function (event) {
  var data = event.data || {};
  var port = event.ports && event.ports[0];
  if (data.type !== 'keep' || !Array.isArray(data.urls) || !port) return;
  event.waitUntil(keep(data.urls).then(function (result) {
    result.build = BUILD;
    port.postMessage(result);
  }));
});
