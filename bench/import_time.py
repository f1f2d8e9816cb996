"""Cold import time of agentcore's loop and Agent (no provider SDK, no HTTP stack imported).
Target: 100 ms beyond `import asyncio, anyio`.

Each import runs in a fresh interpreter, after one warm-up import that writes the bytecode
cache (into a temporary `PYTHONPYCACHEPREFIX`, so that a `PYTHONDONTWRITEBYTECODE` in the
environment does not turn every import into a compilation). Also prints how many modules the
import loads, against `import asyncio, anyio` alone.

.venv/bin/python bench/import_time.py
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile

# what a program imports: since issue 35 `import agentcore` loads a public name when it is first
# used, so the loop and the Agent are imported by name (`IMPORT` below)
IMPORT = "from agentcore import Agent, agent_loop; import agentcore.llm"
CODE = (
    f"import time; t = time.perf_counter(); {IMPORT}; "
    "d = time.perf_counter() - t; import sys; "
    "heavy = [m for m in ('openai', 'anthropic', 'google.genai', 'httpx', 'email', 'pydantic', "
    "'jsonschema') if m in sys.modules]; "
    "print(d, len(sys.modules), ','.join(heavy) or '-')"
)
BASE = (
    "import time; t = time.perf_counter(); import asyncio, anyio; "
    "d = time.perf_counter() - t; import sys; print(d, len(sys.modules), '-')"
)


def _times(code: str, env: dict[str, str], n: int = 7) -> tuple[list[float], int, str]:
    times = []
    out: list[str] = []
    for _ in range(n):
        out = subprocess.run(
            [sys.executable, "-X", "frozen_modules=on", "-c", code],
            capture_output=True,
            text=True,
            check=True,
            env=env,
        ).stdout.split()
        times.append(float(out[0]))
    return sorted(times), int(out[1]), out[2]


def main() -> None:
    with tempfile.TemporaryDirectory() as cache:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = cache
        subprocess.run([sys.executable, "-c", IMPORT], env=env)
        times, modules, heavy = _times(CODE, env)
        base, base_modules, _ = _times(BASE, env)
    mid = len(times) // 2
    print(f"{IMPORT}: median {times[mid] * 1000:.0f} ms, best {times[0] * 1000:.0f} ms")
    print(f"  {modules} modules loaded (import asyncio, anyio alone: {base_modules},")
    print(f"  median {base[mid] * 1000:.0f} ms, best {base[0] * 1000:.0f} ms)")
    print(f"heavy dependencies imported: {heavy}  (target: none, under 100 ms)")


if __name__ == "__main__":
    main()
