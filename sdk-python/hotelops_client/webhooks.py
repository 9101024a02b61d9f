"""Verification of the ``Service-Signature`` header of our webhooks."""

from __future__ import annotations

import hashlib
import hmac
import re
import time
from typing import Iterable, Union


class WebhookVerificationError(Exception):
    """Not a genuine webhook of this endpoint (answer 400). ``reason``: missing_header, malformed_header,
    timestamp_out_of_tolerance, signature_mismatch or missing_secret."""

    def __init__(self, reason: str, message: str):
        super().__init__(message)
        self.reason = reason


_HEX = re.compile(r"^[0-9a-f]{64}$")


def verify_webhook(raw_body: Union[bytes, str], header: Union[str, Iterable[str], None], secret: str, *, tolerance_seconds: int = 300, now: float | None = None) -> int:
    """Checks ``t=<unix seconds>,v1=<hex>[,v1=<hex>]``: each v1 is the hex HMAC-SHA256 of ``<t>.<raw body>`` keyed
    with the whole secret (``whsec_`` included); any match passes (two during a rotation), compared in constant
    time; ``t`` must be within the tolerance. Pass the body bytes as received. Answers ``t``; raises
    WebhookVerificationError saying why otherwise."""
    if not secret:
        raise WebhookVerificationError("missing_secret", "No signing secret given (the endpoint's whsec_... secret).")
    text = header if isinstance(header, str) else ",".join(header or ())
    if not text.strip():
        raise WebhookVerificationError("missing_header", "The request has no Service-Signature header.")
    timestamp = None
    signatures = []
    for part in text.split(","):
        key, eq, value = part.partition("=")
        if not eq:
            continue
        key, value = key.strip(), value.strip()
        if key == "t":
            if timestamp is not None and timestamp != value:
                raise WebhookVerificationError("malformed_header", "The Service-Signature header carries two different timestamps.")
            timestamp = value
        elif key == "v1" and _HEX.match(value):
            signatures.append(value)
    if timestamp is None or not re.fullmatch(r"\d{1,12}", timestamp):
        raise WebhookVerificationError("malformed_header", "The Service-Signature header has no t=<unix seconds>.")
    if not signatures:
        raise WebhookVerificationError("malformed_header", "The Service-Signature header has no v1=<64 lowercase hex digits>.")
    skew = round((time.time() if now is None else now) - int(timestamp))
    if abs(skew) > tolerance_seconds:
        when = "ago" if skew >= 0 else "in the future"
        raise WebhookVerificationError("timestamp_out_of_tolerance", f"Signed {abs(skew)} s {when}, more than the {tolerance_seconds} s allowed (a replay, or this machine's clock is off).")
    body = raw_body.encode() if isinstance(raw_body, str) else raw_body
    expected = hmac.new(secret.encode(), timestamp.encode() + b"." + body, hashlib.sha256).hexdigest()
    matched = False
    for sig in signatures:  # every candidate is compared: the time taken does not tell which one matched
        matched = hmac.compare_digest(sig, expected) or matched
    if not matched:
        raise WebhookVerificationError("signature_mismatch", "No v1 signature matches this body and secret (was the body re-serialized before verifying, or is it another endpoint's secret?).")
    return int(timestamp)
