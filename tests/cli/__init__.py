"""Tests of agentcore.cli: the command, its terminal UI (in a pty), approvals and sessions."""
