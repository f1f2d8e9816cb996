"""Tool search: the `search_tools` tool a run offers in place of its deferred tools, and the
BM25 ranking it uses.

A deferred tool (`AgentTool(deferred=True)`) is not in the model's requests. The run offers
`search_tools` instead; a search returns the best matches (name, description, parameters) and
names them in its result's `added_tool_names`, so they join the run from that point of the
transcript (`_engine/transcript.py` reads the names back from the transcript, so a resumed
session sees the same tools). The tool itself is built by the engine (`_engine/tool_search.py`);
this module imports nothing of the agent layer, so `agentcore.tools` can export its names.

Ranking is Okapi BM25 (k1 = 1.5, b = 0.75, the idf of Lucene: ln(1 + (N - n + 0.5) / (n + 0.5)),
never negative) over each tool's name and description, split into lower-case words (a name's
`snake_case`, `kebab-case` and `camelCase` parts count as words; a short list of English stop
words, `STOP_WORDS`, is left out). Ties keep the tools' order.
No dependency: a tool set is hundreds of short documents, scored in well under a millisecond.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Sequence
from typing import Any, Protocol

__all__ = [
    "DEFAULT_SEARCH_RESULTS",
    "MAX_SEARCH_DESCRIPTION_CHARS",
    "MAX_SEARCH_RESULTS",
    "SEARCH_TOOLS",
    "SEARCH_PARAMETERS",
    "STOP_WORDS",
    "Bm25",
    "Searchable",
    "ToolIndex",
    "words",
]

SEARCH_TOOLS = "search_tools"
"""The name of the search tool a run with deferred tools offers."""
DEFAULT_SEARCH_RESULTS = 5
"""Matches a search returns when the model does not say how many."""
MAX_SEARCH_RESULTS = 20
"""The most matches one search returns (the `limit` the model may ask for)."""
MAX_SEARCH_DESCRIPTION_CHARS = 2_000
"""A found tool's description in a search result is cut to this many characters."""

_K1 = 1.5
_B = 0.75
_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


STOP_WORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "for",
        "from",
        "has",
        "have",
        "in",
        "is",
        "it",
        "its",
        "of",
        "on",
        "or",
        "that",
        "the",
        "this",
        "to",
        "was",
        "were",
        "will",
        "with",
    ]
)
"""English words too common to tell tools apart: left out of the index and of queries."""


def words(text: str) -> list[str]:
    """The lower-case words of `text` but the `STOP_WORDS` (`listGitHubIssues` -> list, git,
    hub, issues)."""
    return [w for w in (m.lower() for m in _WORD.findall(text)) if w not in STOP_WORDS]


class Bm25:
    """Okapi BM25 over a fixed list of documents (each a list of words)."""

    __slots__ = ("_avg", "_docs", "_idf", "_lengths")

    def __init__(self, documents: Sequence[Sequence[str]]) -> None:
        self._docs = [Counter(d) for d in documents]
        self._lengths = [len(d) for d in documents]
        count = len(documents)
        self._avg = (sum(self._lengths) / count) if count else 0.0
        frequency: Counter[str] = Counter()
        for doc in self._docs:
            frequency.update(doc.keys())
        self._idf = {
            word: math.log(1 + (count - n + 0.5) / (n + 0.5)) for word, n in frequency.items()
        }

    def scores(self, query: Sequence[str]) -> list[float]:
        """Each document's score for `query` (0 for a document sharing no word with it)."""
        terms = [w for w in dict.fromkeys(query) if w in self._idf]
        avg = self._avg or 1.0
        result = []
        for doc, length in zip(self._docs, self._lengths, strict=True):
            score = 0.0
            norm = _K1 * (1 - _B + _B * length / avg)
            for word in terms:
                tf = doc.get(word)
                if tf:
                    score += self._idf[word] * tf * (_K1 + 1) / (tf + norm)
            result.append(score)
        return result

    def top(self, query: Sequence[str], limit: int) -> list[int]:
        """The indexes of the best `limit` documents with a score above 0, best first."""
        scores = self.scores(query)
        ranked = sorted((i for i, s in enumerate(scores) if s > 0), key=lambda i: -scores[i])
        return ranked[:limit]


SEARCH_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": {
            "type": "string",
            "description": "Words describing the tool you need (what it acts on, what it does).",
        },
        "limit": {
            "type": "integer",
            "minimum": 1,
            "maximum": MAX_SEARCH_RESULTS,
            "description": f"How many tools to return (default {DEFAULT_SEARCH_RESULTS}).",
        },
    },
    "required": ["query"],
    "additionalProperties": False,
}
"""The parameters of `search_tools`: a query, and how many matches (at most
`MAX_SEARCH_RESULTS`)."""


class Searchable(Protocol):
    """What a search reads of a tool (an `AgentTool` is one)."""

    @property
    def name(self) -> str: ...
    @property
    def description(self) -> str: ...


class ToolIndex:
    """The BM25 index of a list of tools over their names and descriptions (built on the first
    search), and the text a search answers with."""

    __slots__ = ("_bm25", "_tools")

    def __init__(self, tools: Sequence[Searchable]) -> None:
        self._tools = list(tools)
        self._bm25: Bm25 | None = None

    def search(self, query: str, limit: int) -> list[Searchable]:
        """The best `limit` tools for `query`, best first (none shares a word with it: [])."""
        if self._bm25 is None:
            self._bm25 = Bm25([words(t.name) + words(t.description) for t in self._tools])
        return [self._tools[i] for i in self._bm25.top(words(query), limit)]

    @staticmethod
    def answer(found: Sequence[tuple[str, str, Any]]) -> str:
        """The result text of a search: the found tools' (name, description, parameters) as a
        JSON list, each description cut to `MAX_SEARCH_DESCRIPTION_CHARS`."""
        entries = []
        for name, description, parameters in found:
            if len(description) > MAX_SEARCH_DESCRIPTION_CHARS:
                description = description[:MAX_SEARCH_DESCRIPTION_CHARS] + " [cut]"
            entries.append({"name": name, "description": description, "parameters": parameters})
        return "These tools can be called from now on:\n" + json.dumps(
            entries, ensure_ascii=False, indent=1
        )
