"""Run an exec credential plugin with a minimal environment (inventory/kube/exec_plugins.py).

The kubernetes client starts an exec plugin with the whole environment of the process that
builds the client, and the Secret's variables on top. This script stands between them, run by an
isolated interpreter (`python -I`: no PYTHONPATH, no user site, no current directory on the path)
and importing only the standard library: it keeps PATH, HOME and KUBERNETES_EXEC_INFO, the
variables named in its first argument (settings.OME_ARGOCD_EXEC_INHERIT) and those the Secret
gave (named in OME_EXEC_SECRET_ENV, already checked against the plugin's template), drops every
other one (DATABASE_URL, the OIDC client secret, ...), and replaces itself with the plugin.

    python -I exec_runner.py INHERITED,NAMES COMMAND ARGS...
"""

from __future__ import annotations

import os
import sys

ALWAYS = ("PATH", "HOME", "KUBERNETES_EXEC_INFO")


def minimal_environment(environ: dict[str, str], inherited: str) -> dict[str, str]:
    names = {*ALWAYS, *inherited.split(","), *environ.get("OME_EXEC_SECRET_ENV", "").split(",")}
    return {name: environ[name] for name in sorted(names) if name and name in environ}


def main(argv: list[str]) -> None:
    inherited, command, *args = argv
    os.execvpe(command, [command, *args], minimal_environment(dict(os.environ), inherited))


if __name__ == "__main__":
    main(sys.argv[1:])
