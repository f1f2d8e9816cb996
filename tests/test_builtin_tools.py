"""The ready-made tools of `agentcore.builtin_tools`: what they compute and read, and what they
refuse (names and calls in the calculator, huge results, paths outside the root)."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from agentcore import (
    AbortController,
    AgentTool,
    AgentToolResult,
    TextContent,
    ToolError,
)
from agentcore.builtin_tools import (
    builtin_tools,
    calculator,
    chars_for_context,
    list_files,
    read_file,
)
from support import call_tool, texts


def run_tool(tool: AgentTool, **args: Any) -> str:
    """Call `tool` directly with validated `args`: its text, or the `ToolError` it raises."""
    result = tool.execute(
        "call-1", tool.validator.validate(args), AbortController().signal, lambda _: None
    )
    assert isinstance(result, AgentToolResult) and not result.is_error
    return "".join(b.text for b in result.content if isinstance(b, TextContent))


def calculate(expression: str) -> str:
    """What the calculator answers after `<expression> = `."""
    answer = run_tool(calculator(), expression=expression)
    prefix = f"{expression} = "
    assert answer.startswith(prefix)
    return answer[len(prefix) :]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A tools' root with a few files and, next to it, a file that must stay out of reach."""
    base = tmp_path / "root"
    base.mkdir()
    (base / "notes.txt").write_text("the secret is 42\n")
    (base / "ten.txt").write_text("".join(f"line {i}\n" for i in range(1, 11)))
    (base / "sub").mkdir()
    (base / "sub" / "a.py").write_text("print('a')\n")
    (base / ".hidden").write_text("x\n")
    (base / "node_modules").mkdir()
    (base / "node_modules" / "big.js").write_text("x\n")
    (tmp_path / "outside.txt").write_text("not yours\n")
    return base


# --- the calculator ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expression", "value"),
    [
        ("2 + 3 * 4", "14"),
        ("(1 + 2) ** 3", "27"),
        ("7 / 2", "3.5"),
        ("-3 + 1", "-2"),
        ("17 // 5 + 17 % 5", "5"),
        ("2.5 * 4", "10"),  # a whole float is shown as an integer
        ("10 / 4 * 2", "5"),
        ("1 + 2 * 3", "7"),
        ("2 ** 10", "1024"),
        ("(1 + 2) / 4", "0.75"),
        ("-7 // 2", "-4"),
        ("sqrt(16) + pi - pi", "4"),
        ("max(1, 5, 3)", "5"),
        ("factorial(5)", "120"),
        ("2 ** 1000", str(2**1000)),
        ("2 ** -2", "0.25"),
        ("1e20", "1e+20"),
    ],
)
def test_calculator_computes_arithmetic(expression: str, value: str) -> None:
    assert calculate(expression) == value


@pytest.mark.parametrize(
    ("expression", "needle"),
    [
        ("__import__('os').system('echo pwned')", "unsupported element Call"),
        ("open('x')", "unsupported element Call"),
        ("a + 1", "unsupported element Name"),
        ("(1).real", "unsupported element Attribute"),
        ("().__class__", "unsupported element Attribute"),
        ("'ab' * 3", "unsupported element Constant"),
        ("1j * 1j", "unsupported element Constant"),
        ("True + 1", "not a number"),
        ("[1, 2]", "unsupported element List"),
        ("1 if 1 else 2", "unsupported element IfExp"),
        ("sqrt(x=4)", "unsupported element Call"),
        ("2 ** 5000", "exponent too large"),
        ("9 ** 9 ** 9", "too large"),
        ("10 ** 100000", "too large"),
        ("((10 ** 100) ** 100) ** 100", "too large"),
        ("10.0 ** 100 * 10.0 ** 100 * 10.0 ** 100 * 10.0 ** 100", "too large"),
        ("10.0 ** 400", "too large"),
        ("1e400", "too large"),
        ("exp(1000)", "too large"),
        ("factorial(100000)", "too large"),
        ("factorial(2000)", "too large"),
        ("(-1) ** 0.5", "no real-number result"),
        ("1 / 0", "cannot evaluate '1 / 0': division by zero"),
        ("5 % 0", "division by zero"),
        ("sqrt(-1)", "cannot evaluate"),
        ("", "not an arithmetic expression"),
        ("1 +", "not an arithmetic expression"),
        ("1" * 2000, "longer than"),
    ],
)
def test_calculator_refuses_anything_but_arithmetic(expression: str, needle: str) -> None:
    with pytest.raises(ToolError, match=needle.replace("(", r"\(").replace(")", r"\)")):
        calculate(expression)


@pytest.mark.timeout(5)
def test_calculator_refuses_huge_results_quickly() -> None:
    for expression in ["9 ** 9 ** 9 ** 9", "(2 ** 4000) ** 4000", "factorial(5000) ** 2"]:
        with pytest.raises(ToolError, match="too large"):
            calculate(expression)


# --- read_file -----------------------------------------------------------------------------------


def test_read_file_reports_the_line_count(root: Path) -> None:
    assert run_tool(read_file(root), path="notes.txt") == "notes.txt has 1 line:\nthe secret is 42"
    text = run_tool(read_file(root), path="ten.txt", max_lines=3)
    assert text == "ten.txt has 10 lines (showing the first 3):\nline 1\nline 2\nline 3"
    text = run_tool(read_file(root), path="ten.txt", offset=9)
    assert text == "ten.txt has 10 lines (showing lines 9-10):\nline 9\nline 10"
    text = run_tool(read_file(root), path="ten.txt", offset=20)
    assert text == "ten.txt has 10 lines (nothing from line 20):\n"
    (root / "empty.txt").write_text("")
    assert run_tool(read_file(root), path="empty.txt") == "empty.txt has 0 lines:\n"


def test_read_file_returns_at_most_max_lines(root: Path) -> None:
    tool = read_file(root, max_lines=4)
    text = run_tool(tool, path="ten.txt")  # the cap is the default
    assert text.splitlines()[0] == "ten.txt has 10 lines (showing the first 4):"
    assert len(run_tool(tool, path="ten.txt", max_lines=10**6).splitlines()) == 1 + 4
    assert len(run_tool(read_file(root), path="ten.txt").splitlines()) == 1 + 10


def test_read_file_reads_past_the_first_256_kib(root: Path) -> None:
    (root / "big.txt").write_text("".join(f"{i:<99}\n" for i in range(1, 5001)))  # 500 KB
    text = run_tool(read_file(root), path="big.txt", max_lines=2)
    assert text.splitlines()[0] == "big.txt has 5000 lines (showing the first 2):"
    text = run_tool(read_file(root), path="big.txt", offset=4999)
    assert text.splitlines()[0] == "big.txt has 5000 lines (showing lines 4999-5000):"
    assert [line.strip() for line in text.splitlines()[1:]] == ["4999", "5000"]


def test_read_file_refuses_binary_files(root: Path) -> None:
    (root / "data.bin").write_bytes(b"\x89PNG\x00\x01")
    with pytest.raises(ToolError, match="not a text file"):
        run_tool(read_file(root), path="data.bin")


@pytest.mark.timeout(10)
def test_read_file_checks_for_binary_content_first(root: Path) -> None:
    with (root / "zeros.img").open("wb") as f:
        f.truncate(2 * 1024**3)  # 2 GB of NUL bytes (sparse: nothing is written)
    with pytest.raises(ToolError, match=r"'zeros.img' is a binary file \(it contains NUL bytes\)"):
        run_tool(read_file(root), path="zeros.img")


def test_read_file_cuts_a_long_line_and_says_how_to_read_on(root: Path) -> None:
    # minified code: no newline in the first 256 KiB
    body = "".join(f"{i:09d};" for i in range(30_000))  # 300,000 characters on one line
    (root / "app.min.js").write_text(body)
    tool = read_file(root)
    text = run_tool(tool, path="app.min.js")
    header, line, note = text.split("\n")
    assert header == "app.min.js has 1 line:"
    assert line == body[:10_000]
    assert note == (
        "[line 1 was cut after character 10,000 of 300,000; to read on, call read_file again "
        "with offset=1, max_lines=1, column=10001]"
    )
    text = run_tool(tool, path="app.min.js", offset=1, max_lines=1, column=10_001)
    header, line, note = text.split("\n")
    assert header == "app.min.js has 1 line (from character 10001 of each line):"
    assert line == body[10_000:20_000]
    assert "column=20001]" in note
    last = run_tool(tool, path="app.min.js", max_lines=1, column=290_001)
    assert last.split("\n")[1:] == [body[290_000:]]  # the end of the line: no note


def test_read_file_names_every_cut_line(root: Path) -> None:
    lines = ["short", "b" * 25_000, "é" * 10_000, "c" * 12_000, "end"]
    (root / "mixed.txt").write_text("\n".join(lines) + "\n")
    text = run_tool(read_file(root), path="mixed.txt")
    *shown, note = text.split("\n")
    assert shown == [
        "mixed.txt has 5 lines:",
        "short",
        "b" * 10_000,
        "é" * 10_000,
        "c" * 10_000,
        "end",
    ]
    assert note == (
        "[2 lines were cut after character 10,000 (line 2: 25,000 characters; line 4: 12,000 "
        "characters); to read on, call read_file again with the same offset and column=10001]"
    )


def test_read_file_stops_at_256_ki_characters(root: Path) -> None:
    (root / "wide.txt").write_text(("w" * 5000 + "\n") * 100)
    text = run_tool(read_file(root), path="wide.txt")
    lines = text.split("\n")
    assert lines[0] == "wide.txt has 100 lines (showing the first 53):"
    assert lines[-1] == (
        "[stopped at 262,144 characters; to read on, call read_file again with offset=54]"
    )


def test_read_file_line_endings(root: Path) -> None:
    (root / "crlf.txt").write_bytes(b"one\r\ntwo\r\nthree")  # no newline at the end
    assert run_tool(read_file(root), path="crlf.txt") == "crlf.txt has 3 lines:\none\ntwo\nthree"
    (root / "blank.txt").write_text("\n\n")
    assert run_tool(read_file(root), path="blank.txt") == "blank.txt has 2 lines:\n\n"


def test_read_file_stops_when_the_run_is_aborted(root: Path) -> None:
    (root / "big.txt").write_text("x\n" * 300_000)  # more than one chunk
    controller = AbortController()
    controller.abort()
    with pytest.raises(ToolError, match="aborted"):
        read_file(root).execute(
            "call-1",
            read_file(root).validator.validate({"path": "big.txt"}),
            controller.signal,
            lambda _: None,
        )


@pytest.mark.parametrize(
    ("path", "needle"),
    [
        ("../outside.txt", "outside the working directory"),
        ("../../etc/passwd", "outside the working directory"),
        ("/etc/passwd", "outside the working directory"),
        ("sub/../../outside.txt", "outside the working directory"),
        ("no-such-file.txt", "no such file"),
        ("sub", "no such file"),
        ("bad\x00name", "invalid path"),
    ],
)
def test_read_file_stays_in_the_root(root: Path, path: str, needle: str) -> None:
    with pytest.raises(ToolError, match=needle):
        run_tool(read_file(root), path=path)


def test_read_file_accepts_an_absolute_path_inside_the_root(root: Path) -> None:
    assert run_tool(read_file(root), path=str(root / "notes.txt")).endswith("the secret is 42")


def test_file_tools_refuse_symlinks_out_of_the_root(root: Path) -> None:
    (root / "link.txt").symlink_to(root.parent / "outside.txt")
    (root / "linkdir").symlink_to(root.parent)
    for path in ["link.txt", "linkdir/outside.txt"]:
        with pytest.raises(ToolError, match="outside the working directory"):
            run_tool(read_file(root), path=path)
    with pytest.raises(ToolError, match="outside the working directory"):
        run_tool(list_files(root), path="linkdir")
    (root / "inside.txt").symlink_to(root / "notes.txt")  # a symlink within the root is fine
    assert run_tool(read_file(root), path="inside.txt").endswith("the secret is 42")


def test_the_root_must_be_a_directory(root: Path) -> None:
    for factory in (read_file, list_files, builtin_tools):
        with pytest.raises(NotADirectoryError, match="not a directory"):
            factory(root / "missing")
        with pytest.raises(NotADirectoryError, match="not a directory"):
            factory(root / "notes.txt")


# --- list_files ----------------------------------------------------------------------------------


def test_list_files(root: Path) -> None:
    assert run_tool(list_files(root)).splitlines() == [
        "node_modules/",
        "notes.txt",
        "sub/",
        "ten.txt",
    ]  # sorted, directories end in "/", no dot files
    assert run_tool(list_files(root), path="sub") == "sub/a.py"  # paths relative to the root
    assert run_tool(list_files(root), recursive=True).splitlines() == [
        "node_modules/",  # listed, not descended into
        "notes.txt",
        "sub/",
        "ten.txt",
        "sub/a.py",
    ]
    (root / "empty").mkdir()
    assert run_tool(list_files(root), path="empty") == "(empty directory)"
    with pytest.raises(ToolError, match="outside the working directory"):
        run_tool(list_files(root), path="..")
    with pytest.raises(ToolError, match="no such directory"):
        run_tool(list_files(root), path="notes.txt")


def test_list_files_returns_at_most_max_entries(root: Path) -> None:
    text = run_tool(list_files(root, max_entries=2), recursive=True)
    assert text.splitlines() == ["node_modules/", "notes.txt", "[only the first 2 shown]"]


# --- hidden and secret-looking files: one policy for both tools -----------------------------------

HIDDEN = [
    ".env",
    ".env.production",
    ".netrc",
    ".npmrc",
    "_netrc",
    "prod.env",
    "server.pem",
    "SERVER.PEM",
    "tls.key",
    "id_rsa",
    "id_ed25519.pub",
    "credentials",
    "credentials.json",
    "secrets.yaml",
    "terraform.tfstate",
]


@pytest.fixture
def secrets_root(root: Path) -> Path:
    for name in HIDDEN:
        (root / name).write_text("TOKEN=sk-live-1234\n")
    (root / ".ssh").mkdir()
    (root / ".ssh" / "config").write_text("Host x\n")
    (root / "sub" / ".env").write_text("TOKEN=sk-live-1234\n")
    (root / "innocent.txt").symlink_to(root / ".env")  # a harmless name for a hidden file
    return root


@pytest.mark.parametrize("path", [*HIDDEN, ".hidden", ".ssh/config", "sub/.env", "sub/../.env"])
def test_read_file_refuses_hidden_and_secret_looking_files(secrets_root: Path, path: str) -> None:
    with pytest.raises(ToolError, match="is hidden: the file tools do not show dot-files"):
        run_tool(read_file(secrets_root), path=path)


def test_a_symlink_to_a_hidden_file_is_hidden_too(secrets_root: Path) -> None:
    with pytest.raises(ToolError, match=r"is hidden.*here '\.env'"):
        run_tool(read_file(secrets_root), path="innocent.txt")
    assert "innocent.txt" not in run_tool(list_files(secrets_root)).splitlines()


def test_list_files_hides_the_same_files(secrets_root: Path) -> None:
    everything = run_tool(list_files(secrets_root), recursive=True).splitlines()
    assert everything == ["node_modules/", "notes.txt", "sub/", "ten.txt", "sub/a.py"]
    with pytest.raises(ToolError, match="is hidden"):
        run_tool(list_files(secrets_root), path=".ssh")


def test_include_hidden_opts_in_for_both_tools(secrets_root: Path) -> None:
    reader, lister, _ = builtin_tools(secrets_root, include_hidden=True)
    for path in [*HIDDEN, ".ssh/config", "innocent.txt"]:
        assert "has 1 line:" in run_tool(reader, path=path)
    listed = run_tool(lister).splitlines()
    assert {*HIDDEN, ".hidden", ".ssh/", "innocent.txt"} <= set(listed)
    assert run_tool(lister, path=".ssh") == ".ssh/config"
    assert run_tool(read_file(secrets_root, include_hidden=True), path=".env").endswith(
        "sk-live-1234"
    )
    assert ".env" in run_tool(list_files(secrets_root, include_hidden=True)).splitlines()


@pytest.mark.anyio
async def test_a_hidden_file_reaches_the_model_as_an_error_result(secrets_root: Path) -> None:
    result = await call_tool(read_file(secrets_root), {"path": ".env"})
    assert result.is_error and "is hidden" in texts(result)
    assert "sk-live" not in texts(result)


# --- as an agent's tools -------------------------------------------------------------------------


def test_builtin_tools(root: Path) -> None:
    tools = builtin_tools(root)
    assert [t.name for t in tools] == ["read_file", "list_files", "calculator"]
    assert not any(t.is_async() for t in tools)  # sync: they run in a worker thread
    assert all(t.llm_tool.description for t in tools)
    read_params = tools[0].llm_tool.parameters["properties"]
    assert set(read_params) == {"path", "offset", "max_lines", "column"}
    assert read_params["max_lines"]["default"] == 200


@pytest.mark.anyio
async def test_refusals_reach_the_model_as_error_results(root: Path) -> None:
    result = await call_tool(calculator(), {"expression": "72 * 7"})
    assert not result.is_error and texts(result) == "72 * 7 = 504"
    result = await call_tool(calculator(), {"expression": "open('x')"})
    assert result.is_error and "unsupported element Call" in texts(result)
    result = await call_tool(read_file(root), {"path": os.fspath(root.parent / "outside.txt")})
    assert result.is_error and "outside the working directory" in texts(result)


@pytest.mark.timeout(30)
def test_read_file_never_reads_outside_through_a_racing_symlink(tmp_path: Path) -> None:
    """A file, and a directory, swapped for a symlink out of the root between the check of the
    path and its opening: every read shows the file inside, or refuses; never the one outside."""
    base = tmp_path / "root"
    (base / "sub").mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    for where in (base, base / "sub"):
        (where / "victim.txt").write_text("inside\n")
    (outside / "victim.txt").write_text("OUTSIDE\n")
    tool = read_file(base)
    stop = threading.Event()
    swaps = 0

    def swapper() -> None:
        nonlocal swaps
        link, real = base / "link.tmp", base / "real.tmp"
        while not stop.is_set():
            # the file: a regular file <-> a symlink to the file outside (atomic renames)
            link.symlink_to(outside / "victim.txt")
            os.replace(link, base / "victim.txt")
            real.write_text("inside\n")
            os.replace(real, base / "victim.txt")
            # the directory: a real one <-> a symlink to the directory outside
            os.rename(base / "sub", base / "sub.real")
            (base / "sub").symlink_to(outside)
            (base / "sub").unlink()
            os.rename(base / "sub.real", base / "sub")
            swaps += 1

    thread = threading.Thread(target=swapper, daemon=True)
    thread.start()
    seen: dict[str, int] = {}
    kinds: set[str] = set()
    try:
        deadline = time.monotonic() + 4
        reads = 0
        while time.monotonic() < deadline and reads < 3000:
            for path in ("victim.txt", "sub/victim.txt"):
                reads += 1
                try:
                    result = tool.execute(
                        "id",
                        tool.validator.validate({"path": path}),
                        AbortController().signal,
                        lambda _: None,
                    )
                    shown = "".join(b.text for b in result.content if isinstance(b, TextContent))
                except Exception as exc:  # the kind is checked below
                    shown = f"refused: {exc}"
                    kinds.add(type(exc).__name__)
                assert "OUTSIDE" not in shown, f"read outside the root after {reads} reads"
                key = "inside" if shown.endswith("\ninside") else "refused"
                seen[key] = seen.get(key, 0) + 1
    finally:
        stop.set()
        thread.join(5)
    assert swaps > 10 and seen.get("inside", 0) > 0
    assert kinds <= {"ToolError"}  # a refusal is a clear error for the model


def test_read_file_returns_a_share_of_the_context_window(tmp_path: Path) -> None:
    """A 198-line config file on a model with an 8,192-token window comes in parts, each with a
    note saying where to read on, and the parts add up to the whole file."""
    base = tmp_path / "root"
    base.mkdir()
    lines = [f'key_{i:03d} = "{"v" * 24}"  # setting {i}' for i in range(1, 199)]  # ~9,000 chars
    (base / "pyproject.toml").write_text("\n".join(lines) + "\n")
    tool = builtin_tools(base, context_window=8192)[0]
    assert chars_for_context(8192) == 3072
    assert chars_for_context(200_000) == 75_000 and chars_for_context(10**7) == 256 * 1024
    got: list[str] = []
    offset, calls = 1, 0
    while True:
        calls += 1
        text = run_tool(tool, path="pyproject.toml", offset=offset)
        header, *body = text.split("\n")
        assert header.startswith("pyproject.toml has 198 lines")
        if body and body[-1].startswith("[stopped at 3,072 characters; to read on"):
            note = body.pop()
            offset = int(note.rsplit("offset=", 1)[1].rstrip("]"))
            got.extend(body)
            assert sum(len(b) for b in body) < 3072 + 60
            continue
        got.extend(body)
        break
    assert got == lines and calls == 4
    # the default without a known window, and an explicit cap
    assert "[stopped" not in run_tool(read_file(base), path="pyproject.toml")
    assert "[stopped at 500 characters;" in run_tool(
        read_file(base, max_chars=500), path="pyproject.toml"
    )
    with pytest.raises(ValueError, match="context_window must be a positive integer"):
        read_file(base, context_window=0)
