"""Which states of a widget the site keeps, and each one's picture, alt text and readout, drawn at build time.

Every state the widget's controls can reach (``StateSpace``) is drawn by the
widget's own code (``Explorer.frame``) when the site is built, unless all of
them would not fit the budget: a page may hold at most ``PAGE_BUDGET`` bytes,
the site ``SITE_BUDGET``. The pictures of a few states, drawn first, tell how
large all of them would be; a widget whose full grid would not fit keeps
every value of each control with the others where they start, plus every
combination its lesson's question asks about (``QUESTIONS``), and its page
says so under it.

Each state is drawn twice: for a page as wide as the notebook, and for a
phone, the same figure with its panels one above the other (``phone.stacked``).
A picture is stored as lossless WebP: the very pixels of the widget's PNG
(checked when it is written), in about a third of the bytes.
"""

import hashlib
import io
import itertools
import json

import numpy as np
import PIL.Image

from encoder_lib.widgets._controls import control_kind
from encoder_lib.widgets._states import StateSpace

from . import phone
from .drawn import DRAWN, drawing
from .render import SiteError

MB = 1_000_000
PAGE_BUDGET = 8 * MB  # a page: its HTML and the pictures of its figures and widgets
SITE_BUDGET = 60 * MB  # every page, the index and the shared style sheet and script
#: The share of a budget that estimated sizes may fill: an estimate comes from a few states' pictures.
PLAN_SHARE = 0.75
SAMPLES = 6  # states drawn to estimate the size of all of a widget's pictures
ALL = "every value"
#: A state's phone picture against its wide one, in bytes (1.2 to 1.5 on the course's widgets), for the estimate:
#: the phone layout is drawn only once the wide pictures are (phone.stacked lays the figure out anew, and a widget
#: laid out again draws pixels a little different from a new one's).
PHONE_BYTES = 1.6

#: For a widget whose every state would not fit its page: the combinations its lesson's question asks
#: about, kept besides every value of each control with the others where they start. An entry maps
#: controls to a value or to ALL (every value); the controls it leaves out stay where they start.
QUESTIONS = {
    # lesson 01, "what happens to the weights when scaling is off and d_k is large?": every query's row
    # for every d_k, scaling on and off
    "AttentionExplorer": ({"scale": ALL, "d_k": ALL, "query": ALL},),
    # lesson 08, "which heads read the previous token, [CLS] or [SEP], the same word elsewhere?": every
    # head's whole heatmap (every layer with every head), and every query token of the three heads the
    # lesson asks to try ("Try layer 1 head 2, layer 2 head 8 and layer 3 head 9"; tests/test_site.py
    # checks that the heads its text names are these)
    "AttentionHeadExplorer": ({"layer": ALL, "head": ALL},
                              {"layer": 1, "head": 2, "query": ALL},
                              {"layer": 2, "head": 8, "query": ALL},
                              {"layer": 3, "head": 9, "query": ALL}),
}


def webp(png):
    """The PNG ``png`` as lossless WebP, checked to hold the same pixels (RGB when the PNG is opaque)."""
    image = PIL.Image.open(io.BytesIO(png))
    pixels = np.asarray(image.convert("RGBA"))
    if (pixels[..., 3] == 255).all():
        image, pixels = image.convert("RGB"), pixels[..., :3]
    buffer = io.BytesIO()
    image.save(buffer, format="webp", lossless=True, quality=50, method=2)
    data = buffer.getvalue()
    back = np.asarray(PIL.Image.open(io.BytesIO(data)).convert(image.mode))
    if back.shape != pixels.shape or not np.array_equal(back, pixels):
        raise SiteError("this Pillow's WebP encoder is not lossless: the site's pictures would differ from the widgets'")
    return data


def _label(explorer, name):
    return " ".join((explorer.controls[name].description or name).split())


class Grid:
    """One widget on the site: its reachable states (``space``), the ones kept (``kept``) and why.

    ``estimate`` is the bytes all of its states would take (pictures and
    words), from ``SAMPLES`` of them drawn when it is made.
    """

    def __init__(self, explorer, where):
        self.explorer, self.where = explorer, where
        self.space = StateSpace(explorer)
        self.states = self.space.states
        self.kept = list(self.states)
        self.reduced, self.why, self.note = False, "", ""
        self.wanted = set()  # states a question shows once answered: a reduced grid keeps them too
        picks = sorted({round(i * (len(self.states) - 1) / max(SAMPLES - 1, 1)) for i in range(SAMPLES)})
        sample = [self.space.start, *(self.states[i] for i in picks)]
        self.drawn = self.name in DRAWN  # the page draws its states from their numbers (drawn.py)
        if self.drawn:
            records = drawing(explorer, sample, self.values, self.space.start)["records"]
            self.per_state = sum(len(json.dumps(r)) + 60 for r in records) / len(records)
            self.estimate = self.per_state * len(self.states)
            return
        sizes = []
        for state in sample:
            frame = explorer.frame(self.values(state))
            sizes.append(len(webp(frame.png)) * (1 + PHONE_BYTES) + len(frame.alt) + len(frame.readout) + 80)
        explorer.frame(self.values(self.space.start))
        self.per_state = sum(sizes) / len(sample)
        self.estimate = self.per_state * len(self.states)

    def phone_layout(self):
        """A context in which the widget draws for a phone (``phone.stacked``), and after which it draws as before."""
        start = self.values(self.space.start)
        return phone.stacked(self.explorer.figure, self.explorer.stop_blitting, lambda: self.explorer.frame(start),
                             self.explorer.start_blitting)

    @property
    def name(self):
        return type(self.explorer).__name__

    def values(self, state):
        return dict(zip(self.space.names, state))

    def reduce(self, room):
        """Keep the reduced grid: every value of each control with the others at the start, and the
        combinations of ``QUESTIONS``. ``room`` says, in words, the room its full grid would not fit."""
        question = QUESTIONS.get(self.name)
        self.why = f"all {len(self.states):,} states would take about {self.estimate / MB:.1f} MB, more than {room}"
        if question is None:
            raise SiteError(f"{self.where}: {self.why}; say in tools/site/states.py QUESTIONS which combinations "
                            f"of {self.name}'s controls its lesson's question asks about")
        names, start = self.space.names, self.space.start
        kept = {start}
        for i, name in enumerate(names):  # every value of each control, the others where they start
            kept.update(start[:i] + (value,) + start[i + 1:] for value in self.space.values[name])
        kept.update(self.wanted)
        described = []
        for entry in question:
            kept.update(self._asked(entry))
            every = [_label(self.explorer, n) for n in names if entry.get(n) == ALL]
            fixed = [f"{_label(self.explorer, n)} {self.space.labels[n][v]}" for n, v in entry.items() if v != ALL]
            described.append("every " + " with every ".join(every) + (f" at {', '.join(fixed)}" if fixed else ""))
        self.kept = [state for state in self.states if state in kept]
        self.reduced = True
        self.note = (f"This page keeps {len(self.kept):,} of the widget's {len(self.states):,} states: every value "
                     "of each control with the others where they start; " + "; ".join(described)
                     + f", the other controls where they start. All of them would take about "
                     f"{self.estimate / MB:.1f} MB, more than a page has room for. Moving a control to a combination "
                     "left out moves the others to the nearest one kept; in JupyterLab (Run this lesson) every "
                     "combination works.")

    def _asked(self, entry):
        """The states one entry of ``QUESTIONS`` asks for (``{control: value or ALL}``, the rest at the start)."""
        names = self.space.names
        unknown = set(entry) - set(names)
        if unknown:
            raise SiteError(f"QUESTIONS[{self.name!r}] names {sorted(unknown)}, which are not its controls "
                            f"{list(names)}")
        choices = []
        for name, there in zip(names, self.space.start):
            wanted, values = entry.get(name, there), self.space.values[name]
            if wanted != ALL and wanted not in values:
                raise SiteError(f"QUESTIONS[{self.name!r}] sets {name!r} to {wanted!r}, which it does not "
                                f"offer ({values})")
            choices.append(values if wanted == ALL else [wanted])
        reachable = set(self.states)
        return [state for state in itertools.product(*choices) if state in reachable]

    # ------------------------------------------------------------------ the page's data

    def _nearest(self, state, moved, kept):
        """The kept state nearest ``state`` among those with the same value of control ``moved``: the most
        other controls unchanged, then the most of the others at their start."""
        i = self.space.names.index(moved)
        start = self.space.start

        def score(k):
            same = sum(a == b for j, (a, b) in enumerate(zip(k, state)) if j != i)
            at_start = sum(a == b for j, (a, b) in enumerate(zip(k, start)) if j != i)
            return same, at_start

        return max((k for k in kept if k[i] == state[i]), key=score)

    def render(self, folder, url, log=lambda line: None):
        """Draw every kept state, for a wide screen and for a phone, into ``folder`` (``url``: that folder's address
        from the page); returns the page's data for the widget: its controls, its states (each one's two pictures,
        alt text and readout), its moves, the pictures' sizes and the smallest text in each (in their pixels)."""
        names, space, kept, key = self.space.names, self.space, self.kept, self.key
        position = {n: {v: k for k, v in enumerate(space.values[n])} for n in names}
        extra, shown = self._drawing() if self.drawn else self._pictures(folder, url, log)
        records = []
        for state, (src, phone_src, alt, readout) in zip(kept, shown):
            record = [src, phone_src, alt, readout]
            offered = space.offered(state)
            limits = [sorted(position[n][v] for v in offered[n]) for n in names]
            if any(len(lim) != len(space.values[n]) for lim, n in zip(limits, names)):
                record.append(limits)
            records.append(record)
        self.explorer.frame(self.values(space.start))
        controls = [{"name": name, "kind": control_kind(self.explorer.controls[name]),
                     "label": _label(self.explorer, name), "labels": [space.labels[name][v] for v in space.values[name]]}
                    for name in names]
        return {"controls": controls, "keys": [key(state) for state in kept], "states": records,
                "start": kept.index(space.start), "redirect": self._redirects(key), **extra}

    def key(self, state):
        """The page's name of ``state``: each control's value as its place among the control's values, "2,0,1"."""
        return ",".join(str(self.space.values[n].index(v)) for n, v in zip(self.space.names, state))

    def _redirects(self, key):
        """``{"control index:key": state index}``: where a move leads elsewhere than to the state whose key it
        names (the widget moves other controls too, or the page keeps a reduced grid)."""
        space, kept, redirect = self.space, self.kept, {}
        index = {state: k for k, state in enumerate(kept)}
        for state in kept:
            for ci, name in enumerate(space.names):
                for value in space.offered(state)[name]:
                    candidate = state[:ci] + (value,) + state[ci + 1:]
                    target = space.move(state, name, value)
                    if target not in index:
                        target = self._nearest(target, name, kept)
                    if target != candidate:
                        slot = f"{ci}:{key(candidate)}"
                        if redirect.get(slot, index[target]) != index[target]:
                            raise SiteError(f"{self.where}: moving {name!r} to {value!r} leads to different states "
                                            "from states the page cannot tell apart")
                        redirect[slot] = index[target]
        return redirect

    def _drawing(self):
        """The numbers site.js draws the kept states from (``drawn.drawing``); returns them with the two layouts'
        sizes and smallest texts, and each state's ``(None, None, alt, readout)``: no picture files."""
        made = drawing(self.explorer, self.kept, self.values, self.space.start)
        shown = [(None, None, alt, readout) for _, alt, readout in made["records"]]
        made["frames"] = [panels for panels, _, _ in made.pop("records")]
        wide, narrow = made["layouts"]["wide"], made["layouts"]["phone"]
        return {"drawing": made, "size": wide["size"], "phone_size": narrow["size"],
                "text_px": [wide["text_px"], narrow["text_px"]], "images": []}, shown

    def _pictures(self, folder, url, log):
        """Draw every kept state as pictures into ``folder``, for a wide screen and for a phone; returns the
        pictures' sizes and smallest texts, and each state's ``(picture, phone picture, alt, readout)``."""
        store = _PictureFolder(folder, url)
        wide, size, text_px = self._draw_all(store, "for a wide screen", log)
        with self.phone_layout():
            narrow, phone_size, phone_text_px = self._draw_all(store, "for a phone", log)
        self.explorer.frame(self.values(self.space.start))
        words = [(src, phone_src, frame.alt, frame.readout) for (src, frame), (phone_src, _) in zip(wide, narrow)]
        return {"size": size, "phone_size": phone_size, "text_px": [text_px, phone_text_px],
                "images": sorted(store.written)}, words

    def _draw_all(self, store, what, log):
        """Every kept state drawn and stored: ``([(url, frame)], size of a picture, smallest text in px)``."""
        pictures, size, text_px = [], None, None
        for k, state in enumerate(self.kept):
            frame = self.explorer.frame(self.values(state))
            pictures.append((store(frame.png), frame))
            size = size or PIL.Image.open(io.BytesIO(frame.png)).size
            found = phone.smallest_text_px(self.explorer.figure)
            text_px = found if text_px is None else min(text_px, found or text_px)
            if k % 200 == 199:
                log(f"  {self.where}: {k + 1} of {len(self.kept)} states drawn ({what})")
        return pictures, size, text_px


def _fit(grids, share, room, where, log):
    """Reduce the largest full grid of ``grids`` until their estimated size is at most ``share`` bytes;
    ``room`` words the room a reduced widget's full grid did not fit (given its MB), ``where`` the grids."""

    def size(grid):
        return grid.per_state * len(grid.kept)

    while sum(map(size, grids)) > share:
        full = [g for g in grids if not g.reduced]
        if not full:
            raise SiteError(f"{where}: the widgets take about {sum(map(size, grids)) / MB:.1f} MB even with "
                            f"reduced grids, more than {share / MB:.1f} MB")
        biggest = max(full, key=size)
        biggest.reduce(room.format((share - sum(size(g) for g in grids if g is not biggest)) / MB))
        log(f"{biggest.where}: {biggest.why}; keeping {len(biggest.kept)} states")


def plan(pages, log=lambda line: None):
    """Reduce, page by page and then across the site, the widgets whose full grids would break the budget.

    ``pages``: ``{page name: [Grid, ...]}``; the largest full grid of a page
    over its share of ``PAGE_BUDGET`` is reduced first, then the largest of
    the site while the site is over its share of ``SITE_BUDGET``.
    """
    for name, grids in pages.items():
        _fit(grids, PAGE_BUDGET * PLAN_SHARE, "the {:.1f} MB its page has room for "
             f"({PLAN_SHARE:.0%} of a page's {PAGE_BUDGET / MB:.0f} MB, less its other widgets)", name, log)
    _fit([g for grids in pages.values() for g in grids], SITE_BUDGET * PLAN_SHARE, "the {:.1f} MB the site has "
         f"room for ({PLAN_SHARE:.0%} of its {SITE_BUDGET / MB:.0f} MB, less the other widgets)", "the site", log)


class _PictureFolder:
    """A folder of pictures named by their content: each stored once, however many states show it."""

    def __init__(self, folder, url):
        self.folder, self.url, self.written = folder, url, set()
        folder.mkdir(parents=True, exist_ok=True)

    def __call__(self, png):
        """Store ``png`` as webp; its URL."""
        data = webp(png)
        name = hashlib.sha256(data).hexdigest()[:16] + ".webp"
        if name not in self.written:
            (self.folder / name).write_bytes(data)
            self.written.add(name)
        return self.url + name
