"""The engine: the agent loop and its entry points, the request path, tool execution, bounds,
approvals and typed outputs as steps of a run, and how events are delivered (emission and the
event stream). Private: the public names live in the package root's modules."""
