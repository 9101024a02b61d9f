"""A gRPC channel to the service, with ``authorization: Bearer ...`` on every call."""

from __future__ import annotations

import collections
from typing import Callable, Union
from urllib.parse import urlsplit

import grpc

TokenSource = Union[str, Callable[[], str], "ClientCredentials"]  # noqa: F821 (tokens.ClientCredentials)


class _Details(collections.namedtuple("_Details", ("method", "timeout", "metadata", "credentials", "wait_for_ready", "compression")), grpc.ClientCallDetails):
    pass


def bearer_interceptor(token: TokenSource):
    """A client interceptor adding the bearer token (a string, a function or ClientCredentials) to each call."""

    def current() -> str:
        if isinstance(token, str):
            return token
        if callable(token):
            return token()
        return token.access_token()

    class _Bearer(grpc.UnaryUnaryClientInterceptor, grpc.UnaryStreamClientInterceptor):
        def _with_token(self, details):
            metadata = [(k, v) for k, v in (details.metadata or ()) if k != "authorization"]
            metadata.append(("authorization", f"Bearer {current()}"))
            return _Details(details.method, details.timeout, metadata, details.credentials, getattr(details, "wait_for_ready", None), getattr(details, "compression", None))

        def intercept_unary_unary(self, continuation, details, request):
            return continuation(self._with_token(details), request)

        def intercept_unary_stream(self, continuation, details, request):
            return continuation(self._with_token(details), request)

    return _Bearer()


def open_channel(base_url: str, token: TokenSource | None = None, *, root_certificates: bytes | None = None) -> grpc.Channel:
    """``http://host:port`` (cleartext HTTP/2) or ``https://host[:port]`` (TLS), the same URL the REST API uses."""
    url = urlsplit(base_url)
    if url.scheme not in ("http", "https") or not url.hostname:
        raise ValueError(f"base_url must be http(s)://host[:port], got {base_url!r}")
    host = f"[{url.hostname}]" if ":" in url.hostname else url.hostname
    target = f"{host}:{url.port or (443 if url.scheme == 'https' else 80)}"
    if url.scheme == "https":
        channel = grpc.secure_channel(target, grpc.ssl_channel_credentials(root_certificates=root_certificates))
    else:
        channel = grpc.insecure_channel(target)
    return channel if token is None else grpc.intercept_channel(channel, bearer_interceptor(token))
