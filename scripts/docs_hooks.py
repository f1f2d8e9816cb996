"""MkDocs hooks of agentcore's site (named in mkdocs.yml under `hooks:`).

The pages in docs/ link to files of the repository outside docs/ the way GitHub shows them, e.g.
`[examples/durable_agent.py](../examples/durable_agent.py)`. MkDocs knows only the files under
docs/, so on the site such a link would be broken. These hooks copy each linked repository file
into the site under `repository/` and point the link there. A link to a file that does not exist,
or that lies outside the repository, fails the build.

The site works offline: the theme's fonts are the system's (`theme.font: false` in mkdocs.yml),
and mermaid, which Material would load from a CDN for the diagrams, is served by the site itself.
It comes from npm (`npm pack mermaid@MERMAID_VERSION`, its tarball checked against
`MERMAID_SHA256`), is kept in the cache ($AGENTCORE_CACHE/docs, default ~/.cache/agentcore/docs),
copied into the site as `assets/javascripts/mermaid.min.js`, and loaded only by the pages that
have a diagram, before Material's own script, which then uses it instead of the CDN's.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import tarfile
import tempfile
from pathlib import Path, PurePosixPath
from typing import Any

from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page
from mkdocs.utils import get_relative_url

COPY_DIR = "repository"

MERMAID_VERSION = "11.17.2"  # Material 9.x asks for mermaid@11
MERMAID_SHA256 = "6ad2f42c3fc26bbf9e45cbb6d11898972573ea52b33a5f4ff51952899f950ffd"
"""The sha256 of the npm tarball `mermaid-MERMAID_VERSION.tgz`."""
MERMAID_URI = "assets/javascripts/mermaid.min.js"

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


def _cache_dir() -> Path:
    cache = os.environ.get("AGENTCORE_CACHE") or str(Path.home() / ".cache" / "agentcore")
    return Path(cache) / "docs"


def mermaid_script() -> Path:
    """mermaid.min.js from the cache, fetched from npm (and checked) the first time."""
    target = _cache_dir() / f"mermaid-{MERMAID_VERSION}.min.js"
    if target.is_file():
        return target
    spec = f"mermaid@{MERMAID_VERSION}"
    with tempfile.TemporaryDirectory() as tmp:
        try:
            subprocess.run(
                ["npm", "pack", spec, "--pack-destination", tmp, "--silent"],
                check=True,
                capture_output=True,
                text=True,
                timeout=600,
            )
        except (OSError, subprocess.SubprocessError) as exc:
            detail = getattr(exc, "stderr", None) or exc
            raise PluginError(
                f"the site's diagrams need {spec} from npm, and `npm pack {spec}` failed "
                f"({str(detail).strip()[:300]}); install Node.js's npm, or put its "
                f"dist/mermaid.min.js at {target}"
            ) from exc
        tarball = Path(tmp) / f"mermaid-{MERMAID_VERSION}.tgz"
        digest = hashlib.sha256(tarball.read_bytes()).hexdigest()
        if digest != MERMAID_SHA256:
            raise PluginError(
                f"{tarball.name} from npm has sha256 {digest}, expected {MERMAID_SHA256}"
            )
        with tarfile.open(tarball) as archive:
            member = archive.extractfile("package/dist/mermaid.min.js")
            if member is None:
                raise PluginError(f"{tarball.name} has no package/dist/mermaid.min.js")
            data = member.read()
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(f".{os.getpid()}.part")
    partial.write_bytes(data)
    partial.replace(target)  # whole or not at all, also with two builds at once
    return target


def on_files(files: Files, config: Any) -> Files:
    """Add every repository file that a page links to, and mermaid."""
    if files.get_file_from_path(MERMAID_URI) is None:
        files.append(File.generated(config, MERMAID_URI, abs_src_path=str(mermaid_script())))
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


_BUNDLE = re.compile(r'<script src="[^"]*assets/javascripts/bundle\.[^"]*"')


def on_post_page(output: str, page: Page, config: Any) -> str:
    """Load the site's own mermaid on a page with a diagram, before Material's script."""
    if 'class="mermaid"' not in output:
        return output
    match = _BUNDLE.search(output)
    if match is None:
        raise PluginError(f"{page.file.src_uri}: Material's script tag was not found")
    src = get_relative_url(MERMAID_URI, page.url)
    tag = f'<script src="{src}"></script>\n      '
    return output[: match.start()] + tag + output[match.start() :]
