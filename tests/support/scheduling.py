"""Keeping the tests that share an expensive fixture on one pytest-xdist worker.

pytest-xdist's own `--dist loadgroup` reads `xdist_group` marks and renames each test
(`test_x@group`); with pytest 9.2 the rename no longer takes (a node's id is no longer
`_nodeid`), so every test is scheduled on its own and a shared fixture is made on several
workers. This module does the same grouping without the rename: each worker writes the groups it
computed (`write_groups`, from the root `conftest.py`) to the run's shared folder before it
reports its collection, and the controller's scheduler (`GroupScheduling`, chosen for
`--dist loadgroup`) reads them when it splits the tests into work units. A test with no group is
its own unit, as with `--dist load`.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from xdist.scheduler import LoadScopeScheduling

from .servers import RUN_DIR_ENV

__all__ = ["GroupScheduling", "write_groups"]


def write_groups(groups: dict[str, str]) -> None:
    """In an xdist worker: publish `{test id: group}` to the controller."""
    run_dir = os.environ.get(RUN_DIR_ENV)
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if run_dir and worker:
        path = Path(run_dir, f"groups-{worker}.json")
        path.with_suffix(".tmp").write_text(json.dumps(groups))
        path.with_suffix(".tmp").replace(path)


class GroupScheduling(LoadScopeScheduling):
    """`--dist loadgroup` with the groups the workers wrote: one unit a group, one a test."""

    def __init__(self, config: Any, log: Any = None) -> None:
        super().__init__(config, log)
        self._groups: dict[str, str] | None = None

    def _split_scope(self, nodeid: str) -> str:
        if self._groups is None:
            self._groups = {}
            run_dir = os.environ.get(RUN_DIR_ENV)
            if run_dir:
                for path in sorted(Path(run_dir).glob("groups-*.json")):
                    self._groups.update(json.loads(path.read_text()))
        group = self._groups.get(nodeid)
        return f"group:{group}" if group is not None else nodeid
