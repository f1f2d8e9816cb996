"""Compaction: the policy and its strategies' protocol, the built-in strategies, and the view of a
compacted transcript (public names re-exported by `agentcore`; the engine's compaction step is
`agentcore._engine.compaction`). Private."""
