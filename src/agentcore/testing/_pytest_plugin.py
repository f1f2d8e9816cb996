"""The pytest plugin for recorded model traffic: the `recorded` marker, the `recorded_traffic`
fixture and the `--agentcore-record` option.

Installed with agentcore (a `pytest11` entry point), so nothing needs registering. Private: only
pytest loads it (never `import agentcore`), so it may import pytest at module level.

```python
import pytest


@pytest.mark.recorded  # tests/recordings/test_weather/test_paris.json
async def test_paris(agent):
    await agent.prompt("What is the weather in Paris?")
    assert "Paris" in agent.state.messages[-1].content[0].text
```

A marked test (or one that asks for the `recorded_traffic` fixture) runs inside
`agentcore.testing.recorded(path, mode=...)`: its model requests are answered from the file, with
no server and no API key. A request the file does not hold, or a recorded exchange left unused,
fails the test with the difference named (`RecordingDriftError`, at teardown).

The file is `recordings/<test module>/<test name>.json` beside the test module, or the marker's
`path` (relative to the test module's directory). The mode is `--agentcore-record=MODE` when
given, else the marker's `mode`, else `replay`: run `pytest --agentcore-record=missing` once to
record what is missing (with the provider's key set), `--agentcore-record=rerecord` to record
everything anew.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import pytest

from .recording._recording import DEFAULT_IGNORED_FIELDS, Recording, RecordMode

__all__ = ["pytest_addoption", "pytest_configure", "recorded_traffic"]

_MODES = ("replay", "missing", "rerecord")
_UNSAFE = re.compile(r"[^\w.\-\[\]]+")


def pytest_addoption(parser: pytest.Parser) -> None:
    """Add `--agentcore-record MODE`."""
    group = parser.getgroup("agentcore", "agentcore recorded model traffic")
    group.addoption(
        "--agentcore-record",
        dest="agentcore_record",
        choices=_MODES,
        default=None,
        help="how tests marked `recorded` treat model traffic: replay (the default: from the "
        "files only), missing (record what the files lack), rerecord (record everything anew)",
    )


def pytest_configure(config: pytest.Config) -> None:
    """Register the `recorded` marker."""
    config.addinivalue_line(
        "markers",
        "recorded(path=None, *, mode=None, ignore_fields=None): replay the test's model traffic "
        "from a recording (agentcore.testing.recorded); see docs/recording.md",
    )


def _default_path(node: pytest.Item) -> Path:
    module = Path(str(node.path))
    name = _UNSAFE.sub("_", node.name)
    return module.parent / "recordings" / module.stem / f"{name}.json"


@pytest.fixture
def recorded_traffic(request: pytest.FixtureRequest) -> Iterator[Recording]:
    """The test's model traffic, replayed from (or recorded to) its recording file.

    Yields the active `Recording`; leaving it fails the test with `RecordingDriftError` when
    the requests differ from the recording.
    """
    node = cast(pytest.Item, request.node)
    marker = node.get_closest_marker("recorded")
    args: tuple[Any, ...] = marker.args if marker is not None else ()
    kwargs: dict[str, Any] = dict(marker.kwargs) if marker is not None else {}
    given = args[0] if args else kwargs.get("path")
    path = _default_path(node) if given is None else Path(str(node.path)).parent / given
    option = request.config.getoption("agentcore_record")
    mode = cast(RecordMode, option or kwargs.get("mode") or "replay")
    ignore = kwargs.get("ignore_fields")
    fields = tuple(ignore) if ignore is not None else DEFAULT_IGNORED_FIELDS
    with Recording(path, mode=mode, ignore_fields=fields) as recording:
        yield recording


@pytest.fixture(autouse=True)
def _agentcore_recorded_marker(request: pytest.FixtureRequest) -> None:
    """Tests marked `recorded` get the `recorded_traffic` fixture without asking for it."""
    if request.node.get_closest_marker("recorded") is not None:
        request.getfixturevalue("recorded_traffic")
