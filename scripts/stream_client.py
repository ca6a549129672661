#!/usr/bin/python3
"""An asyncio streaming client of the kind many benchmark tools use (aiohttp), for comparison with
kvbench's own: keeps N streams in flight against a /completion URL and writes, per call, one JSON
line with the time it was sent and each token event's arrival, from time.monotonic_ns() (the
same CLOCK_MONOTONIC kvbench and stream-stub use).

  stream_client.py URL STREAMS CALLS OUT.jsonl [WARMUP_ID]

With WARMUP_ID (>= 0), each stream first makes one call with id WARMUP_ID + k that is not
written, so the measured calls reuse the connections it opened.
"""
import asyncio
import json
import sys
import time

import aiohttp


async def one_call(session, url, call_id, out):
    sent = time.monotonic_ns()
    arrivals = []
    joined = f"{url}{'&' if '?' in url else '?'}id={call_id}"
    async with session.post(joined, json={"prompt": "x", "stream": True}) as resp:
        async for line in resp.content:
            if line.startswith(b"data: ") and b'"stop":false' in line:
                arrivals.append(time.monotonic_ns())
    out.append({"id": call_id, "sent_ns": sent, "arrivals_ns": arrivals})


async def main(url, streams, calls, path, warmup_id):
    out = []
    queue = asyncio.Queue()
    for i in range(calls):
        queue.put_nowait(i)

    async def worker(session):
        while not queue.empty():
            await one_call(session, url, queue.get_nowait(), out)

    connector = aiohttp.TCPConnector(limit=0)
    timeout = aiohttp.ClientTimeout(total=600)
    async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:
        if warmup_id >= 0:
            unused = []
            await asyncio.gather(
                *(one_call(session, url, warmup_id + k, unused) for k in range(streams)))
        await asyncio.gather(*(worker(session) for _ in range(streams)))
    with open(path, "w") as f:
        for r in out:
            f.write(json.dumps(r) + "\n")


if __name__ == "__main__":
    warmup = int(sys.argv[5]) if len(sys.argv) > 5 else -1
    asyncio.run(main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], warmup))
