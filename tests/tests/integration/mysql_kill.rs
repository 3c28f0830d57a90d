//! KILL over the wire, as the `mysql` client's Ctrl-C does it (a second connection sending
//! `KILL QUERY id`): a long analytical query and a statement waiting on a row lock end with
//! 1317 and their connections keep working; `KILL CONNECTION` closes the connection and rolls
//! back its transaction; SHOW PROCESSLIST and information_schema.PROCESSLIST list sessions under the ids `CONNECTION_ID()`
//! reports; unknown ids are 1094 and other users' sessions 1095.

use crate::harness::TestServer;
use crate::mysql_client::{block_on, connect, opts, server_error};
use mysql_async::Conn;
use mysql_async::prelude::*;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

/// Lock waits long enough that only KILL can end them within the test.
const LONG_LOCK_WAIT: &str = "\
[server]
log_level = \"info\"
[storage]
lock_wait_timeout_ms = 60000
";

/// Waits until `id`'s SHOW PROCESSLIST row shows a running statement containing `text`.
async fn wait_running(observer: &mut Conn, id: u32, text: &str) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let rows: Vec<(u64, String, Option<String>)> = observer
            .query_map("SHOW FULL PROCESSLIST", |row: mysql_async::Row| {
                (
                    row.get::<u64, _>(0).unwrap(),
                    row.get::<String, _>(4).unwrap(),
                    row.get::<Option<String>, _>(7).unwrap(),
                )
            })
            .await
            .unwrap();
        if rows.iter().any(|(rid, command, info)| {
            *rid == u64::from(id)
                && command == "Query"
                && info.as_deref().is_some_and(|i| i.contains(text))
        }) {
            return;
        }
        assert!(Instant::now() < deadline, "{id} never ran {text}: {rows:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn connection_id(conn: &mut Conn) -> u32 {
    conn.query_first("SELECT CONNECTION_ID()")
        .await
        .unwrap()
        .unwrap()
}

async fn setup_big_table(addr: SocketAddr) {
    let mut conn = connect(addr, None).await;
    conn.query_drop("CREATE DATABASE db").await.unwrap();
    conn.query_drop("CREATE TABLE db.big (a INT PRIMARY KEY, v INT)")
        .await
        .unwrap();
    let values: Vec<String> = (1..=1000).map(|i| format!("({i}, 0)")).collect();
    conn.query_drop(format!("INSERT INTO db.big VALUES {}", values.join(",")))
        .await
        .unwrap();
}

#[test]
fn kill_query_stops_a_long_analytical_query_and_the_connection_survives() {
    let server = TestServer::start();
    let addr = server.mysql_addr();
    block_on(async {
        setup_big_table(addr).await;
        let mut victim = connect(addr, Some("db")).await;
        let id = connection_id(&mut victim).await;
        let mut observer = connect(addr, Some("db")).await;
        let listed: Vec<u64> = observer
            .query_map("SHOW PROCESSLIST", |row: mysql_async::Row| {
                row.get::<u64, _>(0).unwrap()
            })
            .await
            .unwrap();
        assert!(
            listed.contains(&u64::from(id)),
            "CONNECTION_ID() {id} not in {listed:?}"
        );
        // 10^9 combinations: minutes of work, so only KILL can end it within the test.
        let query = "SELECT COUNT(*) FROM big x, big y, big z WHERE x.a + y.a + z.a > 3";
        let running = tokio::spawn(async move {
            let result = victim.query_first::<u64, _>(query).await;
            (victim, result, Instant::now())
        });
        wait_running(&mut observer, id, "big x, big y").await;
        let killed_at = Instant::now();
        observer
            .query_drop(format!("KILL QUERY {id}"))
            .await
            .unwrap();
        let (mut victim, result, ended) = running.await.unwrap();
        let (code, state, message) = server_error(result.unwrap_err());
        assert_eq!(
            (code, state.as_str(), message.as_str()),
            (1317, "70100", "Query execution was interrupted")
        );
        let latency = ended.saturating_duration_since(killed_at);
        eprintln!("KILL QUERY to 1317: {latency:?}");
        assert!(latency < Duration::from_secs(10), "{latency:?}");
        let after: Option<u64> = victim
            .query_first("SELECT COUNT(*) FROM big")
            .await
            .unwrap();
        assert_eq!(after, Some(1000), "the killed connection still works");
        let (code, _, message) =
            server_error(observer.query_drop("KILL 4000000").await.unwrap_err());
        assert_eq!(
            (code, message.as_str()),
            (1094, "Unknown thread id: 4000000")
        );
    });
}

#[test]
fn kill_query_wakes_a_lock_wait_and_kill_connection_rolls_back() {
    let server = TestServer::builder().config(LONG_LOCK_WAIT).start();
    let addr = server.mysql_addr();
    block_on(async {
        setup_big_table(addr).await;
        let mut holder = connect(addr, Some("db")).await;
        let holder_id = connection_id(&mut holder).await;
        holder.query_drop("BEGIN").await.unwrap();
        holder
            .query_drop("UPDATE big SET v = 1 WHERE a = 1")
            .await
            .unwrap();
        holder
            .query_drop("INSERT INTO big VALUES (5000, 5)")
            .await
            .unwrap();

        let mut waiter = connect(addr, Some("db")).await;
        let waiter_id = connection_id(&mut waiter).await;
        waiter.query_drop("BEGIN").await.unwrap();
        waiter
            .query_drop("UPDATE big SET v = 7 WHERE a = 2")
            .await
            .unwrap();
        let blocked = tokio::spawn(async move {
            let result = waiter.query_drop("UPDATE big SET v = 2 WHERE a = 1").await;
            (waiter, result)
        });
        let mut admin = connect(addr, Some("db")).await;
        wait_running(&mut admin, waiter_id, "WHERE a = 1").await;
        admin
            .query_drop(format!("KILL QUERY {waiter_id}"))
            .await
            .unwrap();
        let (mut waiter, result) = tokio::time::timeout(Duration::from_secs(20), blocked)
            .await
            .expect("KILL QUERY ends the lock wait")
            .unwrap();
        assert_eq!(server_error(result.unwrap_err()).0, 1317);
        // Only the statement was interrupted: the waiter's transaction and its write remain.
        let own: Option<i64> = waiter
            .query_first("SELECT v FROM big WHERE a = 2")
            .await
            .unwrap();
        assert_eq!(own, Some(7));
        waiter.query_drop("ROLLBACK").await.unwrap();

        // KILL CONNECTION of the idle holder: the connection goes, its transaction rolls back
        // and its locks are released.
        admin
            .query_drop(format!("KILL CONNECTION {holder_id}"))
            .await
            .unwrap();
        assert!(
            holder.query_drop("SELECT 1").await.is_err(),
            "the killed connection is closed"
        );
        let row: Option<i64> = admin
            .query_first("SELECT v FROM big WHERE a = 1")
            .await
            .unwrap();
        assert_eq!(row, Some(0));
        let inserted: Option<u64> = admin
            .query_first("SELECT COUNT(*) FROM big WHERE a = 5000")
            .await
            .unwrap();
        assert_eq!(inserted, Some(0));
        let started = Instant::now();
        admin
            .query_drop("UPDATE big SET v = 3 WHERE a = 1")
            .await
            .unwrap();
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the lock was released"
        );
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let ids: Vec<u64> = admin
                .query_map("SHOW PROCESSLIST", |row: mysql_async::Row| {
                    row.get::<u64, _>(0).unwrap()
                })
                .await
                .unwrap();
            if !ids.contains(&u64::from(holder_id)) {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "killed session still listed: {ids:?}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    });
}

#[test]
fn users_without_global_privileges_see_and_kill_only_their_own_sessions() {
    let server = TestServer::start();
    let addr = server.mysql_addr();
    block_on(async {
        let mut root = connect(addr, None).await;
        root.query_drop("CREATE USER 'app'@'%' IDENTIFIED BY 'pw'")
            .await
            .unwrap();
        let root_id = connection_id(&mut root).await;
        let app_opts = || opts(addr, None).user(Some("app")).pass(Some("pw"));
        let mut app = Conn::new(app_opts()).await.unwrap();
        let mut app2 = Conn::new(app_opts()).await.unwrap();
        let app2_id = connection_id(&mut app2).await;
        let users: Vec<String> = app
            .query_map("SHOW PROCESSLIST", |row: mysql_async::Row| {
                row.get::<String, _>(1).unwrap()
            })
            .await
            .unwrap();
        assert_eq!(users, vec!["app".to_string(), "app".to_string()]);
        let visible: Option<u64> = app
            .query_first("SELECT COUNT(*) FROM information_schema.PROCESSLIST")
            .await
            .unwrap();
        assert_eq!(visible, Some(2));
        let own: Option<(u64, String, String)> = app2
            .query_first(format!(
                "SELECT ID, USER, INFO FROM information_schema.processlist WHERE ID = {app2_id}"
            ))
            .await
            .unwrap();
        assert_eq!(
            own,
            Some((
                u64::from(app2_id),
                "app".to_string(),
                format!(
                    "SELECT ID, USER, INFO FROM information_schema.processlist WHERE ID = {app2_id}"
                )
            ))
        );
        let (code, _, message) =
            server_error(app.query_drop(format!("KILL {root_id}")).await.unwrap_err());
        assert_eq!(
            (code, message),
            (1095, format!("You are not owner of thread {root_id}"))
        );
        app.query_drop(format!("KILL QUERY {app2_id}"))
            .await
            .unwrap();
        let still: Option<u32> = app2.query_first("SELECT 1").await.unwrap();
        assert_eq!(
            still,
            Some(1),
            "KILL QUERY of an idle session leaves it alone"
        );
        app.query_drop(format!("KILL {app2_id}")).await.unwrap();
        assert!(app2.query_drop("SELECT 1").await.is_err());
        let all: Vec<u64> = root
            .query_map("SHOW PROCESSLIST", |row: mysql_async::Row| {
                row.get::<u64, _>(0).unwrap()
            })
            .await
            .unwrap();
        assert!(all.contains(&u64::from(root_id)), "{all:?}");
    });
}
