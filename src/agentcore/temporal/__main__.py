"""`python -m agentcore.temporal worker --module mypkg.agents`: run one worker."""

from __future__ import annotations

import sys

from ._worker import main

if __name__ == "__main__":
    sys.exit(main())
