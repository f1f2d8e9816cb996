"""`Model`: what a request is sent to, and the per-API quirks of the server behind it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

__all__ = [
    "AzureOpenAI",
    "BedrockCompat",
    "GoogleCompat",
    "InputKind",
    "Model",
    "ModelCost",
    "OpenAICompletionsCompat",
    "ThinkingBudgets",
    "ThinkingControl",
    "TokenProvider",
    "VertexAI",
]

InputKind: TypeAlias = Literal["text", "image"]
"""A kind of input a model accepts."""

TokenProvider: TypeAlias = Callable[[], "str | Awaitable[str]"]
"""Returns a bearer token for a request (an Entra ID or Google access token); called once per
request attempt. A plain function runs in a worker thread (token refreshes block on the
network); an async one is awaited."""

ThinkingControl: TypeAlias = Literal["effort", "budget", "adaptive", "level", "fixed"]
"""What a thinking level becomes for a model: a reasoning `effort` (OpenAI, xAI, gpt-oss), a
token `budget` (Claude before 4.6, Gemini 2.5), `adaptive` thinking with an effort (Claude 4.6+),
a thinking `level` (Gemini 3), or `fixed` (the model thinks, and no request field changes how
much: DeepSeek's reasoner)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ThinkingBudgets:
    """Token budgets per thinking level, for APIs that take a budget rather than an effort."""

    minimal: int = 1024
    low: int = 2048
    medium: int = 8192
    high: int = 16384


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelCost:
    """Prices in USD per million tokens."""

    input: float = 0.0
    output: float = 0.0
    cache_read: float = 0.0
    cache_write: float = 0.0


@dataclass(frozen=True, slots=True, kw_only=True)
class OpenAICompletionsCompat:
    """Quirks of an OpenAI Chat Completions server, as flags rather than URL checks.

    Attributes:
        supports_developer_role: send the system prompt as a `developer` message to reasoning
            models (OpenAI does; most compatible servers only know `system`).
        max_tokens_field: which request field carries the output limit.
        supports_usage_in_streaming: send `stream_options.include_usage` to get token usage.
        supports_reasoning_effort: the server understands `reasoning_effort`.
        reasoning_effort_map: rewrites our thinking level into the server's effort value.
        requires_tool_result_name: tool messages must carry the tool's `name`.
        thinking_format: where reasoning arrives: `reasoning_content` (DeepSeek, llama.cpp, vLLM),
            `reasoning` (OpenRouter, Groq) or `none`.
        requires_thinking_as_text: replay earlier thinking as plain text.
        supports_strict_mode: the server accepts `strict` on tool definitions.
        supports_store: the server accepts `store`.
        supports_parallel_tool_calls: a request that offers tools asks for several calls in one
            answer (`parallel_tool_calls: true`): for a server whose default may be one call
            per answer (llama.cpp decides from the chat template when a request does not say).
            OpenAI's own service allows several by default and needs no flag.
        tool_call_id_format: which tool-call ids the server accepts: `any` (OpenAI's own are
            kept, other models' are cut to 40 characters), or `mistral` (exactly 9 letters and
            digits; every other id is mapped to one, the same id to the same one throughout a
            request, and the tool results follow).
    """

    supports_developer_role: bool = False
    max_tokens_field: Literal["max_tokens", "max_completion_tokens"] = "max_tokens"
    supports_usage_in_streaming: bool = True
    supports_reasoning_effort: bool = False
    reasoning_effort_map: Mapping[str, str] = field(default_factory=dict)
    requires_tool_result_name: bool = False
    thinking_format: Literal["reasoning_content", "reasoning", "none"] = "reasoning_content"
    requires_thinking_as_text: bool = True
    supports_strict_mode: bool = False
    supports_store: bool = False
    supports_parallel_tool_calls: bool = False
    tool_call_id_format: Literal["any", "mistral"] = "any"


@dataclass(frozen=True, slots=True, kw_only=True)
class BedrockCompat:
    """What a model on Bedrock takes beyond the Converse basics, as data (`Model.compat` of a
    `bedrock-converse-stream` model; the catalogue states it for its Bedrock entries).

    A Bedrock model built by hand without one gets it from the model itself: cache points when
    its prices include prompt caching, Anthropic's thinking settings when it is a reasoning
    model with `anthropic.` in its id (as every Bedrock id or inference profile of Claude has).

    Attributes:
        thinking: how a thinking level is sent: `anthropic` (Claude's `thinking` settings in
            `additionalModelRequestFields`), or `none` (the model reasons by itself, or not
            at all).
        cache_points: the model takes `cachePoint` blocks (Claude, Nova).
    """

    thinking: Literal["anthropic", "none"] = "none"
    cache_points: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class GoogleCompat:
    """What a model behind the Gemini APIs takes, as data (`Model.compat` of a
    `google-generative-ai` model; the catalogue states it for its Gemini entries).

    A model built by hand without one gets it from its id, by the rules of
    `agentcore.llm._profiles` (Gemini 3, 2.5 Pro/Flash/Flash-Lite, Claude and gpt-oss on Vertex).

    Attributes:
        thinking_budgets: the token budget per thinking level of a model that takes a budget
            (None: let the model decide, a dynamic budget); a request's own budgets win.
        min_thinking_budget: the least budget the model takes: thinking cannot be turned off
            below it (Gemini 2.5 Pro: 128), 0 when it can.
        thinking_levels: the Gemini thinking levels of a model that takes a level: `all`
            (MINIMAL, LOW, MEDIUM, HIGH) or `low_high` (only LOW and HIGH: Gemini 3 Pro).
        requires_thought_signatures: every replayed function call must carry a thought
            signature (a call without one gets the skip-validation sentinel): Gemini 3.
        images_in_function_response: tool-result images go inside the function response
            rather than in a user turn after the results: Gemini 3.
        requires_tool_call_id: function calls and responses carry their ids, which must be
            letters and digits (Claude and gpt-oss served on Vertex AI).
    """

    thinking_budgets: ThinkingBudgets | None = None
    min_thinking_budget: int = 0
    thinking_levels: Literal["all", "low_high"] = "all"
    requires_thought_signatures: bool = False
    images_in_function_response: bool = False
    requires_tool_call_id: bool = False

    def __post_init__(self) -> None:
        if isinstance(self.thinking_budgets, Mapping):  # from the catalogue's JSON
            object.__setattr__(self, "thinking_budgets", ThinkingBudgets(**self.thinking_budgets))


@dataclass(frozen=True, slots=True, kw_only=True)
class AzureOpenAI:
    """How a model is reached through Azure OpenAI (`Model.cloud`), for the
    `openai-completions` and `openai-responses` APIs.

    The resource endpoint (`https://<resource>.openai.azure.com`) is `Model.base_url`, else
    `AZURE_OPENAI_ENDPOINT`. Chat Completions go to
    `<endpoint>/openai/deployments/<deployment>/chat/completions?api-version=<api_version>`;
    Responses to the v1 API, `<endpoint>/openai/v1/responses?api-version=<responses_api_version>`.
    The credential is `StreamOptions.api_key`, else `token_provider` (Entra ID), else
    `AZURE_OPENAI_API_KEY`; a key goes in the `api-key` header, a token as `Authorization:
    Bearer`.

    Attributes:
        deployment: the deployment name (default: `Model.id`).
        api_version: the Chat Completions API version (default: `AZURE_OPENAI_API_VERSION`, else
            `OPENAI_API_VERSION`, else `DEFAULT_AZURE_API_VERSION`).
        responses_api_version: the `api-version` of the v1 Responses API.
        token_provider: returns an Entra ID token, e.g. `azure.identity`'s
            `get_bearer_token_provider(credential, "https://cognitiveservices.azure.com/.default")`.
    """

    deployment: str = ""
    api_version: str = ""
    responses_api_version: str = "preview"
    token_provider: TokenProvider | None = field(default=None, repr=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class VertexAI:
    """How a model is reached through Google Vertex AI (`Model.cloud`): Gemini (the
    `google-generative-ai` API) and Claude (the `anthropic-messages` API).

    The endpoint is `Model.base_url` (including its `/v1`-like version segment for Claude),
    else the location's own (`https://<location>-aiplatform.googleapis.com`,
    `https://aiplatform.googleapis.com` for `global`). The bearer token comes from
    `token_provider`, else `credentials`, else application-default credentials
    (`google.auth.default`; `pip install 'agentcore-loop[vertex]'` installs `google-auth`),
    refreshed off the event loop. A request's `api_key`, when given, is the access token.

    Attributes:
        project: the Google Cloud project (default: `GOOGLE_CLOUD_PROJECT`, then
            `ANTHROPIC_VERTEX_PROJECT_ID` for Claude, then the project of the
            application-default credentials).
        location: the region (default: `GOOGLE_CLOUD_LOCATION`, then `CLOUD_ML_REGION`, then
            `global`).
        credentials: `google.auth.credentials.Credentials` to use instead of the defaults.
        token_provider: returns an access token; takes precedence over `credentials`.
    """

    project: str = ""
    location: str = ""
    credentials: Any = field(default=None, repr=False)
    token_provider: TokenProvider | None = field(default=None, repr=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class Model:
    """A model at a provider, and how to reach it.

    Attributes:
        id: the provider's model id, sent in requests.
        name: a display name.
        api: the wire protocol (`openai-completions`, `openai-responses`, `anthropic-messages`,
            `google-generative-ai`, `faux`, ...); selects the adapter.
        provider: the provider id (catalogue owner, API-key environment variable).
        base_url: the endpoint; empty means the SDK's default.
        reasoning: the model can think before answering.
        input: the input kinds it accepts.
        cost: prices per million tokens.
        batch_cost: prices per million tokens of a request sent through the provider's batch
            API (`agentcore.llm.batch`); None: the catalogue states none (the batch functions
            then take half of `cost`, the rate OpenAI, Anthropic and Google publish).
        context_window: the maximum tokens of a request, prompt and answer together.
        max_tokens: the maximum output tokens.
        headers: extra HTTP headers for every request.
        compat: per-API quirks (for `openai-completions`: an `OpenAICompletionsCompat`; for
            `bedrock-converse-stream`: a `BedrockCompat`; for `google-generative-ai`: a
            `GoogleCompat`).
        cloud: the cloud the model is reached through (`AzureOpenAI`, `VertexAI`), with its
            deployment, project or credentials; None: the API's own service. A model of the
            `azure-openai`, `google-vertex` or `google-vertex-anthropic` provider without one
            is reached with the defaults (`AzureOpenAI()`, `VertexAI()`) from the environment.
        thinking_control: what a thinking level becomes for this model (`ThinkingControl`);
            None leaves it to the adapter's rule for the model id (models built by hand).
        supports_xhigh: the model takes the `xhigh` thinking level; None leaves it to the
            id rule of `agentcore.llm.thinking.supports_xhigh`.
        structured_output: the API can constrain the answer to a JSON schema natively; None
            means not known.
        tool_search: the provider searches deferred tools itself (Anthropic's tool search
            tool with `defer_loading`): a run's deferred tools are sent marked as deferred, with
            the provider's search tool instead of the loop's `search_tools` (see "Tool search"
            in docs/tools.md); None or False: the loop's own `search_tools`.
    """

    id: str
    api: str
    provider: str
    name: str = ""
    base_url: str = ""
    reasoning: bool = False
    input: list[InputKind] = field(default_factory=lambda: ["text"])
    cost: ModelCost = field(default_factory=ModelCost)
    batch_cost: ModelCost | None = None
    context_window: int = 128_000
    max_tokens: int = 16_384
    headers: Mapping[str, str] = field(default_factory=dict)
    compat: object | None = None
    cloud: AzureOpenAI | VertexAI | None = None
    # Capabilities, kept as data in the catalogue (scripts/gen-catalogue) so adapters need not
    # read them from model ids. None means "not stated": the id rules of today then apply.
    thinking_control: ThinkingControl | None = None
    supports_xhigh: bool | None = None
    structured_output: bool | None = None
    tool_search: bool | None = None

    def __post_init__(self) -> None:
        if not self.name:
            object.__setattr__(self, "name", self.id)


def cloud_to_json(cloud: AzureOpenAI | VertexAI | None) -> dict[str, str] | None:
    """The plain settings of `cloud` as JSON, for a session to store: never its credentials (a
    token provider, Google credentials), which a loaded model gets from the caller again."""
    if isinstance(cloud, AzureOpenAI):
        return {
            "kind": "azure-openai",
            "deployment": cloud.deployment,
            "api_version": cloud.api_version,
            "responses_api_version": cloud.responses_api_version,
        }
    if isinstance(cloud, VertexAI):
        return {"kind": "vertex-ai", "project": cloud.project, "location": cloud.location}
    return None


def cloud_from_json(data: object) -> AzureOpenAI | VertexAI | None:
    """The settings `cloud_to_json` wrote (None for anything else)."""
    if not isinstance(data, Mapping):
        return None
    text = {k: v for k, v in data.items() if isinstance(k, str) and isinstance(v, str)}
    if text.get("kind") == "azure-openai":
        return AzureOpenAI(
            deployment=text.get("deployment", ""),
            api_version=text.get("api_version", ""),
            responses_api_version=text.get("responses_api_version", "preview"),
        )
    if text.get("kind") == "vertex-ai":
        return VertexAI(project=text.get("project", ""), location=text.get("location", ""))
    return None
