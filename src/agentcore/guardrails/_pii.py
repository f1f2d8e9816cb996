"""Finding personal data in text: email addresses, payment card numbers, phone numbers.

A convenience against the common slips (a user pasting their card number or address into a
prompt), not a compliance control: it finds the usual written forms, not every one (see
docs/guardrails.md for what it misses).

The text is canonicalised before it is matched, so that what looks the same to a reader matches
the same: each character goes through NFKC (a fullwidth at sign and digits become ASCII), format
characters (zero-width spaces and joiners, soft hyphens, bidi marks) are dropped, every Unicode
space is a space and every dash a hyphen, and every decimal digit (Arabic-Indic, Devanagari, ...)
its ASCII digit. Each match is then mapped back onto the original text, whose other characters
are left exactly as they were.

A digit run is a card number when 13-19 digits pass the Luhn checksum *and* start as a card
network's numbers do (Visa 4, Mastercard 51-55 and 2221-2720, American Express 34/37, Discover,
Diners, JCB, UnionPay, Maestro), and it does not follow a word naming another kind of number
(`order`, `invoice`, `tracking`, `ref`, ...): an order number that happens to pass the checksum
is left alone.
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from collections.abc import Collection

__all__ = ["PII_KINDS", "luhn_valid", "redact_pii"]

PII_KINDS = ("email", "card", "phone")
"""What `redact_pii` finds: email addresses, payment card numbers (13-19 digits passing the Luhn
checksum with a card network's prefix), phone numbers (a country code, an area code in
parentheses or not, then groups of 3-4 digits; or one run of 10-15 digits). Dates, times,
version numbers and numbers labelled as orders, invoices or references are left alone."""

_SEP = r"[ ._/-]{0,3}"  # between digit groups: spaces, dots, dashes, slashes, underscores
# Every pattern starts only where a run of its characters starts (a lookbehind) and has bounded
# repeats, so that redacting is linear in the text, whatever the text (no quadratic backtracking).
_EMAIL = re.compile(
    r"(?<![A-Za-z0-9._%+-])[A-Za-z0-9._%+-]{1,64} {0,2}@ {0,2}(?:[A-Za-z0-9-]{1,63}\.){1,8}"
    r"[A-Za-z]{2,24}(?![A-Za-z0-9-])"
)
_CARD = re.compile(rf"(?<![\d._/-])\d(?:{_SEP}\d){{12,18}}(?![\d])")
_PHONE = re.compile(
    r"(?<![\w+])(?:"
    r"(?:\+\d{1,3}[ ._/-]{0,3})?(?:\(\d{1,4}\)[ ._/-]{0,3}|\d{2,4}[ ._/-]{1,3})"
    r"\d{3,4}[ ._/-]{0,3}\d{3,4}"  # grouped
    r"|\+?\d{10,15}"  # one run of digits
    r")(?!\w)"
)
_NOT_A_CARD = re.compile(
    r"(?:order|invoice|tracking|shipment|parcel|ref|reference|confirmation|booking|ticket|"
    r"receipt|transaction|serial|isbn|imei)\b\W{0,3}(?:no|nr|num|number|id|code)?\W{0,3}$",
    re.IGNORECASE,
)
_CONTEXT = 32  # characters before a number searched for a word naming what it is
# A card network's numbers: (prefix range, lengths)
_NETWORKS: tuple[tuple[int, int, range], ...] = (
    (4, 4, range(13, 20)),  # Visa
    (51, 55, range(16, 17)),  # Mastercard
    (2221, 2720, range(16, 17)),  # Mastercard
    (34, 34, range(15, 16)),  # American Express
    (37, 37, range(15, 16)),  # American Express
    (6011, 6011, range(16, 20)),  # Discover
    (644, 659, range(16, 20)),  # Discover
    (300, 305, range(14, 20)),  # Diners Club
    (36, 36, range(14, 20)),  # Diners Club
    (38, 39, range(14, 20)),  # Diners Club
    (3528, 3589, range(16, 20)),  # JCB
    (62, 62, range(16, 20)),  # UnionPay
    (50, 50, range(13, 20)),  # Maestro
    (56, 69, range(13, 20)),  # Maestro
)


def luhn_valid(digits: str) -> bool:
    """Whether a string of digits passes the Luhn checksum (as payment card numbers do)."""
    total = 0
    for index, char in enumerate(reversed(digits)):
        value = ord(char) - 48
        if index % 2:
            value *= 2
            if value > 9:
                value -= 9
        total += value
    return total % 10 == 0


def _card_network(digits: str) -> bool:
    for low, high, lengths in _NETWORKS:
        prefix = int(digits[: len(str(low))])
        if low <= prefix <= high and len(digits) in lengths:
            return True
    return False


def _canonical_char(char: str) -> str:
    if unicodedata.category(char) == "Cf":
        return ""  # zero-width spaces and joiners, soft hyphens, bidi marks
    out = []
    for c in unicodedata.normalize("NFKC", char):
        category = unicodedata.category(c)
        if category == "Zs" or c == "\t":
            out.append(" ")
        elif category == "Pd" or c == "\u2212":  # every dash, and the minus sign
            out.append("-")
        elif category == "Nd":
            out.append(str(unicodedata.decimal(c)))
        else:
            out.append(c)
    return "".join(out)


def _canonical(text: str) -> tuple[str, list[int] | None]:
    """The text to match, and for each of its characters the index of the original character
    it came from (None: the same text, ASCII)."""
    if text.isascii():
        return text, None
    parts: list[str] = []
    origin: list[int] = []
    for index, char in enumerate(text):
        if char.isascii():
            parts.append(char)
            origin.append(index)
            continue
        canonical = _canonical_char(char)
        parts.append(canonical)
        origin.extend([index] * len(canonical))
    return "".join(parts), origin


def _spans(canon: str, kinds: Collection[str]) -> list[tuple[int, int, str]]:
    """The (start, end, kind) of each finding in the canonical text, not overlapping."""
    found: list[tuple[int, int, str]] = []
    taken: list[tuple[int, int]] = []  # spans found or left alone on purpose: sorted, disjoint

    def free(start: int, end: int) -> bool:
        at = bisect.bisect_left(taken, (start, end))
        before_free = at == 0 or taken[at - 1][1] <= start
        return before_free and (at == len(taken) or taken[at][0] >= end)

    def take(span: tuple[int, int]) -> None:
        bisect.insort(taken, span)

    if "email" in kinds:
        for m in _EMAIL.finditer(canon):
            found.append((m.start(), m.end(), "email"))
            take(m.span())
    for m in _CARD.finditer(canon):
        if not free(*m.span()):
            continue
        if _NOT_A_CARD.search(canon[max(0, m.start() - _CONTEXT) : m.start()]):
            take(m.span())  # an order number: neither a card nor a phone number
            continue
        digits = re.sub(r"\D", "", m.group())
        if "card" in kinds and luhn_valid(digits) and _card_network(digits):
            found.append((m.start(), m.end(), "card"))
            take(m.span())
    if "phone" in kinds:
        for m in _PHONE.finditer(canon):
            if free(*m.span()):
                found.append((m.start(), m.end(), "phone"))
    return sorted(found)


def redact_pii(text: str, kinds: Collection[str] = PII_KINDS, *, mask: str = "[{kind}]") -> str:
    """`text` with the personal data of `kinds` replaced by `mask` (`{kind}` is the kind's name:
    `[email]`, `[card]`, `[phone]`); every other character is left as it was. A run of digits is
    a card number only when its checksum holds and it starts as a card network's numbers do;
    one that is not is still a phone number if it looks like one (unless it follows a word such
    as `order` or `invoice`). See the module's description for what is canonicalised first."""
    canon, origin = _canonical(text)
    spans = _spans(canon, kinds)
    if not spans:
        return text
    out: list[str] = []
    position = 0
    for start, end, kind in spans:
        if origin is not None:
            start, end = origin[start], origin[end - 1] + 1
        if start < position:
            continue
        out.append(text[position:start])
        out.append(mask.format(kind=kind))
        position = end
    out.append(text[position:])
    return "".join(out)
