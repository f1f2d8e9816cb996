"""Ready-made tools for demos, the CLI and your own agents: a calculator and read-only file access.

```python
from agentcore import AgentContext
from agentcore.builtin_tools import builtin_tools

context = AgentContext(tools=builtin_tools("."))  # read_file, list_files, calculator
```

The file tools see one directory tree, their root: every path is resolved, symlinks included, and
refused if it lands outside the root (through `..`, an absolute path or a symlink). They only
read, and they are sync functions, so each call runs in a worker thread and never blocks the event
loop.

Both file tools follow one policy for hidden files: dot-files and dot-directories (`.env`,
`.env.local`, `.git`, `.ssh`, `.netrc`, `.npmrc`, ...) and files that may hold secrets (`*.pem`,
`*.key`, `id_rsa*`, `credentials*`, `*.tfstate`, ...; the full list is `HIDDEN_PATTERNS`) are left
out of listings, and reading or listing one is refused, also through a symlink, unless the tool is
built with `include_hidden=True`. `read_file` refuses binary files (a NUL byte in the first
256 KiB), cuts lines after 10,000 characters and stops after a share of the model's context
window (`context_window=`, else 256 Ki characters) with a note saying how to read on, and reads a
file in chunks, never whole.

The calculator evaluates arithmetic by walking the syntax tree of the expression: no `eval`,
no names but a fixed set of `math` functions and constants, no complex numbers, and bounds on
sizes so that no expression can hang the process.

Each factory returns a new `AgentTool`; what a tool refuses reaches the model as an error result
(a `ToolError`) it can correct itself from.
"""

from __future__ import annotations

from ._tools.builtin import HIDDEN_PATTERNS as HIDDEN_PATTERNS
from ._tools.builtin import builtin_tools as builtin_tools
from ._tools.builtin import calculator as calculator
from ._tools.builtin import chars_for_context as chars_for_context
from ._tools.builtin import is_hidden as is_hidden
from ._tools.builtin import list_files as list_files
from ._tools.builtin import read_file as read_file

__all__ = [
    "HIDDEN_PATTERNS",
    "builtin_tools",
    "calculator",
    "chars_for_context",
    "is_hidden",
    "list_files",
    "read_file",
]
