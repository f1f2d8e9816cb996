"""`agentcore eval --batch` as a process, against the local OpenAI Batch API server
(`tests/llm/batch_server.py`) through the real openai SDK: every case's request in one batch,
each the request the agent loop would send, answers matched by id (the results file is written
in another order), a tool call reported unrun, an expired request a failure with its reason, the
batch cost against streaming; a model with no batch API refused before anything is sent."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from llm.batch_server import OpenAIBatchServer

ROOT = Path(__file__).resolve().parents[2]

AGENT = '''
import os
from agentcore import Agent, tool
from agentcore.llm import Model, ModelCost

@tool
def lookup(city: str) -> str:
    """Look a city up."""
    raise AssertionError("a batch case never runs a tool")

def make_agent(inputs):
    model = Model(
        id="gpt-test",
        api=os.environ.get("BATCH_API", "openai-completions"),
        provider="openai",
        base_url=os.environ["BATCH_URL"],
        cost=ModelCost(input=2.0, output=8.0),
    )
    return Agent(
        initial_state={"model": model, "system_prompt": "Answer in one word.",
                       "tools": [lookup]},
        temperature=0.0,
        max_tokens=64,
        api_key="sk-test",
        output_type=int if os.environ.get("BATCH_TYPED") else None,
    )
'''

DATASET = """
name: capitals
cases:
  - name: france
    inputs: Capital of France?
    expected_output: Paris
  - name: italy
    inputs: Capital of Italy?
    expected_output: Rome
  - name: peru
    inputs: Capital of Peru?
    expected_output: Lima
  - name: spain
    inputs: Capital of Spain?
    expected_output: Madrid
evaluators:
  - EqualsExpected
"""


@pytest.fixture
def server() -> Iterator[OpenAIBatchServer]:
    with OpenAIBatchServer() as s:
        yield s


def _start(
    tmp_path: Path,
    server: OpenAIBatchServer,
    *args: str,
    api: str = "openai-completions",
    typed: bool = False,
) -> subprocess.Popen[str]:
    (tmp_path / "batch_agent.py").write_text(AGENT)
    (tmp_path / "capitals.yaml").write_text(DATASET)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENTCORE_", "OPENAI_"))}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), env.get("PYTHONPATH", "")])
    env["COLUMNS"] = "160"
    env["BATCH_URL"] = server.base_url
    env["BATCH_API"] = api
    if typed:
        env["BATCH_TYPED"] = "1"
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "agentcore.cli",
            "eval",
            str(tmp_path / "capitals.yaml"),
            "--agent",
            str(tmp_path / "batch_agent.py") + ":make_agent",
            "--batch",
            "--poll-interval",
            "0.05",
            "--json",
            str(tmp_path / "report.json"),
            *args,
        ],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _submitted(server: OpenAIBatchServer, process: subprocess.Popen[str]) -> str:
    """The id of the batch the command created (waiting for it, or for the command's end)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if server.batches:
            return next(iter(server.batches))
        if process.poll() is not None:
            out, err = process.communicate()
            raise AssertionError(f"the command ended without a batch: {out}\n{err}")
        time.sleep(0.02)
    process.kill()
    raise AssertionError("no batch was submitted")


def _answer(custom_id: str, message: dict[str, Any], finish: str = "stop") -> dict[str, Any]:
    return {
        "id": f"req_{custom_id}",
        "custom_id": custom_id,
        "response": {
            "status_code": 200,
            "request_id": "r",
            "body": {
                "id": "chatcmpl-1",
                "object": "chat.completion",
                "model": "gpt-test",
                "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                "usage": {"prompt_tokens": 1000, "completion_tokens": 500, "total_tokens": 1500},
            },
        },
        "error": None,
    }


def test_cases_answered_from_one_batch_with_its_cost_against_streaming(
    tmp_path: Path, server: OpenAIBatchServer
) -> None:
    process = _start(tmp_path, server)
    batch_id = _submitted(server, process)
    lines = server.input_lines(batch_id)
    # one line per case, each the loop's first request: system prompt, the case's prompt, the
    # agent's tools and options, the batch endpoint with no streaming fields
    assert [line["custom_id"] for line in lines] == ["c1", "c2", "c3", "c4"]
    first = lines[0]
    assert first["method"] == "POST" and first["url"] == "/v1/chat/completions"
    body = first["body"]
    assert body["model"] == "gpt-test"
    assert body["messages"] == [
        {"role": "system", "content": "Answer in one word."},
        {"role": "user", "content": "Capital of France?"},
    ]
    assert body["temperature"] == 0.0 and body["max_tokens"] == 64
    assert [t["function"]["name"] for t in body["tools"]] == ["lookup"]
    assert "stream" not in body and "stream_options" not in body
    assert lines[2]["body"]["messages"][1] == {"role": "user", "content": "Capital of Peru?"}
    # results in another order than the requests: matched by id
    server.finish(
        batch_id,
        "expired",
        [
            _answer(
                "c3",
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "call_1",
                            "type": "function",
                            "function": {"name": "lookup", "arguments": '{"city": "Lima"}'},
                        }
                    ],
                },
                "tool_calls",
            ),
            _answer("c2", {"role": "assistant", "content": "Milan"}),
            _answer("c1", {"role": "assistant", "content": "Paris"}),
        ],
        [
            {
                "id": "x",
                "custom_id": "c4",
                "response": None,
                "error": {
                    "code": "batch_expired",
                    "message": "This request could not be executed before the completion "
                    "window expired.",
                },
            }
        ],
    )
    out, err = process.communicate(timeout=120)
    assert process.returncode == 0, err
    assert f"batch {batch_id}: 4 requests submitted to openai/gpt-test" in err
    report = json.loads((tmp_path / "report.json").read_text())
    cases = {c["name"]: c for c in report["cases"]}
    assert cases["france"]["output"] == "Paris"
    assert cases["france"]["assertions"]["EqualsExpected"]["value"] is True
    assert cases["italy"]["output"] == "Milan"
    assert cases["italy"]["assertions"]["EqualsExpected"]["value"] is False
    assert cases["france"]["attributes"]["batch_request"] == "c1"
    assert cases["france"]["attributes"]["answered"] is True
    # the tool call is reported, not run (the tool would raise)
    peru = cases["peru"]["attributes"]
    assert peru["unrun_tool_calls"] == [{"name": "lookup", "arguments": {"city": "Lima"}}]
    assert peru["answered"] is False and peru["stop_reason"] == "tool_use"
    assert cases["france"]["metrics"]["input_tokens"] == 1000
    [failure] = report["failures"]
    assert failure["name"] == "spain"
    assert "BatchRequestFailed" in failure["error_message"]
    assert "batch_expired" in failure["error_message"]
    # three answers of 1000 + 500 tokens: $0.006 each streaming at $2/$8, half in the batch
    metadata = report["experiment_metadata"]["batch"]
    assert metadata["requests"] == 4 and metadata["failed"] == 1
    assert metadata["cost"] == pytest.approx(0.009)
    assert metadata["streaming_cost"] == pytest.approx(0.018)
    assert (
        f"batch {batch_id} (openai/gpt-test, expired): 4 requests, 1 failed; cost $0.009000 "
        "at batch prices against $0.018000 streaming the same usage (saved $0.009000)"
    ) in out
    assert cases["france"]["metrics"]["cost"] == pytest.approx(0.003)


def test_repeats_are_requests_of_their_own(tmp_path: Path, server: OpenAIBatchServer) -> None:
    process = _start(tmp_path, server, "--repeat", "2")
    batch_id = _submitted(server, process)
    ids = [line["custom_id"] for line in server.input_lines(batch_id)]
    assert ids == ["c1-1", "c1-2", "c2-1", "c2-2", "c3-1", "c3-2", "c4-1", "c4-2"]
    server.finish(
        batch_id,
        "completed",
        [_answer(i, {"role": "assistant", "content": "Paris" * (i == "c1-2")}) for i in ids],
    )
    _, err = process.communicate(timeout=120)
    assert process.returncode == 0, err
    report = json.loads((tmp_path / "report.json").read_text())
    france = [c for c in report["cases"] if c["source_case_name"] == "france"]
    assert sorted(c["attributes"]["batch_request"] for c in france) == ["c1-1", "c1-2"]
    for case in france:
        passed = case["assertions"]["EqualsExpected"]["value"]
        assert passed is (case["attributes"]["batch_request"] == "c1-2")


def test_a_model_without_a_batch_api_is_refused_before_anything_is_sent(
    tmp_path: Path, server: OpenAIBatchServer
) -> None:
    process = _start(tmp_path, server, api="openai-responses")
    _, err = process.communicate(timeout=120)
    assert process.returncode == 2
    assert "model openai/gpt-test (api 'openai-responses') has no batch API" in err
    assert server.paths == []
    assert not (tmp_path / "report.json").exists()


def test_a_batch_that_does_not_end_in_time_is_cancelled(
    tmp_path: Path, server: OpenAIBatchServer
) -> None:
    process = _start(tmp_path, server, "--batch-timeout", "0.5")
    batch_id = _submitted(server, process)
    _, err = process.communicate(timeout=120)
    assert process.returncode == 1
    assert f"batch {batch_id} had not ended after 0.5 s" in err
    assert "the batch was cancelled" in err
    assert f"POST /v1/batches/{batch_id}/cancel" in server.paths


def test_a_typed_agent_is_refused_before_anything_is_sent(
    tmp_path: Path, server: OpenAIBatchServer
) -> None:
    process = _start(tmp_path, server, typed=True)
    _, err = process.communicate(timeout=120)
    assert process.returncode == 2
    assert "--batch: the agent has an output_type" in err
    assert server.paths == []
