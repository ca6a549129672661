#!/usr/bin/env python3
"""A noisy neighbour for calibrating kvbench's intervals: one process that streams through a
192 MiB buffer (memory bandwidth and the caches, as another tenant's work would) in bursts of 1-6 s
at random gaps of 1-8 s, until killed or for --seconds.

Usage: scripts/noisy_neighbour.py [--seconds S] [--seed N] [--mib M]
Run it beside `kvbench repeat 30 quickstart` to see whether the intervals stay honest under it.
"""
import argparse
import random
import sys
import time


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seconds", type=float, default=0, help="stop after this long (0: never)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--mib", type=int, default=192, help="the buffer's size in MiB")
    a = p.parse_args()
    if a.mib < 2 or a.seconds < 0:
        print("noisy_neighbour: --mib must be 2 or more and --seconds 0 or more", file=sys.stderr)
        return 2
    rng = random.Random(a.seed)
    buf = bytearray(a.mib << 20)
    half = len(buf) // 2
    start = time.monotonic()
    while a.seconds == 0 or time.monotonic() - start < a.seconds:
        burst_end = time.monotonic() + rng.uniform(1, 6)
        while time.monotonic() < burst_end:
            buf[:half] = buf[half:]  # a 96 MiB copy
            buf[half:] = buf[:half]
        time.sleep(rng.uniform(1, 8))
    return 0


if __name__ == "__main__":
    sys.exit(main())
