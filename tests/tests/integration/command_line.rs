//! Command-line behaviour of the binary: --help, --version, and usage errors (exit 2, one line).

use crate::harness::run_orcinus;

#[test]
fn help_prints_usage_and_exits_zero() {
    for flag in ["--help", "-h"] {
        let out = run_orcinus(&[flag]);
        assert_eq!(out.status.code(), Some(0), "{flag}: {out:?}");
        assert!(out.stdout.starts_with("orcinus"), "{flag}: {}", out.stdout);
        for option in [
            "--data-dir",
            "--bind",
            "--mysql-port",
            "--redis-port",
            "--config",
        ] {
            assert!(out.stdout.contains(option), "{flag} output lacks {option}");
        }
        assert!(out.stderr.is_empty(), "{flag}: {}", out.stderr);
    }
}

#[test]
fn version_prints_the_crate_version() {
    let out = run_orcinus(&["--version"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(
        out.stdout.trim(),
        format!("orcinus {}", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn unknown_flag_exits_two_with_one_stderr_line() {
    let out = run_orcinus(&["--data-dir", "/nonexistent/never-created", "--frobnicate"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let lines = out.stderr_lines();
    assert_eq!(lines.len(), 1, "{}", out.stderr);
    assert!(lines[0].starts_with("orcinus: error: "), "{}", lines[0]);
    assert!(lines[0].contains("--frobnicate"), "{}", lines[0]);
    assert!(out.stdout.is_empty());
    assert!(!std::path::Path::new("/nonexistent/never-created").exists());
}

#[test]
fn malformed_values_are_usage_errors() {
    for args in [
        &["--mysql-port", "99999"][..],
        &["--redis-port"][..],
        &["--bind", "not-an-address"][..],
        &["positional"][..],
    ] {
        let out = run_orcinus(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {out:?}");
        assert_eq!(out.stderr_lines().len(), 1, "{args:?}: {}", out.stderr);
    }
}
