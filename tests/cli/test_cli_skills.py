"""`agentcore` and Agent Skills, in-process with the faux model: `--skills DIR`, the default
folders (`~/.agents/skills`, the working directory's `.agents/skills`), and trust: a project's
folder is skipped, with a warning naming it and `--trust-skills`, when nobody can be asked.
(The chat's question, `/skills` and `/skill` are tested in a pty: tests/cli/test_cli_tty.py.)"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentcore.cli import main
from agentcore.llm import register_model
from agentcore.testing import FauxProvider, faux_text, faux_tool_call


def skill(folder: Path, name: str, body: str = "Be brief.") -> Path:
    folder = folder / name
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: The {name} skill.\n---\n{body}\n", encoding="utf-8"
    )
    return folder


@pytest.fixture
def faux() -> Iterator[FauxProvider]:
    provider = FauxProvider()
    register_model(provider.model)
    yield provider


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working directory with `.agents/skills/notes`, and a home with `~/.agents/skills/mine`."""
    home, project = tmp_path / "home", tmp_path / "project"
    skill(home / ".agents" / "skills", "mine")
    skill(project / ".agents" / "skills", "notes", body="NOTES-BODY")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(project)
    return project


def run(faux: FauxProvider, *args: str) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    argv = ["run", "hi", "--model", f"{faux.provider_id}/faux-1", *args]
    code = main(argv, stdin=io.StringIO(""), stdout=out, stderr=err)
    return code, err.getvalue()


def test_a_project_folder_is_skipped_without_trust_naming_it_and_the_flag(
    faux: FauxProvider, project: Path
) -> None:
    faux.set_responses([faux_text("ok")])
    code, err = run(faux)
    assert code == 0
    folder = str((project / ".agents" / "skills").resolve())
    assert f"the skills in {folder} are not loaded" in err and "--trust-skills" in err
    prompt = faux.calls[0].context.system_prompt
    assert "<name>mine</name>" in prompt  # the user's own folder is trusted
    assert "<name>notes</name>" not in prompt
    assert not (Path(os.environ["AGENTCORE_HOME"]) / "trusted-skills.json").exists()


def test_trust_skills_loads_the_project_folder_and_the_model_can_activate(
    faux: FauxProvider, project: Path
) -> None:
    faux.set_responses([faux_tool_call("activate_skill", {"name": "notes"}), faux_text("ok")])
    code, err = run(faux, "--trust-skills")
    assert code == 0 and "not loaded" not in err
    prompt = faux.calls[0].context.system_prompt
    assert "<name>mine</name>" in prompt and "<name>notes</name>" in prompt
    result = faux.calls[1].context.messages[-1]
    assert "NOTES-BODY" in result.content[0].text  # type: ignore[union-attr]


def test_a_remembered_answer_is_used_without_asking(faux: FauxProvider, project: Path) -> None:
    trust = Path(os.environ["AGENTCORE_HOME"]) / "trusted-skills.json"
    trust.parent.mkdir(parents=True, exist_ok=True)
    trust.write_text(json.dumps({str((project / ".agents" / "skills").resolve()): True}))
    faux.set_responses([faux_text("ok")])
    code, err = run(faux)
    assert code == 0 and "not loaded" not in err
    assert "<name>notes</name>" in faux.calls[0].context.system_prompt


def test_skills_dirs_replace_the_defaults_and_problems_are_warned(
    faux: FauxProvider, project: Path, tmp_path: Path
) -> None:
    chosen = tmp_path / "chosen"
    skill(chosen, "pdf")
    broken = chosen / "broken"
    broken.mkdir()
    (broken / "SKILL.md").write_text("---\nname: broken\n---\nno description\n")
    faux.set_responses([faux_text("ok")])
    code, err = run(faux, "--skills", str(chosen), "--skills", str(tmp_path / "missing"))
    assert code == 0
    prompt = faux.calls[0].context.system_prompt
    assert "<name>pdf</name>" in prompt
    assert "<name>mine</name>" not in prompt and "<name>notes</name>" not in prompt
    assert f"warning: skill {broken / 'SKILL.md'}: no description" in err
    assert f"warning: skill {tmp_path / 'missing'}: no such folder" in err


def test_without_skills_folders_the_request_is_unchanged(
    faux: FauxProvider, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    faux.set_responses([faux_text("ok")])
    code, err = run(faux, "--system", "You help.")
    assert code == 0 and err == ""
    assert faux.calls[0].context.system_prompt == "You help."
    assert [t.name for t in faux.calls[0].context.tools] == []
