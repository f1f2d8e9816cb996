"""Tests of the engine (agentcore._engine): the loop, its stages and values, the event
stream, hooks and limits."""
