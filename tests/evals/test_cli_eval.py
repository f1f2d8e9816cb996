"""`agentcore eval` through a subprocess: the gallery dataset on its scripted agent (tool calls,
a typed output, OpenTelemetry spans), the JSON report, a baseline regression's exit code, no
progress bar when stderr is not a terminal, and bad dataset, agent and report files named."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DATASET = ROOT / "examples" / "evals" / "arithmetic.yaml"
SCRIPTED = f"{ROOT / 'examples' / 'eval_agent.py'}:scripted_agent"


def agentcore(
    *args: str, cwd: Path = ROOT, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTCORE_")}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), env.get("PYTHONPATH", "")])
    env["COLUMNS"] = "160"
    return subprocess.run(
        [sys.executable, "-m", "agentcore.cli", "eval", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def assertions(report: dict[str, object]) -> dict[str, dict[str, bool]]:
    cases = report["cases"]
    assert isinstance(cases, list)
    return {c["name"]: {k: v["value"] for k, v in c["assertions"].items()} for c in cases}


def test_the_gallery_dataset_runs_and_writes_a_json_report(tmp_path: Path) -> None:
    done = agentcore(str(DATASET), "--agent", SCRIPTED, "--json", str(tmp_path / "r.json"))
    assert done.returncode == 0, done.stderr
    assert "Evaluation Summary" in done.stdout and "product_plus" in done.stdout
    assert done.stderr == ""  # not a terminal: no progress bar, nothing else
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["failures"] == []
    everything = {
        "EqualsExpected": True,
        "called_calculator": True,
        "answered": True,
        "within_usage": True,
        "calculator_span": True,  # the execute_tool span of agentcore.tracing
    }
    assert assertions(report) == {
        "product": everything,
        "product_plus": {"calculator_arguments": True, **everything},
        "power": everything,
    }
    outputs = {c["name"]: c["output"] for c in report["cases"]}
    assert outputs == {"product": 391, "product_plus": 395, "power": 1000}  # typed: ints
    [case] = [c for c in report["cases"] if c["name"] == "power"]
    assert case["attributes"]["tool_calls"] == [
        {"name": "calculator", "arguments": {"expression": "2 ** 10 - 24"}}
    ]


WRONG_AGENT = """
from agentcore import Agent
from agentcore.testing import FauxProvider, faux_tool_call

def wrong_agent():
    faux = FauxProvider([faux_tool_call("final_answer", {"value": 7})])
    agent = Agent(initial_state={"model": faux.model}, output_type=int)
    agent.faux = faux
    return agent
"""


def test_a_baseline_regression_exits_1_and_names_each(tmp_path: Path) -> None:
    baseline = tmp_path / "baseline.json"
    assert agentcore(str(DATASET), "--agent", SCRIPTED, "--json", str(baseline)).returncode == 0
    same = agentcore(str(DATASET), "--agent", SCRIPTED, "--baseline", str(baseline))
    assert same.returncode == 0, same.stderr
    assert same.stderr == f"no regression against {baseline}\n"

    (tmp_path / "wrong_agents.py").write_text(WRONG_AGENT)
    worse = agentcore(
        str(DATASET),
        "--agent",
        "wrong_agents:wrong_agent",
        "--baseline",
        str(baseline),
        cwd=tmp_path,
    )
    assert worse.returncode == 1, worse.stderr
    lines = worse.stderr.splitlines()
    assert "regression: product: assertion EqualsExpected: True -> False" in lines
    assert "regression: power: assertion called_calculator: True -> False" in lines
    assert "regression: product_plus: assertion calculator_arguments: True -> False" in lines
    # EqualsExpected, called_calculator, calculator_span: 3 each; calculator_arguments
    assert lines[-1] == f"10 regression(s) against {baseline}"


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (None, "no such dataset file: {path}"),
        ("cases: [oops", "the dataset {path} cannot be used: while parsing a flow sequence"),
        (
            "name: x\ncases:\n  - name: a\n    inputs: hi\nevaluators:\n  - NoSuchEvaluator\n",
            "the dataset {path} cannot be used: ",
        ),
        (
            "name: x\ncases: 3\n",
            "the dataset {path} cannot be used: cases: Input should be a valid list",
        ),
    ],
    ids=["missing", "bad_yaml", "unknown_evaluator", "bad_cases"],
)
def test_a_bad_dataset_file_is_named_with_its_problem(
    tmp_path: Path, content: str | None, problem: str
) -> None:
    path = tmp_path / "data.yaml"
    if content is not None:
        path.write_text(content)
    done = agentcore(str(path), "--agent", SCRIPTED)
    assert done.returncode == 2
    assert done.stderr.startswith("agentcore: error: " + problem.format(path=path)), done.stderr
    if "NoSuchEvaluator" in (content or ""):
        assert "NoSuchEvaluator" in done.stderr


def test_a_bad_agent_or_baseline_is_named(tmp_path: Path) -> None:
    done = agentcore(str(DATASET), "--agent", "no_colon")
    assert done.returncode == 2
    assert "--agent: expected MODULE:FACTORY" in done.stderr
    done = agentcore(str(DATASET), "--agent", "no_such_module_here:make")
    assert done.returncode == 2 and "--agent: cannot import 'no_such_module_here'" in done.stderr
    done = agentcore(str(DATASET), "--agent", f"{ROOT / 'examples' / 'eval_agent.py'}:nope")
    assert done.returncode == 2 and "has no function 'nope'" in done.stderr
    (tmp_path / "b.json").write_text("[]")
    done = agentcore(str(DATASET), "--agent", SCRIPTED, "--baseline", str(tmp_path / "b.json"))
    assert done.returncode == 2 and "--baseline: the report" in done.stderr


RECORDING = ROOT / "examples" / "evals" / "arithmetic.recording.json"
LOCAL = f"{ROOT / 'examples' / 'eval_agent.py'}:make_agent"


def test_the_local_model_run_replayed_offline(tmp_path: Path) -> None:
    # recorded once against the local model (--record, --concurrency 1): no server, no key here
    done = agentcore(
        str(DATASET),
        "--agent",
        LOCAL,
        "--replay",
        str(RECORDING),
        "--json",
        str(tmp_path / "r.json"),
    )
    assert done.returncode == 0, done.stderr
    report = json.loads((tmp_path / "r.json").read_text())
    assert {c["name"]: c["output"] for c in report["cases"]} == {
        "product": 391,
        "product_plus": 395,
        "power": 1000,
    }
    assert all(all(a.values()) for a in assertions(report).values()), assertions(report)


CHANGED_POWER = (
    'nearest is exchange 7: messages[1].content: recorded "What is 2 ** 10 - 24?", '
    'sent "What is 2 ** 10 - 25?"'
)  # the power case's first request in the recording (exchanges 7-9 are that case's)


def test_a_replay_that_drifts_exits_1_naming_the_difference(tmp_path: Path) -> None:
    # the cases run at once: whichever exchanges the others have used when the changed request
    # comes, the nearest is the one it changed (chosen by content, not by arrival order)
    changed = DATASET.read_text().replace("What is 2 ** 10 - 24?", "What is 2 ** 10 - 25?")
    (tmp_path / "changed.yaml").write_text(changed)
    done = agentcore(str(tmp_path / "changed.yaml"), "--agent", LOCAL, "--replay", str(RECORDING))
    assert done.returncode == 1, done.stderr
    assert "2 ** 10 - 25" in done.stderr and "never requested" in done.stderr, done.stderr
    assert CHANGED_POWER in done.stderr, done.stderr
    assert "never requested: exchange 7 (" in done.stderr, done.stderr


def test_a_drifted_request_sent_first_is_matched_by_content(tmp_path: Path) -> None:
    # the adversarial order: the changed case alone, so that its request comes while every
    # recorded exchange is unused and all of them are as near by their top-level fields
    text = DATASET.read_text().replace("What is 2 ** 10 - 24?", "What is 2 ** 10 - 25?")
    head, _, rest = text.partition("cases:\n")
    power = rest[rest.index("  - name: power") : rest.index("evaluators:\n  - EqualsExpected")]
    (tmp_path / "first.yaml").write_text(
        head + "cases:\n" + power + rest[rest.index("evaluators:\n  - EqualsExpected") :]
    )
    done = agentcore(str(tmp_path / "first.yaml"), "--agent", LOCAL, "--replay", str(RECORDING))
    assert done.returncode == 1, done.stderr
    assert CHANGED_POWER in done.stderr, done.stderr
    assert "9 recorded exchange(s) never requested" in done.stderr, done.stderr


def test_the_progress_bar_on_a_terminal() -> None:
    import pty

    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTCORE_")}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), env.get("PYTHONPATH", "")])
    env["COLUMNS"] = "100"
    leader, follower = pty.openpty()
    with subprocess.Popen(
        [sys.executable, "-m", "agentcore.cli", "eval", str(DATASET), "--agent", SCRIPTED],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=follower,
    ) as proc:
        os.close(follower)
        seen = b""
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # the terminal closed with the process
                break
            if not chunk:
                break
            seen += chunk
        assert proc.wait(timeout=60) == 0
    os.close(leader)
    text = seen.decode("utf-8", "replace")
    assert "arithmetic" in text and "100%" in text  # the dataset's bar, finished
    assert text.endswith("\x1b[2K")  # then cleared: the report alone stays


def test_progress_forced_when_stderr_is_not_a_terminal() -> None:
    done = agentcore(str(DATASET), "--agent", SCRIPTED, "--progress")
    assert done.returncode == 0
    assert "arithmetic" in done.stderr and "100%" in done.stderr


SLOW_AGENT = """
from agentcore import Agent
from agentcore.testing import FauxProvider, faux_text

def slow_agent():
    faux = FauxProvider([faux_text("391")], latency=30)
    agent = Agent(initial_state={"model": faux.model}, request_timeout=None)
    agent.faux = faux
    return agent
"""


def test_a_case_slower_than_the_timeout_fails_saying_so(tmp_path: Path) -> None:
    (tmp_path / "slow_agents.py").write_text(SLOW_AGENT)
    report_file = tmp_path / "r.json"
    done = agentcore(
        str(DATASET),
        "--agent",
        "slow_agents:slow_agent",
        "--timeout",
        "0.5",
        "--json",
        str(report_file),
        cwd=tmp_path,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(report_file.read_text())
    assert report["cases"] == []
    messages = {f["name"]: f["error_message"] for f in report["failures"]}
    assert messages == dict.fromkeys(
        ("product", "product_plus", "power"),
        "TimeoutError: the case took longer than --timeout 0.5 s",
    )
    assert "Case Failures" in done.stdout


AGENTIC = """
name: agentic
cases:
  - name: product
    inputs: What is 17 * 23?
    expected_output: 391
evaluators:
  - ToolCorrectness: {expected_tools: [calculator, final_answer]}
  - MaxModelRequests: 2
  - MaxToolCalls: {max_calls: 1, evaluation_name: one_call}
  - ArgumentCorrectness: {tool_name: calculator, expected_arguments: {expression: 17 * 23}}
"""


def test_pydantic_evals_span_evaluators_read_agentcore_spans(tmp_path: Path) -> None:
    # its agentic evaluators count the execute_tool spans of agentcore.tracing; the final-answer
    # tool of a typed output runs as a tool, so it is counted (CalledTool leaves it out)
    (tmp_path / "agentic.yaml").write_text(AGENTIC)
    report = tmp_path / "r.json"
    done = agentcore(str(tmp_path / "agentic.yaml"), "--agent", SCRIPTED, "--json", str(report))
    assert done.returncode == 0, done.stderr
    [case] = json.loads(report.read_text())["cases"]
    results = {k: (v["value"], v["reason"]) for k, v in case["assertions"].items()}
    assert results["ToolCorrectness"][0] is True
    assert results["MaxModelRequests"][0] is True
    assert results["one_call"] == (False, "2 tool call(s), budget=1")
    assert results["ArgumentCorrectness"][0] is False  # no arguments on the spans by default
    done = agentcore(
        str(tmp_path / "agentic.yaml"),
        "--agent",
        SCRIPTED,
        "--trace-content",
        "--json",
        str(report),
    )
    [case] = json.loads(report.read_text())["cases"]
    assert case["assertions"]["ArgumentCorrectness"]["value"] is True


HOSTILE_DATASET = r"""
name: "hostile\e[2J"
cases:
  - name: "title\e]0;pwned\a"
    inputs: "What is 17 * 23?\e[2J"
    expected_output: 391
  - name: "clear\e[2J\e[H\x9b31m"
    inputs: What is 17 * 23?
    expected_output: 391
evaluators:
  - EqualsExpected
"""


def test_escape_sequences_in_the_dataset_are_printed_escaped(tmp_path: Path) -> None:
    (tmp_path / "hostile.yaml").write_text(HOSTILE_DATASET)
    done = agentcore(
        str(tmp_path / "hostile.yaml"), "--agent", SCRIPTED, "--show-output", "--progress"
    )
    assert done.returncode == 0, done.stderr
    assert "\x1b]" not in done.stdout and "\x1b[2J" not in done.stdout, repr(done.stdout)
    assert "\x9b" not in done.stdout and "\x07" not in done.stdout, repr(done.stdout)
    assert "title\\x1b]0;pwned\\x07" in done.stdout, done.stdout
    assert "clear\\x1b[2J\\x1b[H\\x9b31m" in done.stdout, done.stdout
    assert "hostile\\x1b[2J" in done.stderr  # the progress bar's label
    assert "\x1b[2J" not in done.stderr and "\x1b]" not in done.stderr
