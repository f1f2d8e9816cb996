"""Native structured output (`StreamOptions.output_schema`) on the wire, through the real SDKs
against the replay server: Chat Completions' `response_format`, Responses' `text.format`, Gemini's
`responseJsonSchema`; and a typed run through each adapter, its JSON answer validated.
"""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from agentcore import AgentContext, AgentLoopConfig, OutputSpec, UserMessage, run_agent_loop
from agentcore.llm import Context, Model, OpenAICompletionsCompat, OutputSchema, StreamOptions
from agentcore.llm.providers import google, openai_completions, openai_responses

from .helpers import collect
from .replay_server import ReplayServer, ScriptedResponse, load_fixture

pytestmark = pytest.mark.anyio

KEY = "test-key"
SCHEMA = OutputSchema(
    name="city",
    schema={
        "type": "object",
        "properties": {"name": {"type": "string"}, "population": {"type": "integer"}},
        "required": ["name", "population"],
        "additionalProperties": False,
    },
    description="A city and how many live there.",
)


class City(BaseModel):
    name: str
    population: int


def completions(server: ReplayServer) -> Model:
    return Model(
        id="gpt-test",
        api="openai-completions",
        provider="openai",
        base_url=server.base_url(),
        compat=OpenAICompletionsCompat(),
        structured_output=True,
    )


def responses(server: ReplayServer) -> Model:
    return Model(
        id="gpt-5-mini",
        api="openai-responses",
        provider="openai",
        base_url=server.base_url(),
        structured_output=True,
    )


def gemini(server: ReplayServer) -> Model:
    return Model(
        id="gemini-2.5-flash",
        api="google-generative-ai",
        provider="google",
        base_url=server.base_url("/v1beta"),
        structured_output=True,
    )


def answer(api: str, name: str = "json_answer") -> ScriptedResponse:
    return ScriptedResponse.sse(load_fixture(api, name))


def ask() -> Context:
    return Context(messages=[UserMessage(content="Which city?")])


async def test_chat_completions_sends_response_format(replay_server: ReplayServer) -> None:
    replay_server.enqueue(answer("openai-completions"), answer("openai-completions", "text"))
    model = completions(replay_server)
    _, message = await collect(
        openai_completions.stream(model, ask(), StreamOptions(api_key=KEY, output_schema=SCHEMA))
    )
    assert message.text == '{"name":"Lyon","population":522000}'
    body = replay_server.requests[0].json
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {
            "name": "city",
            "schema": dict(SCHEMA.schema),
            "strict": True,
            "description": "A city and how many live there.",
        },
    }
    await collect(openai_completions.stream(model, ask(), StreamOptions(api_key=KEY)))
    assert "response_format" not in replay_server.requests[1].json


async def test_responses_sends_text_format(replay_server: ReplayServer) -> None:
    replay_server.enqueue(answer("openai-responses"), answer("openai-responses", "text"))
    model = responses(replay_server)
    loose = OutputSchema(name="city", schema=SCHEMA.schema, strict=False)
    _, message = await collect(
        openai_responses.stream(model, ask(), StreamOptions(api_key=KEY, output_schema=loose))
    )
    assert message.text == '{"name":"Lyon","population":522000}'
    (request,) = replay_server.requests
    assert request.path == "/v1/responses"
    assert request.json["text"] == {
        "format": {
            "type": "json_schema",
            "name": "city",
            "schema": dict(SCHEMA.schema),
            "strict": False,
        }
    }
    await collect(openai_responses.stream(model, ask(), StreamOptions(api_key=KEY)))
    assert "text" not in replay_server.requests[1].json


async def test_gemini_sends_response_json_schema(replay_server: ReplayServer) -> None:
    replay_server.enqueue(answer("google-generative-ai"), answer("google-generative-ai", "text"))
    model = gemini(replay_server)
    _, message = await collect(
        google.stream(model, ask(), StreamOptions(api_key=KEY, output_schema=SCHEMA))
    )
    assert message.text == '{"name":"Lyon","population":522000}'
    request = replay_server.requests[0]
    assert ":streamGenerateContent" in request.path
    config = request.json["generationConfig"]
    assert config["responseMimeType"] == "application/json"
    assert config["responseJsonSchema"] == dict(SCHEMA.schema)
    assert "responseSchema" not in config
    await collect(google.stream(model, ask(), StreamOptions(api_key=KEY)))
    config = replay_server.requests[1].json.get("generationConfig", {})
    assert "responseMimeType" not in config and "responseJsonSchema" not in config


@pytest.mark.parametrize(
    ("make_model", "api"),
    [
        (completions, "openai-completions"),
        (responses, "openai-responses"),
        (gemini, "google-generative-ai"),
    ],
)
async def test_a_typed_run_through_each_adapter(
    replay_server: ReplayServer, make_model: Any, api: str
) -> None:
    replay_server.enqueue(answer(api))
    events: list[Any] = []
    config = AgentLoopConfig(model=make_model(replay_server), api_key=KEY, output_type=City)
    await run_agent_loop(
        [UserMessage(content="Which city?")], AgentContext(), config, events.append
    )
    end = events[-1]
    assert end.type == "agent_end" and end.limit is None
    assert end.output == City(name="Lyon", population=522000)
    body = replay_server.requests[0].json
    sent = (
        body.get("response_format", {}).get("json_schema", {}).get("schema")
        or body.get("text", {}).get("format", {}).get("schema")
        or body.get("generationConfig", {}).get("responseJsonSchema")
    )
    assert sent == OutputSpec(City).output_schema().schema
    assert sent["additionalProperties"] is False  # closed, so OpenAI's strict mode takes it
