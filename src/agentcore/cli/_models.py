"""`agentcore models [provider]`: the model catalogue as a table, or as JSON Lines."""

from __future__ import annotations

import json

from ..errors import ModelNotFoundError
from ..llm.model import Model
from ..llm.models import get_models, get_providers
from ._render import Writable
from ._run import EXIT_OK, CommandError

__all__ = ["list_models"]


def _row(model: Model) -> list[str]:
    cost = model.cost
    price = f"${cost.input:g}/${cost.output:g}" if cost.input or cost.output else "free"
    return [
        f"{model.provider}/{model.id}",
        f"{model.context_window // 1000}k",
        "yes" if model.reasoning else "no",
        "+".join(model.input),
        price,
        model.name,
    ]


def _json(model: Model) -> str:
    return json.dumps(
        {
            "ref": f"{model.provider}/{model.id}",
            "provider": model.provider,
            "id": model.id,
            "name": model.name,
            "api": model.api,
            "base_url": model.base_url,
            "reasoning": model.reasoning,
            "input": list(model.input),
            "context_window": model.context_window,
            "max_tokens": model.max_tokens,
            "cost": {
                "input": model.cost.input,
                "output": model.cost.output,
                "cache_read": model.cost.cache_read,
                "cache_write": model.cost.cache_write,
            },
        },
        ensure_ascii=False,
    )


def list_models(provider: str | None, *, json_mode: bool, out: Writable) -> int:
    """Write the catalogue (or one provider's part of it) to `out`.

    Raises:
        CommandError: the provider is unknown.
    """
    try:
        providers = [provider] if provider else get_providers()
        models = [m for p in providers for m in get_models(p)]
    except ModelNotFoundError as exc:
        raise CommandError(str(exc)) from None
    if json_mode:
        for model in models:
            out.write(_json(model) + "\n")
        return EXIT_OK
    header = ["MODEL", "CONTEXT", "THINKING", "INPUT", "$/M IN/OUT", "NAME"]
    rows = [header, *(_row(m) for m in models)]
    widths = [max(len(r[i]) for r in rows) for i in range(len(header) - 1)]
    for row in rows:
        cells = [cell.ljust(width) for cell, width in zip(row, widths, strict=False)]
        out.write("  ".join([*cells, row[-1]]).rstrip() + "\n")
    return EXIT_OK
