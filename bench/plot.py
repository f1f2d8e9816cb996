"""Draw docs/assets/benchmarks.svg: agentcore's time as a multiple of the bare loop's.

    .venv/bin/python bench/plot.py           # rewrite docs/assets/benchmarks.svg
    .venv/bin/python bench/plot.py --check   # exit 1 if the committed file is not what this draws

The figures are the "ratio" column of the main table in docs/benchmarks.md, copied into `GROUPS`
below: when that table changes, change them here too and run this script (a test checks that the
committed SVG is what this script draws, and that each figure is still written in
docs/benchmarks.md). The SVG is written by hand, with no plotting library, so the output is the
same on every machine.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from html import escape
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUTPUT = ROOT / "docs" / "assets" / "benchmarks.svg"


@dataclass(frozen=True)
class Group:
    """One benchmark: its bars (label, ratio as written in docs/benchmarks.md) and its target.

    An `off_scale` group does not set the scale: a bar beyond it is drawn to the edge, broken,
    with its figure inside (Agent instantiation against a plain object is tens of times).
    """

    title: str
    bars: tuple[tuple[str, str], ...]
    target: float | None = None
    off_scale: bool = False


GROUPS = (
    Group("Loop overhead per turn (loop_overhead.py)", (("agentcore", "1.9"),), 1.5),
    Group("Time per streamed text delta (streaming.py)", (("agent_loop", "2.0"),), 1.5),
    Group(
        "1,000 concurrent runs, wall time (concurrency.py)",
        (("agent_loop", "3.2"), ("run_agent_loop", "1.5")),
        1.3,
    ),
    Group(
        "10,000 concurrent runs, wall time (concurrency.py)",
        (("agent_loop", "3.65"), ("run_agent_loop", "2.16")),
        1.3,
    ),
    Group(
        "Per delta through an adapter, under a signal (provider_stream.py)",
        (
            ("openai-completions", "1.33"),
            ("openai-responses", "1.41"),
            ("anthropic-messages", "1.46"),
        ),
        1.5,
    ),
    Group(
        "A whole run on the real wire, per delta (provider_run.py)",
        (
            ("openai-completions", "1.45"),
            ("openai-responses", "1.37"),
            ("anthropic-messages", "1.44"),
        ),
        1.5,
    ),
    Group(
        "A whole run on the real wire, per run (provider_run.py)",
        (
            ("openai-completions", "1.48"),
            ("openai-responses", "2.03"),
            ("anthropic-messages", "1.93"),
        ),
        1.5,
    ),
    Group(
        "Agent turn with a session, no latency (sessions.py)", (("JSONL", "1.6"), ("SQLite", "8.2"))
    ),
    Group(
        "Per turn with tracing, over tracing off (tracing.py)",
        (("no-op OpenTelemetry", "1.1"), ("in-memory SDK", "2.7"), ("--trace tree", "1.26")),
    ),
    Group(
        "An Agent built, over a hand-written agent object (instantiation.py)",
        (("time", "88"), ("memory", "9.4")),
        off_scale=True,
    ),
)

COLOURS = ("#3f6fb5", "#e08a2e", "#4f9a5b")
WIDTH = 820
LABEL_WIDTH = 170  # bar labels, right-aligned before the axis
PLOT_LEFT = LABEL_WIDTH + 10
PLOT_RIGHT = WIDTH - 60
BAR = 16
GAP = 4
TITLE_ROW = 22
GROUP_GAP = 12
TOP = 44


def _x(value: float, scale_max: float) -> float:
    return PLOT_LEFT + (PLOT_RIGHT - PLOT_LEFT) * value / scale_max


def _text(
    x: float,
    y: float,
    text: str,
    *,
    fill: str = "#222222",
    anchor: str = "start",
    size: int = 12,
    bold: bool = False,
) -> str:
    weight = ' font-weight="bold"' if bold else ""
    return (
        f'<text x="{x:.1f}" y="{y:.1f}" fill="{fill}" text-anchor="{anchor}" '
        f'font-size="{size}"{weight}>{escape(text)}</text>'
    )


def _rect(x: float, y: float, width: float, height: float, fill: str) -> str:
    return (
        f'<rect x="{x:.1f}" y="{y:.1f}" width="{width:.1f}" height="{height:.1f}" fill="{fill}"/>'
    )


def _line(x: float, y1: float, y2: float, stroke: str, extra: str = "") -> str:
    return f'<line x1="{x:.1f}" y1="{y1:.1f}" x2="{x:.1f}" y2="{y2:.1f}" stroke="{stroke}"{extra}/>'


def render(groups: tuple[Group, ...] = GROUPS) -> str:
    """The SVG document, as text."""
    largest = max(
        (float(value) for group in groups if not group.off_scale for _, value in group.bars),
        default=1.0,
    )
    scale_max = float(int(largest) + 1)
    height = TOP + sum(TITLE_ROW + len(g.bars) * (BAR + GAP) + GROUP_GAP for g in groups) + 40
    plot_bottom = height - 40
    title = "agentcore's time as a multiple of a bare asyncio loop (lower is better)"
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
        f'viewBox="0 0 {WIDTH} {height}" font-family="Helvetica, Arial, sans-serif" '
        f'role="img" aria-label="{escape(title)}">',
        _rect(0, 0, WIDTH, height, "#ffffff"),
        _text(WIDTH / 2, 20, title, anchor="middle", size=14, bold=True),
        _text(
            WIDTH / 2,
            36,
            "dashed red: the target; 1x: as fast as the bare loop",
            anchor="middle",
            size=11,
        ),
    ]
    # Grid lines and the axis, one per whole multiple.
    for tick in range(int(scale_max) + 1):
        x = _x(tick, scale_max)
        parts.append(_line(x, TOP, plot_bottom, "#888888" if tick in (0, 1) else "#dddddd"))
        parts.append(
            _text(x, plot_bottom + 16, f"{tick}x", fill="#444444", anchor="middle", size=11)
        )
    y = float(TOP)
    for group in groups:
        parts.append(_text(PLOT_LEFT, y + 15, group.title, bold=True))
        y += TITLE_ROW
        first = y
        for index, (label, value) in enumerate(group.bars):
            colour = COLOURS[index % len(COLOURS)]
            parts.append(_text(PLOT_LEFT - 6, y + 12, label, anchor="end", size=11))
            if float(value) > scale_max:  # broken at the edge, its figure inside
                parts.append(_rect(PLOT_LEFT, y, PLOT_RIGHT - PLOT_LEFT, BAR, colour))
                parts.append(_rect(PLOT_RIGHT - 40, y, 6, BAR, "#ffffff"))
                off = f"{value}x (off the scale)"
                parts.append(_text(PLOT_RIGHT - 46, y + 12, off, fill="#ffffff", anchor="end"))
            else:
                end = _x(float(value), scale_max)
                parts.append(_rect(PLOT_LEFT, y, end - PLOT_LEFT, BAR, colour))
                parts.append(_text(end + 4, y + 12, f"{value}x", size=11))
            y += BAR + GAP
        if group.target is not None:
            x = _x(group.target, scale_max)
            dashed = ' stroke-width="2" stroke-dasharray="4 3"'
            parts.append(_line(x, first - 3, y + 1, "#c62828", dashed))
            target = f"target: {group.target:g}x"
            parts.append(
                _text(WIDTH - 10, first - 7, target, fill="#c62828", anchor="end", size=11)
            )
        y += GROUP_GAP
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Write the SVG, or with --check compare it with the committed file."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--check", action="store_true", help="compare with the committed file instead of writing"
    )
    args = parser.parse_args(argv)
    svg = render()
    if args.check:
        current = OUTPUT.read_text(encoding="utf-8") if OUTPUT.exists() else ""
        if current != svg:
            print(f"{OUTPUT.relative_to(ROOT)} is out of date: run bench/plot.py", file=sys.stderr)
            return 1
        return 0
    OUTPUT.parent.mkdir(parents=True, exist_ok=True)
    OUTPUT.write_text(svg, encoding="utf-8")
    print(OUTPUT.relative_to(ROOT))
    return 0


if __name__ == "__main__":
    sys.exit(main())
