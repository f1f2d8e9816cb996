"""Test helpers: the scripted `faux` provider, message builders, event-sequence checks, and
recorded model traffic (`recorded`: real SDK requests replayed from a file, see docs/recording.md).

```python
from agentcore.testing import FauxProvider, faux_text, faux_tool_call

faux = FauxProvider([faux_tool_call("add", {"a": 1, "b": 2}), faux_text("3")])
config = AgentLoopConfig(model=faux.model)
```
"""

from __future__ import annotations

from ..llm.providers.faux import FauxCall as FauxCall
from ..llm.providers.faux import FauxProvider as FauxProvider
from ..llm.providers.faux import FauxResponse as FauxResponse
from ._helpers import check_well_formed as check_well_formed
from ._helpers import event_types as event_types
from ._helpers import faux_error as faux_error
from ._helpers import faux_message as faux_message
from ._helpers import faux_text as faux_text
from ._helpers import faux_thinking as faux_thinking
from ._helpers import faux_tool_call as faux_tool_call
from .recording._format import RecordingError as RecordingError
from .recording._recording import Recording as Recording
from .recording._recording import RecordingDriftError as RecordingDriftError
from .recording._recording import RecordMode as RecordMode
from .recording._recording import recorded as recorded

__all__ = [
    "FauxCall",
    "FauxProvider",
    "FauxResponse",
    "RecordMode",
    "Recording",
    "RecordingDriftError",
    "RecordingError",
    "check_well_formed",
    "event_types",
    "faux_error",
    "faux_message",
    "faux_text",
    "faux_thinking",
    "faux_tool_call",
    "recorded",
]
