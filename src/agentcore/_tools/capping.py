"""Bounds on what a tool from another system (an MCP server, a remote A2A agent) shows the model:
`capped_content` and its two caps. The public face is `agentcore.tools`."""

from __future__ import annotations

import base64
import binascii

from ..messages import ImageContent, TextContent

__all__ = ["MAX_IMAGE_CHARS", "MAX_RESULT_CHARS", "capped_content"]

MAX_RESULT_CHARS = 256 * 1024
"""Characters of text one call's result from another system (an MCP server, a remote A2A
agent) gives the model, as `read_file`; the rest is cut with a note (`capped_content`)."""
MAX_IMAGE_CHARS = 8 * 1024 * 1024
"""Characters of base64 data of one image in such a result; a larger image is replaced by a
note."""


def capped_content(
    content: list[TextContent | ImageContent], *, what: str = "the tool"
) -> list[TextContent | ImageContent]:
    """`content` with its text cut after `MAX_RESULT_CHARS` characters in all, and images over
    `MAX_IMAGE_CHARS` replaced, each with a note saying what was left out (`what` names the
    source in the note). Content within the caps is returned as it is."""
    out: list[TextContent | ImageContent] = []
    budget = MAX_RESULT_CHARS
    total = 0
    for block in content:
        if isinstance(block, ImageContent):
            if len(block.data) > MAX_IMAGE_CHARS:
                out.append(
                    TextContent(
                        text=f"[image: {block.mime_type}, {_decoded_size(block.data)}; left "
                        f"out: larger than {MAX_IMAGE_CHARS:,} characters of base64]"
                    )
                )
            else:
                out.append(block)
            continue
        total += len(block.text)
        if budget <= 0:
            continue
        if len(block.text) > budget:
            out.append(TextContent(text=block.text[:budget]))
        else:
            out.append(block)
        budget -= len(block.text)
    if total > MAX_RESULT_CHARS:
        out.append(
            TextContent(
                text=f"\n[result cut after {MAX_RESULT_CHARS:,} of {total:,} characters: "
                f"{what} returned more than one call may show; ask it for less, e.g. a narrower "
                "query or a page of the output]"
            )
        )
    return out


def _decoded_size(data: str) -> str:
    """The size of base64 `data` once decoded, for a note."""
    try:
        size = len(base64.b64decode(data, validate=False))
    except (binascii.Error, ValueError):
        size = len(data) * 3 // 4
    return f"{size:,} bytes"
