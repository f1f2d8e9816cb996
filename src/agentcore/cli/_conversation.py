"""A chat's conversation: its agent and session, the `/commands`, one run at a time.

`Chat` is shared by the chat's front ends (`_chat._PlainFront` reading lines, `_tty.TerminalFront`
the live terminal UI), which show it through a `View`. The session is created in the store at the
first prompt (a chat left at once leaves none); `/reset` starts a new one, keeping the old.
Resuming, the session's model, system prompt and thinking level are used unless the command line
gave them (`SessionOptions.given`).
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import anyio

from ..agent import Agent, AgentState
from ..errors import AgentCoreError
from ..events import AgentEvent
from ..llm import check_model
from ..messages import AgentMessage, Usage
from ..sessions import Session, SessionError, SessionState, SessionStore
from ..skills import Skill, skill_content
from ._approve import HELP as APPROVE_HELP
from ._approve import decide, is_approval_command, pending_notice, reask
from ._render import Speakers, last_speaker, plural
from ._run import (
    EXIT_INTERRUPTED,
    CommandError,
    GuardedOutput,
    Interrupts,
    Settings,
    limit_notice,
    outcome,
    resolve_model,
)
from ._safe import visible
from ._sessions_cmd import transcript_lines
from ._skills import skills_listing
from ._traffic import reported_on_exit

__all__ = ["HELP", "Chat", "SessionOptions", "View"]

_REPLAYED = 6  # transcript entries shown when a session is resumed in a terminal

HELP = f"""\
commands:
  /help               this help
  /model PROVIDER/ID  switch the model, keeping the conversation (/model: the current one)
  /reset              start a new conversation (the old one stays saved)
  /session            the id of the session the chat is saved to
  /skills             the skills loaded (name, description, file) and their problems
  /skill NAME [TEXT]  use the skill NAME for the next prompt (TEXT: that prompt, sent now)
  /exit               quit (or Ctrl-D)
{APPROVE_HELP}
Ctrl-C stops the answer being written. In a terminal, a line sent while an answer
is written steers it: the model reads it at its next turn."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionOptions:
    """Where the chat is saved and which session it resumes."""

    directory: str | None = None
    continue_last: bool = False
    session: str | None = None
    given: frozenset[str] = frozenset({"model", "system", "thinking"})
    """Of `model`, `system`, `thinking`: the settings given on the command line, which win
    over a resumed session's own."""


class View(Protocol):
    """How a front end shows a conversation: the agent's events, and the chat's own lines."""

    def __call__(self, event: AgentEvent) -> None: ...

    def finish(self) -> None: ...

    def error(self, text: str) -> None: ...

    def notice(self, text: str) -> None: ...

    def after_answer(self, added: Sequence[AgentMessage], total: Usage) -> None: ...


class Chat:
    """One conversation: its agent and session, the commands, and running prompts.

    Args:
        settings: how prompts are run.
        store: where the conversation is saved (None: not saved).
        session: a session to resume (opened for writing), else a new one is created in
            `store` at the first prompt.
        given: see `SessionOptions.given`.
    """

    def __init__(
        self,
        settings: Settings,
        *,
        store: SessionStore | None,
        session: Session | None = None,
        given: frozenset[str] = frozenset(),
        output: GuardedOutput | None = None,
    ) -> None:
        self.settings = settings
        self.output = output
        self.store = store
        self.given = given
        self.view: View | None = None
        self.interrupts = Interrupts(idle=self._idle_interrupt)
        self.busy = False  # a prompt (or a command's run) is being answered
        self.armed: Skill | None = None  # /skill NAME: the skill of the next prompt
        self.on_idle_interrupt: Callable[[], None] | None = None  # a front end's own notice
        self._unsubscribe: Callable[[], None] | None = None
        self.agent = self._new_agent(session)
        # calls decided elsewhere (the web page, a program) and not run: decided here again
        self.reasked = reask(self.agent) if session is not None else None

    # -- the agent and its session ---------------------------------------------------------

    def _new_agent(self, session: Session | None, carry: AgentState | None = None) -> Agent:
        """An agent on `session` (or on none); `carry` is a state whose model, system prompt and
        thinking level it takes over (else: the settings', or the resumed session's)."""
        settings = self.settings
        initial: dict[str, Any] = {"tools": settings.tools}
        resumed = session.load() if session is not None and carry is None else None
        if carry is not None:
            initial["model"] = carry.model
            initial["system_prompt"] = carry.system_prompt
            initial["thinking_level"] = carry.thinking_level
        else:
            if resumed is None or "system" in self.given:
                initial["system_prompt"] = settings.system
            if resumed is None or "thinking" in self.given:
                initial["thinking_level"] = settings.thinking
            if resumed is None or "model" in self.given or resumed.state.model is None:
                initial["model"] = settings.model
        agent = Agent(
            initial_state=initial,
            stream_fn=settings.stream_fn,
            session=session,
            session_id=None if session is not None else uuid.uuid4().hex,  # cache affinity
            temperature=settings.temperature,
            max_tokens=settings.max_tokens,
            prepare_next_turn=settings.prepare_next_turn,
            skills=settings.skills.skills,
            **settings.bounds(),
        )
        if session is not None and resumed is not None and settings.stream_fn is None:
            try:  # the model of a resumed session: can it be used here?
                check_model(agent.state.model)
            except AgentCoreError as exc:
                session.close()
                model = agent.state.model
                raise CommandError(
                    f"cannot resume session {session.id} with its model "
                    f"{model.provider}/{model.id}: {exc} (--model chooses another)"
                ) from None
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        if self.view is not None:
            self._unsubscribe = agent.subscribe(self.view)
        return agent

    def speakers(self) -> Speakers:
        """Who speaks, for a view: the agent that starts (`--agents`), or in a resumed
        conversation the agent that answered last."""
        first = self.settings.agent_name
        speakers = Speakers(first, str(self.settings.handoffs.get("next_agent", "last")))
        if first is not None:
            speakers.current = last_speaker(self.agent.state.messages) or first
        return speakers

    def attach(self, view: View) -> None:
        """Show the conversation in `view` from now on."""
        self.view = view
        if self._unsubscribe is not None:
            self._unsubscribe()
        self._unsubscribe = self.agent.subscribe(view)

    @property
    def broken(self) -> bool:
        """Whether stdout's reader went away (`agentcore chat ... | head`)."""
        return self.output is not None and self.output.broken

    @property
    def session(self) -> Session | None:
        """The session the conversation is saved to (None before the first prompt)."""
        return self.agent.session

    def _ensure_session(self) -> None:
        """Create the session at the first prompt, so that a chat left at once leaves none."""
        if self.store is None or self.agent.session is not None:
            return
        state = self.agent.state
        try:
            session = self.store.create(
                state=SessionState(
                    system_prompt=state.system_prompt,
                    model=state.model,
                    thinking_level=state.thinking_level,
                )
            )
        except (SessionError, OSError) as exc:
            self._say_error(f"the chat is not saved: {exc}")
            self.store = None
            return
        self.agent = self._new_agent(session, carry=state)

    def close(self) -> None:
        """Give the session's write lock back."""
        if self.agent.session is not None:
            self.agent.session.close()

    def resumed_lines(self) -> list[tuple[str, str | None]]:
        """What to show when a session was resumed: a header and its last exchanges, each
        with its style (see `_sessions_cmd.transcript_lines`; None: an answer's text)."""
        session = self.agent.session
        if session is None:
            return []
        messages = self.agent.state.messages
        entries = list(transcript_lines(messages))
        lines: list[tuple[str, str | None]] = [
            (f"(resumed session {session.id}: {plural(len(messages), 'message')})", "dim")
        ]
        if len(entries) > _REPLAYED:
            lines.append((f"(… {len(entries) - _REPLAYED} earlier entries)", "dim"))
        lines += entries[-_REPLAYED:]
        if self.reasked is not None:
            lines.append((self.reasked, "error"))
        notice = pending_notice(self.agent)
        if notice is not None:
            lines.append((notice, "dim"))
        return lines

    # -- output ----------------------------------------------------------------------------

    def say(self, text: str) -> None:
        """A notice in the view."""
        if self.view is not None:
            self.view.notice(text)

    def _say_error(self, text: str) -> None:
        if self.view is not None:
            self.view.error(text)

    def model_ref(self) -> str:
        """The current model as `provider/id`."""
        model = self.agent.state.model
        return f"{model.provider}/{model.id}"

    def _idle_interrupt(self) -> None:
        if self.on_idle_interrupt is not None:
            self.on_idle_interrupt()
        else:
            self.say("(Ctrl-D or /exit quits)")

    # -- commands and prompts --------------------------------------------------------------

    async def handle(self, text: str) -> bool:
        """One line of input: a prompt or a `/command`; returns False when the chat should end."""
        text = text.strip()
        if not text:
            return True
        if text.startswith("/"):
            return await self.command(text)
        await self.answer(text)
        return not self.broken

    async def command(self, text: str) -> bool:
        """Run a `/command`; returns False when the chat should end."""
        if is_approval_command(text):
            decided = decide(self.agent, text)
            (self._say_error if decided.is_error else self.say)(decided.text)
            if decided.ready:  # every waiting call is decided: carry them out
                await self.run(lambda agent: agent.continue_())
            return not self.broken
        name, _, arg = text.partition(" ")
        arg = arg.strip()
        commands: dict[str, Callable[[str], Awaitable[bool]]] = {
            "/exit": self._exit,
            "/quit": self._exit,
            "/reset": self._reset,
            "/model": self._model,
            "/session": self._session,
            "/skills": self._skills,
            "/skill": self._skill,
            "/help": self._help,
        }
        handler = commands.get(name)
        if handler is None:
            self._say_error(f"unknown command {name}; /help lists the commands")
            return True
        return await handler(arg)

    async def _exit(self, arg: str) -> bool:
        return False

    async def _help(self, arg: str) -> bool:
        self.say(HELP)
        return True

    async def _reset(self, arg: str) -> bool:
        if self.agent.session is None:
            self.agent.reset()
        else:  # the saved conversation stays; the next prompt starts a new session
            self.agent.session.close()
            self.agent = self._new_agent(None, carry=self.agent.state)
        self.say("(conversation cleared)")
        return True

    async def _model(self, arg: str) -> bool:
        if arg:
            try:
                self.agent.state.model = resolve_model(arg, stream_fn=self.settings.stream_fn)
            except CommandError as exc:
                self._say_error(str(exc))
                return True
        self.say(f"(model: {self.model_ref()})")
        return True

    async def _session(self, arg: str) -> bool:
        session = self.agent.session
        if session is None:
            self.say("(a new session starts with the next prompt)")
        else:
            count = len(self.agent.state.messages)
            self.say(f"(session {session.id}: {plural(count, 'message')})")
        return True

    async def _skills(self, arg: str) -> bool:
        self.say(skills_listing(self.settings.skills))
        return True

    async def _skill(self, arg: str) -> bool:
        name, _, text = arg.partition(" ")
        skills = self.settings.skills
        skill = skills.get(name) if name else None
        if skill is None:
            known = ", ".join(visible(n) for n in skills.names) or "none are loaded"
            self._say_error(f"no skill {visible(name)!r}: /skill NAME [TEXT], NAME one of {known}")
            return True
        self.armed = skill
        if text.strip():
            await self.answer(text.strip())
            return not self.broken
        self.say(f"(skill {visible(skill.name)} is used for the next prompt)")
        return True

    async def answer(self, text: str) -> None:
        """Answer one prompt (with the skill `/skill` chose, if any: its content leads the
        prompt, as the user's own instruction)."""
        skill, self.armed = self.armed, None
        if skill is not None:
            content = await anyio.to_thread.run_sync(skill_content, skill)
            text = f"Use the skill {skill.name} for this request.\n{content}\n\n{text}"
        await self.run(lambda agent: agent.prompt(text))

    async def run(self, start: Callable[[Agent], Awaitable[list[AgentMessage]]]) -> None:
        """Run the agent (`start` calls `prompt` or `continue_`), Ctrl-C aborting it, and show
        how it ended."""
        self._ensure_session()
        agent = self.agent
        view = self.view
        stopped = False

        def abort() -> None:
            nonlocal stopped
            stopped = True
            agent.abort()

        self.busy = True
        try:
            with self.interrupts.running(abort):
                added = await start(agent)
        finally:
            self.busy = False
        if self.broken or view is None:
            return
        limit = agent.state.limit
        code, error = outcome(added, limit)
        if error is not None and reported_on_exit(error):  # the drift is listed on leaving
            view.error("the request is not in the recording (the difference is listed on exit)")
        elif error is not None:
            view.error(error)
        elif code == EXIT_INTERRUPTED or stopped:  # stopped in a tool: no aborted answer
            view.notice("(stopped)")
            queued = len(agent.steering_queue)
            if queued:
                lines = "a steering line stays" if queued == 1 else f"{queued} steering lines stay"
                view.notice(f"({lines} queued: the model reads it with the next prompt)")
        elif limit is not None:
            view.notice(f"({limit_notice(limit)})")
        else:
            view.finish()
        view.after_answer(added, agent.state.usage)
        notice = pending_notice(agent)  # the calls the run stopped for: /approve or /deny them
        if notice is not None:
            view.notice(notice)
