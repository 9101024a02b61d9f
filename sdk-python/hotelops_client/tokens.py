"""Client-credentials tokens for partners and internal systems (``POST /api/v1/oauth/token``)."""

from __future__ import annotations

import base64
import json
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Callable


class TokenError(Exception):
    """The token endpoint refused: ``error`` is the RFC 6749 code (``invalid_client``, ``invalid_scope``...)."""

    def __init__(self, status: int, error: str, description: str):
        super().__init__(f"{status} {error}: {description}")
        self.status = status
        self.error = error
        self.description = description


class ClientCredentials:
    """Fetches a token with the client id and secret (HTTP Basic, form body) and keeps it until
    ``refresh_before`` seconds before it expires; thread-safe. Pass it to ``open_channel`` as the token."""

    def __init__(self, base_url: str, client_id: str, client_secret: str, scope: str | None = None, *, refresh_before: float = 60, clock: Callable[[], float] = time.time):
        self._url = base_url.rstrip("/") + "/api/v1/oauth/token"
        # RFC 6749 section 2.3.1: id and secret are form-encoded before they go into HTTP Basic
        pair = f"{urllib.parse.quote_plus(client_id)}:{urllib.parse.quote_plus(client_secret)}"
        self._basic = "Basic " + base64.b64encode(pair.encode()).decode()
        self._scope = scope
        self._refresh_before = refresh_before
        self._clock = clock
        self._lock = threading.Lock()
        self._token: str | None = None
        self._renew_at = 0.0
        self.scopes: list[str] = []

    def access_token(self) -> str:
        with self._lock:
            if self._token is None or self._clock() >= self._renew_at:
                self._fetch()
            assert self._token is not None
            return self._token

    def _fetch(self) -> None:
        form = {"grant_type": "client_credentials"}
        if self._scope is not None:
            form["scope"] = self._scope
        req = urllib.request.Request(self._url, data=urllib.parse.urlencode(form).encode(), method="POST", headers={"authorization": self._basic, "content-type": "application/x-www-form-urlencoded", "accept": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=30) as res:
                body = json.load(res)
        except urllib.error.HTTPError as err:
            try:
                problem = json.load(err)
            except ValueError:
                problem = {}
            raise TokenError(err.code, str(problem.get("error", "http_error")), str(problem.get("error_description", err.reason))) from None
        life = float(body["expires_in"])
        self._token = body["access_token"]
        self._renew_at = self._clock() + life - min(self._refresh_before, life / 10)
        self.scopes = str(body.get("scope", "")).split()
