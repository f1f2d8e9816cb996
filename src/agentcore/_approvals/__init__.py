"""Approvals, private side: reading where a transcript's approvals stand (the public face is
`agentcore.approvals`; the engine's approval steps are in `agentcore._engine`)."""
