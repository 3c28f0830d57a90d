#!/usr/bin/env python3
"""Consistency check after a sysbench OLTP run against a MySQL-protocol server.

For every table sbtest1..N: the row count must be TABLE_SIZE (after oltp_read_write, whose
DELETE + INSERT of the same id keeps it), and the secondary index k_N must list exactly the
table's rows (a range over all of k, read through the index, gives the same ids as the primary
key, no duplicates, none missing). Exits 1 and names the table on any disagreement.

usage: sysbench_check.py HOST PORT TABLES TABLE_SIZE [DATABASE]
"""

import sys

import pymysql


def main():
    host, port, tables, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    database = sys.argv[5] if len(sys.argv) > 5 else "sbtest"
    conn = pymysql.connect(host=host, port=port, user="root", password="", database=database,
                           read_timeout=600)
    cur = conn.cursor()
    failed = False
    for n in range(1, tables + 1):
        cur.execute(f"SELECT id FROM sbtest{n} ORDER BY id")
        by_pk = [r[0] for r in cur.fetchall()]
        index_range = (f"SELECT id FROM sbtest{n} WHERE k BETWEEN -2147483648 AND 2147483647 "
                       "ORDER BY id")
        cur.execute("EXPLAIN " + index_range)
        access = cur.fetchone()[1]
        cur.execute(index_range)
        by_index = [r[0] for r in cur.fetchall()]
        problems = []
        if len(by_pk) != size:
            problems.append(f"{len(by_pk)} rows, expected {size}")
        if not access.startswith(f"INDEX k_{n}"):
            problems.append(f"the k range does not read index k_{n} ({access})")
        if by_index != by_pk:
            missing = len(set(by_pk) - set(by_index))
            extra = len(by_index) - len(set(by_index)) + len(set(by_index) - set(by_pk))
            problems.append(f"index k_{n} disagrees: {missing} rows missing, {extra} extra entries")
        status = "; ".join(problems) if problems else "ok"
        print(f"sbtest{n}: {len(by_pk)} rows, index k_{n} {len(by_index)} entries: {status}")
        failed |= bool(problems)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
