"""The ready-made tools behind `agentcore.builtin_tools` (documented there)."""

from __future__ import annotations

import codecs
import fnmatch
import os
import stat
from pathlib import Path
from typing import BinaryIO

from ..abort import AbortSignal
from ..errors import ToolError
from ..tools import AgentTool, tool
from .calculator import calculator as calculator

__all__ = [
    "HIDDEN_PATTERNS",
    "builtin_tools",
    "calculator",
    "chars_for_context",
    "is_hidden",
    "list_files",
    "read_file",
]


# --- the file tools --------------------------------------------------------------------------

_CHUNK = 256 * 1024  # bytes read at a time; the first chunk is checked for binary content
_MAX_LINE_CHARS = 10_000  # characters of one line shown per call; `column` reads on
_MAX_OUTPUT_CHARS = 256 * 1024  # characters of file text one call returns
_MAX_COUNT_BYTES = 64 * 1024 * 1024  # bytes read past what is shown, to count the lines
_SKIP_DIRS = frozenset({"venv", "node_modules", "__pycache__"})  # listed, not descended into

HIDDEN_PATTERNS: tuple[str, ...] = (
    ".*",  # dot-files and dot-directories: .env, .env.local, .git, .ssh, .aws, .netrc, .npmrc
    "_netrc",
    "*.env",
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "*.jks",
    "*.keystore",
    "*.kdbx",
    "*.tfstate",
    "*.tfstate.*",
    "*.tfvars",
    "id_rsa*",
    "id_dsa*",
    "id_ecdsa*",
    "id_ed25519*",
    "credentials*",
    "secrets.json",
    "secrets.yaml",
    "secrets.yml",
    "secrets.toml",
    "secrets.ini",
)
"""Names (matched case-insensitively, against every part of a path) that the file tools keep
from the model unless built with `include_hidden=True`: dot-files, and files that may hold
secrets."""


def is_hidden(name: str) -> bool:
    """Whether a file or directory name is one the file tools hide (see `HIDDEN_PATTERNS`)."""
    lowered = name.lower()
    return any(fnmatch.fnmatchcase(lowered, pattern) for pattern in HIDDEN_PATTERNS)


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


class _Root:
    """The directory tree the file tools see, and the one policy on what in it they show.

    Every path is resolved, symlinks included, and refused if it lands outside the root. Unless
    `include_hidden`, a path with a hidden part (`is_hidden`), as written or as resolved, is
    refused too, and listings leave such entries out.
    """

    __slots__ = ("include_hidden", "path")

    def __init__(self, root: str | os.PathLike[str], include_hidden: bool) -> None:
        base = Path(root).resolve()
        if not base.is_dir():
            raise NotADirectoryError(f"the tools' root {os.fspath(root)!r} is not a directory")
        self.path = base
        self.include_hidden = include_hidden

    def _hidden_part(self, path: Path) -> str | None:
        if self.include_hidden or not path.is_relative_to(self.path):
            return None
        return next((part for part in path.relative_to(self.path).parts if is_hidden(part)), None)

    def resolve(self, path: str) -> Path:
        """`path` (relative to the root, or absolute) resolved, if the tools may see it.

        Raises:
            ToolError: the path is invalid, outside the root, or hidden.
        """
        try:
            target = (self.path / path).resolve()
            written = Path(os.path.normpath(self.path / path))
        except (OSError, ValueError) as exc:  # a NUL byte, a name too long, a symlink loop
            raise ToolError(f"invalid path {path!r}: {exc}") from None
        if not target.is_relative_to(self.path):
            raise ToolError(
                f"{path!r} is outside the working directory {str(self.path)!r}; use a path "
                "relative to it"
            )
        hidden = self._hidden_part(written) or self._hidden_part(target)
        if hidden is not None:
            raise ToolError(
                f"{path!r} is hidden: the file tools do not show dot-files or files that may "
                f"hold secrets (here {hidden!r}; .env, *.pem, *.key, id_rsa, credentials, ...)"
            )
        return target

    def open(self, target: Path, path: str) -> BinaryIO:
        """`target` (from `resolve`) opened for reading, if what was opened is still a regular
        file the tools may see: a path swapped for a symlink after `resolve` (to reach out of
        the root) is not followed as its last part, and the opened file's real path is checked.

        Raises:
            ToolError: the file is gone, not a regular file, or no longer one the tools may see.
        """
        flags = (
            os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
        )
        try:
            fd = os.open(target, flags)
        except OSError as exc:
            raise ToolError(f"cannot open {path!r}: {exc.strerror or exc}") from None
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise ToolError(f"no such file: {path!r} is not a regular file")
            real = _real_path(fd, target)
            if not real.is_relative_to(self.path) or self._hidden_part(real) is not None:
                raise ToolError(f"{path!r} changed while it was being opened; not read")
            return os.fdopen(fd, "rb")
        except BaseException:
            os.close(fd)
            raise

    def shows(self, entry: Path) -> bool:
        """Whether a listing shows `entry` (a symlink is judged by its target as well)."""
        if self.include_hidden:
            return True
        if is_hidden(entry.name):
            return False
        if entry.is_symlink():
            try:
                return self._hidden_part(entry.resolve()) is None
            except (OSError, RuntimeError):
                return True  # a broken link shows, and reading it says so
        return True


def _real_path(fd: int, target: Path) -> Path:
    """Where the open file `fd` really is: from /proc on Linux; elsewhere `target` resolved
    again, if it is still the very file that was opened."""
    try:
        return Path(os.readlink(f"/proc/self/fd/{fd}"))
    except OSError:
        pass
    opened = os.fstat(fd)
    again = target.resolve()
    try:
        now = again.stat()
    except OSError:
        return Path("/")  # gone: outside any root
    if (now.st_dev, now.st_ino) != (opened.st_dev, opened.st_ino):
        return Path("/")
    return again


class _Excerpt:
    """What one `read_file` call read: the lines shown, the lines cut, the line count."""

    __slots__ = ("complete", "cut", "lines", "stopped", "total")

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.cut: list[tuple[int, int]] = []  # (line number, its length in characters)
        self.total = 0  # lines in the file (at least this many when not `complete`)
        self.complete = True  # whether `total` counts them all
        self.stopped = False  # whether the output budget ended the excerpt early


def _read_lines(
    file: BinaryIO,
    path: str,
    start: int,
    count: int,
    column: int,
    signal: AbortSignal | None,
    budget: int = _MAX_OUTPUT_CHARS,
) -> _Excerpt:
    """Lines `start` to `start + count - 1` of a text file, each from character `column` and at
    most `_MAX_LINE_CHARS` long, reading the file in chunks (never all of it into memory).

    Raises:
        ToolError: the file is binary, or the run was aborted.
    """
    out = _Excerpt()
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    first, last = column - 1, column - 1 + _MAX_LINE_CHARS  # the characters kept of a line
    end = start + count  # the first line not shown
    line = 1  # the number of the line being read
    length = 0  # its characters so far
    kept: list[str] = []  # its characters in [first, last), when it is shown
    tail = ""  # its last character so far
    past = 0  # bytes read after the last line shown
    with file as f:
        data = f.read(_CHUNK)
        if b"\x00" in data:  # checked before anything is decoded
            raise ToolError(f"{path!r} is a binary file (it contains NUL bytes), not a text file")
        while True:
            text = decoder.decode(data, final=not data)
            pos, n = 0, len(text)
            while pos < n:
                if start <= line < end:  # a line shown
                    newline = text.find("\n", pos)
                    stop = n if newline < 0 else newline
                    lo, hi = max(first - length, 0), last - length
                    if hi > 0 and pos + lo < stop:
                        kept.append(text[pos + lo : min(pos + hi, stop)])
                    length += stop - pos
                    if stop > pos:
                        tail = text[stop - 1]
                    if newline < 0:
                        break
                    _keep(out, line, kept, length, tail, last)
                    budget -= len(out.lines[-1])
                    line, length, kept, tail, pos = line + 1, 0, [], "", newline + 1
                    if budget <= 0 and line < end:
                        out.stopped, end = True, line
                    continue
                # before the lines shown (skip to `start`) or after them (count)
                newlines = text.count("\n", pos)
                if line < start and line + newlines >= start:
                    for _ in range(start - line):
                        pos = text.index("\n", pos) + 1
                    line, length = start, 0
                    continue
                line += newlines
                length = n - text.rindex("\n") - 1 if newlines else length + n - pos
                break
            if not data:
                break
            if line >= end:
                past += len(data)
                if past > _MAX_COUNT_BYTES:
                    out.complete = False
                    break
            if signal is not None and signal.aborted:
                raise ToolError("the run was aborted while the file was being read")
            data = f.read(_CHUNK)
    if out.complete and length and start <= line < end:  # a last line without a newline
        _keep(out, line, kept, length, tail, last)
    out.total = line - 1 + (1 if length and out.complete else 0)
    return out


def _keep(out: _Excerpt, number: int, kept: list[str], length: int, tail: str, last: int) -> None:
    """Add a finished line to the excerpt (its `\\r\\n` ending shown as a line break)."""
    text = "".join(kept)
    if tail == "\r":
        length -= 1
        if length < last:
            text = text.removesuffix("\r")
    if length > last:
        out.cut.append((number, length))
    out.lines.append(text)


def _cut_note(cut: list[tuple[int, int]], column: int) -> str:
    """The note after an excerpt whose long lines were cut: how much, and how to read on."""
    upto = column + _MAX_LINE_CHARS - 1
    if len(cut) == 1:
        number, length = cut[0]
        return (
            f"\n[line {number} was cut after character {upto:,} of {length:,}; to read on, call "
            f"read_file again with offset={number}, max_lines=1, column={upto + 1}]"
        )
    listed = "; ".join(f"line {n}: {length:,} characters" for n, length in cut[:5])
    if len(cut) > 5:
        listed += f"; {len(cut) - 5} more"
    return (
        f"\n[{len(cut)} lines were cut after character {upto:,} ({listed}); to read on, call "
        f"read_file again with the same offset and column={upto + 1}]"
    )


def chars_for_context(context_window: int) -> int:
    """The characters one `read_file` call returns for a model with `context_window` tokens:
    an eighth of the window at about 3 characters a token (code and config files tokenise
    densely), between 2,000 and 256 Ki characters. A small local model (8,192 tokens) gets
    3,072 characters a call, and reads a longer file in parts instead of filling its context."""
    return max(2_000, min(_MAX_OUTPUT_CHARS, context_window // 8 * 3))


def read_file(
    root: str | os.PathLike[str],
    *,
    max_lines: int = 200,
    max_chars: int | None = None,
    context_window: int | None = None,
    include_hidden: bool = False,
) -> AgentTool:
    """A `read_file(path, offset=1, max_lines=..., column=1)` tool that reads text files under
    `root`.

    The result starts with the file's line count and which lines it shows, then the lines. One
    call returns at most `max_lines` lines, each cut after 10,000 characters (from `column`),
    and stops after the line that reaches `max_chars` characters in all; a note after the lines
    says what was cut and which `offset`/`column` reads on. `max_chars` defaults to a share of
    the model's `context_window` when it is given (`chars_for_context`: 3,072 characters for an
    8,192-token window), else to 256 Ki characters. The file is read in chunks, never whole:
    lines are counted up to 64 MiB past the last one shown ("more than N lines" beyond). A
    file with a NUL byte in its first 256 KiB is refused as binary; so are paths outside
    `root` (also a symlink swapped in after the path was checked: the opened file's real path
    is checked again) and, unless
    `include_hidden`, dot-files and files that may hold secrets (`HIDDEN_PATTERNS`: `.env`,
    `.env.*`, `*.pem`, `*.key`, `id_rsa*`, `.netrc`, `.npmrc`, `credentials*`, ...), the same
    policy as `list_files`.

    Args:
        root: the directory the tool may read (symlinks are followed only within it).
        max_lines: the most lines one call returns, and what it returns by default.
        max_chars: the characters of file text after which one call stops (at a line's end).
        context_window: the model's context window in tokens, to size `max_chars` from.
        include_hidden: also read dot-files and secret-looking files.

    Raises:
        NotADirectoryError: `root` is not a directory.
        ValueError: `max_chars` or `context_window` is not a positive integer.
    """
    base = _Root(root, include_hidden)
    cap = max(1, max_lines)
    for name, value in (("max_chars", max_chars), ("context_window", context_window)):
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int) or value < 1
        ):
            raise ValueError(f"{name} must be a positive integer, got {value!r}")
    if max_chars is None:
        max_chars = (
            _MAX_OUTPUT_CHARS if context_window is None else chars_for_context(context_window)
        )
    chars = max_chars

    @tool
    def read_file(
        path: str,
        offset: int = 1,
        max_lines: int = cap,
        column: int = 1,
        signal: AbortSignal | None = None,
    ) -> str:
        """Read a text file in the working directory. The result starts with the file's total
        line count; a note at the end says when long lines were cut.

        Args:
            path: the file, relative to the working directory, e.g. "pyproject.toml".
            offset: the first line to return (1-based), to read a long file in parts.
            max_lines: how many lines to return.
            column: the first character of each line to return (1-based), to read on in lines
                that were cut.
        """
        target = base.resolve(path)
        if target.is_dir():
            raise ToolError(f"no such file: {path!r} is a directory (list_files shows its files)")
        if not target.is_file():
            raise ToolError(f"no such file: {path!r} (list_files shows what exists)")
        start, column = max(offset, 1), max(column, 1)
        count = max(1, min(max_lines, cap))
        excerpt = _read_lines(base.open(target, path), path, start, count, column, signal, chars)
        lines, total = excerpt.lines, excerpt.total
        counted = _plural(total, "line") if excerpt.complete else f"more than {total} lines"
        if not lines:
            shown = f"nothing from line {start}" if total else ""
        elif len(lines) == total:
            shown = ""
        elif start == 1:
            shown = f"showing the first {len(lines)}"
        else:
            shown = f"showing lines {start}-{start + len(lines) - 1}"
        if column > 1 and lines:
            shown += f"{', ' if shown else ''}from character {column} of each line"
        part = f" ({shown})" if shown else ""
        text = f"{path} has {counted}{part}:\n" + "\n".join(lines)
        if excerpt.cut:
            text += _cut_note(excerpt.cut, column)
        if excerpt.stopped:
            text += (
                f"\n[stopped at {chars:,} characters; to read on, call read_file "
                f"again with offset={start + len(lines)}]"
            )
        return text

    return read_file


def list_files(
    root: str | os.PathLike[str], *, max_entries: int = 500, include_hidden: bool = False
) -> AgentTool:
    """A `list_files(path=".", recursive=False)` tool that lists directories under `root`.

    Entries are paths relative to `root`, sorted, directories ending in `/`; a recursive listing
    does not descend into symlinks, `node_modules`, `venv` or `__pycache__`. Paths outside
    `root` are refused. Unless `include_hidden`, dot-files and files that may hold secrets
    (`HIDDEN_PATTERNS`) are left out, and listing a hidden directory is refused: the same policy
    as `read_file`.

    Args:
        root: the directory the tool may list.
        max_entries: the most entries one call returns.
        include_hidden: also list dot-files and secret-looking files.

    Raises:
        NotADirectoryError: `root` is not a directory.
    """
    base = _Root(root, include_hidden)
    limit = max(1, max_entries)

    @tool
    def list_files(path: str = ".", recursive: bool = False) -> str:
        """List the files and directories in a directory of the working directory (directories
        end with /).

        Args:
            path: the directory, relative to the working directory; "." is the working directory.
            recursive: also list the contents of subdirectories.
        """
        target = base.resolve(path)
        if not target.is_dir():
            raise ToolError(f"no such directory: {path!r}")
        entries: list[str] = []
        pending = [target]
        while pending and len(entries) <= limit:
            directory = pending.pop(0)
            for child in sorted(directory.iterdir(), key=lambda p: p.name):
                if not base.shows(child):
                    continue
                is_dir = child.is_dir()
                entries.append(child.relative_to(base.path).as_posix() + ("/" if is_dir else ""))
                if recursive and is_dir and child.name not in _SKIP_DIRS and not child.is_symlink():
                    pending.append(child)
        if not entries:
            return "(empty directory)"
        if len(entries) > limit:
            return "\n".join(entries[:limit]) + f"\n[only the first {limit} shown]"
        return "\n".join(entries)

    return list_files


def builtin_tools(
    root: str | os.PathLike[str] = ".",
    *,
    include_hidden: bool = False,
    context_window: int | None = None,
) -> list[AgentTool]:
    """The ready-made tools: `read_file` and `list_files` confined to `root`, and `calculator`.

    Args:
        root: the directory the file tools see.
        include_hidden: let the file tools show dot-files and files that may hold secrets.
        context_window: the model's context window in tokens: `read_file` returns a share of
            it per call (see `read_file`).

    Raises:
        NotADirectoryError: `root` is not a directory.
    """
    return [
        read_file(root, include_hidden=include_hidden, context_window=context_window),
        list_files(root, include_hidden=include_hidden),
        calculator(),
    ]
