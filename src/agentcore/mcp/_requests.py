"""What a server asks of an `MCPClient` while it is connected: sampling a model, input from the
user (elicitation), its roots, and notifications that its tools changed.

A request is tied to the running call of the client that caused it (`CallCharge`, the one in the
request's context, else the oldest running call: a stand-alone request of an older server), so
that a sampling's usage joins that call's result and a question makes that call wait. Sampling
is in `_sampling`, elicitation and roots in `_elicitation`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal, Protocol

from .. import ConfigError
from ._elicitation import ElicitationHandler, ask_through_approvals, elicit, file_roots
from ._sampling import CallCharge, MCPSampling, current_charge, sample
from ._sdk import types

__all__ = ["ServerRequests"]


class _Named(Protocol):
    @property
    def server_name(self) -> str: ...  # how the server is named to the user (read when asked)


class ServerRequests:
    """The client's answers to its server's requests, and the calls they may belong to."""

    def __init__(
        self,
        owner: _Named,
        sampling: MCPSampling | None,
        elicitation: ElicitationHandler | Literal["approvals"] | None,
        roots: Sequence[str | Path] | None,
        on_change: Callable[[], None],
    ) -> None:
        if sampling is not None and not isinstance(sampling, MCPSampling):
            raise ConfigError(
                f"sampling must be an MCPSampling or None, got {type(sampling).__name__}"
            )
        if elicitation is not None and elicitation != "approvals" and not callable(elicitation):
            raise ConfigError(
                f"elicitation must be a function (an MCPElicitation -> an MCPElicitationAnswer), "
                f"'approvals' or None, got {elicitation!r}"
            )
        self.owner = owner
        self.sampling = sampling
        self.elicitation = elicitation
        self.roots = file_roots(roots)
        self.on_change = on_change
        self.running: list[CallCharge] = []  # the client's calls in flight, oldest first

    def callbacks(self) -> dict[str, Any]:
        """The `mcp.Client` keyword arguments that answer the server (a capability that is off
        is not announced: its callback is None)."""
        return {
            "message_handler": self.on_message,
            "sampling_callback": self.on_sampling,
            "elicitation_callback": self.on_elicitation if self.elicitation else None,
            "list_roots_callback": self.on_list_roots if self.roots is not None else None,
        }

    def answers(self, method: str) -> bool:
        """Whether this client answers a server's request of `method` (when it is turned on)."""
        wanted = {
            "sampling/createMessage": self.sampling is not None,
            "elicitation/create": self.elicitation is not None,
            "roots/list": self.roots is not None,
        }
        return wanted.get(method, False)

    async def on_message(self, message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            self.on_change()

    def charge(self) -> CallCharge | None:
        """The running call a server's request belongs to: the one in this context, else the
        oldest running call of this client (a stand-alone request of an older server)."""
        charge = current_charge.get()
        if charge is not None and charge in self.running:
            return charge
        return self.running[0] if self.running else None

    async def on_sampling(
        self, context: Any, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult | types.ErrorData:
        return await sample(self.sampling, self.owner.server_name, self.charge(), params)

    async def on_elicitation(
        self, context: Any, params: types.ElicitRequestParams
    ) -> types.ElicitResult | types.ErrorData:
        charge = self.charge()
        if self.elicitation == "approvals":
            return ask_through_approvals(self.owner.server_name, charge, params)
        return await elicit(
            self.elicitation, self.owner.server_name, charge.tool if charge else None, params
        )

    async def on_list_roots(self, context: Any) -> types.ListRootsResult | types.ErrorData:
        return types.ListRootsResult(roots=list(self.roots or []))
