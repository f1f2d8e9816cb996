"""A trip as the `agentcore` command shows it: `run --json` (the `agent_end` line) and the
error on stderr, with the built-in guardrails its flags turn on."""

from __future__ import annotations

import io
import json

from agentcore.cli import main
from agentcore.llm import register_model, unregister_model
from agentcore.testing import FauxProvider, faux_text


def test_run_json_shows_a_tripped_guardrail() -> None:
    faux = FauxProvider([faux_text("never")])
    register_model(faux.model)
    try:
        out, err = io.StringIO(), io.StringIO()
        code = main(
            [
                "run",
                "--json",
                "--max-input-chars",
                "5",
                "far too long a prompt",
                "--model",
                f"{faux.provider_id}/faux-1",
            ],
            stdout=out,
            stderr=err,
        )
    finally:
        unregister_model(faux.model.provider, faux.model.id)
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    end = lines[-1]
    assert end["type"] == "agent_end"
    assert end["guardrail"] == {
        "guardrail": "max_input_size",
        "kind": "input",
        "reason": "the input has 21 characters; at most 5 are allowed",
        "failed": False,
    }
    assert code == 1 and faux.call_count == 0
    assert "input guardrail 'max_input_size' blocked the request" in err.getvalue()


def test_run_redact_pii_keeps_data_from_the_model() -> None:
    sent: list[str] = []

    def answer(call):  # type: ignore[no-untyped-def]
        sent.append(call.context.messages[-1].content)
        return faux_text("write to bob@example.com")

    faux = FauxProvider([answer])
    register_model(faux.model)
    try:
        out, err = io.StringIO(), io.StringIO()
        code = main(
            [
                "run",
                "--redact-pii",
                "mail me at me@example.com",
                "--model",
                f"{faux.provider_id}/faux-1",
            ],
            stdout=out,
            stderr=err,
        )
    finally:
        unregister_model(faux.model.provider, faux.model.id)
    assert code == 0, err.getvalue()
    assert sent == ["mail me at [email]"]


def test_run_redact_pii_canonicalises_before_matching() -> None:
    sent: list[str] = []

    def answer(call):  # type: ignore[no-untyped-def]
        sent.append(call.context.messages[-1].content)
        return faux_text("noted")

    faux = FauxProvider([answer])
    register_model(faux.model)
    prompt = (
        "card 4111.1111.1111.1111, again 4111\u00a01111\u00a01111\u00a01111, "
        "mail jo\uff20example.com or ali\u200bce@example.com, order 1234567812345670\u00a0\u2014 ok"
    )
    try:
        out, err = io.StringIO(), io.StringIO()
        code = main(
            ["run", "--redact-pii", prompt, "--model", f"{faux.provider_id}/faux-1"],
            stdout=out,
            stderr=err,
        )
    finally:
        unregister_model(faux.model.provider, faux.model.id)
    assert code == 0, err.getvalue()
    assert sent == [
        "card [card], again [card], mail [email] or [email], order 1234567812345670\u00a0\u2014 ok"
    ]
