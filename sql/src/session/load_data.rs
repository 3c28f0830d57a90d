//! `LOAD DATA [LOCAL] INFILE` in a session: the checks MySQL makes before reading any input,
//! then the input source, then [`crate::load::execute`].
//!
//! - The target database must be one the user may use (1044) and the table must exist (1146)
//!   before the client is asked for its file.
//! - LOCAL: `local_infile` must be on and the client must have enabled it (3948 otherwise);
//!   the protocol streams the client's file ([`LocalInfile`]).
//! - Server-side: the global privileges stand in for MySQL's FILE privilege (1045 without);
//!   `secure_file_priv` NULL refuses (1290), a directory admits only files under it after
//!   resolving symbolic links (1290 otherwise), relative names resolve against it; a missing
//!   file is error 29. The file is read in chunks on the blocking thread pool.

use std::io::Read;
use std::path::{Path, PathBuf};

use crate::accounts;
use crate::error::{SqlError, SqlResult};
use crate::load::{self, ChunkSource, LoadOutcome};

use super::frontend::FrontendSession;
use super::outcome::{OkSummary, QueryOutcome};
use super::traits::LocalInfile;

/// Bytes read from a server-side file per chunk.
const FILE_CHUNK: usize = 1 << 20;

/// The server's LOAD DATA settings (`@@local_infile`, `@@secure_file_priv`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct LoadSettings {
    pub local_infile: bool,
    pub secure_file_priv: Option<PathBuf>,
}

/// The client's file, through the protocol.
struct ClientFile<'a, I>(&'a mut I);

impl<I: LocalInfile> ChunkSource for ClientFile<'_, I> {
    async fn next_chunk(&mut self) -> SqlResult<Option<Vec<u8>>> {
        self.0.next_chunk().await
    }
}

/// A file on the server.
struct ServerFile(Option<std::fs::File>);

impl ChunkSource for ServerFile {
    async fn next_chunk(&mut self) -> SqlResult<Option<Vec<u8>>> {
        let Some(mut file) = self.0.take() else {
            return Ok(None);
        };
        let read = tokio::task::spawn_blocking(move || {
            let mut buf = vec![0u8; FILE_CHUNK];
            let n = file.read(&mut buf)?;
            buf.truncate(n);
            Ok::<_, std::io::Error>((file, buf))
        })
        .await
        .map_err(|e| SqlError::Internal(format!("LOAD DATA reader task: {e}")))?;
        let (file, buf) = read
            .map_err(|e| SqlError::QueryFailed(format!("Error reading the LOAD DATA file: {e}")))?;
        if buf.is_empty() {
            return Ok(None);
        }
        self.0 = Some(file);
        Ok(Some(buf))
    }
}

fn errno_of(e: &std::io::Error) -> (i32, String) {
    let errno = e.raw_os_error().unwrap_or(2);
    let reason = match e.kind() {
        std::io::ErrorKind::NotFound => "No such file or directory".to_owned(),
        std::io::ErrorKind::PermissionDenied => "Permission denied".to_owned(),
        _ => e.to_string(),
    };
    (errno, reason)
}

/// Resolves `name` under `secure_file_priv` and opens it.
fn open_server_file(name: &str, secure: Option<&Path>) -> SqlResult<std::fs::File> {
    let Some(dir) = secure else {
        return Err(SqlError::SecureFilePriv);
    };
    let path = if dir.as_os_str().is_empty() || Path::new(name).is_absolute() {
        PathBuf::from(name)
    } else {
        dir.join(name)
    };
    let not_found = |e: &std::io::Error| {
        let (errno, reason) = errno_of(e);
        SqlError::FileNotFound {
            path: path.display().to_string(),
            errno,
            reason,
        }
    };
    if !dir.as_os_str().is_empty() {
        let real_dir = dir.canonicalize().map_err(|_| SqlError::SecureFilePriv)?;
        // Outside the directory is 1290 whether or not the file exists, as in MySQL.
        let real = match path.canonicalize() {
            Ok(p) => p,
            Err(e) if path.starts_with(dir) => return Err(not_found(&e)),
            Err(_) => return Err(SqlError::SecureFilePriv),
        };
        if !real.starts_with(&real_dir) {
            return Err(SqlError::SecureFilePriv);
        }
    }
    let file = std::fs::File::open(&path).map_err(|e| not_found(&e))?;
    if file.metadata().map(|m| m.is_dir()).unwrap_or(false) {
        return Err(SqlError::FileNotFound {
            path: path.display().to_string(),
            errno: 21,
            reason: "Is a directory".to_owned(),
        });
    }
    Ok(file)
}

impl FrontendSession {
    /// Runs one LOAD DATA statement; its warnings become the session's `SHOW WARNINGS` list.
    pub(super) async fn load_data<I: LocalInfile>(
        &mut self,
        statement: &str,
        infile: &mut I,
    ) -> SqlResult<QueryOutcome> {
        let stmt = load::parse::parse(statement)?;
        let db = stmt
            .db
            .clone()
            .or_else(|| self.state.database().map(str::to_owned))
            .ok_or(SqlError::NoDatabaseSelected)?;
        accounts::database_access(&self.accounts, &self.context.user, &self.context.host, &db)?;
        load::target_table(&self.executor, Some(&db), &stmt)?;
        let outcome = if stmt.local {
            let local_infile = self
                .variables
                .get_int("local_infile")
                .map_or(self.load_settings.local_infile, |v| v != 0);
            if !local_infile || !infile.enabled() {
                return Err(SqlError::LocalInfileDisabled);
            }
            infile.request(&stmt.file).await?;
            let mut source = ClientFile(infile);
            load::execute(&self.executor, &mut self.state, &stmt, &mut source).await?
        } else {
            if !accounts::has_global_privileges(
                &self.accounts,
                &self.context.user,
                &self.context.host,
            ) {
                return Err(SqlError::AccessDenied {
                    user: self.context.user.clone(),
                    host: self.context.host.clone(),
                    using_password: true,
                });
            }
            let file =
                open_server_file(&stmt.file, self.load_settings.secure_file_priv.as_deref())?;
            let mut source = ServerFile(Some(file));
            load::execute(&self.executor, &mut self.state, &stmt, &mut source).await?
        };
        Ok(self.load_outcome(outcome))
    }

    fn load_outcome(&mut self, outcome: LoadOutcome) -> QueryOutcome {
        let summary = OkSummary {
            affected_rows: outcome.affected,
            last_insert_id: outcome.first_generated.unwrap_or(0),
            warnings: u16::try_from(outcome.warning_count).unwrap_or(u16::MAX),
            info: outcome.info(),
        };
        self.warnings = outcome.warnings;
        QueryOutcome::Done(summary)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secure_file_priv_admits_only_files_under_its_directory() {
        let dir = tempfile::tempdir().unwrap();
        let inside = dir.path().join("in.txt");
        std::fs::write(&inside, "1\n").unwrap();
        let outside = tempfile::NamedTempFile::new().unwrap();
        assert_eq!(open_server_file("in.txt", None).unwrap_err().code(), 1290);
        assert!(open_server_file("in.txt", Some(dir.path())).is_ok());
        assert!(open_server_file(inside.to_str().unwrap(), Some(dir.path())).is_ok());
        assert_eq!(
            open_server_file("../../../../etc/passwd", Some(dir.path()))
                .unwrap_err()
                .code(),
            1290
        );
        let outside_name = outside.path().to_str().unwrap();
        assert_eq!(
            open_server_file(outside_name, Some(dir.path()))
                .unwrap_err()
                .code(),
            1290
        );
        assert!(open_server_file(outside_name, Some(Path::new(""))).is_ok());
        let missing = open_server_file("nope.txt", Some(dir.path())).unwrap_err();
        assert_eq!(missing.code(), 29);
        assert!(
            missing
                .to_string()
                .contains("(OS errno 2 - No such file or directory)")
        );
    }
}
