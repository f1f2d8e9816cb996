"""`import agentcore` stays light: heavy dependencies are imported when first used.

Not a timed assertion (the machine's load decides a wall time): the test imports agentcore in a
fresh interpreter under `-X importtime` and checks which modules it loaded. When one of them is
a heavy dependency, the failure names the chain of imports that brought it in.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys

# Top-level packages `import agentcore` must not load: the HTTP stack (httpx and what it brings:
# the email parser, http.client, urllib.request, its command line's click and rich), schema
# validation (jsonschema, pydantic), the provider SDKs and the optional integrations. (`ssl`
# is not on the list: asyncio itself imports it.)
HEAVY = (
    "a2a",
    "anthropic",
    "boto3",
    "click",
    "email",
    "h11",
    "httpcore",
    "httpx",
    "jsonschema",
    "logfire_api",
    "mcp",
    "openai",
    "opentelemetry",
    "pydantic",
    "pydantic_core",
    "pydantic_evals",
    "rich",
    "temporalio",
)
HEAVY_MODULES = ("http.client", "urllib.request", "google.genai")

# `import agentcore` imports a public name when it is first used: what a program that uses the
# loop and the Agent loads (all that `import agentcore` used to load) is checked
CODE = (
    "import sys, json, agentcore, agentcore.llm; from agentcore import *; "
    "print(json.dumps(sorted(sys.modules)))"
)


def _loaded(code: str) -> list[str]:
    """The modules loaded by running `code` in a fresh interpreter."""
    out = subprocess.run(
        [sys.executable, "-c", f"{code}\nimport sys, json\nprint(json.dumps(sorted(sys.modules)))"],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return json.loads(out.stdout.splitlines()[-1])


def _import_agentcore() -> tuple[list[str], str]:
    out = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", CODE],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return json.loads(out.stdout), out.stderr


def _chain(importtime: str, module: str) -> str:
    """Who imported `module`: `-X importtime` lists a module after what it imported, one
    indentation level deeper, so its importers are the next lines that are less indented."""
    rows = []
    for line in importtime.splitlines():
        match = re.match(r"import time:\s+\d+ \|\s+\d+ \|( *)(\S+)", line)
        if match:
            rows.append((len(match.group(1)), match.group(2)))
    for i, (depth, name) in enumerate(rows):
        if name == module:
            chain = [name]
            for deeper, importer in rows[i + 1 :]:
                if deeper < depth:
                    chain.append(importer)
                    depth = deeper
            return " <- ".join(chain)
    return module


def test_import_agentcore_loads_no_heavy_dependency() -> None:
    loaded, importtime = _import_agentcore()
    heavy = [
        m
        for m in loaded
        if m.split(".")[0] in HEAVY or any(m == h or m.startswith(h + ".") for h in HEAVY_MODULES)
    ]
    tops = sorted({m.split(".")[0] if m.split(".")[0] in HEAVY else m for m in heavy})
    assert not heavy, "import agentcore loaded heavy dependencies:\n" + "\n".join(
        _chain(importtime, top) for top in tops
    )


def test_the_chain_names_who_imported_a_module() -> None:
    """The failure message's helper reads `-X importtime` right (checked on a module agentcore
    is known to load through asyncio)."""
    _, importtime = _import_agentcore()
    chain = _chain(importtime, "asyncio")
    assert chain.startswith("asyncio <- ") and "agentcore" in chain, chain


def test_import_agentcore_alone_loads_none_of_its_modules() -> None:
    """The public names are imported when first used: the package itself is its version."""
    loaded = _loaded("import agentcore, agentcore.llm")
    ours = [m for m in loaded if m.split(".")[0] == "agentcore"]
    assert ours == ["agentcore", "agentcore._version", "agentcore.llm"], ours
    assert "asyncio" not in loaded


def test_the_loop_alone_loads_neither_the_agent_nor_sessions() -> None:
    """A program that only calls `agent_loop` does not import the `Agent`, its sessions or
    `sqlite3`; one that builds an `Agent` does not import `sqlite3` either, until it uses the
    SQLite store."""
    loaded = _loaded("from agentcore import agent_loop, AgentLoopConfig, AgentContext, tool")
    agent = [
        m
        for m in loaded
        if m in ("agentcore.agent", "agentcore.sessions", "sqlite3")
        or m.startswith(("agentcore._agent.", "agentcore.sessions."))
    ]
    assert not agent, agent
    assert "sqlite3" not in _loaded("from agentcore import Agent")
    assert "sqlite3" in _loaded("from agentcore.sessions import SqliteSessionStore")


def test_version_and_help_load_only_the_parser() -> None:
    """`agentcore --version` and `--help` parse the arguments before importing any command: no
    engine, no model layer beyond its types, no event loop."""
    for flag in ("--version", "--help"):
        loaded = _loaded(
            "import contextlib, io\n"
            "from agentcore.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):\n"
            f"    main([{flag!r}])"
        )
        ours = {m for m in loaded if m.split(".")[0] == "agentcore"}
        allowed = {"agentcore", "agentcore._version", "agentcore.cli", "agentcore.errors"}
        allowed |= {"agentcore.limits"}
        allowed |= {"agentcore.llm", "agentcore.llm.model", "agentcore.llm.types"}
        allowed |= {"agentcore.messages", "agentcore.messages._json", "agentcore.messages._types"}
        unexpected = sorted(m for m in ours - allowed if not m.startswith("agentcore.cli._"))
        assert not unexpected, (flag, unexpected)
        assert "agentcore.cli._main" not in ours and "asyncio" not in loaded, flag
