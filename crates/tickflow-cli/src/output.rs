//! The output directory: every file is written into a hidden staging directory inside `--out`
//! and moved into place only when all of them are complete, so a failed or interrupted run
//! leaves no half-written file behind (and a run that never started leaves nothing at all).

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::CliError;

/// Files being written for one run.
#[derive(Debug)]
pub(crate) struct Staging {
    out: PathBuf,
    dir: PathBuf,
    /// `out` did not exist before: remove it again if the run fails.
    created_out: bool,
    done: bool,
}

impl Staging {
    /// Creates `out` if needed and the staging directory inside it; an error here means `out`
    /// cannot be written (checked before any work starts).
    pub(crate) fn new(out: &Path) -> Result<Staging, CliError> {
        let unwritable =
            |e: io::Error| CliError::usage(format!("cannot write to --out {}: {e}", out.display()));
        let created_out = !out.exists();
        fs::create_dir_all(out).map_err(unwritable)?;
        let dir = out.join(format!(".tickflow-partial-{}", std::process::id()));
        if let Err(e) = fs::create_dir(&dir) {
            if created_out {
                let _ = fs::remove_dir(out);
            }
            return Err(unwritable(e));
        }
        Ok(Staging {
            out: out.to_path_buf(),
            dir,
            created_out,
            done: false,
        })
    }

    /// Where to write `name` during the run.
    pub(crate) fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// Writes a whole file into the staging directory.
    pub(crate) fn write(&self, name: &str, text: &str) -> Result<(), CliError> {
        fs::write(self.path(name), text).map_err(|e| CliError::io(format!("writing {name}"), e))
    }

    /// Moves the finished files into `out` and returns their final paths.
    pub(crate) fn commit(mut self, names: &[&str]) -> Result<Vec<PathBuf>, CliError> {
        let mut paths = Vec::new();
        for name in names {
            let to = self.out.join(name);
            fs::rename(self.path(name), &to)
                .map_err(|e| CliError::io(format!("moving {name} into place"), e))?;
            paths.push(to);
        }
        self.done = true;
        let _ = fs::remove_dir_all(&self.dir);
        Ok(paths)
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        if !self.done {
            let _ = fs::remove_dir_all(&self.dir);
            if self.created_out {
                // Only if empty: never delete anything that was not ours.
                let _ = fs::remove_dir(&self.out);
            }
        }
    }
}

/// `1234567` → `1,234,567`.
pub(crate) fn count(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (k, c) in digits.chars().enumerate() {
        if k > 0 && (digits.len() - k) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

pub(crate) fn percentiles(mut v: Vec<Duration>) -> [f64; 3] {
    v.sort_unstable();
    let at = |q: f64| v[((v.len() - 1) as f64 * q).round() as usize].as_secs_f64() * 1e6;
    [at(0.5), at(0.99), at(1.0)]
}
