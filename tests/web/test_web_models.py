"""`GET /api/models`: the list is built without importing any provider SDK (the first request
after `serve` used to take two seconds, most of it `import anthropic`), it is warmed at startup,
and Bedrock models are usable only where AWS credentials can be found."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")
pytest.importorskip("ag_ui")

_SCRIPT = r"""
import json, sys
from starlette.testclient import TestClient
from agentcore.llm import get_model
from agentcore.sessions import JsonlSessionStore
from agentcore.web import create_app

app = create_app(JsonlSessionStore(sys.argv[1]), model=get_model("local", "qwen2.5-coder-1.5b"))
with TestClient(app, base_url="http://127.0.0.1") as client:
    models = client.get("/api/models").json()
sdks = ["openai", "anthropic", "google.genai", "boto3", "botocore"]
print(json.dumps({"imported": [m for m in sdks if m in sys.modules], "models": models}))
"""

_AWS = ("AWS_", "GEMINI_API_KEY", "GOOGLE_API_KEY", "ANTHROPIC_API_KEY")


def _models(tmp_path: Path, **env: str) -> dict[str, object]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(_AWS)}
    clean.update(HOME=str(tmp_path), PYTHONPATH=os.pathsep.join(sys.path), **env)
    out = subprocess.run(
        [sys.executable, "-c", _SCRIPT, str(tmp_path / "sessions")],
        env=clean,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    result: dict[str, object] = json.loads(out.stdout.splitlines()[-1])
    return result


def _bedrock(models: object) -> dict[str, object]:
    assert isinstance(models, list)
    return next(m for m in models if m["provider"] == "amazon-bedrock")


def test_the_list_imports_no_provider_sdk_and_bedrock_needs_credentials(tmp_path: Path) -> None:
    pytest.importorskip("boto3")  # with boto3 installed, only credentials decide
    result = _models(tmp_path)
    assert result["imported"] == []
    bedrock = _bedrock(result["models"])
    assert bedrock["usable"] is False
    assert "AWS_ACCESS_KEY_ID" in str(bedrock["reason"])


def test_bedrock_is_usable_with_an_access_key_or_a_credentials_file(tmp_path: Path) -> None:
    pytest.importorskip("boto3")
    assert _bedrock(_models(tmp_path, AWS_ACCESS_KEY_ID="AKIAEXAMPLE")["models"])["usable"]
    (tmp_path / ".aws").mkdir()
    (tmp_path / ".aws" / "credentials").write_text("[default]\naws_access_key_id = AKIAX\n")
    assert _bedrock(_models(tmp_path)["models"])["usable"]
