"""The examples run: their tools behave (and refuse what they must), the scripted example gives
its answer, and the quick start finishes against the local model."""

from __future__ import annotations

import ast
import importlib.util
import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from agentcore import AbortController, ApprovalRequest, ToolError
from support import call_tool, texts

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


# --- the gallery: every example is run here, offline, on its scripted model --------------------

GALLERY = {
    "quickstart": "an agent with the built-in tools, streamed (local model or any provider)",
    "scripted_agent": "the faux provider and the synchronous API",
    "research_agent": "search, read, take notes and cite, over two turns",
    "coding_helper": "file tools in a workspace, writes approved or denied",
    "typed_extractor": "answers as a pydantic model and a dataclass, corrected when invalid",
    "mcp_agent": "the tools of a stdio MCP server",
    "durable_agent": "a Temporal run surviving kill -9 (tests/temporal/test_example.py)",
    "web_agent": "the chat app served to the browser, driven over HTTP",
    "eval_agent": "an evaluation dataset run on its agent (more in tests/evals)",
}
"""The runnable examples, each tested in this file (durable_agent: in tests/temporal)."""

HELPERS = {"mcp_server_notes": "the MCP server mcp_agent.py starts"}
"""Files of examples/ that are not examples of their own."""


def test_the_gallery_is_complete_and_documented() -> None:
    """Every script of examples/ is in the gallery (or a helper), says at its top what it shows
    and how to run it, has a section in docs/examples.md, and is run by a test."""
    found = {p.stem for p in EXAMPLES.glob("*.py")}
    assert found == set(GALLERY) | set(HELPERS)
    page = (ROOT / "docs" / "examples.md").read_text("utf-8")
    tests = Path(__file__).read_text("utf-8") + (ROOT / "tests/temporal/test_example.py").read_text(
        "utf-8"
    )
    for name in found:
        module = ast.parse((EXAMPLES / f"{name}.py").read_text("utf-8"))
        doc = ast.get_docstring(module)
        assert doc, f"examples/{name}.py has no module docstring"
        assert f"python examples/{name}.py" in doc, f"examples/{name}.py does not say how to run"
        assert f"examples/{name}.py" in page, f"docs/examples.md does not show {name}"
        if name in GALLERY:
            assert f"## {name}.py" in page.replace("`", ""), f"no section for {name}"
            assert re.search(rf"run_example\(\s*\"{name}\"|\"{name}\.py\"", tests), name


def test_eval_agent_example() -> None:
    done = run_example("eval_agent")
    assert done.returncode == 0, done.stderr
    assert "Evaluation Summary" in done.stdout and "100.0% ✔" in done.stdout


def test_the_gallery_page_includes_files_that_exist() -> None:
    page = (ROOT / "docs" / "examples.md").read_text("utf-8")
    included = re.findall(r'--8<-- "([^"]+)"', page)
    assert len(included) >= len(GALLERY)
    for path in included:
        assert (ROOT / path).is_file(), f"docs/examples.md includes {path}, which does not exist"


def note_sentence(name: str) -> str:
    """The first sentence of the last paragraph of a note of the research library."""
    text = (EXAMPLES / "research_notes" / name).read_text("utf-8").strip()
    return text.split("\n\n")[-1].replace("\n", " ").split(". ")[0].rstrip(".") + "."


def test_research_agent_example() -> None:
    done = run_example("research_agent")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    # the search ranked the right note first each time, and the scripted model read that one
    assert "✓ waggle-dance.md: The waggle dance" in out
    assert "✓ von-frisch.md: Karl von Frisch" in out
    assert out.index("read_note(name='waggle-dance.md')") < out.index(
        "read_note(name='von-frisch.md')"
    )
    assert out.count("✓ Noted (entry") == 2
    answers = [line for line in out.splitlines() if line.startswith("agent: ")]
    assert len(answers) == 2
    assert answers[0].endswith("[waggle-dance.md]")
    assert "von Frisch" in answers[1] and answers[1].endswith("[waggle-dance.md] [von-frisch.md]")
    notebook = out.split("notebook:\n", 1)[1].splitlines()
    assert notebook == [
        f"  1. {note_sentence('waggle-dance.md')} [waggle-dance.md]",
        f"  2. {note_sentence('von-frisch.md')} [von-frisch.md]",
    ]


@pytest.mark.anyio
async def test_research_tools_rank_read_and_refuse_unread_sources() -> None:
    research = load_example("research_agent")
    library = research.Library(research.NOTES_DIR)
    search, read, note = library.tools()
    result = await call_tool(search, {"query": "swarming queen workers", "limit": 2})
    assert texts(result).splitlines()[0].startswith("colony.md: The honeybee colony (")
    result = await call_tool(search, {"query": "volcanoes"})
    assert texts(result) == "No note matches 'volcanoes'."
    result = await call_tool(note, {"text": "Bees dance.", "sources": ["waggle-dance.md"]})
    assert result.is_error and "not read: ['waggle-dance.md']" in texts(result)
    result = await call_tool(read, {"name": "../README.md"})
    assert result.is_error and "there is no note '../README.md'" in texts(result)
    result = await call_tool(read, {"name": "waggle-dance.md"})
    assert texts(result).startswith("# The waggle dance\n")
    result = await call_tool(note, {"text": "Bees dance.", "sources": ["waggle-dance.md"]})
    assert not result.is_error and library.notebook == ["Bees dance. [waggle-dance.md]"]


def test_coding_helper_example_approves_the_fix_and_denies_the_test_change() -> None:
    done = run_example("coding_helper")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "⏸ the write to calc.py waits for approval" in out
    assert "⏸ the write to test_calc.py waits for approval" in out
    assert "reviewer: approved the write to calc.py" in out
    assert "reviewer: denied the write to test_calc.py: tests are the specification" in out
    assert "✓ wrote calc.py (3 lines)" in out
    assert "✗ Tool call was not executed: it was denied: tests are the specification" in out
    # nothing ran before the decisions
    assert out.index("reviewer: approved") < out.index("✓ wrote calc.py")
    workspace = out.split("the workspace now:\n", 1)[1]
    assert "    return sum(numbers) / len(numbers)\n" in workspace
    assert "assert average([2, 4, 6]) == 4" in workspace  # the test was not touched
    assert out.rstrip().endswith("test_average: passed")


def test_coding_helper_asks_at_the_terminal() -> None:
    """With --ask the decisions come from stdin: here both writes are refused."""
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / "coding_helper.py"), "--ask"],
        cwd=ROOT,
        input="n\nnot now\nno\n\n",
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "reviewer: denied the write to calc.py: not now" in out
    assert "reviewer: denied the write to test_calc.py: the user said no" in out
    assert "wrote calc.py" not in out
    assert "(len(numbers) + 1)" in out.split("the workspace now:\n", 1)[1]
    assert out.rstrip().endswith("test_average: FAILED")


def test_coding_helper_writes_only_inside_its_workspace(tmp_path: Path) -> None:
    helper = load_example("coding_helper")
    write = helper.write_file_tool(tmp_path)
    assert write.requires_approval is True

    def call(path: str, content: str) -> object:
        """Call the (sync) tool as the loop does once a call is approved: validated arguments."""
        args = write.parameters.model_validate({"path": path, "content": content})  # type: ignore[union-attr]
        return write.execute("w", args, AbortController().signal, lambda _: None)

    for path in ["../escape.txt", str(tmp_path.parent / "escape.txt"), "a/../../escape.txt"]:
        with pytest.raises(ToolError, match="outside the project directory"):
            call(path, "x")
    assert not (tmp_path.parent / "escape.txt").exists()
    call("pkg/new.py", "x = 1\n")
    assert (tmp_path / "pkg" / "new.py").read_text() == "x = 1\n"

    def request(path: str) -> ApprovalRequest:
        return ApprovalRequest(tool_call_id="c", tool_name="write_file", arguments={"path": path})

    assert helper.review_policy(request("calc.py")) is None
    assert "not the test" in helper.review_policy(request("tests/test_calc.py"))


def test_typed_extractor_example() -> None:
    done = run_example("typed_extractor")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("✗ answer rejected (date: Input should be a valid date")
    assert lines[1:] == [
        "Release planning on Tuesday 10 March 2026, with Ana, Bilal, Chen",
        "  - Bilal: write the migration guide (due 2026-03-20)",
        "  - Chen: check the Windows wheels",
        "  - Ana: send the release announcement",
        "answered in 2 attempt(s)",
        "Contact(name='Ines Moreau', email='ines.moreau@rivet.example', "
        "phone='+33 1 23 45 67 89', company='Rivet Labs')",
    ]


def test_mcp_agent_example() -> None:
    done = run_example("mcp_agent")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "connected to notes: notes_add_note, notes_list_notes, notes_find_notes" in out
    assert "✓ note 1 added:" in out and "✓ note 2 added:" in out  # two calls, one batch
    # the two notes were added by parallel calls: either may have been first
    assert re.search(r"agent: Your notes on deploys \(#[12] 'Deploy freeze'\): No deploys", out)
    saved = out.split("the server's notes file holds 2 note(s):\n", 1)[1].splitlines()
    numbers = dict(reversed(line.strip().split(" ", 1)) for line in saved)
    assert sorted(numbers) == [
        "Deploy freeze: No deploys from 18 December. ['deploy']",
        "Staging database: Restored from backup every Monday. ['staging']",
    ]
    assert sorted(numbers.values()) == ["#1", "#2"]


def test_web_agent_example_serves_and_answers_over_http() -> None:
    done = run_example("web_agent", "--check")
    assert done.returncode == 0, f"stdout:\n{done.stdout}\nstderr:\n{done.stderr}"
    out = done.stdout
    assert re.match(r"serving the chat on http://127\.0\.0\.1:\d+/", out)
    assert "you: What is 17 * 23 + 4? (started)" in out
    assert "  → calculator\n  ✓ 17 * 23 + 4 = 395\n" in out
    assert "agent: The calculator says **395** (17 * 23 + 4 = 395).\nRUN_FINISHED\n" in out
    assert out.rstrip().endswith("server stopped by Ctrl-C (exit code 130)")
    assert "Traceback" not in done.stderr and "ERROR" not in done.stderr, done.stderr


# --- the gallery on the local model ---------------------------------------------------------------
# Every gallery script takes --local; these two are run here, where the small local model does
# what the script is about reliably (it answers the arithmetic with the calculator, and fills in
# the typed outputs). On the others it often answers without using its tools.


@pytest.mark.local_llm
@pytest.mark.timeout(300)
def test_web_agent_on_the_local_model(local_model_port: str) -> None:
    env = {"AGENTCORE_LOCAL_PORT": local_model_port}
    done = run_example("web_agent", "--check", "--local", env=env, timeout=280)
    assert done.returncode == 0, f"stdout:\n{done.stdout}\nstderr:\n{done.stderr}"
    assert "  ✓ 17 * 23 + 4 = 395\n" in done.stdout
    assert "395" in done.stdout.split("agent: ", 1)[1]
    print(done.stdout)


@pytest.mark.local_llm
@pytest.mark.timeout(300)
def test_typed_extractor_on_the_local_model(local_model_port: str) -> None:
    env = {"AGENTCORE_LOCAL_PORT": local_model_port}
    done = run_example("typed_extractor", "--local", env=env, timeout=280)
    assert done.returncode == 0, f"stdout:\n{done.stdout}\nstderr:\n{done.stderr}"
    out = done.stdout
    assert "on Tuesday 10 March 2026, with Ana, Bilal, Chen" in out
    assert "  - Bilal: " in out and "email='ines.moreau@rivet.example'" in out
    print(out)
