//! The character sets and collations this server knows by name, as MySQL 8.0 describes them
//! (SHOW CHARACTER SET, SHOW COLLATION, the charset/collation columns of information_schema and
//! the table options of SHOW CREATE TABLE), plus the resolution of a table's declared
//! `CHARSET` / `COLLATE` options to the pair MySQL reports.
//!
//! Invariants: every character set has exactly one default collation in [`COLLATIONS`]; names
//! are lower case. These are names the catalog accepts and reports: the storage format compares
//! strings bytewise regardless of the declared collation (see `sql/FORMAT.md`).

use crate::catalog::TableOptions;

/// A character set as SHOW CHARACTER SET lists it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Charset {
    pub name: &'static str,
    pub description: &'static str,
    pub default_collation: &'static str,
    /// Maximum bytes per character.
    pub max_len: u32,
}

/// A collation as SHOW COLLATION lists it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Collation {
    pub name: &'static str,
    pub charset: &'static str,
    pub id: u16,
    pub is_default: bool,
    pub sort_len: u32,
    /// `PAD SPACE` or `NO PAD`.
    pub pad_attribute: &'static str,
}

/// The default character set of new databases and tables (MySQL 8.0's).
pub const DEFAULT_CHARSET: &str = "utf8mb4";

/// Known character sets, sorted by name.
pub const CHARSETS: &[Charset] = &[
    Charset {
        name: "ascii",
        description: "US ASCII",
        default_collation: "ascii_general_ci",
        max_len: 1,
    },
    Charset {
        name: "binary",
        description: "Binary pseudo charset",
        default_collation: "binary",
        max_len: 1,
    },
    Charset {
        name: "latin1",
        description: "cp1252 West European",
        default_collation: "latin1_swedish_ci",
        max_len: 1,
    },
    Charset {
        name: "utf8mb3",
        description: "UTF-8 Unicode",
        default_collation: "utf8mb3_general_ci",
        max_len: 3,
    },
    Charset {
        name: "utf8mb4",
        description: "UTF-8 Unicode",
        default_collation: "utf8mb4_0900_ai_ci",
        max_len: 4,
    },
];

const fn collation(
    name: &'static str,
    charset: &'static str,
    id: u16,
    is_default: bool,
    sort_len: u32,
    pad_attribute: &'static str,
) -> Collation {
    Collation {
        name,
        charset,
        id,
        is_default,
        sort_len,
        pad_attribute,
    }
}

/// Known collations, sorted by name (ids as MySQL 8.0 assigns them).
pub const COLLATIONS: &[Collation] = &[
    collation("ascii_bin", "ascii", 65, false, 1, "PAD SPACE"),
    collation("ascii_general_ci", "ascii", 11, true, 1, "PAD SPACE"),
    collation("binary", "binary", 63, true, 1, "NO PAD"),
    collation("latin1_bin", "latin1", 47, false, 1, "PAD SPACE"),
    collation("latin1_swedish_ci", "latin1", 8, true, 1, "PAD SPACE"),
    collation("utf8mb3_bin", "utf8mb3", 83, false, 1, "PAD SPACE"),
    collation("utf8mb3_general_ci", "utf8mb3", 33, true, 1, "PAD SPACE"),
    collation("utf8mb4_0900_ai_ci", "utf8mb4", 255, true, 0, "NO PAD"),
    collation("utf8mb4_0900_bin", "utf8mb4", 309, false, 1, "NO PAD"),
    collation("utf8mb4_bin", "utf8mb4", 46, false, 1, "PAD SPACE"),
    collation("utf8mb4_general_ci", "utf8mb4", 45, false, 1, "PAD SPACE"),
];

/// MySQL 8.0 spells the deprecated alias `utf8` as `utf8mb3`, in charset and collation names.
fn canonical_name(name: &str) -> String {
    let lower = name.to_ascii_lowercase();
    match lower.strip_prefix("utf8") {
        Some(rest) if !rest.starts_with("mb") => format!("utf8mb3{rest}"),
        _ => lower,
    }
}

/// Looks a character set up by name (`utf8` is `utf8mb3`).
#[must_use]
pub fn charset(name: &str) -> Option<&'static Charset> {
    let name = canonical_name(name);
    CHARSETS.iter().find(|c| c.name == name)
}

/// Looks a collation up by name (`utf8_…` is `utf8mb3_…`).
#[must_use]
pub fn collation_named(name: &str) -> Option<&'static Collation> {
    let name = canonical_name(name);
    COLLATIONS.iter().find(|c| c.name == name)
}

/// The character set and collation of a table as MySQL reports them: the declared pair, the
/// declared charset with its default collation, the declared collation with its charset, or
/// utf8mb4 / utf8mb4_0900_ai_ci. A name this server does not know is reported as declared, with
/// no collation when none was declared.
#[must_use]
pub fn table_charset(options: &TableOptions) -> (String, Option<String>) {
    let declared_collation = options.collate.as_deref().map(canonical_name);
    match (options.charset.as_deref(), declared_collation) {
        (Some(cs), Some(coll)) => (canonical_name(cs), Some(coll)),
        (Some(cs), None) => {
            let cs = canonical_name(cs);
            let coll = charset(&cs).map(|c| c.default_collation.to_string());
            (cs, coll)
        }
        (None, Some(coll)) => {
            let cs = collation_named(&coll)
                .map_or_else(|| DEFAULT_CHARSET.to_string(), |c| c.charset.to_string());
            (cs, Some(coll))
        }
        (None, None) => (
            DEFAULT_CHARSET.to_string(),
            charset(DEFAULT_CHARSET).map(|c| c.default_collation.to_string()),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_charset_has_one_default_collation() {
        for cs in CHARSETS {
            let defaults: Vec<_> = COLLATIONS
                .iter()
                .filter(|c| c.charset == cs.name && c.is_default)
                .collect();
            assert_eq!(defaults.len(), 1, "{}", cs.name);
            assert_eq!(defaults[0].name, cs.default_collation);
        }
    }

    #[test]
    fn table_charset_resolution() {
        let opts = |cs: Option<&str>, co: Option<&str>| TableOptions {
            engine: "InnoDB".into(),
            charset: cs.map(Into::into),
            collate: co.map(Into::into),
            comment: None,
        };
        assert_eq!(
            table_charset(&opts(None, None)),
            ("utf8mb4".into(), Some("utf8mb4_0900_ai_ci".into()))
        );
        assert_eq!(
            table_charset(&opts(Some("LATIN1"), None)),
            ("latin1".into(), Some("latin1_swedish_ci".into()))
        );
        assert_eq!(
            table_charset(&opts(Some("utf8"), None)),
            ("utf8mb3".into(), Some("utf8mb3_general_ci".into()))
        );
        assert_eq!(
            table_charset(&opts(None, Some("utf8mb4_bin"))),
            ("utf8mb4".into(), Some("utf8mb4_bin".into()))
        );
        assert_eq!(
            table_charset(&opts(Some("koi8r"), None)),
            ("koi8r".into(), None)
        );
    }
}
