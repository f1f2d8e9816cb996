"""MkDocs hooks of agentcore's site (named in mkdocs.yml under `hooks:`).

The pages in docs/ link to files of the repository outside docs/ the way GitHub shows them, e.g.
`[examples/durable_agent.py](../examples/durable_agent.py)`. MkDocs knows only the files under
docs/, so on the site such a link would be broken. These hooks copy each linked repository file
into the site under `repository/` and point the link there. A link to a file that does not exist,
or that lies outside the repository, fails the build.
"""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath
from typing import Any

from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page

COPY_DIR = "repository"

# A Markdown link's target: `](path)` or `](path#anchor)`; absolute URLs are left alone.
_LINK = re.compile(r"\]\((?P<path>[^()\s#]+)(?P<anchor>#[^()\s]*)?\)")
_FENCE = re.compile(r"^(```|~~~).*?^\1", flags=re.S | re.M)


def _outside_links(src_uri: str, markdown: str, docs_dir: Path) -> list[tuple[re.Match[str], Path]]:
    """The links of a page (outside code fences) whose target lies outside docs/."""
    fenced = [m.span() for m in _FENCE.finditer(markdown)]
    found = []
    for match in _LINK.finditer(markdown):
        path = match.group("path")
        if "://" in path or path.startswith(("/", "mailto:")):
            continue
        if any(start <= match.start() < end for start, end in fenced):
            continue
        target = (docs_dir / PurePosixPath(src_uri).parent / path).resolve()
        if not target.is_relative_to(docs_dir):
            found.append((match, target))
    return found


def _copy_uri(target: Path, root: Path, src_uri: str, url: str) -> str:
    """Where a linked repository file lands in the site; fails on a link that cannot work."""
    if not target.is_relative_to(root):
        raise PluginError(f"{src_uri}: the link {url!r} leaves the repository")
    if not target.is_file():
        raise PluginError(f"{src_uri}: the link {url!r} names no file of the repository")
    return f"{COPY_DIR}/{target.relative_to(root).as_posix()}"


def on_files(files: Files, config: Any) -> Files:
    """Add every repository file that a page links to."""
    docs_dir = Path(config["docs_dir"]).resolve()
    root = docs_dir.parent
    for file in list(files.documentation_pages()):
        for match, target in _outside_links(file.src_uri, file.content_string, docs_dir):
            uri = _copy_uri(target, root, file.src_uri, match.group("path"))
            if files.get_file_from_path(uri) is None:
                files.append(File.generated(config, uri, abs_src_path=str(target)))
    return files


def on_page_markdown(markdown: str, page: Page, config: Any, files: Files) -> str:
    """Point the page's links to repository files at their copies in the site."""
    docs_dir = Path(config["docs_dir"]).resolve()
    root = docs_dir.parent
    src_uri = page.file.src_uri
    pieces, last = [], 0
    for match, target in _outside_links(src_uri, markdown, docs_dir):
        uri = _copy_uri(target, root, src_uri, match.group("path"))
        depth = len(PurePosixPath(src_uri).parent.parts)
        relative = "../" * depth + uri
        pieces += [markdown[last : match.start()], f"]({relative}{match.group('anchor') or ''})"]
        last = match.end()
    return "".join(pieces) + markdown[last:]
