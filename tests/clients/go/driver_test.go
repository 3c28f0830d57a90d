// go-sql-driver/mysql against the real server's MySQL port. The address comes from
// ORCINUS_MYSQL_ADDR ("host:port"), set by the Rust integration test that started the real orcinus
// binary (tests/tests/integration/mysql_drivers.rs). Queries with arguments use server-side prepared
// statements (the driver's default, interpolateParams=false), queries without use the text protocol.
package clients

import (
	"database/sql"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
)

func open(t *testing.T, database string) *sql.DB {
	t.Helper()
	addr := os.Getenv("ORCINUS_MYSQL_ADDR")
	if addr == "" {
		t.Fatal("ORCINUS_MYSQL_ADDR is not set: run through `cargo test -p orcinus-tests mysql_go`")
	}
	cfg := mysql.NewConfig()
	cfg.User = "root"
	cfg.Net = "tcp"
	cfg.Addr = addr
	cfg.DBName = database
	cfg.ParseTime = true
	cfg.Timeout = 10 * time.Second
	db, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func mustExec(t *testing.T, db interface {
	Exec(string, ...any) (sql.Result, error)
}, query string, args ...any) sql.Result {
	t.Helper()
	res, err := db.Exec(query, args...)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return res
}

func mysqlErrorNumber(err error) uint16 {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number
	}
	return 0
}

// freshDatabase creates a database unique to the test and drops it afterwards.
func freshDatabase(t *testing.T) string {
	t.Helper()
	name := fmt.Sprintf("go_%d", time.Now().UnixNano())
	admin := open(t, "")
	mustExec(t, admin, "CREATE DATABASE "+name)
	t.Cleanup(func() { admin.Exec("DROP DATABASE " + name) })
	return name
}

func TestPingAndVersion(t *testing.T) {
	db := open(t, "")
	if err := db.Ping(); err != nil {
		t.Fatal(err)
	}
	var version string
	if err := db.QueryRow("SELECT VERSION()").Scan(&version); err != nil {
		t.Fatal(err)
	}
	if len(version) < 4 || version[:4] != "8.0." {
		t.Fatalf("version %q is not MySQL 8.0-compatible", version)
	}
}

func TestPreparedRoundTrip(t *testing.T) {
	db := open(t, freshDatabase(t))
	mustExec(t, db, `CREATE TABLE items (id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
		name VARCHAR(40) NOT NULL, qty INT NOT NULL DEFAULT '0', price DECIMAL(10,2), born DATE,
		seen DATETIME, KEY by_qty (qty))`)
	res := mustExec(t, db, "INSERT INTO items (name, qty, price, born, seen) VALUES (?, ?, ?, ?, ?)",
		"apple", 3, "1.25", "2024-02-29", time.Date(2024, 3, 1, 12, 30, 45, 0, time.UTC))
	id, err := res.LastInsertId()
	if err != nil || id != 1 {
		t.Fatalf("LastInsertId = %d, %v; want 1", id, err)
	}
	mustExec(t, db, "INSERT INTO items (name, qty) VALUES (?, ?), (?, ?)", "pear", 5, "plum", 7)

	var name, price string
	var qty int
	var born, seen time.Time
	err = db.QueryRow("SELECT name, qty, price, born, seen FROM items WHERE id = ?", 1).
		Scan(&name, &qty, &price, &born, &seen)
	if err != nil {
		t.Fatal(err)
	}
	if name != "apple" || qty != 3 || price != "1.25" || born.Format("2006-01-02") != "2024-02-29" ||
		!seen.Equal(time.Date(2024, 3, 1, 12, 30, 45, 0, time.UTC)) {
		t.Fatalf("got %q %d %q %v %v", name, qty, price, born, seen)
	}

	stmt, err := db.Prepare("SELECT name FROM items WHERE qty BETWEEN ? AND ? ORDER BY qty")
	if err != nil {
		t.Fatal(err)
	}
	defer stmt.Close()
	for round := 0; round < 3; round++ {
		rows, err := stmt.Query(4, 10)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for rows.Next() {
			var n string
			if err := rows.Scan(&n); err != nil {
				t.Fatal(err)
			}
			got = append(got, n)
		}
		rows.Close()
		if fmt.Sprint(got) != "[pear plum]" {
			t.Fatalf("round %d: got %v", round, got)
		}
	}

	var nullPrice sql.NullString
	if err := db.QueryRow("SELECT price FROM items WHERE name = ?", "pear").Scan(&nullPrice); err != nil {
		t.Fatal(err)
	}
	if nullPrice.Valid {
		t.Fatalf("price of pear should be NULL, got %q", nullPrice.String)
	}
}

func TestTransactions(t *testing.T) {
	db := open(t, freshDatabase(t))
	mustExec(t, db, "CREATE TABLE acct (id INT PRIMARY KEY, balance INT NOT NULL)")
	mustExec(t, db, "INSERT INTO acct VALUES (1, 100), (2, 100)")

	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	mustExec(t, tx, "UPDATE acct SET balance = balance - ? WHERE id = ?", 30, 1)
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	var balance int
	db.QueryRow("SELECT balance FROM acct WHERE id = 1").Scan(&balance)
	if balance != 100 {
		t.Fatalf("rolled-back update is visible: %d", balance)
	}

	tx, err = db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	mustExec(t, tx, "UPDATE acct SET balance = balance - ? WHERE id = ?", 30, 1)
	mustExec(t, tx, "UPDATE acct SET balance = balance + ? WHERE id = ?", 30, 2)
	if err := db.QueryRow("SELECT balance FROM acct WHERE id = 1").Scan(&balance); err != nil || balance != 100 {
		t.Fatalf("another session sees uncommitted state: %d %v", balance, err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	var total int
	db.QueryRow("SELECT SUM(balance) FROM acct").Scan(&total)
	db.QueryRow("SELECT balance FROM acct WHERE id = 1").Scan(&balance)
	if total != 200 || balance != 70 {
		t.Fatalf("after commit: total %d, balance %d", total, balance)
	}
}

func TestErrorNumbers(t *testing.T) {
	db := open(t, freshDatabase(t))
	mustExec(t, db, "CREATE TABLE u (id INT PRIMARY KEY)")
	mustExec(t, db, "INSERT INTO u VALUES (?)", 1)
	cases := []struct {
		query string
		args  []any
		want  uint16
	}{
		{"INSERT INTO u VALUES (?)", []any{1}, 1062},
		{"SELECT * FROM missing WHERE id = ?", []any{1}, 1146},
		{"SELEC 1", nil, 1064},
	}
	for _, c := range cases {
		_, err := db.Exec(c.query, c.args...)
		if got := mysqlErrorNumber(err); got != c.want {
			t.Errorf("%s: error %v (number %d), want %d", c.query, err, got, c.want)
		}
	}
	if err := db.Ping(); err != nil {
		t.Fatalf("connection unusable after errors: %v", err)
	}
}
