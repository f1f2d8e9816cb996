"""`agentcore serve` with the scripted faux model of `faux_script.py`, run as a subprocess by the
browser tests: the model is registered in the catalogue as `faux/scripted`, paced so that a long
answer can be stopped (`FAUX_TOKENS_PER_SECOND`, default 200).

Usage: python tests/web/faux_serve.py [agentcore serve options]
"""

from __future__ import annotations

import os
import sys

from faux_script import answer  # the script's directory is on sys.path

from agentcore.cli import main
from agentcore.llm import register_model
from agentcore.testing import FauxProvider

faux = FauxProvider(
    [answer] * 10_000,
    provider="faux",
    model_id="scripted",
    tokens_per_second=float(os.environ.get("FAUX_TOKENS_PER_SECOND", "200")),
)
register_model(faux.model)

if __name__ == "__main__":
    sys.exit(main(["serve", "--model", "faux/scripted", "--tools", *sys.argv[1:]]))
