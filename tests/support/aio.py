"""Running a coroutine from a synchronous test."""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def run_alone(coroutine: Coroutine[Any, Any, T]) -> T:
    """asyncio.run in a thread of its own: Playwright's sync API may leave an event loop running
    in this thread when browser tests ran earlier in the same process (xdist gives a worker any
    test file, so any test that runs a coroutine needs this)."""
    with concurrent.futures.ThreadPoolExecutor(1) as thread:
        return thread.submit(asyncio.run, coroutine).result()
