"""Cold `import agentcore` time (no provider SDK is imported). Target: under 0.3 s.

.venv/bin/python bench/import_time.py
"""

from __future__ import annotations

import subprocess
import sys

CODE = (
    "import time; t = time.perf_counter(); import agentcore, agentcore.llm; "
    "d = time.perf_counter() - t; import sys; "
    "sdks = [m for m in ('openai', 'anthropic', 'google.genai') if m in sys.modules]; "
    "print(d, ','.join(sdks) or '-')"
)


def main() -> None:
    times = []
    for _ in range(7):
        out = subprocess.run(
            [sys.executable, "-X", "frozen_modules=on", "-c", CODE],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
        times.append(float(out[0]))
        sdks = out[1]
    times.sort()
    print(f"import agentcore: median {times[3] * 1000:.0f} ms, best {times[0] * 1000:.0f} ms")
    print(f"provider SDKs imported: {sdks}  (target: none, under 300 ms)")


if __name__ == "__main__":
    main()
