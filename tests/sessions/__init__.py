"""Tests of agentcore.sessions: the stores, their formats, crashes and permissions."""
