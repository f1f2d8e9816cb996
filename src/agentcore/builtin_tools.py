"""Ready-made tools for demos, the CLI and your own agents: a calculator and read-only file access.

```python
from agentcore import AgentContext
from agentcore.builtin_tools import builtin_tools

context = AgentContext(tools=builtin_tools("."))  # read_file, list_files, calculator
```

The file tools see one directory tree, their root: every path is resolved, symlinks included, and
refused if it lands outside the root (through `..`, an absolute path or a symlink). They only
read, and they are sync functions, so each call runs in a worker thread and never blocks the event
loop. The calculator evaluates arithmetic by walking the syntax tree of the expression: no `eval`,
no names but a fixed set of `math` functions and constants, no complex numbers, and bounds on
sizes so that no expression can hang the process.

Each factory returns a new `AgentTool`; what a tool refuses reaches the model as an error result
(a `ToolError`) it can correct itself from.
"""

from __future__ import annotations

from ._builtin_tools import builtin_tools as builtin_tools
from ._builtin_tools import calculator as calculator
from ._builtin_tools import list_files as list_files
from ._builtin_tools import read_file as read_file

__all__ = ["builtin_tools", "calculator", "list_files", "read_file"]
