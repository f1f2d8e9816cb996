"""`python -m agentcore.temporal worker --module mypkg.agents`: run one worker."""

from __future__ import annotations

import os
import sys

from ._worker import EXIT_UNREACHABLE, main

if __name__ == "__main__":
    code = main()
    if code == EXIT_UNREACHABLE:
        # after a failed connect the Temporal SDK's native runtime may still hold a thread that
        # aborts the interpreter's shutdown ("Fatal Python error: PyGILState_Release"): the one
        # line already said what to do, so leave without the shutdown
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)
