"""The `agentcore` command: chat in a terminal, one-shot runs, JSON event output.

```
agentcore chat [options]             interactive conversation
agentcore run PROMPT|- [options]     answer one prompt and exit
agentcore models [PROVIDER]          list the model catalogue
agentcore sessions list|show|rm      the saved chat sessions
agentcore serve [options]            the web chat on http://127.0.0.1:8765/ (docs/web.md)
agentcore eval DATASET --agent M:F   run an evaluation dataset against an agent (docs/evals.md)
```

`--mcp SERVER` (repeatable) adds the tools of MCP servers to a chat or run (see `_mcp.py`;
`--mcp-sampling` lets them sample a model, see `_mcp_sampling.py`);
`run --output-schema FILE` asks for a validated JSON answer (see `_output.py`); `--record FILE`
and `--replay FILE` record or replay the model traffic (see `_traffic.py`).

`main(argv)` is the entry point; its keyword-only arguments (a stream function, the standard
streams) let tests and embedding applications drive it in-process, e.g. with the faux provider.
Exit codes: 0 success, 1 the run failed, 2 usage or configuration error, 3 a bound (turns, tokens,
cost) ended the run, 130 interrupted.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from ..llm.registry import StreamFn

__all__ = ["main"]


def main(
    argv: list[str] | None = None,
    *,
    stream_fn: StreamFn | None = None,
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
) -> int:
    """Run the `agentcore` command; returns the exit code.

    Args:
        argv: the arguments (default: `sys.argv[1:]`).
        stream_fn: the stream function of every run (default: `agentcore.llm.stream_simple`);
            with one given, the model's API key and SDK are not checked up front.
        stdin: the input stream (default: the process's own). With `stdin` given, `chat` reads
            it line by line as if it were not a terminal.
        stdout: the output stream (default: the process's own).
        stderr: the error stream (default: the process's own).
    """
    # the arguments are parsed before the commands are imported: `--version`, `--help` and a
    # usage error cost the parser alone
    from ._args import parse_args

    out = stdout if stdout is not None else sys.stdout
    err = stderr if stderr is not None else sys.stderr
    parsed = parse_args(sys.argv[1:] if argv is None else list(argv), out, err)
    if isinstance(parsed, int):
        return parsed
    from ._main import run_parsed

    return run_parsed(parsed, stream_fn=stream_fn, stdin=stdin, stdout=out, stderr=err)
