"""The test suite's own machinery: the `slow`/`external` lists name real tests, tests sharing an
expensive fixture run on one pytest-xdist worker, and a server a worker started is stopped once,
by the controller, when the whole run ends."""

from __future__ import annotations

import ast
import fnmatch
import functools
import subprocess
import sys
from pathlib import Path

import pytest

from support import ROOT
from support.markers import EXTERNAL, SLOW, matcher
from support.scheduling import GroupScheduling, write_groups
from support.servers import RUN_DIR_ENV, make_run_dir, stop_servers, stop_when_run_ends


@functools.cache
def _test_functions(path: Path) -> set[str]:
    tree = ast.parse(path.read_text("utf-8"))
    return {
        node.name
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith("test")
    }


@pytest.mark.parametrize("entry", SLOW + EXTERNAL)
def test_every_marker_entry_names_a_test_that_exists(entry: str) -> None:
    where, _, rest = entry.partition("::")
    files = sorted(ROOT.glob(where))
    assert files, f"{entry!r}: no file {where} (renamed or removed? fix tests/support/markers.py)"
    if rest:
        name = rest.split("[")[0]
        found = [f for f in files if fnmatch.filter(_test_functions(f), name)]
        assert found, f"{entry!r}: no test {name} in {where} (fix tests/support/markers.py)"


def test_an_entry_covers_its_parameters_and_tests_and_nothing_else() -> None:
    pattern = matcher(["tests/a.py::test_x", "tests/b.py", "tests/c.py::test_y[p-*"])
    assert pattern.fullmatch("tests/a.py::test_x")
    assert pattern.fullmatch("tests/a.py::test_x[asyncio]")
    assert not pattern.fullmatch("tests/a.py::test_x_more")
    assert pattern.fullmatch("tests/b.py::test_anything[1]")
    assert not pattern.fullmatch("tests/bb.py::test_anything")
    assert pattern.fullmatch("tests/c.py::test_y[p-openai]")
    assert not pattern.fullmatch("tests/c.py::test_y[q-openai]")


@pytest.mark.timeout(300)
def test_fast_leaves_out_the_listed_and_the_server_tests() -> None:
    """What `scripts/test --fast` selects, collected in a fresh pytest."""
    done = subprocess.run(
        [
            *(sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"),
            *("-m", "not slow and not external"),
            "tests/test_docs_site.py",  # slow: the whole file
            "tests/llm/test_faults.py",  # slow: the cases that wait on timeouts
            "tests/temporal/test_durable_run.py",  # external: the Temporal dev server
            "tests/e2e/test_local_model.py",  # external: the local model (local_llm)
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    ids = [line for line in done.stdout.splitlines() if "::" in line]
    assert ids and all(i.startswith("tests/llm/test_faults.py::") for i in ids)
    assert not [i for i in ids if "stall_before_every_first_event" in i]
    assert [i for i in ids if "truncated" in i or "byte_by_byte" in i]


def test_a_workers_server_is_stopped_by_the_controller_at_the_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    monkeypatch.delenv(RUN_DIR_ENV, raising=False)
    stopped = tmp_path / "stopped"
    command = [sys.executable, "-c", f"open({str(stopped)!r}, 'a').write('x')"]
    # without xdist, the fixture stops its server itself
    assert not stop_when_run_ends("server", command)
    run_dir = make_run_dir()
    try:
        assert not stop_when_run_ends("server", command)  # the controller's own process
        monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw1")
        assert stop_when_run_ends("server", command)
        assert stop_when_run_ends("server", command)  # two workers started it: stopped once
        assert not stopped.exists()
    finally:
        stop_servers(run_dir)
    assert stopped.read_text() == "x"
    assert not run_dir.exists()


def test_the_scheduler_makes_one_unit_of_a_group(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(RUN_DIR_ENV, str(tmp_path))
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw0")
    write_groups({"tests/a.py::test_1": "dists", "tests/b.py::test_2[x]": "dists"})
    scheduler = GroupScheduling.__new__(GroupScheduling)  # the scopes only: no workers
    scheduler._groups = None
    assert scheduler._split_scope("tests/a.py::test_1") == "group:dists"
    assert scheduler._split_scope("tests/b.py::test_2[x]") == "group:dists"
    assert scheduler._split_scope("tests/a.py::test_3") == "tests/a.py::test_3"


@pytest.mark.timeout(300)
def test_tests_sharing_a_fixture_run_on_one_worker() -> None:
    """`-n 2 --dist loadgroup`: the two tests of a module-scoped server go to one worker (without
    the grouping, one each), so the server is started once."""
    done = subprocess.run(
        [
            *(sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-v"),
            *("-n", "2", "--dist", "loadgroup", "tests/llm/test_openai_completions.py"),
            *("-k", "test_any_rechunking_gives_the_same_message"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    ran = [line.split() for line in done.stdout.splitlines() if line.startswith("[gw")]
    assert len(ran) == 2 and all("PASSED" in words for words in ran), done.stdout
    assert len({words[0] for words in ran}) == 1, done.stdout
