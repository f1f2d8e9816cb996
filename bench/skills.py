"""Agent Skills: what a catalogue of 50 skills costs a request, against their bodies inlined in
the system prompt, and what it costs the loop per turn.

Prompt size: a 3-request task (the model activates one skill, reads one of its files, answers)
with 50 generated skills (a 1-2 sentence description each; bodies of about 3,000 characters,
the size of the spec's examples). Each request's size is the system prompt, the tool schemas
and the messages, in characters and in tokens estimated at four characters a token (no
tokenizer of a real model is involved: the ratio is what to read).

Loop overhead: µs per turn of 10-turn runs (loop_overhead.py's scripted model, one trivial
tool call per turn), without skills and with the 50-skill catalogue (best of 5).

    .venv/bin/python bench/skills.py
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from pathlib import Path

from common import MODEL, best_of, clock, scripted_stream_fn

from agentcore import AgentContext, AgentLoopConfig, UserMessage, agent_loop, run_agent_loop, tool
from agentcore.llm import Context
from agentcore.skills import SkillSet, load_skills, skill_content
from agentcore.testing import FauxProvider, faux_text, faux_tool_call

SKILLS = 50
TURNS = 10
RUNS = 300

SECTION = (
    "## {title}\n\n"
    "1. Read the input the user gave and check that it is what this step expects; when it is "
    "not, say what is missing and stop.\n"
    "2. Run `scripts/{name}.py --check` on it and keep its output: it lists the problems by "
    "line.\n"
    "3. Fix each problem in the order listed, keeping the author's wording where it is not "
    "wrong, and explain each change in one sentence.\n"
    "4. See references/{name}-guide.md for the house style before writing anything new.\n\n"
)


def make_skills(root: Path) -> SkillSet:
    """50 skill folders of realistic size under `root`."""
    for i in range(SKILLS):
        name = f"skill-{i:02d}"
        folder = root / name
        (folder / "references").mkdir(parents=True)
        (folder / "scripts").mkdir()
        body = f"# {name}\n\n" + "".join(
            SECTION.format(title=t, name=name) for t in ("Before", "Doing it", "Checking", "After")
        )
        (folder / "SKILL.md").write_text(
            f"---\nname: {name}\ndescription: Review and fix {name} documents (style, structure "
            f"and facts). Use when the user asks to check or correct a {name} document.\n---\n"
            + body,
            encoding="utf-8",
        )
        (folder / "references" / f"{name}-guide.md").write_text(
            "Short sentences. Active voice. One idea a paragraph.\n" * 20, encoding="utf-8"
        )
        (folder / "scripts" / f"{name}.py").write_text("print('ok')\n", encoding="utf-8")
    skills = load_skills(root)
    assert len(skills) == SKILLS and not skills.problems, skills.problems
    return skills


def request_chars(context: Context) -> tuple[int, int, int]:
    """The characters of a request: system prompt, tool schemas, messages."""
    tools = sum(
        len(t.name) + len(t.description) + len(json.dumps(t.parameters)) for t in context.tools
    )
    messages = sum(len(json.dumps(_content(m))) for m in context.messages)
    return len(context.system_prompt), tools, messages


def _content(message: object) -> object:
    content = getattr(message, "content", "")
    if isinstance(content, str):
        return content
    return [getattr(b, "text", None) or getattr(b, "arguments", None) for b in content]


async def prompt_sizes(skills: SkillSet) -> None:
    chosen = skills.skills[7]
    task = "Check my skill-07 document, please."
    # catalogue: activate, read a file, answer
    faux = FauxProvider(
        [
            faux_tool_call("activate_skill", {"name": chosen.name}),
            faux_tool_call(
                "read_skill_file",
                {"name": chosen.name, "path": f"references/{chosen.name}-guide.md"},
            ),
            faux_text("Fixed: three sentences shortened."),
        ]
    )
    await run_agent_loop(
        [UserMessage(content=task)],
        AgentContext(system_prompt="You help."),
        AgentLoopConfig(model=faux.model, skills=skills),
        lambda e: None,
        stream_fn=faux.stream_fn,
    )
    catalogue = [request_chars(c.context) for c in faux.calls]
    # inlined: every body in the system prompt; the model reads the file with a tool of its own
    inlined_prompt = "You help.\n\n" + "\n\n".join(skill_content(s) for s in skills)

    @tool
    def read_file(path: str) -> str:
        """Read a file."""
        return "Short sentences. Active voice. One idea a paragraph.\n" * 20

    faux2 = FauxProvider(
        [
            faux_tool_call("read_file", {"path": f"references/{chosen.name}-guide.md"}),
            faux_text("Fixed: three sentences shortened."),
        ]
    )
    await run_agent_loop(
        [UserMessage(content=task)],
        AgentContext(system_prompt=inlined_prompt, tools=[read_file]),
        AgentLoopConfig(model=faux2.model),
        lambda e: None,
        stream_fn=faux2.stream_fn,
    )
    inlined = [request_chars(c.context) for c in faux2.calls]

    def show(label: str, sizes: list[tuple[int, int, int]]) -> int:
        total = 0
        for i, (system, tools, messages) in enumerate(sizes, 1):
            chars = system + tools + messages
            total += chars
            print(
                f"{label:9} request {i}: system {system:7,} + tools {tools:5,} + messages "
                f"{messages:6,} = {chars:7,} chars ≈ {chars // 4:6,} tokens"
            )
        print(f"{label:9} task total: {total:,} chars ≈ {total // 4:,} tokens")
        return total

    a = show("catalogue", catalogue)
    b = show("inlined", inlined)
    first_a = sum(catalogue[0])
    first_b = sum(inlined[0])
    print(
        f"first request: catalogue {first_a / first_b:.1%} of inlined; "
        f"task: {a / b:.1%} ({len(catalogue)} requests against {len(inlined)})"
    )


async def per_turn(skills: SkillSet | None) -> float:
    @tool
    async def noop(x: int) -> str:
        """Do nothing."""
        return "ok"

    context = AgentContext(tools=[noop])
    config = AgentLoopConfig(model=MODEL, skills=skills or ())
    stream_fn = scripted_stream_fn(TURNS)
    t0 = clock()
    for _ in range(RUNS):
        events = agent_loop([UserMessage(content="go")], context, config, stream_fn=stream_fn)
        async for _event in events:
            pass
        await events.result()
    return (clock() - t0) / (RUNS * TURNS) * 1e6


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        skills = make_skills(Path(tmp))
        asyncio.run(prompt_sizes(skills))
        none = best_of(5, lambda: asyncio.run(per_turn(None)))
        some = best_of(5, lambda: asyncio.run(per_turn(skills)))
    print(f"per turn, no skills         : {none:7.1f} µs")
    print(f"per turn, 50-skill catalogue: {some:7.1f} µs ({some - none:+.1f} µs)")


if __name__ == "__main__":
    main()
