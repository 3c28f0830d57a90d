// MySQL Connector/J against the real server's MySQL port, run as a single-file Java program by the
// Rust integration test tests/tests/integration/mysql_drivers.rs:
//   java -cp mysql-connector-j.jar ConnectorJCheck.java HOST:PORT
// Each check prints "ok <name>"; the first failure throws, printing the stack trace and exiting 1.
// Server-side prepared statements are on (useServerPrepStmts=true), so both COM_QUERY and
// COM_STMT_PREPARE / EXECUTE paths are exercised; Connector/J's connect-time probes
// (SHOW VARIABLES / SELECT @@… session state) must be answered for the connection to open at all.

import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.Date;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Timestamp;
import java.time.LocalDateTime;

public class ConnectorJCheck {
    static String addr;

    static Connection connect(String database, boolean serverPrepared) throws SQLException {
        String url = "jdbc:mysql://" + addr + "/" + database
                + "?user=root&password=&sslMode=DISABLED&allowPublicKeyRetrieval=true"
                + "&useServerPrepStmts=" + serverPrepared + "&connectTimeout=10000&socketTimeout=60000";
        return DriverManager.getConnection(url);
    }

    static void check(boolean condition, String what) {
        if (!condition) {
            throw new AssertionError(what);
        }
    }

    public static void main(String[] args) throws Exception {
        addr = args[0];
        String db = "cj_" + System.nanoTime();
        try (Connection admin = connect("", false); Statement st = admin.createStatement()) {
            ResultSet version = st.executeQuery("SELECT VERSION()");
            check(version.next() && version.getString(1).startsWith("8.0."), "VERSION() is 8.0.x");
            st.execute("CREATE DATABASE " + db);
        }
        System.out.println("ok connect");
        for (boolean serverPrepared : new boolean[] {true, false}) {
            String table = serverPrepared ? "items_server" : "items_client";
            try (Connection c = connect(db, serverPrepared)) {
                roundTrip(c, table);
                transactions(c, table);
                errors(c, table);
                sessionStatements(c, table, serverPrepared);
            }
            System.out.println("ok useServerPrepStmts=" + serverPrepared);
        }
        try (Connection admin = connect("", false); Statement st = admin.createStatement()) {
            st.execute("DROP DATABASE " + db);
        }
        System.out.println("ok all");
    }

    static void roundTrip(Connection c, String table) throws SQLException {
        try (Statement st = c.createStatement()) {
            st.execute("CREATE TABLE " + table + " (id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,"
                    + " name VARCHAR(40) NOT NULL, qty INT NOT NULL DEFAULT '0', price DECIMAL(10,2),"
                    + " born DATE, seen DATETIME, KEY by_qty (qty))");
        }
        try (PreparedStatement ins = c.prepareStatement(
                "INSERT INTO " + table + " (name, qty, price, born, seen) VALUES (?, ?, ?, ?, ?)",
                Statement.RETURN_GENERATED_KEYS)) {
            for (int i = 1; i <= 20; i++) {
                ins.setString(1, "n" + i);
                ins.setInt(2, i % 5);
                ins.setBigDecimal(3, new BigDecimal(i + ".25"));
                ins.setDate(4, Date.valueOf("2024-02-29"));
                ins.setTimestamp(5, Timestamp.valueOf(LocalDateTime.of(2024, 3, 1, 12, 30, 45)));
                check(ins.executeUpdate() == 1, "one row inserted");
                ResultSet keys = ins.getGeneratedKeys();
                check(keys.next() && keys.getLong(1) == i, "generated key " + i);
            }
        }
        try (PreparedStatement q = c.prepareStatement(
                "SELECT id, name, price, born, seen FROM " + table + " WHERE id BETWEEN ? AND ? ORDER BY id")) {
            q.setLong(1, 3);
            q.setLong(2, 5);
            ResultSet rs = q.executeQuery();
            int seen = 0;
            while (rs.next()) {
                long id = rs.getLong(1);
                check(id == 3 + seen, "ids in order");
                check(rs.getString(2).equals("n" + id), "name of " + id);
                check(rs.getBigDecimal(3).compareTo(new BigDecimal(id + ".25")) == 0, "price of " + id);
                check(rs.getDate(4).toString().equals("2024-02-29"), "date of " + id);
                check(rs.getTimestamp(5).toLocalDateTime().equals(LocalDateTime.of(2024, 3, 1, 12, 30, 45)),
                        "datetime of " + id);
                seen++;
            }
            check(seen == 3, "three rows in range");
        }
        try (PreparedStatement agg = c.prepareStatement(
                "SELECT qty, COUNT(*) FROM " + table + " WHERE qty > ? GROUP BY qty ORDER BY qty")) {
            agg.setInt(1, 2);
            ResultSet rs = agg.executeQuery();
            check(rs.next() && rs.getInt(1) == 3 && rs.getLong(2) == 4, "group qty=3");
            check(rs.next() && rs.getInt(1) == 4 && rs.getLong(2) == 4, "group qty=4");
            check(!rs.next(), "two groups");
        }
    }

    static void transactions(Connection c, String table) throws SQLException {
        c.setAutoCommit(false);
        try (PreparedStatement upd = c.prepareStatement("UPDATE " + table + " SET qty = ? WHERE id = ?")) {
            upd.setInt(1, 99);
            upd.setLong(2, 1);
            check(upd.executeUpdate() == 1, "update one row");
            c.rollback();
            upd.setInt(1, 42);
            upd.setLong(2, 2);
            check(upd.executeUpdate() == 1, "update one row");
            c.commit();
        }
        c.setAutoCommit(true);
        try (Statement st = c.createStatement()) {
            ResultSet rs = st.executeQuery("SELECT id, qty FROM " + table + " WHERE id IN (1, 2) ORDER BY id");
            check(rs.next() && rs.getInt(2) == 1, "rolled-back update undone");
            check(rs.next() && rs.getInt(2) == 42, "committed update kept");
        }
    }

    static void errors(Connection c, String table) throws SQLException {
        int[] codes = new int[3];
        String[] queries = {
            "INSERT INTO " + table + " (id, name) VALUES (1, 'dup')",
            "SELECT * FROM no_such_table",
            "SELEC 1",
        };
        for (int i = 0; i < queries.length; i++) {
            try (Statement st = c.createStatement()) {
                st.execute(queries[i]);
            } catch (SQLException e) {
                codes[i] = e.getErrorCode();
            }
        }
        check(codes[0] == 1062 && codes[1] == 1146 && codes[2] == 1064,
                "error codes " + codes[0] + " " + codes[1] + " " + codes[2]);
        try (Statement st = c.createStatement()) {
            ResultSet rs = st.executeQuery("SELECT COUNT(*) FROM " + table);
            check(rs.next() && rs.getLong(1) == 20, "connection usable after errors, nothing half-applied");
        }
    }

    /** A prepared statement, checked to be server-side when `serverPrepared` (Connector/J falls
     * back to client-side preparing when the server refuses COM_STMT_PREPARE). */
    static PreparedStatement prepare(Connection c, String sql, boolean serverPrepared) throws SQLException {
        PreparedStatement ps = c.prepareStatement(sql);
        String kind = ps.getClass().getSimpleName();
        check(!serverPrepared || kind.equals("ServerPreparedStatement"), "server-prepared: " + sql + " (" + kind + ")");
        return ps;
    }

    static void sessionStatements(Connection c, String table, boolean sp) throws SQLException {
        try (PreparedStatement ps = prepare(c, "SELECT VERSION(), DATABASE(), CONNECTION_ID() > 0", sp)) {
            ResultSet rs = ps.executeQuery();
            check(rs.next() && rs.getString(1).startsWith("8.0.") && rs.getString(2) != null
                    && rs.getInt(3) == 1, "session functions");
        }
        // Connector/J itself never server-prepares SET, DO or CREATE TABLE (its
        // canHandleAsServerPreparedStatement); those are checked with mysql-connector-python.
        try (PreparedStatement set = prepare(c, "SET @q = ?", false);
                PreparedStatement get = prepare(c, "SELECT @q * 2", sp)) {
            set.setInt(1, 21);
            set.execute();
            ResultSet rs = get.executeQuery();
            check(rs.next() && rs.getLong(1) == 42, "user variable through prepared statements");
        }
        try (PreparedStatement ps = prepare(c, "SHOW TABLES", sp)) {
            ResultSet rs = ps.executeQuery();
            int n = 0;
            while (rs.next()) {
                n += rs.getString(1).equals(table) ? 1 : 0;
            }
            check(n == 1, "SHOW TABLES lists " + table);
        }
        try (PreparedStatement ps = prepare(c, "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED", false)) {
            ps.execute();
        }
        check(c.getTransactionIsolation() == Connection.TRANSACTION_READ_COMMITTED, "isolation READ COMMITTED");
        c.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
        try (PreparedStatement ps = prepare(c, "SELECT @@transaction_isolation", sp)) {
            ResultSet rs = ps.executeQuery();
            check(rs.next() && rs.getString(1).equals("REPEATABLE-READ"), "isolation back to REPEATABLE READ");
        }
        String user = "cj" + (sp ? "s" : "c");
        for (String sql : new String[] {
                "CREATE USER '" + user + "'@'%' IDENTIFIED BY 'pw'",
                "GRANT ALL ON *.* TO '" + user + "'@'%'",
                "DROP USER '" + user + "'@'%'"}) {
            try (PreparedStatement ps = prepare(c, sql, sp)) {
                ps.execute();
            }
        }
        // (Connector/J refuses writes on a setReadOnly(true) connection itself, with code 0, so
        // the server's check is reached through START TRANSACTION READ ONLY.)
        try (Statement st = c.createStatement();
                PreparedStatement ps = prepare(c, "UPDATE " + table + " SET qty = ? WHERE id = ?", sp)) {
            st.execute("START TRANSACTION READ ONLY");
            ps.setInt(1, 0);
            ps.setLong(2, 1);
            int code = 0;
            try {
                ps.executeUpdate();
            } catch (SQLException e) {
                code = e.getErrorCode();
            }
            check(code == 1792, "write in a READ ONLY transaction is 1792, got " + code);
            st.execute("COMMIT");
        }
    }
}
