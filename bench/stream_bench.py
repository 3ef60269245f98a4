"""The live feed's two candidate carriers on one Redis: pub/sub (PUBLISH, SUBSCRIBE) against a stream per run
(XADD with MAXLEN, XREAD BLOCK from the last id), as a driver and the ASGI processes would use them.

A publisher thread (redis-py, as a driver) sends messages of a given size at a steady rate, each starting with
its send time; each reader (redis.asyncio, as one ASGI process) records how late it got them. Reported per
carrier and size: delivery latency p50 / p95 / p99, the publisher's time per call (the driver's cost), and what
Redis holds afterwards (``used_memory`` growth).

    python bench/stream_bench.py [--messages 300] [--rate 50] [--sizes 2,256] [--readers 2] [--maxlen 600]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import redis  # noqa: E402
import redis.asyncio as aioredis  # noqa: E402
from simulation_bench import reference_ms  # noqa: E402

from heartbeat_site.embedded_redis import start_embedded  # noqa: E402

CHANNEL, STREAM = "bench:feed", "bench:stream"
STAMP = 20  # the send time, as fixed-width text at the start of each message


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


async def read_pubsub(url: str, count: int, late: list[float], ready: asyncio.Event) -> None:
    client = aioredis.Redis.from_url(url)
    pubsub = client.pubsub(ignore_subscribe_messages=True)
    await pubsub.subscribe(CHANNEL)
    ready.set()
    while len(late) < count:
        message = await pubsub.get_message(timeout=5)
        if message is not None:
            late.append(time.perf_counter() - float(message["data"][:STAMP]))
    await pubsub.aclose()
    await client.aclose()


async def read_stream(url: str, count: int, late: list[float], ready: asyncio.Event) -> None:
    client = aioredis.Redis.from_url(url)
    last = "$"
    ready.set()
    while len(late) < count:
        for _, entries in await client.xread({STREAM: last}, block=5000, count=100):
            for entry_id, fields in entries:
                last = entry_id
                late.append(time.perf_counter() - float(fields[b"m"][:STAMP]))
    await client.aclose()


async def measure(url: str, carrier: str, size: int, args: argparse.Namespace) -> dict:
    store = redis.Redis.from_url(url)
    store.delete(STREAM)
    tail = b"x" * (size - STAMP)
    reader = read_pubsub if carrier == "pubsub" else read_stream
    lates: list[list[float]] = [[] for _ in range(args.readers)]
    readies = [asyncio.Event() for _ in range(args.readers)]
    readers = [asyncio.create_task(reader(url, args.messages, lates[i], readies[i])) for i in range(args.readers)]
    for ready in readies:
        await ready.wait()
    await asyncio.sleep(0.2)
    before = store.info("memory")["used_memory"]
    calls: list[float] = []

    def publish() -> None:
        for _ in range(args.messages):
            message = b"%20.6f" % time.perf_counter() + tail
            started = time.perf_counter()
            if carrier == "pubsub":
                store.publish(CHANNEL, message)
            else:
                store.xadd(STREAM, {"m": message}, maxlen=args.maxlen, approximate=True)
            calls.append(time.perf_counter() - started)
            time.sleep(1 / args.rate)

    await asyncio.to_thread(publish)
    grown = store.info("memory")["used_memory"] - before
    await asyncio.gather(*readers)
    store.delete(STREAM)
    store.close()
    late = [value for values in lates for value in values]
    return {
        "carrier": carrier, "size": size, "p50": percentile(late, 50) * 1000, "p95": percentile(late, 95) * 1000,
        "p99": percentile(late, 99) * 1000, "call": percentile(calls, 50) * 1000, "memory": grown / 2**20,
    }  # fmt: skip


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=300)
    parser.add_argument("--rate", type=float, default=50.0, help="messages per second")
    parser.add_argument("--sizes", default="2,256", help="message sizes, KiB")
    parser.add_argument("--readers", type=int, default=2, help="subscribers: one per ASGI process")
    parser.add_argument("--maxlen", type=int, default=600, help="the stream's length (a run's kept frames)")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    embedded = start_embedded()
    rows = []
    try:
        for size in (int(kib) * 1024 for kib in args.sizes.split(",")):
            for _ in range(args.rounds):
                for carrier in ("pubsub", "stream"):
                    rows.append(await measure(embedded.url, carrier, size, args))
    finally:
        embedded.stop()
    print(f"\n{args.messages} messages at {args.rate:g}/s, {args.readers} readers; reference workload "
          f"{reference_ms():.0f} ms, load average {os.getloadavg()[0]:.1f}")
    print("| carrier | KiB | delivery p50 ms | p95 ms | p99 ms | publisher's call p50 ms | Redis memory after, MiB |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['carrier']} | {r['size'] // 1024} | {r['p50']:.2f} | {r['p95']:.2f} | {r['p99']:.2f} | "
              f"{r['call']:.2f} | {r['memory']:.1f} |")


if __name__ == "__main__":
    asyncio.run(main())
