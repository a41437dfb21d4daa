//! Files and directories only the server's own user can open: everything the server creates
//! under its data directory (the token, the sealing key, the store, chats, uploads, knowledge
//! indexes) is 0600 and every directory 0700, whatever the umask it was started with.
//!
//! Two layers, because some files are made by libraries (redb, tantivy): [`restrict_umask`] at
//! start makes every later creation private by default, and the helpers here give the mode
//! explicitly where we create things ourselves, so a file stays private even if the umask is
//! changed back. [`tighten`] fixes what an older version left open.

use std::fs::{DirBuilder, OpenOptions, Permissions};
use std::io;
use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _, PermissionsExt as _};
use std::path::Path;

/// A private file's mode.
pub const FILE_MODE: u32 = 0o600;
/// A private directory's mode.
pub const DIR_MODE: u32 = 0o700;

/// Sets the process's file-creation mask to `077`: files and directories created from now on,
/// by this process and its children (libraries included), are open to their owner only.
pub fn restrict_umask() {
    rustix::process::umask(rustix::fs::Mode::from_raw_mode(0o077));
}

/// `std::fs::create_dir_all` with every directory it creates 0700; `path` itself is made 0700
/// when it already exists with more.
pub fn create_dir_all(path: &Path) -> io::Result<()> {
    DirBuilder::new().recursive(true).mode(DIR_MODE).create(path)?;
    tighten(path)
}

/// Options that create a file 0600 (to be given `write`, `create`, `append`, …).
pub fn options() -> OpenOptions {
    let mut options = OpenOptions::new();
    options.mode(FILE_MODE);
    options
}

/// `std::fs::write`, creating the file 0600 (an existing file is made 0600 too).
pub fn write(path: &Path, contents: impl AsRef<[u8]>) -> io::Result<()> {
    use std::io::Write as _;
    let mut file = options().write(true).create(true).truncate(true).open(path)?;
    file.write_all(contents.as_ref())?;
    tighten(path)
}

/// Takes group and other permissions off `path` (a file or a directory), when it has any.
pub fn tighten(path: &Path) -> io::Result<()> {
    let mode = std::fs::metadata(path)?.permissions().mode();
    if mode & 0o077 != 0 {
        std::fs::set_permissions(path, Permissions::from_mode(mode & 0o700))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn what_is_created_is_the_owners_only_and_old_modes_are_tightened() {
        let dir = tempfile::tempdir().unwrap();
        let deep = dir.path().join("a/b/c");
        create_dir_all(&deep).unwrap();
        for d in ["a", "a/b", "a/b/c"] {
            assert_eq!(mode(&dir.path().join(d)), 0o700, "{d}");
        }
        let file = deep.join("f");
        write(&file, "x").unwrap();
        assert_eq!(mode(&file), 0o600);
        std::fs::set_permissions(&file, Permissions::from_mode(0o644)).unwrap();
        write(&file, "y").unwrap();
        assert_eq!((mode(&file), std::fs::read_to_string(&file).unwrap()), (0o600, "y".into()));
        std::fs::set_permissions(&deep, Permissions::from_mode(0o755)).unwrap();
        create_dir_all(&deep).unwrap();
        assert_eq!(mode(&deep), 0o700);
        let other = deep.join("g");
        options().write(true).create_new(true).open(&other).unwrap();
        assert_eq!(mode(&other), 0o600);
    }
}
