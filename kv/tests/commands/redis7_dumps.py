"""Regenerates redis7_dumps.txt: DUMP payloads of every encoding a real Redis 7 writes for
strings, lists, sets, hashes and sorted sets (dump_vectors.rs holds the expected contents).

Usage: redis-server --port 6399 --save '' --appendonly no &
       python3 redis7_dumps.py > redis7_dumps.txt      (needs redis-py; FLUSHALLs port 6399)
"""
import redis

r = redis.Redis(port=6399)
r.flushall()
# Small nodes and compressed interior nodes, so list_large has LZF-compressed listpacks.
r.config_set('list-max-listpack-size', '128')
r.config_set('list-compress-depth', '1')
r.config_set('hash-max-listpack-entries', '128')
r.set('str_raw', b'hello \x00\xff world')
r.set('str_int', '12345')
r.set('str_neg', '-7')
r.set('str_lzf', b'abcdefgh' * 20)
r.rpush('list_small', b'a', b'1', b'-300', b'hello world', b'\x00\xff', b'70000',
        b'9223372036854775807')
r.rpush('list_large', *[f'item-{i}' for i in range(1000)])
r.sadd('set_intset', 1, 2, 3, -5, 100000, 4294967296)
r.sadd('set_small', b'x', b'y\x00z', b'')
r.sadd('set_large', *[f'm{i}' for i in range(300)])
r.hset('hash_small', mapping={b'f1': b'v1', b'n': b'42', b'bin\x00': b'\xff\xfe', b'empty': b''})
r.hset('hash_large', mapping={f'field{i}': f'value{i}' for i in range(200)})
r.hset('hash_lp_lzf', mapping={f'field{i}': f'value{i}' for i in range(100)})
r.zadd('zset_small', {b'a': 1, b'b': 2.5, b'c': float('-inf'), b'd': -3, b'e': 1e20})
r.zadd('zset_large', {f'z{i}': i / 4 for i in range(200)})
version = r.info('server')['redis_version']
print(f'# DUMP payloads from a real redis-server {version}, written by redis7_dumps.py:')
print("# one line per key, 'name hex'. dump_vectors.rs holds the contents each must restore to.")
for k in ['str_raw', 'str_int', 'str_neg', 'str_lzf', 'list_small', 'list_large', 'set_intset',
          'set_small', 'set_large', 'hash_small', 'hash_large', 'hash_lp_lzf', 'zset_small',
          'zset_large']:
    print(k, r.dump(k).hex())
