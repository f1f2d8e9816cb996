"""agentcore: the agent loop for Python."""
