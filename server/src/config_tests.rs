//! Unit tests for [`Config`]: parsing, unknown keys, overrides, validation, the example file.

use super::*;
use orcinus_storage::SyncPolicy;

fn parse(text: &str) -> Result<Config, ServerError> {
    Config::parse_toml(text, Path::new("test.toml"))
}

fn parse_and_resolve(text: &str) -> Result<Config, ServerError> {
    parse(text)?.resolve()
}

fn example_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("orcinus.example.toml")
}

fn as_table(config: &Config) -> toml::Table {
    toml::Table::try_from(config).unwrap()
}

#[test]
fn empty_file_gives_defaults() {
    let config = parse_and_resolve("").unwrap();
    assert_eq!(config.server, ServerSettings::default());
    assert_eq!(config.server.mysql_port, 3306);
    assert_eq!(config.server.redis_port, 6379);
    assert_eq!(config.server.bind.to_string(), "127.0.0.1");
    assert_eq!(config.storage.path, PathBuf::from("orcinus-data"));
    assert_eq!(config.storage.sync, SyncPolicy::Always);
}

#[test]
fn sync_policy_names() {
    for (name, policy) in [
        ("always", SyncPolicy::Always),
        ("everysec", SyncPolicy::Everysec),
        ("none", SyncPolicy::None),
    ] {
        let config = parse(&format!("[storage]\nsync = \"{name}\"\n")).unwrap();
        assert_eq!(config.storage.sync, policy);
    }
    let err = parse("[storage]\nsync = \"sometimes\"\n").unwrap_err();
    assert!(
        matches!(err, ServerError::ConfigParse { line: 2, .. }),
        "{err}"
    );
}

#[test]
fn unknown_keys_are_rejected_in_every_table() {
    for text in [
        "colour = 1",
        "[server]\nport = 1",
        "[storage]\ncache = 1",
        "[mysql]\nmax_conns = 1",
        "[resp]\nmaxclients = 1",
        "[extra]\n",
    ] {
        let err = parse(text).unwrap_err();
        assert!(
            matches!(err, ServerError::ConfigParse { .. }),
            "{text}: {err}"
        );
        assert!(err.to_string().contains("unknown field"), "{text}: {err}");
    }
}

#[test]
fn parse_errors_name_the_line_and_fit_on_one_line() {
    let err = parse("[server]\nmysql_port = 3306\nredis_port = \"six\"\n").unwrap_err();
    assert!(
        matches!(err, ServerError::ConfigParse { line: 3, .. }),
        "{err}"
    );
    assert!(!err.one_line().contains('\n'));
    let err = parse("[server\n").unwrap_err();
    assert!(
        matches!(err, ServerError::ConfigParse { line: 1, .. }),
        "{err}"
    );
}

#[test]
fn bad_values_are_rejected() {
    assert!(parse("[server]\nmysql_port = 70000\n").is_err());
    assert!(parse("[server]\nbind = \"not-an-ip\"\n").is_err());
    assert!(parse("[server]\nlog_level = \"loud\"\n").is_err());
}

#[test]
fn storage_path_cannot_be_set() {
    let err = parse("[storage]\npath = \"/elsewhere\"\n").unwrap_err();
    assert!(err.to_string().contains("storage.path"), "{err}");
}

#[test]
fn flags_override_the_file() {
    let mut config = parse("[server]\nmysql_port = 1234\ndata_dir = \"from-file\"\n").unwrap();
    config.apply(&CliOverrides {
        data_dir: Some(PathBuf::from("from-flag")),
        bind: None,
        mysql_port: Some(0),
        redis_port: None,
        config_file: None,
    });
    let config = config.resolve().unwrap();
    assert_eq!(config.server.mysql_port, 0);
    assert_eq!(config.server.redis_port, 6379);
    assert_eq!(config.server.data_dir, PathBuf::from("from-flag"));
    assert_eq!(config.storage.path, PathBuf::from("from-flag"));
}

#[test]
fn validation_names_the_bad_setting() {
    let cases = [
        (
            "[server]\nmysql_port = 7000\nredis_port = 7000\n",
            "server.mysql_port",
        ),
        ("[server]\ndata_dir = \"\"\n", "server.data_dir"),
        (
            "[storage]\ncache_size_bytes = 10\n",
            "storage.cache_size_bytes",
        ),
        (
            "[storage]\nlock_wait_timeout_ms = 0\n",
            "storage.lock_wait_timeout_ms",
        ),
        ("[mysql]\nmax_connections = 0\n", "mysql.max_connections"),
        (
            "[mysql]\nmax_allowed_packet = 2000000000\n",
            "mysql.max_allowed_packet",
        ),
        ("[resp]\nmax_clients = 0\n", "resp.max_clients"),
        (
            "[resp]\nproto_max_bulk_len = 10\n",
            "resp.proto_max_bulk_len",
        ),
    ];
    for (text, setting) in cases {
        let err = parse_and_resolve(text).unwrap_err();
        assert!(
            matches!(err, ServerError::ConfigInvalid(_)),
            "{text}: {err}"
        );
        assert!(err.to_string().contains(setting), "{text}: {err}");
    }
}

#[test]
fn both_ports_zero_and_public_bind_with_password_are_valid() {
    parse_and_resolve("[server]\nmysql_port = 0\nredis_port = 0\n").unwrap();
    parse_and_resolve("[server]\nbind = \"0.0.0.0\"\n[resp]\nrequirepass = \"pw\"\n").unwrap();
    // Whether a public bind is safe depends on the account table: checked at start-up.
    parse_and_resolve("[server]\nbind = \"0.0.0.0\"\n").unwrap();
}

#[test]
fn for_test_is_valid_and_uses_its_dir() {
    let config = Config::for_test(PathBuf::from("/tmp/x")).resolve().unwrap();
    assert_eq!(config.storage.path, PathBuf::from("/tmp/x"));
    assert_eq!(config.server.mysql_port, 0);
    assert!(config.storage.memtable_bytes < StorageConfig::default().memtable_bytes);
}

#[test]
fn example_file_is_valid_and_lists_the_defaults() {
    let example = Config::load(&example_path()).unwrap().resolve().unwrap();
    let defaults = Config::default().resolve().unwrap();
    assert_eq!(as_table(&example), as_table(&defaults));
}

#[test]
fn example_file_lists_every_setting() {
    let text = std::fs::read_to_string(example_path()).unwrap();
    let example: toml::Table = toml::from_str(&text).unwrap();
    for (table_name, table) in as_table(&Config::default()) {
        let listed = example.get(&table_name).and_then(toml::Value::as_table);
        let listed = listed.unwrap_or_else(|| panic!("example lacks [{table_name}]"));
        for key in table.as_table().unwrap().keys() {
            if table_name == "storage" && key == "path" {
                continue;
            }
            assert!(listed.contains_key(key), "example lacks {table_name}.{key}");
        }
    }
    assert!(
        text.contains("# requirepass ="),
        "example documents resp.requirepass"
    );
}
