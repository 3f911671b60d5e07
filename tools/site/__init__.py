"""The course as a website anyone can read: every lesson a page, its widgets working without Python.

    .venv/bin/python -m tools.site              # what `make site` runs: writes site/
    .venv/bin/python -m tools.site.publish      # what `make publish-site` runs: commits site/ to gh-pages

``site/index.html`` is the start: the start lesson's opening and the README's
table of lessons. Each lesson's page (``site/<lesson>.html``) is made from its
notebooks: the text and code of its student version (every exercise as the
learner gets it, the function left to write; no solution, no hidden test),
with the teachers' version's stored outputs (figures with their alt text),
formulas as MathML and code highlighted, under where to open the lesson
(Binder, Colab, its student notebook to download) and its
contents. Every widget is real HTML controls with the widget's own labels;
the pictures, alt texts and readouts of its states were drawn by the widget's
own code when the site was built (see ``states``), each twice, for a wide
screen and for a phone (``phone``); the attention widgets' states are numbers
that the page draws itself (``drawn``). So the page needs no kernel. Nothing
is fetched from outside the site: it works from ``file://`` offline and from
any static host; the search too (``search``). Served from a host, a page read
once works with no network too: the site's service worker keeps it
(``offline``).

- ``build``: the whole build (``build.py``); ``notebook_run`` runs a
  teachers' notebook in this process to get the widgets and figures its cells
  show; ``states`` chooses and draws the states; ``phone`` lays a figure out
  for a phone; ``drawn`` reads what site.js needs to draw a widget from its
  numbers; ``render`` turns markdown, code and outputs into HTML; ``pages``
  holds the pages' HTML and reads the README's Binder badge, the one place
  that names the repository; ``search`` builds the search index with
  MiniSearch (npm: package.json); ``questions`` the questions above the
  widgets and ``review`` the review page, scheduled by ts-fsrs (npm) as the
  notebooks' review is by fsrs; ``offline`` the service worker and the build
  every page carries.
- ``static/``: the style sheet (light, dark, phone, print), the script every
  page loads (``site.js``, ``schedule.js`` and ``questions.js``, one file on the
  site) and the service worker (``sw.js``).
"""

from .build import Site, build  # noqa: F401
