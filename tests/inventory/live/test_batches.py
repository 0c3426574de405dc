"""A stream read ahead into batches: a batch is what came while the last one was handled."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator

import pytest

from inventory.live.batches import batched
from tests.support.aio import run_alone


class Source:
    """An async generator fed by the test, which also says whether it was closed."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[object] = asyncio.Queue()
        self.closed = False

    async def stream(self) -> AsyncGenerator[int, None]:
        try:
            while True:
                item = await self.queue.get()
                if isinstance(item, Exception):
                    raise item
                if item is None:
                    return
                yield item  # type: ignore[misc]
        finally:
            self.closed = True


def gathered(limit: int, feed, slow: float = 0.0) -> tuple[list[list[int]], BaseException | None]:
    """Run batched() over a Source that `feed(source)` fills; each batch is handled in `slow` s."""

    async def main() -> tuple[list[list[int]], BaseException | None]:
        source, seen = Source(), []
        feeding = asyncio.create_task(feed(source))
        try:
            async with contextlib.aclosing(batched(source.stream(), limit)) as batches:
                async for batch in batches:
                    seen.append(batch)
                    await asyncio.sleep(slow)
        except Exception as error:
            return seen, error
        finally:
            await feeding
        assert source.closed
        return seen, None

    return run_alone(main())


def test_a_quiet_stream_gives_batches_of_one() -> None:
    async def feed(source: Source) -> None:
        for item in range(3):
            await source.queue.put(item)
            await asyncio.sleep(0.01)
        await source.queue.put(None)

    assert gathered(10, feed) == ([[0], [1], [2]], None)


def test_what_comes_while_a_batch_is_handled_forms_the_next_batch_up_to_the_limit() -> None:
    async def feed(source: Source) -> None:
        for item in range(25):
            source.queue.put_nowait(item)
        source.queue.put_nowait(None)

    seen, error = gathered(10, feed, slow=0.05)

    assert error is None
    assert [item for batch in seen for item in batch] == list(range(25))
    assert max(len(batch) for batch in seen) == 10
    assert len(seen) <= 4  # 25 items in batches of up to 10 (the first may be alone)


def test_an_error_of_the_stream_comes_after_the_items_before_it() -> None:
    async def feed(source: Source) -> None:
        for item in (1, 2, ValueError("stream broke")):
            source.queue.put_nowait(item)

    seen, error = gathered(10, feed)

    assert [item for batch in seen for item in batch] == [1, 2]
    assert isinstance(error, ValueError)
    assert str(error) == "stream broke"


def test_closing_the_batches_stops_reading_and_closes_the_stream() -> None:
    async def main() -> tuple[list[int], bool, int]:
        source = Source()
        for item in range(5):
            source.queue.put_nowait(item)
        batches = batched(source.stream(), 2)
        first = await anext(batches)
        await batches.aclose()
        await asyncio.sleep(0)
        return first, source.closed, source.queue.qsize()

    first, closed, left = run_alone(main())

    assert first in ([0], [0, 1])
    assert closed
    assert left >= 5 - 2 - 2  # read ahead by at most the limit past the batch handed out


@pytest.mark.parametrize("limit", [1, 3])
def test_cancelling_the_consumer_cancels_the_reader(limit: int) -> None:
    async def main() -> bool:
        source = Source()
        seen: list[list[int]] = []

        async def consume() -> None:
            async with contextlib.aclosing(batched(source.stream(), limit)) as batches:
                async for batch in batches:
                    seen.append(batch)

        task = asyncio.create_task(consume())
        source.queue.put_nowait(1)
        while not seen:
            await asyncio.sleep(0.001)
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        return source.closed

    assert run_alone(main())


def test_a_cancelled_error_from_inside_the_stream_reaches_the_consumer_instead_of_hanging_it() -> None:
    async def stream() -> AsyncGenerator[int, None]:
        yield 1
        raise asyncio.CancelledError  # e.g. a future the stream awaited was cancelled

    async def main() -> tuple[list[list[int]], bool]:
        seen: list[list[int]] = []

        async def consume() -> None:
            async with contextlib.aclosing(batched(stream(), 5)) as batches:
                async for batch in batches:
                    seen.append(batch)

        try:
            await asyncio.wait_for(consume(), timeout=5)
        except asyncio.CancelledError:
            return seen, True
        except TimeoutError:
            return seen, False
        return seen, False

    seen, raised = run_alone(main())

    assert seen == [[1]]
    assert raised


def test_a_limit_below_one_is_refused() -> None:
    async def main() -> None:
        async def stream() -> AsyncGenerator[int, None]:
            yield 1

        await anext(batched(stream(), 0))

    with pytest.raises(ValueError, match="at least 1"):
        run_alone(main())
