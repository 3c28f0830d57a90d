#!/usr/bin/env python3
"""Writes, to stdout, RESP MSET commands that give every key redis-benchmark's `-r N` can pick
(`key:000000000000` … `key:<N-1 as 12 digits>`) a value of SIZE bytes; bench/redis.sh pipes this
into `redis-cli --pipe` before the GET cells so no GET hits a missing key.

Usage: redis_preload.py KEYSPACE SIZE
"""

import sys

KEYS_PER_MSET = 100


def bulk(data: bytes) -> bytes:
    return b"$%d\r\n%s\r\n" % (len(data), data)


def main(keyspace: int, size: int) -> None:
    value = bulk(b"x" * size)
    out = sys.stdout.buffer
    for start in range(0, keyspace, KEYS_PER_MSET):
        keys = range(start, min(start + KEYS_PER_MSET, keyspace))
        parts = [b"*%d\r\n" % (1 + 2 * len(keys)), bulk(b"MSET")]
        for i in keys:
            parts += [bulk(b"key:%012d" % i), value]
        out.write(b"".join(parts))


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: redis_preload.py KEYSPACE SIZE")
    main(int(sys.argv[1]), int(sys.argv[2]))
