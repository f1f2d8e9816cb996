"""Every recorded file in the test suite (and the examples') is reviewed for secrets: API keys,
bearer tokens, credential headers, AWS access key ids, signatures and session tokens. A recording
is any JSON file under `tests/` or `examples/` with a `"version"` and a list of `"exchanges"`."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from llm.fault_server import API_KEY
from recording.conftest import ACCESS_KEY, SECRET_KEY, SESSION_TOKEN

TESTS = Path(__file__).resolve().parents[1]
ROOT = TESTS.parent

_PATTERNS = {
    "an OpenAI-style key": re.compile(r"\bsk-[A-Za-z0-9_\-]{12,}"),
    "a Google API key": re.compile(r"\bAIza[0-9A-Za-z_\-]{30,}"),
    "an AWS access key id": re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
    "a bearer token": re.compile(r"\bBearer\s+[A-Za-z0-9._~+/=\-]{8,}", re.IGNORECASE),
    "an AWS signature": re.compile(r"Signature=[0-9a-f]{16,}|X-Amz-Signature", re.IGNORECASE),
    "an AWS credential scope": re.compile(r"Credential=[A-Z0-9]{16,}", re.IGNORECASE),
    "a test secret": re.compile(r"SECRET"),
}
_SECRET_HEADERS = {
    "authorization",
    "proxy-authorization",
    "x-api-key",
    "api-key",
    "x-goog-api-key",
    "x-amz-security-token",
    "cookie",
}
_KNOWN = (API_KEY, ACCESS_KEY, SECRET_KEY, SESSION_TOKEN)


def recordings() -> list[Path]:
    found = []
    for path in sorted([*TESTS.rglob("*.json"), *(ROOT / "examples").rglob("*.json")]):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (ValueError, UnicodeDecodeError):
            continue
        if isinstance(data, dict) and "version" in data and isinstance(data.get("exchanges"), list):
            found.append(path)
    return found


def secrets_in(path: Path) -> list[str]:
    """What in a recording looks like a secret, each named."""
    text = path.read_text(encoding="utf-8")
    found = [f"the test credential {v[:6]}…" for v in _KNOWN if v in text]
    found += [name for name, pattern in _PATTERNS.items() if pattern.search(text)]
    for index, exchange in enumerate(json.loads(text)["exchanges"], 1):
        headers = exchange.get("request", {}).get("headers", {})
        found += [
            f"exchange {index}: a {name} header"
            for name in headers
            if name.lower() in _SECRET_HEADERS
        ]
        url = str(exchange.get("request", {}).get("url", ""))
        if re.search(r"[?&](?:key|api_key|apikey|access_token|token)=(?!%3Credacted)", url):
            found.append(f"exchange {index}: a key in the URL")
    return found


def test_the_suite_has_recordings_to_review() -> None:
    found = recordings()
    assert len(found) >= 6  # test_marker's (one per adapter) and the docs' example
    assert ROOT / "examples" / "recordings" / "weather.json" in found


@pytest.mark.parametrize("path", recordings(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_recording_holds_a_secret(path: Path) -> None:
    assert secrets_in(path) == [], f"{path} holds secrets"


def test_the_review_finds_planted_secrets(tmp_path: Path) -> None:
    """The scan itself works: each kind of leak is found."""
    google_key = "AIzaSyA-1234567890abcdefghijklmnopqrstu"
    aws_id = "AKIAABCDEFGHIJKLMNOP"
    planted = {
        "exchanges": [
            {
                "request": {
                    "headers": {"Authorization": "Bearer abcdefgh12345678"},
                    "url": f"https://example.com/v1beta/models/x?key={google_key}",
                    "body": {"note": f"{API_KEY} {aws_id} Signature=0123456789abcdef01"},
                },
                "response": {"status": 200},
            }
        ],
        "version": 1,
    }
    path = tmp_path / "leak.json"
    path.write_text(json.dumps(planted))
    found = secrets_in(path)
    for expected in (
        "an OpenAI-style key",
        "a Google API key",
        "an AWS access key id",
        "a bearer token",
        "an AWS signature",
        "exchange 1: a Authorization header",
        "exchange 1: a key in the URL",
    ):
        assert expected in found, found


def test_a_key_in_the_query_string_is_not_written() -> None:
    """Some gateways take the key as `?key=`: the file keeps the parameter, not its value."""
    from agentcore.testing.recording._format import request_record, scrub, secret_values_of

    url = "https://gateway.example/v1beta/models/g:streamGenerateContent?alt=sse&key=AIzaSECRET123"
    headers = [("Content-Type", "application/json"), ("x-goog-api-key", "AIzaSECRET456")]
    record = scrub(request_record("post", url, headers, b"{}"), secret_values_of(headers, url))
    assert record["url"].endswith("?alt=sse&key=<redacted>")
    assert record["headers"] == {"content-type": "application/json"}
    assert "SECRET" not in json.dumps(record)
