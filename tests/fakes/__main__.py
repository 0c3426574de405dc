"""``python -m tests.fakes --manifests DIR`` is the same as ``python -m tests.fakes.kube_api``."""

import sys

from .kube_api import main

if __name__ == "__main__":
    sys.exit(main())
