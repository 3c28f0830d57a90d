"""PyMySQL and mysql-connector-python against the real server's MySQL port.

The address comes from ORCINUS_MYSQL_ADDR ("host:port"), set by the Rust integration test that
started the real orcinus binary (tests/tests/integration/mysql_drivers.rs). Every test runs once
per driver flavour: PyMySQL (text protocol, client-side parameter interpolation),
mysql-connector-python with its pure-Python protocol, and mysql-connector-python with server-side
prepared statements (COM_STMT_PREPARE / EXECUTE with typed binary parameters).
Each test works in its own database, so tests never see each other's tables.
"""

import datetime
import decimal
import os
import uuid

import mysql.connector
import pymysql
import pytest

FLAVOURS = ["pymysql", "connector", "connector-prepared"]


def _address():
    addr = os.environ.get("ORCINUS_MYSQL_ADDR")
    if not addr:
        pytest.fail("ORCINUS_MYSQL_ADDR is not set: run through `cargo test -p orcinus-tests mysql_python`")
    host, _, port = addr.rpartition(":")
    return host, int(port)


class Driver:
    """One driver flavour behind a small common surface: connect, cursor, error number."""

    def __init__(self, flavour):
        self.flavour = flavour

    def connect(self, database=None, autocommit=True):
        host, port = _address()
        if self.flavour == "pymysql":
            conn = pymysql.connect(host=host, port=port, user="root", password="",
                                   database=database, autocommit=autocommit,
                                   connect_timeout=10, read_timeout=30)
        else:
            conn = mysql.connector.connect(host=host, port=port, user="root", password="",
                                           database=database, autocommit=autocommit,
                                           use_pure=True, connection_timeout=10)
        return conn

    def cursor(self, conn):
        if self.flavour == "connector-prepared":
            return conn.cursor(prepared=True)
        return conn.cursor()

    @staticmethod
    def errno(exc):
        return exc.args[0] if isinstance(exc, pymysql.MySQLError) else exc.errno

    @property
    def errors(self):
        return pymysql.MySQLError if self.flavour == "pymysql" else mysql.connector.Error


@pytest.fixture(params=FLAVOURS)
def driver(request):
    return Driver(request.param)


@pytest.fixture
def database(driver):
    name = f"t_{uuid.uuid4().hex[:12]}"
    conn = driver.connect()
    cur = conn.cursor()
    cur.execute(f"CREATE DATABASE {name}")
    conn.close()
    yield name
    conn = driver.connect()
    conn.cursor().execute(f"DROP DATABASE {name}")
    conn.close()


def test_connect_reports_a_mysql_8_server(driver):
    conn = driver.connect()
    cur = conn.cursor()
    cur.execute("SELECT VERSION()")
    version = cur.fetchone()[0]
    assert str(version).startswith("8.0."), version
    cur.execute("SELECT 1 + 1")
    assert cur.fetchone()[0] == 2
    conn.close()


def test_typed_round_trip(driver, database):
    conn = driver.connect(database)
    cur = driver.cursor(conn)
    cur.execute("CREATE TABLE items (id INT NOT NULL AUTO_INCREMENT PRIMARY KEY, name VARCHAR(40) NOT NULL,"
                " price DECIMAL(10,2), born DATE, seen DATETIME, note TEXT, KEY by_name (name))")
    cur.execute("INSERT INTO items (name, price, born, seen, note) VALUES (%s, %s, %s, %s, %s)",
                ("apple", decimal.Decimal("1.25"), datetime.date(2024, 2, 29),
                 datetime.datetime(2024, 3, 1, 12, 30, 45), None))
    first_id = cur.lastrowid
    assert first_id == 1
    cur.execute("INSERT INTO items (name, price) VALUES (%s, %s)", ("pear", decimal.Decimal("-0.50")))
    assert cur.lastrowid == 2

    cur.execute("SELECT id, name, price, born, seen, note FROM items WHERE id = %s", (first_id,))
    row = cur.fetchone()
    assert row[0] == 1
    assert row[1] == "apple"
    assert row[2] == decimal.Decimal("1.25")
    assert row[3] == datetime.date(2024, 2, 29)
    assert row[4] == datetime.datetime(2024, 3, 1, 12, 30, 45)
    assert row[5] is None

    cur.execute("SELECT name FROM items WHERE price < %s ORDER BY id", (decimal.Decimal("0"),))
    assert [r[0] for r in cur.fetchall()] == ["pear"]
    conn.close()


def test_many_rows_ranges_and_aggregates(driver, database):
    conn = driver.connect(database)
    cur = driver.cursor(conn)
    cur.execute("CREATE TABLE t (id INT PRIMARY KEY, k INT NOT NULL DEFAULT '0', c CHAR(20) NOT NULL DEFAULT '', KEY k_1 (k))")
    rows = [(i, i % 7, f"c{i:03d}") for i in range(1, 201)]
    cur.executemany("INSERT INTO t (id, k, c) VALUES (%s, %s, %s)", rows)
    cur.execute("SELECT COUNT(*), SUM(k), MIN(c), MAX(c) FROM t")
    count, total, low, high = cur.fetchone()
    assert count == 200
    assert int(total) == sum(r[1] for r in rows)
    assert (low, high) == ("c001", "c200")
    cur.execute("SELECT id FROM t WHERE id BETWEEN %s AND %s ORDER BY id DESC LIMIT 3", (10, 20))
    assert [r[0] for r in cur.fetchall()] == [20, 19, 18]
    cur.execute("SELECT DISTINCT k FROM t WHERE id BETWEEN %s AND %s ORDER BY k", (1, 14))
    assert [r[0] for r in cur.fetchall()] == list(range(7))
    cur.execute("UPDATE t SET k = k + 1 WHERE id = %s", (5,))
    assert cur.rowcount == 1
    cur.execute("DELETE FROM t WHERE id BETWEEN %s AND %s", (101, 200))
    assert cur.rowcount == 100
    cur.execute("SELECT COUNT(*) FROM t")
    assert cur.fetchone()[0] == 100
    conn.close()


def test_transactions_commit_and_rollback(driver, database):
    setup = driver.connect(database)
    setup.cursor().execute("CREATE TABLE acct (id INT PRIMARY KEY, balance INT NOT NULL)")
    setup.cursor().execute("INSERT INTO acct VALUES (1, 100), (2, 100)")
    setup.close()

    conn = driver.connect(database, autocommit=False)
    other = driver.connect(database)
    cur = driver.cursor(conn)
    cur.execute("UPDATE acct SET balance = balance - %s WHERE id = %s", (30, 1))
    cur.execute("UPDATE acct SET balance = balance + %s WHERE id = %s", (30, 2))
    conn.rollback()
    cur.execute("SELECT balance FROM acct ORDER BY id")
    assert [r[0] for r in cur.fetchall()] == [100, 100]
    conn.commit()

    cur.execute("UPDATE acct SET balance = balance - %s WHERE id = %s", (30, 1))
    other_cur = other.cursor()
    other_cur.execute("SELECT balance FROM acct WHERE id = 1")
    assert other_cur.fetchone()[0] == 100, "an uncommitted write is visible to another session"
    conn.commit()
    other_cur.execute("SELECT balance FROM acct WHERE id = 1")
    assert other_cur.fetchone()[0] == 70
    conn.close()
    other.close()


def test_errors_carry_mysql_codes(driver, database):
    conn = driver.connect(database)
    cur = driver.cursor(conn)
    cur.execute("CREATE TABLE u (id INT PRIMARY KEY, v VARCHAR(10) NOT NULL)")
    cur.execute("INSERT INTO u VALUES (%s, %s)", (1, "a"))
    with pytest.raises(driver.errors) as dup:
        cur.execute("INSERT INTO u VALUES (%s, %s)", (1, "b"))
    assert driver.errno(dup.value) == 1062
    with pytest.raises(driver.errors) as missing:
        cur.execute("SELECT * FROM no_such_table")
    assert driver.errno(missing.value) == 1146
    with pytest.raises(driver.errors) as column:
        cur.execute("SELECT nope FROM u")
    assert driver.errno(column.value) == 1054
    # The connection stays usable after errors, and nothing of the failed insert remains.
    cur.execute("SELECT v FROM u")
    assert [r[0] for r in cur.fetchall()] == ["a"]
    conn.close()


def test_syntax_error_is_1064(driver):
    conn = driver.connect()
    cur = conn.cursor()
    with pytest.raises(driver.errors) as err:
        cur.execute("SELEC 1")
    assert driver.errno(err.value) == 1064
    cur.execute("SELECT 1")
    assert cur.fetchone()[0] == 1
    conn.close()


def _rows(cur):
    return [tuple(r) for r in cur.fetchall()]


def test_session_statements_give_the_text_protocol_answers(driver, database):
    """Session functions, user variables, SHOW, SET and account statements answer the same
    through every flavour; with connector-prepared they go through COM_STMT_PREPARE/EXECUTE."""
    conn = driver.connect(database)
    cur = driver.cursor(conn)
    cur.execute("CREATE TABLE s (id INT PRIMARY KEY AUTO_INCREMENT, v INT)")
    cur.execute("SELECT VERSION(), DATABASE(), USER(), CONNECTION_ID() > 0")
    version, db, user, has_id = cur.fetchone()
    assert version.startswith("8.0.") and db == database and user.startswith("root@")
    assert has_id == 1
    cur.execute("SET @a = %s", (41,))
    cur.execute("SELECT @a, @missing")
    assert _rows(cur) == [(41, None)]
    cur.execute("INSERT INTO s (v) VALUES (@a + %s)", (1,))
    cur.execute("SELECT LAST_INSERT_ID()")
    assert _rows(cur) == [(1,)]
    cur.execute("INSERT INTO s (v) VALUES (%s)", (7,))
    cur.execute("SELECT LAST_INSERT_ID()")
    assert _rows(cur) == [(2,)]
    cur.execute("SELECT v FROM s WHERE id = LAST_INSERT_ID() - 1")
    assert _rows(cur) == [(42,)]
    cur.execute("SHOW TABLES")
    assert _rows(cur) == [("s",)]
    cur.execute("SHOW VARIABLES LIKE 'autocommit'")
    assert _rows(cur) == [("autocommit", "1")]
    cur.execute("SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED")
    cur.execute("SELECT @@transaction_isolation, @@tx_isolation")
    assert _rows(cur) == [("READ-COMMITTED", "READ-COMMITTED")]
    cur.execute("SELECT table_name FROM information_schema.tables WHERE table_schema = %s",
                (database,))
    assert [r[0] for r in cur.fetchall()] == ["s"]
    user = f"u_{uuid.uuid4().hex[:8]}"
    cur.execute(f"CREATE USER '{user}'@'%' IDENTIFIED BY 'pw'")
    cur.execute(f"GRANT ALL ON {database}.* TO '{user}'@'%'")
    cur.execute(f"SHOW GRANTS FOR '{user}'@'%'")
    assert len(cur.fetchall()) == 2
    cur.execute(f"DROP USER '{user}'@'%'")
    cur.execute("START TRANSACTION READ ONLY")
    with pytest.raises(driver.errors) as ro:
        cur.execute("UPDATE s SET v = %s WHERE id = %s", (0, 1))
    assert driver.errno(ro.value) == 1792
    cur.execute("COMMIT")
    conn.close()
