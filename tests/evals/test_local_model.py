"""The gallery dataset on the local model (`scripts/local-model`), through `agentcore eval`: the
small model calls the calculator and gives the typed output of every case."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def local_model_port() -> str:
    from e2e.local_server import LocalModelUnavailable, ensure_local_model

    try:
        local = ensure_local_model()
    except LocalModelUnavailable as exc:
        pytest.skip(str(exc))
    return str(local.base_url.rsplit(":", 1)[1].split("/")[0])


@pytest.mark.local_llm
@pytest.mark.timeout(600)
def test_the_gallery_dataset_on_the_local_model(local_model_port: str, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTCORE_")}
    env["AGENTCORE_LOCAL_PORT"] = local_model_port
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), env.get("PYTHONPATH", "")])
    report_file = tmp_path / "local.json"
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "examples" / "eval_agent.py"),
            "--local",
            "--concurrency",
            "1",
            "--json",
            str(report_file),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=580,
        check=False,
    )
    assert done.returncode == 0, f"stdout:\n{done.stdout}\nstderr:\n{done.stderr}"
    report = json.loads(report_file.read_text())
    assert report["failures"] == []
    cases = {c["name"]: c for c in report["cases"]}
    assert set(cases) == {"product", "product_plus", "power"}
    for case in cases.values():
        assert case["attributes"]["error"] is None
        assert case["metrics"]["input_tokens"] > 0
    # the model calls its tool and answers with a number in most cases (a 1.5B model: not all)
    called = [c for c in cases.values() if c["assertions"]["called_calculator"]["value"]]
    right = [c for c in cases.values() if c["assertions"]["EqualsExpected"]["value"]]
    assert len(called) >= 2 and len(right) >= 2, done.stdout
    print(done.stdout)
