"""Typed outputs, private side: the JSON schema forms (the public face is `agentcore.output`; the
engine's typed-output step is `agentcore._engine.typed_output`)."""
