"""Who may talk to a served A2A agent, over real HTTP on 127.0.0.1: the bearer token (also for
the agent card), Host and Origin checks, JSON-only bodies, and the body-size cap; and the SDK's
client with the token passes."""

from __future__ import annotations

import httpx
import pytest
from a2a_support import TOKEN, answer_text, collect, new_agent, sdk_client, served, user_message

from agentcore.testing import FauxProvider, faux_text

pytestmark = pytest.mark.anyio

SEND = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "SendMessage",
    "params": {"message": {"role": "ROLE_USER", "messageId": "m1", "parts": [{"text": "hi"}]}},
}
JSON = {"Content-Type": "application/json", "A2A-Version": "1.0"}


async def test_with_a_token_every_request_needs_it() -> None:
    faux = FauxProvider([faux_text("Hello.")])
    async with served(new_agent(faux.model, []), token=TOKEN) as url:
        async with httpx.AsyncClient(timeout=10) as http:
            card = await http.get(url + "/.well-known/agent-card.json")
            assert card.status_code == 401
            assert card.headers["www-authenticate"].startswith("Bearer")
            wrong = await http.post(
                url + "/", json=SEND, headers={**JSON, "Authorization": "Bearer nope-nope-nope"}
            )
            assert wrong.status_code == 401 and "the one sent is wrong" in wrong.text
            card = await http.get(
                url + "/.well-known/agent-card.json",
                headers={"Authorization": f"Bearer {TOKEN}"},
            )
            assert card.status_code == 200
            assert "bearer" in card.json()["securitySchemes"]
        async with sdk_client(url, headers={"Authorization": f"Bearer {TOKEN}"}) as client:
            events = await collect(client.send_message(user_message("hi")))
    assert answer_text(events) == "Hello."


async def test_host_origin_content_type_and_body_size_are_checked() -> None:
    faux = FauxProvider([faux_text("Hello.")])
    async with (
        served(new_agent(faux.model, []), max_body_bytes=4096) as url,
        httpx.AsyncClient(timeout=10) as http,
    ):
        rebound = await http.post(url + "/", json=SEND, headers={**JSON, "Host": "evil.example"})
        assert rebound.status_code == 421
        foreign = await http.post(
            url + "/", json=SEND, headers={**JSON, "Origin": "https://evil.example"}
        )
        assert foreign.status_code == 403
        form = await http.post(url + "/", content=b"{}", headers={"Content-Type": "text/plain"})
        assert form.status_code == 415
        big = await http.post(url + "/", content=b"x" * 5000, headers=JSON)
        assert big.status_code == 413 and "4096 bytes" in big.text

        async def chunks():  # no Content-Length: the cap holds while the body is read
            for _ in range(10):
                yield b" " * 1000

        streamed = await http.post(url + "/", content=chunks(), headers=JSON)
        assert streamed.status_code == 413
        # a same-origin request with a loopback Host passes
        fine = await http.post(url + "/", json=SEND, headers={**JSON, "Origin": url})
        assert fine.status_code == 200, fine.text


async def test_a2a_tool_sends_the_callers_token_and_never_shows_it() -> None:
    from a2a_support import served as serve_it

    from agentcore import AbortController
    from agentcore.a2a import a2a_tool

    faux = FauxProvider([faux_text("Behind a token.")])
    wrong = "wrong-token-0123456789"
    async with serve_it(new_agent(faux.model, []), token=TOKEN) as url:
        signal = AbortController().signal
        denied = await a2a_tool(
            url, name="guarded", description="x", headers={"Authorization": f"Bearer {wrong}"}
        ).execute("c1", {"task": "hi"}, signal, lambda _u: None)
        allowed = await a2a_tool(
            url, name="guarded", description="x", headers={"Authorization": f"Bearer {TOKEN}"}
        ).execute("c2", {"task": "hi"}, signal, lambda _u: None)
    assert denied.is_error
    text = denied.content[0].text  # type: ignore[union-attr]
    assert (
        text.startswith(f"The A2A agent 'guarded' at {url} could not be reached") and "401" in text
    )
    assert wrong not in repr(denied)
    assert not allowed.is_error and allowed.content[0].text == "Behind a token."  # type: ignore[union-attr]
    assert TOKEN not in repr(allowed)
