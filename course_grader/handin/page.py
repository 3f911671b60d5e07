"""The hand-in service's page: a learner whose kernel is gone reads their hand-ins' verdicts in the browser.

``<prefix>`` shows the learner's latest hand-in of each lesson, as the
notebook shows it (``encoder_lib.grading.handing_in.render``), and how many
are kept. Who they are comes from the hub's own login, through JupyterHub's
service OAuth (``jupyterhub.services.auth.HubOAuth``, with the settings the hub
gives a service it starts): the page sends the browser to the hub, the hub
sends it back to ``<prefix>oauth_callback``, and the token it gives is kept
in a cookie the service encrypts (its key new at each start). Every
learner's text on the page is escaped, and the page loads nothing (its
Content-Security-Policy says so).
"""

import asyncio
import html

from jupyterhub.services.auth import HubOAuthCallbackHandler, HubOAuthenticated, UserNotAllowed
from tornado import web

from encoder_lib.grading.exercises import BY_LESSON
from encoder_lib.grading.handing_in import render

from .views import Refusal

POLICY = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'"


@web.stream_request_body
class PageHandler(HubOAuthenticated, web.RequestHandler):
    def initialize(self, service):
        self.service, self.hub_auth = service, service.auth

    def set_default_headers(self):
        self.set_header("Content-Security-Policy", POLICY)
        self.set_header("Cache-Control", "no-store")
        self.set_header("X-Content-Type-Options", "nosniff")

    async def prepare(self):  # the hub asked here, never blocking the event loop as HubOAuthenticated's own would
        model = await self.hub_auth.get_user(self, sync=False)
        try:
            self.current_user = model and self.check_hub_user(model)
        except UserNotAllowed:
            self.current_user = None
            self.refuse(Refusal(403, "The hub does not let you open this page."))

    def data_received(self, chunk):
        pass  # a page asks with no body: none is kept

    def refuse(self, refusal):
        self.set_status(refusal.status)
        self.finish(_page("Not shown", f"<p>{html.escape(refusal.message)}</p>"))

    @web.authenticated
    async def get(self):
        try:
            student = self.service.course.learner(self.current_user["name"])
        except Refusal as refusal:
            return self.refuse(refusal)
        self.finish(_page(f"Your hand-ins, {student}", await asyncio.to_thread(self.sections, student)))

    def sections(self, student):
        parts = []
        for lesson in BY_LESSON:
            history = self.service.store.history(student, lesson)
            if history:
                view = self.service.view(student, lesson, history[-1].folder.name)
                parts.append(f"<h2>{lesson}</h2><p>{len(history)} hand-in{'s' * (len(history) > 1)} kept; the "
                             f"latest:</p>{render(view)[0]}")
        return "".join(parts) or "<p>You have not handed anything in yet.</p>"


@web.stream_request_body
class CallbackHandler(HubOAuthCallbackHandler):
    """The hub's login comes back here (HubOAuth's own handler, its request body never read)."""

    def initialize(self, hub_auth):
        self.hub_auth = hub_auth

    def data_received(self, chunk):
        pass


def _page(title, body):
    return (f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
            f"<meta name='viewport' content='width=device-width, initial-scale=1'>"
            f"<style>body{{font-family:system-ui,sans-serif;max-width:50em;margin:2em auto;padding:0 1em;"
            f"line-height:1.45}}</style></head><body><main><h1>{html.escape(title)}</h1>{body}</main></body></html>")


def routes(service, prefix):
    """The page's routes for ``service.application``."""
    return [(rf"{prefix}", PageHandler, {"service": service}),
            (rf"{prefix}oauth_callback", CallbackHandler, {"hub_auth": service.auth})]
