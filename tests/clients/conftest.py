"""Fixtures for the redis-py tests: the server address comes from ORCINUS_RESP_ADDR ("host:port"),
set by the Rust integration test that started the real orcinus binary. Every client fixture is
parametrised over RESP2 and RESP3, so each test runs once per protocol."""

import os
import uuid

import pytest
import redis


def _address():
    addr = os.environ.get("ORCINUS_RESP_ADDR")
    if not addr:
        pytest.fail("ORCINUS_RESP_ADDR is not set: run these tests through `cargo test -p orcinus-tests resp_redis_py`")
    host, _, port = addr.rpartition(":")
    return host, int(port)


@pytest.fixture(params=[2, 3], ids=["resp2", "resp3"])
def protocol(request):
    return request.param


@pytest.fixture
def client_factory(protocol):
    host, port = _address()
    made = []

    def make(**kwargs):
        c = redis.Redis(host=host, port=port, protocol=protocol, decode_responses=True,
                        socket_timeout=10, **kwargs)
        made.append(c)
        return c

    yield make
    for c in made:
        c.close()


@pytest.fixture
def r(client_factory):
    return client_factory()


@pytest.fixture
def prefix(protocol):
    """A key prefix unique to one test run, so tests never see each other's keys."""
    return f"t:{uuid.uuid4().hex[:12]}:p{protocol}:"
