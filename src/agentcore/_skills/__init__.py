"""Agent Skills, private side: the loader (`loader`) and the tools and prompt block (`tools`);
the public face is `agentcore.skills`."""
