"""Verification of our webhooks: the ``Service-Signature`` header, and the Standard Webhooks headers (``v1`` HMAC,
``v1a`` ed25519)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import time
from typing import Iterable, Mapping, Tuple, Union


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


_B64 = re.compile(r"^[A-Za-z0-9+/_-]+={0,2}$")


def _b64decode(text: str) -> bytes:
    """Standard or URL-safe base64, padded or not (secrets made before standard base64 were URL-safe)."""
    if not _B64.match(text):
        return b""
    text = text.rstrip("=").replace("-", "+").replace("_", "/")
    try:
        return base64.b64decode(text + "=" * (-len(text) % 4))
    except ValueError:
        return b""


def _header(headers: Mapping[str, Union[str, Iterable[str], None]], name: str) -> str:
    """A header from a mapping with any key case (a dict, Flask's/Django's headers, http.client's message)."""
    value = headers.get(name)
    if value is None:
        value = next((v for k, v in headers.items() if k.lower() == name), None)
    if value is None:
        return ""
    return (value if isinstance(value, str) else " ".join(value)).strip()


def verify_standard_webhook(raw_body: Union[bytes, str], headers: Mapping[str, Union[str, Iterable[str], None]], key: str, *, tolerance_seconds: int = 300, now: float | None = None) -> Tuple[str, int]:
    """Checks the Standard Webhooks headers (``webhook-id``, ``webhook-timestamp``, ``webhook-signature``) of a
    delivery. The signed content is ``<webhook-id>.<webhook-timestamp>.<raw body>``; ``webhook-signature`` lists
    ``<version>,<base64>`` separated by spaces. With the address's ``whsec_`` secret the ``v1`` signatures are
    checked (HMAC-SHA256 keyed with the base64-decoded bytes after ``whsec_``); with the ``whpk_`` public key of an
    address that signs with ed25519 the ``v1a`` ones (needs the ``cryptography`` package). Any match passes (two
    during a rotation). Answers ``(event id, timestamp)``; raises WebhookVerificationError saying why otherwise."""
    if not key:
        raise WebhookVerificationError("missing_secret", "No signing key given (the whsec_ secret or whpk_ public key).")
    webhook_id, timestamp, signatures = (_header(headers, n) for n in ("webhook-id", "webhook-timestamp", "webhook-signature"))
    if not webhook_id or not timestamp or not signatures:
        raise WebhookVerificationError("missing_header", "The request lacks webhook-id, webhook-timestamp or webhook-signature.")
    if not re.fullmatch(r"\d{1,12}", timestamp):
        raise WebhookVerificationError("malformed_header", "webhook-timestamp is not unix seconds.")
    if key.startswith("whpk_"):
        version, raw_key = "v1a", _b64decode(key[5:])
        if len(raw_key) != 32:
            raise WebhookVerificationError("missing_secret", "The whpk_ public key is not 32 bytes of base64.")
        from cryptography.exceptions import InvalidSignature
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

        public_key = Ed25519PublicKey.from_public_bytes(raw_key)

        def check(content: bytes, sig: bytes) -> bool:
            try:
                public_key.verify(sig, content)
                return True
            except InvalidSignature:
                return False
    else:
        version, raw_key = "v1", _b64decode(key[6:] if key.startswith("whsec_") else key)
        if not raw_key:
            raise WebhookVerificationError("missing_secret", "No signing key given (the whsec_ secret or whpk_ public key).")

        def check(content: bytes, sig: bytes) -> bool:
            return hmac.compare_digest(sig, hmac.new(raw_key, content, hashlib.sha256).digest())
    candidates = []
    for part in signatures.split(" "):
        name, comma, value = part.partition(",")
        if comma and name == version and _B64.match(value):
            candidates.append(_b64decode(value))
    if not candidates:
        hint = " (is ed25519 on for this address?)" if version == "v1a" else ""
        raise WebhookVerificationError("malformed_header", f"webhook-signature has no {version},<base64> signature{hint}.")
    skew = round((time.time() if now is None else now) - int(timestamp))
    if abs(skew) > tolerance_seconds:
        when = "ago" if skew >= 0 else "in the future"
        raise WebhookVerificationError("timestamp_out_of_tolerance", f"Signed {abs(skew)} s {when}, more than the {tolerance_seconds} s allowed (a replay, or this machine's clock is off).")
    body = raw_body.encode() if isinstance(raw_body, str) else raw_body
    content = f"{webhook_id}.{timestamp}.".encode() + body
    matched = False
    for sig in candidates:  # every candidate is checked: the time taken does not tell which one matched
        matched = check(content, sig) or matched
    if not matched:
        raise WebhookVerificationError("signature_mismatch", f"No {version} signature matches this body and key (was the body re-serialized before verifying, or is it another address's key?).")
    return webhook_id, int(timestamp)
