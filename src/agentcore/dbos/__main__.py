"""`python -m agentcore.dbos worker ...`: run one worker (see `agentcore.dbos._worker`)."""

from __future__ import annotations

import sys

from ._worker import main

if __name__ == "__main__":
    sys.exit(main())
