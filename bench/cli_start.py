"""CPU time of the `agentcore` command: `--version`, `--help`, and `run` up to its first request.

Each figure is the user + system CPU time of a fresh process (bytecode cached), the best and the
median of `--runs`. For `run`, the process is stopped when it opens its first connection to the
model's server (a socket connect to 127.0.0.1, the local model of the catalogue; nothing needs
to listen there): what a user waits for before the model is even asked. Targets: 0.1 s of CPU
for `--version` and `--help`, 0.3 s for `run` to its first request.

`--without trio,click` runs each command as if those packages were not installed (each name is
set to None in `sys.modules`, so importing it raises ImportError): the dev environment has
`trio` (for selenium), which httpcore imports when it can, and `click`, which httpx imports
for its own command line when it can (with `rich`); an install of agentcore alone has neither.

    .venv/bin/python bench/cli_start.py [--runs 7] [--without trio,click]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile

# the command in a fresh interpreter; for `run`, a socket connect reports the CPU time so far
# and ends the process there
WRAPPER = """
import os, resource, socket, sys
for name in filter(None, os.environ.get("WITHOUT", "").split(",")):
    sys.modules[name] = None
if sys.argv[1] == "run":
    connect = socket.socket.connect
    def first_connect(self, address):
        usage = resource.getrusage(resource.RUSAGE_SELF)
        os.write(int(os.environ["CPU_FD"]), f"{usage.ru_utime + usage.ru_stime}".encode())
        os._exit(0)
    socket.socket.connect = first_connect
sys.argv[0] = "agentcore"
try:
    from agentcore.cli import main
    main()
finally:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    os.write(int(os.environ["CPU_FD"]), f"{usage.ru_utime + usage.ru_stime}".encode())
"""

COMMANDS = {
    "--version": ["--version"],
    "--help": ["--help"],
    "run (to the first request)": ["run", "hello", "--model", "local/qwen2.5-coder-1.5b"],
}


def _cpu(args: list[str], env: dict[str, str]) -> float:
    read, write = os.pipe()
    try:
        subprocess.run(
            [sys.executable, "-c", WRAPPER, *args],
            env={**env, "CPU_FD": str(write)},
            pass_fds=(write,),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            stdin=subprocess.DEVNULL,
            check=False,
        )
        os.close(write)
        write = -1
        return float(os.read(read, 100).decode() or "nan")
    finally:
        os.close(read)
        if write >= 0:
            os.close(write)


def main(runs: int, without: str) -> None:
    with tempfile.TemporaryDirectory() as cache:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = cache
        env["WITHOUT"] = without
        for name, args in COMMANDS.items():
            _cpu(args, env)  # writes the bytecode cache
            times = sorted(_cpu(args, env) for _ in range(runs))
            print(
                f"agentcore {name:28} CPU best {times[0]:.3f} s, "
                f"median {statistics.median(times):.3f} s"
            )
        base = sorted(
            float(
                subprocess.run(
                    [
                        sys.executable,
                        "-c",
                        "import asyncio, anyio, resource; u = resource.getrusage(0); "
                        "print(u.ru_utime + u.ru_stime)",
                    ],
                    env=env,
                    capture_output=True,
                    text=True,
                    check=True,
                ).stdout
            )
            for _ in range(runs)
        )
        print(
            f"(import asyncio, anyio alone: CPU best {base[0]:.3f} s, "
            f"median {statistics.median(base):.3f} s)"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument(
        "--without", default="", help="comma-separated modules to treat as not installed"
    )
    args = parser.parse_args()
    main(args.runs, args.without)
