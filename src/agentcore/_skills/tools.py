"""Skills as the model sees them: the catalogue block for the system prompt, the
`activate_skill` and `read_skill_file` tools, and which skills a transcript has activated.

Progressive disclosure (agentskills.io): only the catalogue (name, description, location) is in
every request; a skill's body arrives as the result of `activate_skill`, with the list of its
files (not their contents); a file arrives when the model reads it with `read_skill_file`. A
skill's text is untrusted: it is escaped inside the catalogue's markup, and every read stays
inside its folder (`loader.resolve_inside`).

Which skills are active is read from the transcript: a successful `activate_skill` result
carries `details={"skill": name, ...}`. So activations survive a session's reload with the
transcript, a second activation in the same conversation is answered without the body again,
and the engine can carry the bodies of skills whose result a compaction summarised away in the
system prompt (`active_skill_block`).
"""

from __future__ import annotations

import html
import os
from collections.abc import Callable, Collection, Iterable, Sequence
from pathlib import Path
from typing import Any

from ..messages import AgentMessage, ToolResultMessage
from ..tools import MAX_RESULT_CHARS, AgentTool, AgentToolResult
from .loader import Skill, SkillFileError, resolve_inside


def escape(text: str) -> str:
    """`text` as XML character data (`&`, `<`, `>` escaped)."""
    return html.escape(text, quote=False)


def quoteattr(text: str) -> str:
    """`text` as a quoted XML attribute value."""
    return '"' + html.escape(text, quote=True) + '"'


__all__ = [
    "ACTIVATE_SKILL",
    "MAX_LISTED_FILES",
    "MAX_SKILL_READ_BYTES",
    "READ_SKILL_FILE",
    "active_skill_block",
    "active_skills",
    "read_skill_file",
    "skill_catalogue",
    "skill_content",
    "skill_files",
    "skill_tools",
]

ACTIVATE_SKILL = "activate_skill"
READ_SKILL_FILE = "read_skill_file"
MAX_LISTED_FILES = 200
"""Files of a skill listed on activation; the rest are counted, not named."""
MAX_SKILL_READ_BYTES = MAX_RESULT_CHARS
"""The largest skill file `read_skill_file` reads (larger ones are refused, naming the cap)."""


def skill_catalogue(skills: Iterable[Skill]) -> str:
    """The block that tells the model which skills exist: an instruction and an
    `<available_skills>` list (name, description, location), the text escaped. Empty for no
    skills."""
    entries = [
        "  <skill>\n"
        f"    <name>{escape(s.name)}</name>\n"
        f"    <description>{escape(s.description)}</description>\n"
        f"    <location>{escape(str(s.file))}</location>\n"
        "  </skill>"
        for s in skills
    ]
    if not entries:
        return ""
    return (
        "The following skills give specialised instructions for particular tasks. When a task "
        f"matches a skill's description, call the {ACTIVATE_SKILL} tool with the skill's name "
        "before acting, then follow its instructions; read the files it names with "
        f"{READ_SKILL_FILE}.\n<available_skills>\n" + "\n".join(entries) + "\n</available_skills>"
    )


def skill_files(skill: Skill) -> tuple[list[str], int]:
    """The files of `skill`'s folder but its `SKILL.md` (relative, `/`-separated, sorted; the
    first `MAX_LISTED_FILES`), and how many more there are. Symlinks are not followed into
    folders; a file linked from outside the folder is not listed. (Reads the disk: a worker
    thread's work.)"""
    root = skill.folder
    found: list[str] = []
    more = 0
    for here, dirs, files in os.walk(root, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            if name.startswith("."):
                continue
            full = Path(here) / name
            relative = full.relative_to(root).as_posix()
            if relative == "SKILL.md":
                continue
            try:
                if not full.resolve().is_relative_to(root):
                    continue
            except OSError:
                continue
            if len(found) < MAX_LISTED_FILES:
                found.append(relative)
            else:
                more += 1
    return found, more


def skill_content(skill: Skill) -> str:
    """What activating `skill` gives the model: its body, its folder and the list of its
    files, in a `<skill_content>` block."""
    files, more = skill_files(skill)
    listing = "\n".join(f"  <file>{escape(f)}</file>" for f in files)
    if more:
        listing += f"\n  <!-- and {more} more files -->"
    return (
        f"<skill_content name={quoteattr(skill.name)}>\n{skill.body}\n\n"
        f"Skill folder: {skill.folder}\nPaths in this skill are relative to its folder: read "
        f"a file with {READ_SKILL_FILE}(name, path).\n"
        f"<skill_resources>\n{listing}\n</skill_resources>\n</skill_content>"
    )


def read_skill_file(skill: Skill, path: str) -> str:
    """The text of the file `path` (relative) of `skill`'s folder.

    Raises:
        SkillFileError: the path is refused (absolute, `..`, outside the folder through a
            symlink, missing, not a regular file, larger than `MAX_SKILL_READ_BYTES`), or the
            file is not UTF-8 text.
    """
    real = resolve_inside(skill.folder, path, max_bytes=MAX_SKILL_READ_BYTES)
    with real.open("rb") as f:
        data = f.read(MAX_SKILL_READ_BYTES + 1)
    if len(data) > MAX_SKILL_READ_BYTES:  # grew since it was measured
        raise SkillFileError(f"{path!r} is more than the {MAX_SKILL_READ_BYTES:,} bytes allowed")
    if b"\x00" in data:
        raise SkillFileError(f"{path!r} is a binary file, not text")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise SkillFileError(f"{path!r} is not UTF-8 text") from None


def active_skills(messages: Iterable[AgentMessage]) -> list[str]:
    """The names of the skills `messages` activated (successful `activate_skill` results), in
    the order of their first activation."""
    names: list[str] = []
    for m in messages:
        if isinstance(m, ToolResultMessage) and m.tool_name == ACTIVATE_SKILL and not m.is_error:
            details = m.details
            name = details.get("skill") if isinstance(details, dict) else None
            if isinstance(name, str) and name not in names:
                names.append(name)
    return names


def active_skill_block(skills: Iterable[Skill], names: Collection[str]) -> str:
    """The bodies of the skills in `names`, for the system prompt (skills whose activation a
    compaction summarised: instructions, not conversation, so they are kept)."""
    bodies = [
        f"<skill_content name={quoteattr(s.name)}>\n{s.body}\n\nSkill folder: {s.folder}\n"
        "</skill_content>"
        for s in skills
        if s.name in names
    ]
    if not bodies:
        return ""
    return "<active_skills>\n" + "\n".join(bodies) + "\n</active_skills>"


def skill_tools(
    skills: Sequence[Skill], *, active: Callable[[], Collection[str]] | None = None
) -> list[AgentTool]:
    """The `activate_skill` and `read_skill_file` tools over `skills` (their `name` parameter an
    enum of the skills' names). `active` tells which skills the conversation has activated
    already: activating one of them again answers without its body (give it, e.g.,
    `lambda: active_skills(messages)`; the engine gives its transcript's).

    Both tools are sync, so their disk reads run in a worker thread.
    """
    by_name = {s.name: s for s in skills}
    names = list(by_name)
    name_schema = {
        "type": "string",
        "enum": names,
        "description": "the skill's name, from <available_skills>",
    }

    def activate(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> AgentToolResult:
        name = args["name"]
        skill = by_name[name]
        if active is not None and name in active():
            return AgentToolResult.text(
                f"Skill {name!r} is already active: its instructions are earlier in this "
                "conversation (or in the system prompt). Follow them.",
                details={"skill": name, "already_active": True},
            )
        files, more = skill_files(skill)
        return AgentToolResult.text(
            skill_content(skill),
            details={"skill": name, "folder": str(skill.folder), "files": files, "more": more},
        )

    def read(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> AgentToolResult:
        name, path = args["name"], args["path"]
        try:
            text = read_skill_file(by_name[name], path)
        except SkillFileError as exc:
            return AgentToolResult.error(f"skill {name!r}: {exc}")
        return AgentToolResult.text(text, details={"skill": name, "path": path})

    return [
        AgentTool(
            name=ACTIVATE_SKILL,
            label="Activate skill",
            description="Load a skill's instructions (and the list of its files) before a task "
            "it is for. The skills are listed in <available_skills>.",
            parameters={
                "type": "object",
                "properties": {"name": name_schema},
                "required": ["name"],
                "additionalProperties": False,
            },
            execute=activate,
        ),
        AgentTool(
            name=READ_SKILL_FILE,
            label="Read skill file",
            description="Read a file of an activated skill (a reference, a script, a template), "
            "by its path relative to the skill's folder.",
            parameters={
                "type": "object",
                "properties": {
                    "name": name_schema,
                    "path": {
                        "type": "string",
                        "description": "relative to the skill's folder, e.g. references/api.md",
                    },
                },
                "required": ["name", "path"],
                "additionalProperties": False,
            },
            execute=read,
        ),
    ]
