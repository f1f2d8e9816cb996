"""Typed answers, private side: the JSON schema forms (the public face is `agentcore.output`; the
engine's typed-answer step is `agentcore._engine.typed_answer`)."""
