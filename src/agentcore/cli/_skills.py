"""The command's skills: which folders are read (`--skills DIR`, else the cross-client
locations), whether a project's folder is trusted, and how skills are shown in a terminal.

`~/.agents/skills` is the user's own: always loaded. A folder given with `--skills` is chosen by
the person typing the command: loaded. The working directory's `.agents/skills` (the default
project folder) comes with whatever was checked out, so it is loaded only when trusted:
`--trust-skills`, or a "yes" to the question `agentcore chat` asks in a terminal, remembered per
folder in `trusted-skills.json` beside the sessions (`$AGENTCORE_HOME`, else
`$XDG_DATA_HOME/agentcore`). Without trust and without a terminal to ask in, the folder is
skipped with a warning naming it and the flag.

A skill's name and description are text from the folder's author: they go through `visible`
before they reach a terminal.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

import anyio

from ..skills import SkillProblem, SkillSet, load_skills
from ._safe import visible

__all__ = [
    "SkillFolders",
    "cli_skills",
    "problems_notice",
    "skill_folders",
    "skills_listing",
    "trust_file",
]

PROJECT_SKILLS = Path(".agents") / "skills"
USER_SKILLS = Path("~") / ".agents" / "skills"


@dataclass(frozen=True, slots=True)
class SkillFolders:
    """The folders to read, in load order (a later one overrides an earlier one's skill of
    the same name), and the one of them that needs trust (the project's, if any)."""

    folders: tuple[Path, ...]
    untrusted: Path | None = None


def skill_folders(given: Sequence[str], cwd: Path | None = None) -> SkillFolders:
    """`--skills` folders as given; without any, `~/.agents/skills` then the working
    directory's `.agents/skills` (which needs trust), those that exist."""
    if given:
        return SkillFolders(tuple(Path(g).expanduser() for g in given))
    folders: list[Path] = []
    user = USER_SKILLS.expanduser()
    if user.is_dir():
        folders.append(user)
    project = ((cwd or Path.cwd()) / PROJECT_SKILLS).absolute()
    untrusted = None
    if project.is_dir() and not (user.is_dir() and project.resolve() == user.resolve()):
        folders.append(project)
        untrusted = project
    return SkillFolders(tuple(folders), untrusted)


def trust_file() -> Path:
    """Where the answers to "trust this folder's skills?" are kept."""
    home = os.environ.get("AGENTCORE_HOME")
    if home:
        return Path(home).expanduser() / "trusted-skills.json"
    data = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data).expanduser() / "agentcore" / "trusted-skills.json"


def _answers(path: Path) -> dict[str, bool]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {k: v for k, v in data.items() if isinstance(k, str) and isinstance(v, bool)}


def _remember(path: Path, folder: str, trusted: bool) -> None:
    """Keep the answer (the file is the owner's only: 0600 in a 0700 folder)."""
    answers = _answers(path)
    answers[folder] = trusted
    with contextlib.suppress(OSError):
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(answers, f, indent=1, sort_keys=True)


def _trusted(
    folder: Path, *, trust: bool, ask: Callable[[str], str] | None, stderr: TextIO
) -> bool:
    """Whether the project `folder`'s skills load (reads and writes the trust file; blocking)."""
    if trust:
        return True
    key = str(folder.resolve())
    file = trust_file()
    known = _answers(file).get(key)
    if known is not None:
        return known
    if ask is None:
        stderr.write(
            f"warning: the skills in {visible(key)} are not loaded: the project folder is not "
            "trusted (pass --trust-skills, or answer the question agentcore chat asks in a "
            "terminal)\n"
        )
        return False
    names = ", ".join(visible(s.name) for s in load_skills(folder)) or "none readable"
    answer = ask(
        f"The project folder {visible(key)} has skills ({names}). A skill is instructions the "
        "model follows with your authority, and may pre-approve tools. Load them? [y/N] "
    )
    trusted = answer.strip().lower() in ("y", "yes")
    _remember(file, key, trusted)
    if trusted:
        stderr.write(f"(remembered in {file}: trusted)\n")
    else:
        stderr.write(f"(remembered in {file}: not loaded; --trust-skills loads them once)\n")
    return trusted


def _load(
    folders: SkillFolders,
    *,
    trust: bool,
    ask: Callable[[str], str] | None,
    stderr: TextIO,
) -> SkillSet:
    chosen = [
        f
        for f in folders.folders
        if f != folders.untrusted or _trusted(f, trust=trust, ask=ask, stderr=stderr)
    ]
    return load_skills(*chosen) if chosen else SkillSet()


async def cli_skills(
    given: Sequence[str],
    *,
    trust: bool,
    interactive: bool,
    stdin: TextIO,
    stderr: TextIO,
) -> SkillSet:
    """The skills of the command (in a worker thread: it reads the disk and may ask). With
    `interactive`, an untrusted project folder is asked about on `stderr`/`stdin`."""

    def ask(question: str) -> str:
        stderr.write(question)
        stderr.flush()
        return stdin.readline()

    folders = skill_folders(given)
    return await anyio.to_thread.run_sync(
        lambda: _load(folders, trust=trust, ask=ask if interactive else None, stderr=stderr)
    )


def _problem_line(problem: SkillProblem) -> str:
    return visible(str(problem))


def problems_notice(skills: SkillSet) -> list[str]:
    """The loading problems, one line each, for stderr."""
    return [f"warning: skill {_problem_line(p)}" for p in skills.problems]


def skills_listing(skills: SkillSet) -> str:
    """What `/skills` shows: each skill's name, description and location, then the problems."""
    if not skills.skills and not skills.problems:
        return "(no skills: --skills DIR, or .agents/skills here or in your home folder)"
    lines = []
    for s in skills:
        lines.append(f"{visible(s.name)}: {visible(s.description)}")
        lines.append(f"  {visible(str(s.file))}")
    if skills.problems:
        lines.append("problems:")
        lines += [f"  {_problem_line(p)}" for p in skills.problems]
    return "\n".join(lines)
