"""Recorded model traffic: `recorded(path, mode=...)` and the `Recording` it returns.

While a recording is active, every SDK client the model layer builds (openai, anthropic,
google-genai, boto3 for Bedrock) sends its requests through it. In `"replay"` mode each request
is answered from the file, no connection is opened and no API key is needed; in `"missing"` mode
requests the file does not hold are sent to the server and added; in `"rerecord"` mode every
request is sent and the file is written anew.

Drift is an error that names the difference. A request that no unused recorded exchange answers
gets a 400 response whose error text says what differs (so the run ends with that text as its
error, like any refused request), and leaving the block raises `RecordingDriftError` listing
every such request and every recorded exchange left unused.

The interception point and the file format are described in `_record_http`, `_record_boto` and
`_record_format`; matching and the words of a drift in `_drift`.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable, Sequence
from contextvars import Token
from pathlib import Path
from types import TracebackType
from typing import Any, Literal, get_args

from ...llm import interception as _intercept
from ._boto import wrap_botocore_client
from ._drift import describe_drift, match_key, nearest
from ._exchange import Outcome, Pending, drift_response
from ._format import (
    RecordingError,
    dump_recording,
    environment_secrets,
    load_recording,
    request_record,
    scrub,
    secret_values_of,
    write_file,
)
from ._http import wrap_client

__all__ = ["RecordMode", "Recording", "RecordingDriftError", "recorded"]

RecordMode = Literal["replay", "missing", "rerecord"]
"""How a recording treats requests: `replay` answers from the file only (the default);
`missing` replays what the file holds and records the rest; `rerecord` records everything anew."""

_MODES: tuple[str, ...] = get_args(RecordMode)
STAND_IN_KEY = "agentcore-replay-no-key"
"""The API key a replayed request carries when none is set (it is never sent anywhere)."""
DEFAULT_IGNORED_FIELDS = ("prompt_cache_key",)
"""Request body fields that differ between runs without changing the answer (cache affinity)."""


class RecordingDriftError(RecordingError, AssertionError):
    """The requests of a run differ from the recording: a request the recording does not hold,
    or recorded exchanges left unused. The message names each difference."""


class Recording:
    """Model traffic recorded to, or replayed from, one file; a context manager.

    ```python
    from agentcore.testing import recorded

    with recorded("tests/recordings/weather.json") as recording:  # mode="replay"
        await agent.prompt("What is the weather in Paris?")
    ```

    Args:
        path: the recording file (JSON, one exchange per record; see docs/recording.md).
        mode: `"replay"` (the default: answer from the file, no network, no key), `"missing"`
            (replay what is recorded, record the rest) or `"rerecord"` (record everything).
        ignore_fields: top-level request body fields left out of matching and not written
            (default: `prompt_cache_key`, a per-session cache hint).

    Raises:
        RecordingError: an unknown mode; in replay mode, no file at `path` (on entering).
        RecordingDriftError: on leaving, if a request was not in the recording or recorded
            exchanges were left unused (replay mode).
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        mode: RecordMode = "replay",
        ignore_fields: Sequence[str] = DEFAULT_IGNORED_FIELDS,
    ) -> None:
        if mode not in _MODES:
            raise RecordingError(
                f"unknown recording mode {mode!r}: expected one of {', '.join(_MODES)}"
            )
        self.path = Path(path)
        self.mode: RecordMode = mode
        self.ignore_fields = tuple(ignore_fields)
        self.stand_in = STAND_IN_KEY
        self.lock = threading.RLock()
        self._recorded: list[dict[str, Any]] = []
        self._keys: list[str] = []
        self._used: list[bool] = []
        self._new: list[Pending] = []  # exchanges being recorded, in request order
        self._problems: list[str] = []
        self._secrets: set[str] = set()
        self._token: Token[Any] | None = None
        self._requests = 0
        self._ids = 0

    # --- the context manager ------------------------------------------------------------------

    def __enter__(self) -> Recording:
        if self._token is not None:
            raise RecordingError(f"the recording {self.path} is already active")
        if _intercept.current() is not None:
            raise RecordingError(
                f"cannot start the recording {self.path}: another recording is active here "
                "(recordings do not nest)"
            )
        loaded = self.mode != "rerecord" and (self.mode == "replay" or self.path.exists())
        self._recorded = load_recording(self.path) if loaded else []
        self._new, self._problems, self._requests, self._ids = [], [], 0, 0  # entered anew
        self._keys = [match_key(e["request"]) for e in self._recorded]
        self._used = [False] * len(self._recorded)
        self._secrets = environment_secrets()
        self._token = _intercept.install(self)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close(exc)

    async def __aenter__(self) -> Recording:
        return self.__enter__()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close(exc)

    def close(self, exc: BaseException | None = None) -> None:
        """Stop intercepting, write the file (when recording), and raise what drifted.

        Called by leaving the `with` block. With `exc` (an exception already on its way out),
        the drift is added to it as a note instead of being raised.
        """
        if self._token is None:
            return
        _intercept.uninstall(self, self._token)
        self._token = None
        if self.mode != "replay":
            self._write()
        problems = self.problems()
        if not problems:
            return
        error = RecordingDriftError(
            f"the model traffic differs from the recording {self.path}:\n"
            + "\n".join(f"- {p}" for p in problems)
        )
        if exc is not None:
            exc.add_note(str(error))
            return
        raise error

    # --- what happened ------------------------------------------------------------------------

    @property
    def requests(self) -> int:
        """How many requests went through the recording so far."""
        return self._requests

    @property
    def replayed(self) -> int:
        """How many requests were answered from the file."""
        return sum(self._used)

    @property
    def unused(self) -> list[int]:
        """The numbers (1-based, in file order) of recorded exchanges no request used yet."""
        return [i + 1 for i, used in enumerate(self._used) if not used]

    def problems(self) -> list[str]:
        """Every drift so far: requests not in the recording and, in replay mode, recorded
        exchanges left unused."""
        with self.lock:
            found = list(self._problems)
            if self.mode == "replay" and self.unused:
                described = ", ".join(self._describe(i - 1) for i in self.unused)
                found.append(
                    f"{len(self.unused)} recorded exchange(s) never requested: {described}"
                )
            return found

    def drifts(self) -> list[str]:
        """The text of each request so far that the recording did not hold (what its 400
        response said), in the order they came."""
        with self.lock:
            return list(self._problems)

    def _describe(self, index: int) -> str:
        request = self._recorded[index]["request"]
        body = request.get("body")
        model = body.get("model") if isinstance(body, dict) else None
        url = str(request.get("url", ""))
        path = "/" + url.split("://", 1)[-1].partition("/")[2].split("?")[0]
        return f"exchange {index + 1} ({request.get('method')} {path}" + (
            f", model {model})" if model else ")"
        )

    # --- the interceptor the model layer calls ------------------------------------------------

    def wrap_http(self, client: Any) -> None:
        """Route an httpx/httpx2 client's requests through this recording."""
        wrap_client(self, client)

    def wrap_botocore(self, client: Any) -> None:
        """Route a boto3 Bedrock runtime client's requests through this recording."""
        wrap_botocore_client(self, client)

    def stand_in_key(self) -> str | None:
        """A key for requests that have none: replays need no key (None in rerecord mode)."""
        return None if self.mode == "rerecord" else self.stand_in

    def replays_only(self) -> bool:
        """Whether every request is answered from the file (replay mode)."""
        return self.mode == "replay"

    def next_id(self) -> int:
        """The next number for an id an adapter makes up (1, 2, ... within this recording)."""
        with self.lock:
            self._ids += 1
            return self._ids

    def answer(
        self,
        method: str,
        url: str,
        headers: Iterable[tuple[str, str]],
        body: bytes,
        *,
        has_credentials: bool,
    ) -> Outcome:
        """Decide how one request is answered (called by the transports, from any thread)."""
        headers = list(headers)
        secrets = secret_values_of(headers, url) | self._secrets
        request = scrub(request_record(method, url, headers, body, self.ignore_fields), secrets)
        key = match_key(request)
        with self.lock:
            self._requests += 1
            number = self._requests
            if self.mode != "rerecord":
                for index, recorded_key in enumerate(self._keys):
                    if not self._used[index] and recorded_key == key:
                        self._used[index] = True
                        return Outcome(response=self._recorded[index]["response"])
            if self.mode == "replay" or not has_credentials:
                text = self._drift_text(number, request)
                if self.mode != "replay":
                    text += "\n    (not recorded: the request has no API key or credentials)"
                self._problems.append(text)
                return Outcome(response=drift_response(text))
            pending = Pending(self.lock, request, secrets)
            self._new.append(pending)
            return Outcome(pending=pending)

    def _drift_text(self, number: int, request: dict[str, Any]) -> str:
        candidates = [(i, e["request"]) for i, e in enumerate(self._recorded) if not self._used[i]]
        index = nearest(request, candidates)
        recorded = self._recorded[index]["request"] if index is not None else None
        return describe_drift(number, request, recorded, (index or 0) + 1)

    def _write(self) -> None:
        with self.lock:
            new = [e for e in (pending.exchange() for pending in self._new) if e is not None]
            if self.mode == "missing":
                if not new:
                    return  # nothing recorded: the file stays as it is
                exchanges = [*self._recorded, *new]  # what was there, then what is new
            else:
                exchanges = new
            text = dump_recording(scrub(exchanges, self._secrets))
        write_file(self.path, text)


def recorded(
    path: str | os.PathLike[str],
    *,
    mode: RecordMode = "replay",
    ignore_fields: Sequence[str] = DEFAULT_IGNORED_FIELDS,
) -> Recording:
    """Record or replay the model traffic of a block: `with recorded(path) as recording: ...`.

    The same as `Recording(path, mode=mode, ignore_fields=ignore_fields)`; see `Recording`.
    """
    return Recording(path, mode=mode, ignore_fields=ignore_fields)
