"""The exceptions agentcore raises, split by who is at fault.

```
AgentCoreError
├── UsageError (ValueError)             the caller used the API wrongly
│   ├── ConfigError                     a config option or hook of the wrong shape
│   ├── ToolDefinitionError             an invalid tool: bad schema, duplicate name, bad signature
│   ├── MessageFormatError              not a message, or malformed message JSON
│   └── AgentBusyError                  Agent.prompt/continue_/reset while a run is active
├── ModelError (LookupError)            the model layer cannot serve a request
│   ├── UnknownApiError                 no adapter is registered for a model's `api`
│   ├── ModelNotFoundError              no catalogue entry for a provider/model id
│   ├── MissingApiKeyError              no API key given and none in the environment
│   └── MissingExtraError (ImportError) the provider SDK extra is not installed
├── ToolError                           raised by a tool to report a failure to the model
├── OutputValidationError (ValueError)  a typed output does not match its type
├── RecordingError (agentcore.testing)  a recording of model traffic cannot be used
│   └── RecordingDriftError (AssertionError)  the requests differ from the recording
└── SessionError (agentcore.sessions)   a stored session cannot be used
    ├── SessionNotFoundError (LookupError)
    ├── SessionLockedError              another process is writing the session
    └── SessionCorruptError (ValueError)
```

Failures of a request, the network or the model *during* a run are not exceptions: they end the
model's stream with an `error` event and become an assistant message with `stop_reason="error"`.
"""

from __future__ import annotations

__all__ = [
    "AgentBusyError",
    "AgentCoreError",
    "ConfigError",
    "MessageFormatError",
    "MissingApiKeyError",
    "MissingExtraError",
    "ModelError",
    "ModelNotFoundError",
    "OutputValidationError",
    "ToolDefinitionError",
    "ToolError",
    "UnknownApiError",
    "UsageError",
]


class AgentCoreError(Exception):
    """Root of every exception agentcore raises on purpose."""


class UsageError(AgentCoreError, ValueError):
    """The caller used the API wrongly; the message says what was expected."""


class ConfigError(UsageError):
    """A configuration option or hook has the wrong shape."""


class ToolDefinitionError(UsageError):
    """A tool cannot be used as defined: invalid JSON Schema, duplicate name, bad signature."""


class MessageFormatError(UsageError):
    """An object is not a message, or message JSON is malformed."""


class AgentBusyError(UsageError):
    """An `Agent` method that needs an idle agent was called while a run is active."""


class ModelError(AgentCoreError, LookupError):
    """The model layer cannot serve a request (raised before anything is sent)."""


class UnknownApiError(ModelError):
    """No provider adapter is registered for the model's `api`."""


class ModelNotFoundError(ModelError):
    """No catalogue entry matches the provider and model id."""


class MissingApiKeyError(ModelError):
    """No API key was given and the provider's environment variable is not set."""


class MissingExtraError(ModelError, ImportError):
    """The provider SDK is not installed; the message names the extra to install."""


class ToolError(AgentCoreError):
    """Raised by a tool to report a failure; its text becomes the error result."""


class OutputValidationError(AgentCoreError, ValueError):
    """A typed output that does not match its type (see `agentcore.OutputSpec.validate`).

    Attributes:
        problems: one line per failing path, `path: what is wrong` (`root` for the whole).
        received: the data that was validated.

    The text lists the problems and quotes what was received (clipped), so that it can be
    sent to the model as it is.
    """

    def __init__(self, problems: list[str], received: object = None) -> None:
        self.problems = list(problems)
        self.received = received
        super().__init__(self._text())

    def _text(self) -> str:
        import json

        shown = self.problems[:_MAX_PROBLEMS]
        lines = [f"  - {clip(p, 500)}" for p in shown]
        if len(self.problems) > len(shown):
            lines.append(f"  - … and {len(self.problems) - len(shown)} more problems")
        received = self.received
        if isinstance(received, str):
            quoted = received
        else:
            try:
                quoted = json.dumps(received, ensure_ascii=False, default=repr)
            except (TypeError, ValueError, RecursionError):
                quoted = repr(received)
        listed = "\n".join(lines)
        return f"The answer does not match the expected type:\n{listed}\nReceived: {clip(quoted)}"


_MAX_PROBLEMS = 50


# --- quoting received text ------------------------------------------------------------------

QUOTE_LIMIT = 2000
"""Characters of received text (tool arguments, a response body) an error text quotes."""


def clip(text: str, limit: int = QUOTE_LIMIT) -> str:
    """`text`, or its first `limit` characters followed by "… N more characters": how every
    error text quotes what it received, so a 10 MB argument never becomes a 10 MB error."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… {len(text) - limit} more characters"
