"""`python -m agentcore.cli`: the `agentcore` command."""

from __future__ import annotations

from . import main

raise SystemExit(main())
