"""Opaque, tamper-proof pagination cursors.

A cursor is ``v1.<payload>.<mac>``: the payload is compact JSON (sorted keys) in URL-safe
base64, the MAC an HMAC-SHA256 of it under a per-catalog secret (``settings.cursor_secret``),
truncated to 128 bits. :func:`decode` checks the MAC before reading anything, then that
the payload agrees with what the caller expects (workspace, filters, ordering…), so a
cursor altered by hand, issued by another catalog, or replayed with other filters is
refused with one precise line (:class:`~agentlake.errors.ConfigurationError`, exit 2).

Payloads must be JSON-serializable (str, int, float, bool, None, lists and dicts).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
from typing import Any, Final

import orjson

from agentlake.errors import ConfigurationError

VERSION: Final = "v1"
_MAC_BYTES: Final = 16
_DOMAIN: Final = b"agentlake-cursor\x00"
_REMEDY: Final = "run the first page again without --cursor"


def _key(secret: str | bytes) -> bytes:
    return secret.encode() if isinstance(secret, str) else secret


def _mac(body: bytes, secret: str | bytes) -> bytes:
    return hmac.new(_key(secret), _DOMAIN + body, hashlib.sha256).digest()[:_MAC_BYTES]


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.b64decode(text + "=" * (-len(text) % 4), altchars=b"-_", validate=True)


def encode(payload: dict[str, Any], secret: str | bytes) -> str:
    """An opaque cursor carrying ``payload``, signed with ``secret``."""
    body = orjson.dumps(payload, option=orjson.OPT_SORT_KEYS)
    return f"{VERSION}.{_b64(body)}.{_b64(_mac(body, secret))}"


def decode(token: str, secret: str | bytes, *, expect: dict[str, Any]) -> dict[str, Any]:
    """The payload of ``token`` once its signature is valid and every key of ``expect``
    holds the expected value; otherwise :class:`ConfigurationError` naming the problem."""
    parts = token.strip().split(".")
    if len(parts) != 3 or parts[0] != VERSION:
        raise ConfigurationError(f"--cursor is not a cursor agentlake issued; {_REMEDY}")
    try:
        body, mac = _unb64(parts[1]), _unb64(parts[2])
    except (binascii.Error, ValueError):
        raise ConfigurationError(f"--cursor is not a cursor agentlake issued; {_REMEDY}") from None
    if not body or len(mac) != _MAC_BYTES:
        raise ConfigurationError(f"--cursor is not a cursor agentlake issued; {_REMEDY}")
    if not hmac.compare_digest(mac, _mac(body, secret)):
        raise ConfigurationError(
            f"--cursor was altered or issued by another catalog (signature mismatch); {_REMEDY}"
        )
    try:
        payload = orjson.loads(body)
    except orjson.JSONDecodeError:
        raise ConfigurationError(f"--cursor is not a cursor agentlake issued; {_REMEDY}") from None
    if not isinstance(payload, dict):
        raise ConfigurationError(f"--cursor is not a cursor agentlake issued; {_REMEDY}")
    for key, wanted in expect.items():
        if key not in payload:
            raise ConfigurationError(f"--cursor has no {key!r}; {_REMEDY}")
        if payload[key] != wanted:
            raise ConfigurationError(
                f"--cursor {_difference(key, payload[key], wanted)}; {_REMEDY}"
            )
    return payload


def _difference(key: str, issued: Any, wanted: Any) -> str:
    """What differs between the cursor's ``issued`` value and the request's, in words."""
    if isinstance(issued, dict) and isinstance(wanted, dict):
        changed = sorted(
            name for name in issued.keys() | wanted.keys() if issued.get(name) != wanted.get(name)
        )
        shown = ", ".join(
            f"{name} {_show(issued.get(name))} (now {_show(wanted.get(name))})" for name in changed
        )
        return f"was issued with other {key}: {shown}"
    return f"was issued for {key} {_show(issued)}, not {_show(wanted)}"


def _show(value: Any) -> str:
    if value is None or value == []:
        return "unset"
    return orjson.dumps(value).decode()
