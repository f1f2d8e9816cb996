"""The examples run: their tools behave (and refuse what they must), the scripted example gives
its answer, and the quick start finishes against the local model."""

from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from conftest import call_tool, texts

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
PYPROJECT_LINES = len((ROOT / "pyproject.toml").read_text("utf-8").splitlines())


def load_example(name: str) -> ModuleType:
    """Import `examples/<name>.py` as the module `name` (as `python examples/<name>.py` would
    let its siblings import it)."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


quickstart = load_example("quickstart")


def run_example(
    name: str, *args: str, env: dict[str, str] | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("AGENTCORE_")}
    environment.update(env or {})
    return subprocess.run(
        [sys.executable, str(EXAMPLES / f"{name}.py"), *args],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


# --- the quick start's tools (agentcore.builtin_tools, tested in test_builtin_tools.py) --------


@pytest.mark.anyio
async def test_quickstart_tools_work_in_the_repository_only() -> None:
    read_file, list_files, calculator = quickstart.TOOLS
    result = await call_tool(read_file, {"path": "pyproject.toml", "max_lines": 3})
    assert not result.is_error
    lines = texts(result).splitlines()
    assert lines[0] == f"pyproject.toml has {PYPROJECT_LINES} lines (showing the first 3):"
    assert lines[1:] == (ROOT / "pyproject.toml").read_text("utf-8").splitlines()[:3]
    for path in ["../../etc/passwd", "/etc/passwd", "examples/../../x"]:
        result = await call_tool(read_file, {"path": path})
        assert result.is_error and "outside the working directory" in texts(result)
    result = await call_tool(list_files, {})
    names = texts(result).splitlines()
    assert "pyproject.toml" in names and "examples/" in names
    assert not any(name.startswith(".") for name in names)
    result = await call_tool(list_files, {"path": ".."})
    assert result.is_error and "outside the working directory" in texts(result)
    result = await call_tool(calculator, {"expression": "72 * 7"})
    assert not result.is_error and texts(result) == "72 * 7 = 504"


# --- choosing the model ---------------------------------------------------------------------------


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[pytest.MonkeyPatch]:
    for name in ("AGENTCORE_MODEL", "AGENTCORE_BASE_URL", "AGENTCORE_LOCAL_PORT"):
        monkeypatch.delenv(name, raising=False)
    yield monkeypatch


def test_choose_model_defaults_to_the_local_model(clean_env: pytest.MonkeyPatch) -> None:
    model = quickstart.choose_model()
    assert (model.provider, model.id) == ("local", "qwen2.5-coder-1.5b")
    assert model.base_url == "http://127.0.0.1:18080/v1"
    clean_env.setenv("AGENTCORE_LOCAL_PORT", "18123")
    assert quickstart.choose_model().base_url == "http://127.0.0.1:18123/v1"


def test_choose_model_from_the_environment(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv("AGENTCORE_MODEL", "anthropic/claude-haiku-4-5")
    model = quickstart.choose_model()
    assert (model.provider, model.id, model.api) == (
        "anthropic",
        "claude-haiku-4-5",
        "anthropic-messages",
    )
    clean_env.setenv("AGENTCORE_MODEL", "openrouter/anthropic/claude-sonnet-4.5")
    model = quickstart.choose_model()  # ids may contain '/': only the first one splits
    assert (model.provider, model.id) == ("openrouter", "anthropic/claude-sonnet-4.5")
    clean_env.setenv("AGENTCORE_MODEL", "anthropic/no-such-model")
    with pytest.raises(SystemExit, match="unknown model 'no-such-model'"):
        quickstart.choose_model()
    clean_env.setenv("AGENTCORE_MODEL", "ollama/llama3.2")
    clean_env.setenv("AGENTCORE_BASE_URL", "http://localhost:11434/v1")
    model = quickstart.choose_model()
    assert (model.provider, model.id, model.api, model.base_url) == (
        "ollama",
        "llama3.2",
        "openai-completions",
        "http://localhost:11434/v1",
    )
    clean_env.setenv("AGENTCORE_MODEL", "no-slash")
    with pytest.raises(SystemExit, match="provider/model-id"):
        quickstart.choose_model()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_quickstart_says_so_when_the_server_is_not_reachable() -> None:
    done = run_example("quickstart", env={"AGENTCORE_LOCAL_PORT": str(free_port())})
    assert done.returncode == 2, done
    assert "is not reachable" in done.stderr
    assert "scripts/local-model start" in done.stderr
    assert done.stdout == ""


# --- the scripted (faux) example ------------------------------------------------------------------


def test_scripted_agent_example() -> None:
    done = run_example("scripted_agent")
    assert done.returncode == 0, done.stderr
    assert f"calculator → {PYPROJECT_LINES} * 7 = {PYPROJECT_LINES * 7}" in done.stdout
    assert done.stdout.rstrip().endswith("6 messages, 3 model requests")


# --- the quick start against the local model ----------------------------------------------------


@pytest.fixture(scope="module")
def local_model_port() -> str:
    """The port of the running local model server (started if needed; skips with the reason
    when it cannot be started here)."""
    from e2e.local_server import LocalModelUnavailable, ensure_local_model

    try:
        local = ensure_local_model()
    except LocalModelUnavailable as exc:
        pytest.skip(str(exc))
    return str(local.base_url.rsplit(":", 1)[1].split("/")[0])


@pytest.mark.local_llm
@pytest.mark.timeout(240)
def test_quickstart_on_the_local_model(local_model_port: str) -> None:
    started = time.perf_counter()
    done = run_example("quickstart", env={"AGENTCORE_LOCAL_PORT": local_model_port}, timeout=200)
    elapsed = time.perf_counter() - started
    assert done.returncode == 0, f"stdout:\n{done.stdout}\nstderr:\n{done.stderr}"
    out = done.stdout
    assert "model: local/qwen2.5-coder-1.5b" in out
    for message in quickstart.DEFAULT_TASK:  # the prompt, then the follow-up
        assert f"you: {message}" in out
    assert "model request(s)" in out.splitlines()[-1]
    print(f"quick start on the local model: {elapsed:.1f} s\n{out}")
