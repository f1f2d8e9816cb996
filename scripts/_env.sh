# Shared by scripts/test and scripts/demo: make .venv and install the project into it.
# Re-installs only when pyproject.toml changed (a stamp file remembers its hash).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
PY=${PYTHON:-python3}
VENV=${AGENTCORE_VENV:-$ROOT/.venv}

ensure_venv() {  # ensure_venv EXTRAS
  local extras=$1
  if ! "$PY" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
    echo "agentcore needs Python >= 3.11; '$PY' is $("$PY" --version 2>&1). Set PYTHON=..." >&2
    exit 1
  fi
  [ -x "$VENV/bin/python" ] || { echo "[setup] creating $VENV" >&2; "$PY" -m venv "$VENV"; }
  local stamp="$VENV/.agentcore-$extras" want
  want=$(sha256sum pyproject.toml | cut -d' ' -f1)
  if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    echo "[setup] installing agentcore-loop[$extras] into $VENV" >&2
    # the distribution was named `agentcore` before (the import name still is): an editable
    # install of this checkout under the old name goes first, so one distribution owns the package
    "$VENV/bin/python" - "$ROOT" <<'PYEOF' >&2 || true
import importlib.metadata, json, subprocess, sys
try:
    url = json.loads(importlib.metadata.distribution("agentcore").read_text("direct_url.json") or "{}")
except importlib.metadata.PackageNotFoundError:
    sys.exit(0)
if url.get("url", "").rstrip("/") == "file://" + sys.argv[1].rstrip("/"):
    print("[setup] removing the old 'agentcore' install of this checkout (now agentcore-loop)")
    subprocess.run([sys.executable, "-m", "pip", "uninstall", "-q", "-y", "agentcore"], check=False)
PYEOF
    "$VENV/bin/python" -m pip install -q --disable-pip-version-check -e ".[$extras]" 2>&1 \
      | grep -v "^WARNING: Location" >&2 || true
    "$VENV/bin/python" -c "import agentcore" || { echo "[setup] install failed" >&2; exit 1; }
    echo "$want" >"$stamp"
  fi
}
