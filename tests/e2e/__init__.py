"""End-to-end tests: the whole stack against a real model served locally (scripts/local-model)."""
