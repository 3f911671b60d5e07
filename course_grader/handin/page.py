"""The hand-in service's page: a learner whose kernel is gone reads their hand-ins' verdicts in the browser.

``<prefix>`` shows the learner's latest hand-in of each lesson, as the
notebook shows it (``encoder_lib.grading.handing_in.render``), and how many
they made. Who they are comes from the hub's own login, through its OAuth
(the hub sets ``JUPYTERHUB_CLIENT_ID`` and ``JUPYTERHUB_OAUTH_CALLBACK_URL``
for a service it starts): the page sends the browser to the hub's
``/hub/api/oauth2/authorize``, the hub sends it back to ``<prefix>oauth_callback``
with a code, the service trades the code for a token (``/oauth2/token``,
with its own token as the client's secret) and asks the hub whose it is.
The name is then kept in a signed cookie for a day (its key new at each
start of the service). Every learner's text on the page is escaped, and
the page loads nothing (its Content-Security-Policy says so).
"""

import html
import json
import os
import secrets
import urllib.parse

from tornado import httpclient, web

from encoder_lib.grading.exercises import BY_LESSON
from encoder_lib.grading.handing_in import render

from .views import Refusal

USER_COOKIE, STATE_COOKIE = "encoder-hand-in-user", "encoder-hand-in-state"
POLICY = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'"


class HubLogin:
    """The hub's OAuth, as the hub describes it to a service it starts (its environment), or None without it."""

    def __init__(self, api_url, environ=os.environ):
        self.client_id = environ.get("JUPYTERHUB_CLIENT_ID", "")
        self.secret = environ.get("JUPYTERHUB_API_TOKEN", "")
        self.callback = environ.get("JUPYTERHUB_OAUTH_CALLBACK_URL", "")
        base = environ.get("JUPYTERHUB_BASE_URL", "/")
        self.authorize = environ.get("JUPYTERHUB_HOST", "") + base.rstrip("/") + "/hub/api/oauth2/authorize"
        self.token_url = api_url.rstrip("/") + "/oauth2/token"

    @property
    def ready(self):
        return bool(self.client_id and self.secret and self.callback)

    def authorize_url(self, state):
        return self.authorize + "?" + urllib.parse.urlencode(
            {"client_id": self.client_id, "redirect_uri": self.callback, "response_type": "code", "state": state})

    async def token(self, code):
        body = urllib.parse.urlencode({"client_id": self.client_id, "client_secret": self.secret, "code": code,
                                       "grant_type": "authorization_code", "redirect_uri": self.callback})
        response = await httpclient.AsyncHTTPClient().fetch(self.token_url, method="POST", body=body,
                                                            raise_error=False, request_timeout=20)
        if response.code != 200:
            raise Refusal(403, "The hub did not confirm your login: open this page again from the hub.")
        return json.loads(response.body)["access_token"]


class _Page(web.RequestHandler):
    def initialize(self, service, login, prefix):
        self.service, self.login, self.prefix = service, login, prefix

    def set_default_headers(self):
        self.set_header("Content-Security-Policy", POLICY)
        self.set_header("Cache-Control", "no-store")
        self.set_header("X-Content-Type-Options", "nosniff")

    def refuse(self, refusal):
        self.set_status(refusal.status)
        self.finish(_page("Not shown", f"<p>{html.escape(refusal.message)}</p>"))


class PageHandler(_Page):
    async def get(self):
        name = self.get_signed_cookie(USER_COOKIE, max_age_days=1)
        if name is None:
            if not self.login.ready:
                return self.refuse(Refusal(503, "This page needs the hub's login, which this service was not "
                                                "started with: ask your teacher."))
            state = secrets.token_urlsafe(24)
            self.set_signed_cookie(STATE_COOKIE, state, expires_days=None, httponly=True, path=self.prefix)
            return self.redirect(self.login.authorize_url(state))
        try:
            student = self.service.course.learner(name.decode())
        except Refusal as refusal:
            return self.refuse(refusal)
        self.finish(_page(f"Your hand-ins, {student}", self.sections(student)))

    def sections(self, student):
        parts = []
        for lesson in BY_LESSON:
            history = self.service.store.history(student, lesson)
            if history:
                view = self.service.view(student, lesson, history[-1].folder.name)
                parts.append(f"<h2>{lesson}</h2><p>{len(history)} hand-in{'s' * (len(history) > 1)}; the latest:"
                             f"</p>{render(view)[0]}")
        return "".join(parts) or "<p>You have not handed anything in yet.</p>"


class CallbackHandler(_Page):
    async def get(self):
        expected = self.get_signed_cookie(STATE_COOKIE, max_age_days=1)
        state, code = self.get_argument("state", ""), self.get_argument("code", "")
        if not expected or not code or not secrets.compare_digest(expected.decode(), state):
            return self.refuse(Refusal(403, "This login link is not the one the page started: open the page "
                                            "again."))
        try:
            name = await self.service.identity.name(await self.login.token(code))
        except Refusal as refusal:
            return self.refuse(refusal)
        self.clear_cookie(STATE_COOKIE, path=self.prefix)
        self.set_signed_cookie(USER_COOKIE, name, expires_days=1, httponly=True, path=self.prefix)
        self.redirect(self.prefix)


def _page(title, body):
    return (f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
            f"<meta name='viewport' content='width=device-width, initial-scale=1'>"
            f"<style>body{{font-family:system-ui,sans-serif;max-width:50em;margin:2em auto;padding:0 1em;"
            f"line-height:1.45}}</style></head><body><main><h1>{html.escape(title)}</h1>{body}</main></body></html>")


def routes(service, prefix, api_url):
    """The page's routes for ``service.application``."""
    arguments = {"service": service, "login": HubLogin(api_url), "prefix": prefix}
    return [(rf"{prefix}", PageHandler, arguments), (rf"{prefix}oauth_callback", CallbackHandler, arguments)]
