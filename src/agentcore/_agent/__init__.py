"""The stateful `Agent`'s parts: its state and queues, a run's book-keeping, the session binding
and the approval methods (the class itself is `agentcore.agent.Agent`). Private."""
