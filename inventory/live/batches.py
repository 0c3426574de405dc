"""A stream read ahead into batches: each batch is what arrived while the last one was handled.

Why: storing a watch event costs a transaction. Under a burst of thousands of events that cost,
paid once per event, put the inventory minutes behind the cluster; paid once per batch, the
inventory keeps up. A quiet stream still gives batches of one, so nothing waits for company.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, AsyncIterator
from typing import TypeVar

Item = TypeVar("Item")


class _End:
    """The last entry the reader queues: the stream ended, cleanly or with `error`."""

    def __init__(self, error: BaseException | None = None) -> None:
        self.error = error


async def _read_ahead(stream: AsyncIterator[Item], queue: asyncio.Queue[Item | _End]) -> None:
    try:
        async with contextlib.aclosing(stream):  # type: ignore[type-var]  # an async generator
            async for item in stream:
                await queue.put(item)
    except BaseException as error:
        task = asyncio.current_task()
        if isinstance(error, asyncio.CancelledError) and task is not None and task.cancelling():
            raise  # batched() stops the reading
        # Anything else (a CancelledError of a future the stream awaited included) is the
        # consumer's, after the items that came before it: a reader that died silently would
        # leave the consumer waiting forever.
        await queue.put(_End(error))
    else:
        await queue.put(_End())


async def batched(stream: AsyncIterator[Item], limit: int) -> AsyncGenerator[list[Item], None]:
    """Yield the items of `stream` in lists of at most `limit`: every item that came while the
    caller handled the previous list. The stream is read ahead by at most `limit` + 1 items, and
    an error it raises is raised here once the items before it were yielded. Closing this
    generator (or cancelling its consumer) stops the reading and closes the stream."""
    if limit < 1:
        raise ValueError("batches need a limit of at least 1")
    queue: asyncio.Queue[Item | _End] = asyncio.Queue(maxsize=limit)
    reader = asyncio.create_task(_read_ahead(stream, queue), name="read ahead")
    try:
        while True:
            entries = [await queue.get()]
            while len(entries) < limit and not queue.empty():
                entries.append(queue.get_nowait())
            last = entries[-1]
            end = last if isinstance(last, _End) else None
            if end is not None:
                entries.pop()
            if entries:
                yield entries  # type: ignore[misc]  # only the last entry can be an _End
            if end is not None:
                if end.error is not None:
                    raise end.error
                return
    finally:
        reader.cancel()
        await asyncio.wait({reader})  # without raising its CancelledError as ours
