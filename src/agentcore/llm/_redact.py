"""Keeping a request's secrets out of the texts it produces.

A provider's error body may quote the key it refused, a gateway may echo the headers it was
sent, a connection error may name a URL that carries a token. Every error text an adapter
produces therefore goes through `redact` with the request's secrets before it reaches a message,
an event, a session or a log: the API key, and the value of every header whose name says it
holds a credential. Each secret is replaced wherever it appears: as sent, after an auth scheme
such as "Bearer ", URL-encoded, or escaped inside a JSON string.

Values shorter than `MIN_SECRET_LENGTH` characters are left alone: replacing them would blank
out ordinary words, and no real credential is that short.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from urllib.parse import quote, quote_plus

__all__ = ["MIN_SECRET_LENGTH", "REDACTED", "is_secret_header", "redact", "secret_values"]

REDACTED = "[redacted]"
"""What a secret is replaced with."""

MIN_SECRET_LENGTH = 8
"""Shorter values are not treated as secrets."""

_SECRET_HEADERS = frozenset(
    {"authorization", "proxy-authorization", "api-key", "x-api-key", "x-goog-api-key", "cookie"}
)
_SECRET_PARTS = ("key", "token", "secret", "auth", "password")


def is_secret_header(name: str) -> bool:
    """Whether a header's value is a credential: `Authorization`, `api-key`, `x-api-key`,
    `x-goog-api-key`, cookies, or any name containing "key", "token", "secret", "auth" or
    "password" (case-insensitive)."""
    lower = name.strip().lower()
    return lower in _SECRET_HEADERS or any(part in lower for part in _SECRET_PARTS)


def _variants(value: str) -> Iterable[str]:
    """The forms a secret may take in a text."""
    value = value.strip()
    yield value
    scheme, _, credential = value.partition(" ")
    if credential and scheme.isalpha():  # "Bearer sk-...", "Basic dXNl...", "Token ..."
        yield credential.strip()
    for form in (value, credential.strip()):
        if form:
            yield quote(form, safe="")
            yield quote_plus(form)
            yield json.dumps(form)[1:-1]


def secret_values(api_key: str | None, *headers: Mapping[str, str] | None) -> tuple[str, ...]:
    """The secrets of a request: its API key and the values of its secret-looking headers, in
    every form `redact` looks for, longest first.

    Args:
        api_key: the key the request is sent with.
        headers: header mappings (the model's, the request's); non-secret names are skipped.
    """
    raw = [api_key or ""]
    for mapping in headers:
        for name, value in (mapping or {}).items():
            if isinstance(value, str) and is_secret_header(name):
                raw.append(value)
    found: set[str] = set()
    for value in raw:
        found.update(v for v in _variants(value) if len(v) >= MIN_SECRET_LENGTH)
    return tuple(sorted(found, key=lambda v: (-len(v), v)))


def redact(text: str, secrets: tuple[str, ...]) -> str:
    """`text` with every occurrence of each of `secrets` (case-insensitive) replaced by
    `REDACTED`."""
    if not secrets or not text:
        return text
    pattern = re.compile("|".join(re.escape(s) for s in secrets), re.IGNORECASE)
    return pattern.sub(REDACTED, text)
