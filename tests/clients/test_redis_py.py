"""redis-py against the real orcinus RESP port, in RESP2 and RESP3 (every test runs in both).

Run by the Rust integration test `resp_redis_py` in two invocations: `-m "not after_restart"`
against a fresh server, then — after the server was killed with SIGKILL and restarted on the same
data dir — `-m after_restart`, which checks that what `before_restart` wrote (values and TTLs)
survived. Expected values follow Redis 7."""

import time

import pytest
import redis
from redis.exceptions import ResponseError, WatchError


def test_connect_and_ping(r, protocol):
    assert r.ping() is True
    assert r.echo("hello") == "hello"
    # HELLO 3 (sent by redis-py for protocol=3) must have switched the connection.
    assert r.connection_pool.get_connection("PING").protocol in (protocol, str(protocol))


def test_set_get_with_options(r, prefix):
    k = prefix + "s"
    assert r.set(k, "v1") is True
    assert r.get(k) == "v1"
    assert r.set(k, "v2", nx=True) is None
    assert r.get(k) == "v1"
    assert r.set(k, "v2", xx=True) is True
    assert r.set(prefix + "missing", "x", xx=True) is None
    assert r.exists(prefix + "missing") == 0
    assert r.set(k, "v3", get=True) == "v2"
    assert r.set(k, "v4", ex=100) is True
    assert 98 <= r.ttl(k) <= 100
    assert r.set(k, "v5", keepttl=True) is True
    assert 98 <= r.ttl(k) <= 100
    assert r.set(k, "v6", px=50_000) is True
    assert 48_000 <= r.pttl(k) <= 50_000
    assert r.set(k, "v7") is True
    assert r.ttl(k) == -1
    assert r.get(prefix + "nothing") is None
    assert r.getdel(k) == "v7"
    assert r.get(k) is None


def test_incr_family(r, prefix):
    k = prefix + "n"
    assert r.incr(k) == 1
    assert r.incrby(k, 41) == 42
    assert r.decr(k) == 41
    assert r.decrby(k, 40) == 1
    assert r.incrbyfloat(k, 1.5) == pytest.approx(2.5)
    assert r.get(k) == "2.5"
    r.set(k, "abc")
    with pytest.raises(ResponseError, match="value is not an integer or out of range"):
        r.incr(k)


def test_mget_mset(r, prefix):
    keys = [prefix + str(i) for i in range(5)]
    assert r.mset({k: f"v{i}" for i, k in enumerate(keys)}) is True
    assert r.mget(keys + [prefix + "absent"]) == ["v0", "v1", "v2", "v3", "v4", None]
    assert r.msetnx({keys[0]: "x", prefix + "new": "y"}) is False
    assert r.get(prefix + "new") is None


def test_expire_ttl(r, prefix):
    k = prefix + "e"
    r.set(k, "v")
    assert r.ttl(k) == -1
    assert r.ttl(prefix + "absent") == -2
    assert r.expire(k, 100) is True
    assert 98 <= r.ttl(k) <= 100
    assert r.persist(k) is True
    assert r.ttl(k) == -1
    assert r.pexpire(k, 100) is True
    time.sleep(0.3)
    assert r.get(k) is None
    assert r.exists(k) == 0


def test_hash_dict_result(r, prefix):
    k = prefix + "h"
    assert r.hset(k, mapping={"a": "1", "b": "2", "c": "3"}) == 3
    assert r.hset(k, "a", "10") == 0
    assert r.hgetall(k) == {"a": "10", "b": "2", "c": "3"}
    assert r.hget(k, "b") == "2"
    assert r.hincrby(k, "c", 4) == 7
    assert r.hmget(k, ["a", "zz"]) == ["10", None]
    assert r.hdel(k, "a", "zz") == 1
    assert sorted(r.hkeys(k)) == ["b", "c"]
    assert r.hlen(k) == 2
    assert r.hgetall(prefix + "absent") == {}


def test_pipeline_with_transaction(r, prefix):
    k = prefix + "tx"
    with r.pipeline(transaction=True) as pipe:
        pipe.set(k, "1").incr(k).get(k).hset(k + "h", "f", "v")
        assert pipe.execute() == [True, 2, "2", 1]


def test_pipeline_without_transaction(r, prefix):
    k = prefix + "pl"
    with r.pipeline(transaction=False) as pipe:
        for i in range(100):
            pipe.set(f"{k}{i}", i)
        for i in range(100):
            pipe.get(f"{k}{i}")
        results = pipe.execute()
    assert results[:100] == [True] * 100
    assert results[100:] == [str(i) for i in range(100)]


def test_error_inside_transaction_does_not_abort_others(r, prefix):
    k = prefix + "txe"
    r.set(k, "text")
    with r.pipeline(transaction=True) as pipe:
        pipe.incr(k).set(k + "2", "ok")
        results = pipe.execute(raise_on_error=False)
    assert isinstance(results[0], ResponseError)
    assert results[1] is True
    assert r.get(k + "2") == "ok"


def test_watch_conflict(client_factory, prefix):
    r, other = client_factory(), client_factory()
    k = prefix + "w"
    r.set(k, "0")
    with r.pipeline() as pipe:
        pipe.watch(k)
        assert pipe.get(k) == "0"
        other.set(k, "changed")
        pipe.multi()
        pipe.set(k, "mine")
        with pytest.raises(WatchError):
            pipe.execute()
    assert r.get(k) == "changed"

    # Without a conflicting write the same transaction commits.
    with r.pipeline() as pipe:
        pipe.watch(k)
        pipe.multi()
        pipe.set(k, "mine")
        assert pipe.execute() == [True]
    assert r.get(k) == "mine"


def test_scan_iter(r, prefix):
    wanted = {f"{prefix}scan:{i}" for i in range(250)}
    r.mset({k: "x" for k in wanted})
    r.set(prefix + "other", "x")
    found = list(r.scan_iter(match=prefix + "scan:*", count=17))
    assert len(found) == len(wanted)
    assert set(found) == wanted
    hk = prefix + "hs"
    r.hset(hk, mapping={f"f{i}": str(i) for i in range(40)})
    assert dict(r.hscan_iter(hk, count=7)) == {f"f{i}": str(i) for i in range(40)}


def test_errors_map_to_response_error(r, prefix):
    k = prefix + "err"
    r.set(k, "v")
    with pytest.raises(ResponseError, match="^WRONGTYPE Operation against a key holding the wrong kind of value$"):
        r.hget(k, "f")
    with pytest.raises(ResponseError, match="^unknown command 'NOSUCHCMD'"):
        r.execute_command("NOSUCHCMD", "a")
    with pytest.raises(ResponseError, match="^wrong number of arguments for 'get' command$"):
        r.execute_command("GET")
    with pytest.raises(ResponseError, match="^syntax error$"):
        r.execute_command("SET", k, "v", "BOGUS")
    # The connection is still usable after errors.
    assert r.get(k) == "v"


def test_client_setname_getname(r):
    assert r.client_getname() is None
    assert r.client_setname("orcinus-py") is True
    assert r.client_getname() == "orcinus-py"
    assert isinstance(r.client_id(), int)
    assert any(c.get("name") == "orcinus-py" for c in r.client_list())


RESTART_TTL = 1000


@pytest.mark.before_restart
def test_write_before_restart(r, protocol):
    k = f"restart:p{protocol}:"
    r.set(k + "plain", "survives")
    r.set(k + "ttl", "expires later", ex=RESTART_TTL)
    r.set(k + "gone", "expires now", px=1)
    r.hset(k + "hash", mapping={"f1": "a", "f2": "b"})
    r.expire(k + "hash", RESTART_TTL)
    r.incrby(k + "counter", 7)
    time.sleep(0.05)
    assert r.get(k + "gone") is None


@pytest.mark.after_restart
def test_data_and_ttls_survive_restart(r, protocol):
    k = f"restart:p{protocol}:"
    assert r.get(k + "plain") == "survives"
    assert r.ttl(k + "plain") == -1
    assert r.get(k + "ttl") == "expires later"
    assert 0 < r.ttl(k + "ttl") <= RESTART_TTL
    assert r.get(k + "gone") is None
    assert r.hgetall(k + "hash") == {"f1": "a", "f2": "b"}
    assert 0 < r.ttl(k + "hash") <= RESTART_TTL
    assert r.get(k + "counter") == "7"
