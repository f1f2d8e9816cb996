"""`agentcore serve --a2a` with a faux model registered as `faux/a2a` that always answers
"Served over A2A.", run as a subprocess by test_a2a_cli.py.

Usage: python tests/a2a/faux_serve_a2a.py [agentcore serve options]
"""

from __future__ import annotations

import sys

from agentcore.cli import main
from agentcore.llm import register_model
from agentcore.testing import FauxProvider, faux_text

faux = FauxProvider([faux_text("Served over A2A.")] * 100, provider="faux", model_id="a2a")
register_model(faux.model)

if __name__ == "__main__":
    sys.exit(main(["serve", "--a2a", "--model", "faux/a2a", *sys.argv[1:]]))
