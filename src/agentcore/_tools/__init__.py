"""Tools, private side: argument validation, the JSON rule for tool values, and the built-in tools
(public faces: `agentcore.tools` and `agentcore.builtin_tools`)."""
