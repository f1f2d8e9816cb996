"""The local model server for end-to-end tests: started once per test session, or skipped with
the reason.

`ensure_local_model()` runs `scripts/local-model start` (idempotent: seconds when the binary and
model are cached, a reuse when the server is already running; minutes the first time), then sends
one warm-up request, and remembers the outcome for the rest of the session:

- `AGENTCORE_SKIP_LOCAL_MODEL=1`: nothing is started, the tests are skipped saying so;
- `AGENTCORE_LOCAL_MODEL_UNAVAILABLE` set (by `scripts/test`, when its own start failed): the
  tests are skipped with that text as the reason;
- the start script fails (no compiler, no disk space, a failed download, a port in use, ...):
  skipped with the script's error lines as the reason;
- the server started but does not answer the warm-up request: that is a failure, not a skip.

With `CI=true`, a server this session started is stopped when the session ends (under
pytest-xdist, when the whole run ends). Every xdist worker may call `ensure_local_model()`: the
start script holds a lock and reuses a running server, so only one of them starts it.
"""

from __future__ import annotations

import atexit
import os
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import httpx

from agentcore.llm import Model, get_model
from support.servers import stop_when_run_ends

__all__ = ["ROOT", "LocalModel", "LocalModelUnavailable", "ensure_local_model"]

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "local-model"
UNAVAILABLE_ENV = "AGENTCORE_LOCAL_MODEL_UNAVAILABLE"
SKIP_ENV = "AGENTCORE_SKIP_LOCAL_MODEL"
START_TIMEOUT_S = 3600  # a cold start builds llama-server: ~8 minutes on 2 cores, more on 1
WARMUP_TIMEOUT_S = 120


@dataclass(frozen=True, slots=True)
class LocalModel:
    """The running server: the catalogue model pointed at it, and how long getting there took."""

    model: Model
    base_url: str
    start_seconds: float
    warmup_seconds: float


class LocalModelUnavailable(Exception):
    """The server could not be started on this machine; the message says why."""


_outcome: LocalModel | Exception | None = None
_started_here = False


def _status_running() -> bool:
    try:
        done = subprocess.run(
            [str(SCRIPT), "status"], capture_output=True, text=True, timeout=30, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def _start(progress: Callable[[str], None] | None) -> tuple[int, str, list[str]]:
    """Run the start script; its exit code, stdout, and stderr lines (shown live to
    `progress`)."""
    with subprocess.Popen(
        [str(SCRIPT), "start"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
    ) as process:
        assert process.stderr is not None and process.stdout is not None
        lines: list[str] = []
        deadline = time.monotonic() + START_TIMEOUT_S
        for line in process.stderr:  # progress goes to stderr, line by line
            lines.append(line.rstrip("\n"))
            if progress is not None:
                progress(line.rstrip("\n"))
            if time.monotonic() > deadline:
                process.kill()
                break
        stdout = process.stdout.read()
        try:
            code = process.wait(timeout=max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            process.kill()
            code = process.wait()
    return code, stdout, lines


def _reason(code: int, lines: list[str]) -> str:
    errors = [line for line in lines if "ERROR" in line] or lines[-5:]
    detail = " | ".join(line.strip() for line in errors) or "(no output)"
    return f"scripts/local-model start failed with exit code {code}: {detail}"


def _warm_up(model: Model) -> None:
    response = httpx.post(
        f"{model.base_url}/chat/completions",
        json={
            "model": model.id,
            "messages": [{"role": "user", "content": "Say OK."}],
            "max_tokens": 4,
            "temperature": 0,
        },
        timeout=WARMUP_TIMEOUT_S,
    )
    response.raise_for_status()


def _stop_if_started_here() -> None:
    if _started_here and os.environ.get("CI") == "true":
        subprocess.run([str(SCRIPT), "stop"], check=False, timeout=60)


def ensure_local_model(progress: Callable[[str], None] | None = None) -> LocalModel:
    """The started and warmed-up local model server (once per process).

    Args:
        progress: called with each progress line of the start script, as it arrives.

    Raises:
        LocalModelUnavailable: the server cannot be started here (the message says why).
        RuntimeError: the server started but failed the warm-up request.
    """
    global _outcome
    if _outcome is None:
        try:
            _outcome = _ensure(progress)
        except RuntimeError as exc:  # remembered: every test reports the same failure
            _outcome = exc
        # Under pytest-xdist this worker may end before the others are done with the server:
        # the run's controller stops it once they all are (see tests/support/servers.py).
        if _started_here and not (
            os.environ.get("CI") == "true"
            and stop_when_run_ends("local-model", [str(SCRIPT), "stop"])
        ):
            atexit.register(_stop_if_started_here)
    if isinstance(_outcome, Exception):
        raise _outcome
    return _outcome


def _ensure(progress: Callable[[str], None] | None) -> LocalModel | Exception:
    global _started_here
    if os.environ.get(SKIP_ENV) == "1":
        return LocalModelUnavailable(f"local model not used: {SKIP_ENV}=1")
    unavailable = os.environ.get(UNAVAILABLE_ENV, "").strip()
    if unavailable:
        return LocalModelUnavailable(f"local model unavailable: {unavailable}")
    if not SCRIPT.is_file():
        return LocalModelUnavailable(f"local model unavailable: {SCRIPT} is missing")
    was_running = _status_running()
    started = time.perf_counter()
    code, stdout, lines = _start(progress)
    start_seconds = time.perf_counter() - started
    if code != 0:
        return LocalModelUnavailable(_reason(code, lines))
    _started_here = not was_running
    urls = [line.strip() for line in stdout.splitlines() if line.strip().startswith("http")]
    base_url = urls[-1] if urls else get_model("local", "qwen2.5-coder-1.5b").base_url
    model = replace(get_model("local", "qwen2.5-coder-1.5b"), base_url=base_url.rstrip("/"))
    started = time.perf_counter()
    try:
        _warm_up(model)
    except httpx.HTTPError as exc:
        raise RuntimeError(
            f"the local model server at {base_url} started but the warm-up request failed: "
            f"{type(exc).__name__}: {exc}. See scripts/local-model status and its log."
        ) from exc
    warmup_seconds = time.perf_counter() - started
    print(
        f"[e2e] local model ready at {base_url} (start {start_seconds:.1f} s, "
        f"warm-up {warmup_seconds:.1f} s)",
        file=sys.stderr,
    )
    return LocalModel(
        model=model,
        base_url=base_url,
        start_seconds=start_seconds,
        warmup_seconds=warmup_seconds,
    )
