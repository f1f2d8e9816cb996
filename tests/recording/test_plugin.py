"""The pytest plugin in a project of its own, as a separate pytest process: a marked test replays
its recording from the default place, a drifted one fails at teardown naming the difference, and
a test without a recording is told how to make one."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import anyio

from agentcore.llm import complete
from agentcore.llm.types import Context, StreamOptions
from agentcore.messages import UserMessage
from agentcore.testing import recorded
from llm.fault_server import API_KEY, WIRES, FaultServer
from recording.conftest import UNREACHABLE

USER_TESTS = f"""
import pytest

from agentcore.llm import complete
from agentcore.llm.model import Model
from agentcore.llm.types import Context, StreamOptions
from agentcore.messages import UserMessage

pytestmark = pytest.mark.anyio
MODEL = Model(id="gpt-fault", api="openai-completions", provider="openai",
              base_url="{UNREACHABLE}/v1", context_window=8000, max_tokens=100)


@pytest.fixture
def anyio_backend():
    return "asyncio"


async def ask(text):
    return await complete(MODEL, Context(messages=[UserMessage(content=text)]), StreamOptions())


@pytest.mark.recorded
async def test_ok():
    assert (await ask("hello")).text == "Hi there."


@pytest.mark.recorded("recordings/test_user/test_ok.json")
async def test_drifted():
    await ask("goodbye")


async def test_fixture_without_a_recording(recorded_traffic):
    await ask("hello")
"""


def make_recording(path: Path) -> None:
    wire = WIRES["openai-completions"]

    async def record() -> None:
        with FaultServer() as server:
            server.enqueue(wire.sse(wire.answer(["Hi ", "there."]).events))
            context = Context(messages=[UserMessage(content="hello")])
            with recorded(path, mode="rerecord"):
                message = await complete(
                    wire.model(server), context, StreamOptions(api_key=API_KEY, max_tokens=100)
                )
            assert message.text == "Hi there."

    anyio.run(record)


def test_the_plugin_in_a_project_of_its_own(tmp_path: Path) -> None:
    (tmp_path / "test_user.py").write_text(textwrap.dedent(USER_TESTS))
    make_recording(tmp_path / "recordings" / "test_user" / "test_ok.json")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "agentcore.testing._pytest_plugin",
            "-p",
            "no:cacheprovider",
            "--rootdir",
            str(tmp_path),
            "-rA",
            "test_user.py",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    out = proc.stdout
    assert proc.returncode == 1, out + proc.stderr
    assert "PASSED test_user.py::test_ok" in out
    assert "ERROR test_user.py::test_drifted" in out and "RecordingDriftError: the model" in out
    assert 'messages[0].content: recorded "hello", sent "goodbye"' in out
    assert "ERROR test_user.py::test_fixture_without_a_recording" in out
    assert "test_fixture_without_a_recording.json: record it first" in out
    assert "2 passed, 2 errors" in out
