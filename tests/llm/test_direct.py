"""The Chat Completions adapter sends to a compatible server without the `openai` SDK.

`import openai` is most of `agentcore run`'s start-up CPU, so a request to a compatible server
(a `base_url` that is not OpenAI's own service) is sent with httpx (`llm/_direct.py`); OpenAI's
own service and Azure keep the SDK. The headers, error texts and retries of that path are the
ones `test_openai_completions`, `test_faults` and `test_edges` check against local servers.
"""

from __future__ import annotations

import json
import subprocess
import sys

from agentcore.llm._direct import uses_direct
from agentcore.llm.model import Model

# a fresh interpreter sends one request; its first socket connect reports the modules loaded
_CHILD = """
import json, socket, sys
def first_connect(self, address):
    print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] == "openai")))
    sys.stdout.flush()
    import os
    os._exit(0)
socket.socket.connect = first_connect
import anyio
from agentcore.llm import stream_simple
from agentcore.llm.model import Model
from agentcore.llm.types import Context, SimpleStreamOptions
from agentcore.messages import UserMessage
model = Model(id="m", provider="local", api="openai-completions", base_url=sys.argv[1])
async def main():
    answer = stream_simple(model, Context(messages=[UserMessage(content="hi")]),
                           SimpleStreamOptions(api_key="k"))
    async for _ in answer:
        pass
anyio.run(main)
print("no connect")
"""


def _openai_modules_at_first_connect(base_url: str) -> list[str]:
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, base_url],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert out.stdout.strip() != "no connect", out.stderr
    return list(json.loads(out.stdout.strip().splitlines()[-1]))


def test_a_compatible_server_is_sent_to_without_importing_the_sdk() -> None:
    assert _openai_modules_at_first_connect("http://127.0.0.1:9/v1") == []


def test_openais_own_service_and_azure_keep_the_sdk() -> None:
    def model(base_url: str) -> Model:
        return Model(id="m", provider="openai", api="openai-completions", base_url=base_url)

    assert uses_direct(model("http://127.0.0.1:8080/v1"), azure=False)
    assert uses_direct(model("https://openrouter.ai/api/v1"), azure=False)
    assert not uses_direct(model("https://api.openai.com/v1"), azure=False)
    assert not uses_direct(model(""), azure=False)
    assert not uses_direct(model("https://x.openai.azure.com"), azure=True)
