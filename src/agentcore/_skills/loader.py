"""Finding and reading Agent Skills (`SKILL.md` folders, agentskills.io), leniently.

The client guide of the specification says: load what can be loaded, with a warning, and skip
a skill only when its description is missing or its YAML cannot be read. So a name that breaks
the naming rules, a name that differs from its folder, or an over-long description is a
warning; a missing file, no frontmatter, frontmatter that is not a mapping, YAML that cannot be
read (after one retry with values holding `: ` quoted) or no description skips the skill. Every
problem names the file it is about.

The text of a skill is untrusted input: the frontmatter is read with a safe loader that also
refuses aliases (no "billion laughs"), the file and its frontmatter are capped in size before
they are parsed, and every path read stays inside the skill's folder after symlinks are
resolved (`resolve_inside`).
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import AgentCoreError, ConfigError

if TYPE_CHECKING:
    import yaml

__all__ = [
    "MAX_FRONTMATTER_BYTES",
    "MAX_SKILL_FILE_BYTES",
    "Skill",
    "SkillFileError",
    "SkillProblem",
    "SkillSet",
    "load_skills",
    "resolve_inside",
]

SKILL_FILE = "SKILL.md"
MAX_SKILL_FILE_BYTES = 256 * 1024
"""The largest `SKILL.md` read; a larger one is skipped with a problem."""
MAX_FRONTMATTER_BYTES = 16 * 1024
"""The largest frontmatter parsed as YAML; a larger one is skipped with a problem."""

_NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
_TOOL_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")


class SkillFileError(AgentCoreError, ValueError):
    """A path asked of a skill that is refused: absolute, with `..`, leading (through a
    symlink) outside the skill's folder, missing, not a regular file, or too large."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SkillProblem:
    """Something `load_skills` found: `path` is the file (or folder) it is about, `message` what
    is wrong, `skipped` whether the skill was left out (else it loaded, with this warning)."""

    path: Path
    message: str
    skipped: bool = False

    def __str__(self) -> str:
        return f"{self.path}: {self.message}{' (skipped)' if self.skipped else ''}"


@dataclass(frozen=True, slots=True, kw_only=True)
class Skill:
    """One loaded skill.

    Attributes:
        name: the skill's name (the frontmatter's, else its folder's).
        description: what it does and when to use it (shown to the model in the catalogue).
        folder: the skill's folder, symlinks resolved: every file it may read is inside it.
        file: its `SKILL.md`.
        body: the Markdown after the frontmatter (what activating the skill gives the model).
        license: the frontmatter's `license`, if any.
        compatibility: the frontmatter's `compatibility`, if any.
        metadata: the frontmatter's `metadata` map (values as strings).
        allowed_tools: the experimental `allowed-tools`: names of tools pre-approved while the
            skill is active (never tools added; see docs/skills.md).
        frontmatter: the whole frontmatter as read.
    """

    name: str
    description: str
    folder: Path
    file: Path
    body: str
    license: str | None = None
    compatibility: str | None = None
    metadata: Mapping[str, str] = field(default_factory=dict)
    allowed_tools: tuple[str, ...] = ()
    frontmatter: Mapping[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True, slots=True)
class SkillSet:
    """What `load_skills` returns: the skills (iterating it gives them, in load order) and the
    problems found, each naming its file."""

    skills: tuple[Skill, ...] = ()
    problems: tuple[SkillProblem, ...] = ()

    def __iter__(self) -> Iterator[Skill]:
        return iter(self.skills)

    def __len__(self) -> int:
        return len(self.skills)

    def __bool__(self) -> bool:
        return bool(self.skills)

    @property
    def names(self) -> tuple[str, ...]:
        """The skills' names, in load order."""
        return tuple(s.name for s in self.skills)

    def get(self, name: str) -> Skill | None:
        """The skill called `name`, or None."""
        return next((s for s in self.skills if s.name == name), None)


@functools.cache
def _loader() -> type[yaml.SafeLoader]:
    """PyYAML's safe loader, refusing anchors' aliases: frontmatter needs none, and aliases are
    how a small document expands into a huge one. (Built at the first skill read: importing
    agentcore does not import yaml.)"""
    import yaml

    class NoAliasLoader(yaml.SafeLoader):
        def compose_node(self, parent: Any, index: Any) -> Any:
            if self.check_event(yaml.AliasEvent):
                event = self.peek_event()  # type: ignore[no-untyped-call]
                raise yaml.composer.ComposerError(
                    None,
                    None,
                    "aliases (*name) are not allowed in skill frontmatter",
                    event.start_mark,
                )
            return super().compose_node(parent, index)

    return NoAliasLoader


_KEY_LINE = re.compile(r"^([A-Za-z][\w-]*):[ \t]+(.*\S)[ \t]*$")


def _quote_colons(text: str) -> str:
    """The frontmatter with every top-level plain value holding `: ` quoted (the guide's retry
    for `description: Use this: when ...`, which YAML reads as a nested mapping)."""
    lines = []
    for line in text.splitlines():
        m = _KEY_LINE.match(line)
        if m and ": " in m.group(2) and m.group(2)[0] not in "\"'[{|>":
            value = m.group(2).replace("\\", "\\\\").replace('"', '\\"')
            line = f'{m.group(1)}: "{value}"'
        lines.append(line)
    return "\n".join(lines)


def _parse_yaml(text: str) -> tuple[Any, str | None]:
    """The frontmatter's value, and the YAML error (None when it was read)."""
    import yaml

    loader = _loader()
    try:
        return yaml.load(text, Loader=loader), None  # a SafeLoader
    except yaml.YAMLError as exc:
        first = str(exc).replace("\n", " ")
    except RecursionError:  # nesting deep enough to exhaust the stack
        return None, "it is nested too deeply"
    try:
        return yaml.load(_quote_colons(text), Loader=loader), None
    except (yaml.YAMLError, RecursionError):
        return None, first


def _split(text: str) -> tuple[str, str] | None:
    """The frontmatter and the body of a `SKILL.md`, or None without frontmatter."""
    if text.startswith("\ufeff"):
        text = text[1:]
    lines = text.split("\n")
    if not lines or lines[0].rstrip() != "---":
        return None
    for i in range(1, len(lines)):
        if lines[i].rstrip() == "---":
            return "\n".join(lines[1:i]), "\n".join(lines[i + 1 :]).strip("\n")
    return None


def _text(value: Any) -> str | None:
    if value is None:
        return None
    return value if isinstance(value, str) else str(value)


def _read_skill(file: Path, problems: list[SkillProblem]) -> Skill | None:
    """The skill of `file` (a `SKILL.md`), or None with the reason in `problems`."""

    def skip(message: str) -> None:
        problems.append(SkillProblem(path=file, message=message, skipped=True))

    def warn(message: str) -> None:
        problems.append(SkillProblem(path=file, message=message))

    folder = file.parent.resolve()
    try:
        real = resolve_inside(folder, SKILL_FILE, max_bytes=MAX_SKILL_FILE_BYTES)
        raw = real.read_bytes()[: MAX_SKILL_FILE_BYTES + 1]
    except (SkillFileError, OSError) as exc:
        skip(f"cannot read it: {exc}")
        return None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        skip(f"it is not UTF-8 text ({exc.reason} at byte {exc.start})")
        return None
    parts = _split(text.replace("\r\n", "\n"))
    if parts is None:
        skip(
            "no YAML frontmatter: expected the file to start with a '---' line, then name: and "
            "description:, then a closing '---' line"
        )
        return None
    head, body = parts
    if len(head.encode("utf-8")) > MAX_FRONTMATTER_BYTES:
        skip(f"its frontmatter is larger than {MAX_FRONTMATTER_BYTES:,} bytes")
        return None
    data, error = _parse_yaml(head)
    if error is not None:
        skip(f"its frontmatter is not valid YAML: {error}")
        return None
    if not isinstance(data, dict):
        skip(
            f"its frontmatter must be a mapping of name:, description:, ..., got "
            f"{type(data).__name__}"
        )
        return None
    description = _text(data.get("description"))
    if description is None or not description.strip():
        skip(
            "no description: the frontmatter needs description: (what the skill does and "
            "when to use it)"
        )
        return None
    description = " ".join(description.split())
    if len(description) > 1024:
        warn(f"description is {len(description)} characters, more than the 1024 allowed")
    name = _text(data.get("name"))
    if name is None or not name.strip():
        name = folder.name
        warn(f"no name: in the frontmatter; using the folder's name {name!r}")
    name = name.strip()
    if not _TOOL_NAME.fullmatch(name):
        skip(
            f"name {name!r} cannot be offered to a model: use 1-64 lowercase letters, digits "
            f"and single hyphens"
        )
        return None
    if len(name) > 64 or not _NAME.fullmatch(name):
        warn(
            f"name {name!r} breaks the naming rule: 1-64 lowercase letters, digits and single "
            f"hyphens, not at the start or end"
        )
    if name != folder.name:
        warn(f"name {name!r} differs from its folder's name {folder.name!r}")
    metadata_raw = data.get("metadata")
    metadata: dict[str, str] = {}
    if isinstance(metadata_raw, dict):
        metadata = {str(k): _text(v) or "" for k, v in metadata_raw.items()}
    elif metadata_raw is not None:
        warn(f"metadata must be a mapping of strings, got {type(metadata_raw).__name__}; ignored")
    allowed_raw = data.get("allowed-tools")
    allowed: tuple[str, ...] = ()
    if isinstance(allowed_raw, str):
        allowed = tuple(allowed_raw.split())
    elif isinstance(allowed_raw, list) and all(isinstance(t, str) for t in allowed_raw):
        allowed = tuple(allowed_raw)
    elif allowed_raw is not None:
        warn("allowed-tools must be a space-separated string or a list of tool names; ignored")
    compatibility = _text(data.get("compatibility"))
    if compatibility is not None and len(compatibility) > 500:
        warn(f"compatibility is {len(compatibility)} characters, more than the 500 allowed")
    return Skill(
        name=name,
        description=description,
        folder=folder,
        file=folder / SKILL_FILE,
        body=body,
        license=_text(data.get("license")),
        compatibility=compatibility,
        metadata=metadata,
        allowed_tools=allowed,
        frontmatter=data,
    )


def resolve_inside(folder: Path, relative: str, *, max_bytes: int | None = None) -> Path:
    """The regular file `relative` names inside `folder` (itself resolved), symlinks resolved.

    Raises:
        SkillFileError: `relative` is empty, absolute or holds `..`; it leads outside `folder`
            (through a symlink, too); it is missing or not a regular file; or it is larger than
            `max_bytes`.
    """
    if not isinstance(relative, str) or not relative.strip():
        raise SkillFileError("expected a path relative to the skill's folder, got an empty one")
    if "\x00" in relative:
        raise SkillFileError(f"path {relative!r} holds a NUL character")
    candidate = Path(relative)
    if (
        candidate.is_absolute()
        or relative.startswith(("/", "\\"))
        or re.match(r"^[A-Za-z]:", relative)
    ):
        raise SkillFileError(
            f"path {relative!r} is absolute: give a path relative to the skill's folder"
        )
    if ".." in re.split(r"[\\/]", relative):
        raise SkillFileError(f"path {relative!r} holds '..': paths stay inside the skill's folder")
    root = folder.resolve()
    try:
        real = (root / candidate).resolve(strict=True)
    except FileNotFoundError:
        raise SkillFileError(f"no file {relative!r} in the skill's folder") from None
    except (OSError, RuntimeError) as exc:  # a symlink loop, a permission
        raise SkillFileError(f"cannot resolve {relative!r}: {exc}") from None
    if not real.is_relative_to(root):
        raise SkillFileError(
            f"path {relative!r} leads outside the skill's folder (through a symlink)"
        )
    if not real.is_file():
        raise SkillFileError(f"{relative!r} is not a regular file")
    if max_bytes is not None:
        size = real.stat().st_size
        if size > max_bytes:
            raise SkillFileError(
                f"{relative!r} is {size:,} bytes, more than the {max_bytes:,} allowed"
            )
    return real


def _skill_files(path: Path, problems: list[SkillProblem]) -> list[Path]:
    """The `SKILL.md` files `path` holds: its own (a skill folder, or the file itself), else
    those one level down, in name order."""
    if path.name == SKILL_FILE and path.is_file():
        return [path]
    if not path.exists():
        problems.append(SkillProblem(path=path, message="no such folder", skipped=True))
        return []
    if not path.is_dir():
        problems.append(
            SkillProblem(
                path=path,
                message="not a folder of skills, a skill's folder or a SKILL.md",
                skipped=True,
            )
        )
        return []
    if (path / SKILL_FILE).exists():
        return [path / SKILL_FILE]
    try:
        entries = sorted(os.scandir(path), key=lambda e: e.name)
    except OSError as exc:
        problems.append(SkillProblem(path=path, message=f"cannot list it: {exc}", skipped=True))
        return []
    found = []
    for entry in entries:
        if entry.name.startswith(".") or not entry.is_dir():
            continue
        candidate = Path(entry.path) / SKILL_FILE
        if candidate.exists() or candidate.is_symlink():
            found.append(candidate)
    return found


def load_skills(*paths: str | os.PathLike[str]) -> SkillSet:
    """Find and read the skills under `paths`: each a folder of skill folders (one level of
    `*/SKILL.md`), a skill's folder, or a `SKILL.md`. Reads files (call it off the event loop,
    e.g. with `anyio.to_thread.run_sync`, in a running server).

    A skill whose name was already loaded from an earlier path is replaced by the later one,
    with a warning naming both files (so list user-wide folders first and a project's last).
    Loading never raises for what a folder holds: what is wrong is in `problems`.

    Raises:
        ConfigError: a path that is not a `str` or `os.PathLike`.
    """
    problems: list[SkillProblem] = []
    by_name: dict[str, Skill] = {}
    for p in paths:
        if not isinstance(p, str | os.PathLike):
            raise ConfigError(
                f"load_skills takes folder paths (str or os.PathLike), got {type(p).__name__}"
            )
        for file in _skill_files(Path(p).expanduser(), problems):
            skill = _read_skill(file, problems)
            if skill is None:
                continue
            earlier = by_name.pop(skill.name, None)
            if earlier is not None:
                problems.append(
                    SkillProblem(
                        path=skill.file,
                        message=f"skill {skill.name!r} replaces the one of the same name in "
                        f"{earlier.file}",
                    )
                )
            by_name[skill.name] = skill
    return SkillSet(tuple(by_name.values()), tuple(problems))


def skills_by_name(skills: Iterable[Skill]) -> dict[str, Skill]:
    """`skills` by name, each registered once: what a durable worker (Temporal, DBOS) serves.

    Raises:
        ConfigError: `skills` is not a sequence of `Skill` (what `load_skills` returns), or two
            skills have the same name.
    """
    if isinstance(skills, (str, bytes)) or not isinstance(skills, Iterable):
        raise ConfigError(
            "skills must be what load_skills(...) returns or a sequence of Skill, got "
            f"{type(skills).__name__}"
        )
    found: dict[str, Skill] = {}
    for skill in skills:
        if not isinstance(skill, Skill):
            raise ConfigError(
                f"skills must hold Skill objects (from load_skills), got {type(skill).__name__}"
            )
        if skill.name in found:
            raise ConfigError(f"the skill name {skill.name!r} is registered twice")
        found[skill.name] = skill
    return found
