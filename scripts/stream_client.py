#!/usr/bin/python3
"""An asyncio streaming client of the kind many benchmark tools use (aiohttp), for comparison with
kvbench's own: keeps N streams in flight against a /completion URL and writes, per call, one JSON
line with the time it was sent and each token event's arrival, from time.monotonic_ns() (the
same CLOCK_MONOTONIC kvbench and stream-stub use).

  stream_client.py URL STREAMS CALLS OUT.jsonl
"""
import asyncio
import json
import sys
import time

import aiohttp


async def one_call(session, url, call_id, out):
    sent = time.monotonic_ns()
    arrivals = []
    async with session.post(f"{url}?id={call_id}", json={"prompt": "x", "stream": True}) as resp:
        async for line in resp.content:
            if line.startswith(b"data: ") and b'"stop":false' in line:
                arrivals.append(time.monotonic_ns())
    out.append({"id": call_id, "sent_ns": sent, "arrivals_ns": arrivals})


async def main(url, streams, calls, path):
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
        await asyncio.gather(*(worker(session) for _ in range(streams)))
    with open(path, "w") as f:
        for r in out:
            f.write(json.dumps(r) + "\n")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]))
