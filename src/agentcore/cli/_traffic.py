"""`--record FILE` and `--replay FILE`: a chat's or run's model traffic recorded, or answered from
a recording (`agentcore.testing.Recording`; docs/recording.md).

The recording is entered around the whole command, before the model is checked (a replay needs
no API key), and left after it: requests that differ from the recording end the command with
exit code 1 and the differences on stderr; a recording that cannot be read is a usage error.

A drifted request also ends its run with an error (the 400 the recording answers with), which
would say the same thing again: `reported_on_exit` tells the commands to leave that error to
the list printed on leaving, so that each drift is printed once.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from ._args import Parsed
from ._run import EXIT_FAILED, CommandError

__all__ = ["recorded_traffic", "reported_on_exit"]


def reported_on_exit(error: str) -> bool:
    """Whether a run's `error` is a drift the active recording lists when it is left (the
    error text holds the first line of one of its drifts)."""
    from ..llm import interception
    from ..testing import Recording

    recording = interception.current()
    if not isinstance(recording, Recording):
        return False
    return any(problem.partition("\n")[0] in error for problem in recording.drifts())


@contextmanager
def recorded_traffic(parsed: Parsed) -> Iterator[None]:
    """Record (`--record`, the file written anew) or replay (`--replay`) the command's model
    traffic; nothing when neither is given.

    Raises:
        CommandError: the recording cannot be used (exit code 2), or the requests differed from
            it (exit code 1, the message naming each difference).
    """
    path = parsed.record if parsed.record is not None else parsed.replay
    if path is None:
        yield
        return
    from ..testing import Recording, RecordingDriftError, RecordingError

    recording = Recording(path, mode="rerecord" if parsed.record is not None else "replay")
    try:
        with recording:
            yield
    except RecordingDriftError as exc:
        raise CommandError(str(exc), EXIT_FAILED) from None
    except RecordingError as exc:
        raise CommandError(str(exc)) from None
