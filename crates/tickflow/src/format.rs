//! The snapshot format's shared leaf: its version, the error every part's restore returns,
//! and the platform-independent hash of state hashes. Every part's save code uses it, and it
//! uses no part, so a timer manager saved on its own depends on nothing above it.

use std::fmt;
use std::hash::{Hash, Hasher};

/// The snapshot format this build writes and reads. Restoring a snapshot of another version
/// fails with [`RestoreError::Version`].
///
/// Version 4 (this one) saves a timer's payload bytes and whether it is durable. Version 3 saved the frame number beside the `Frames` clock (which paused frames
/// may leave behind) and whether a scheduler's pause stops it. Version 2 added the container
/// id that ties handles to their container, 20-bit generations and the timer manager's
/// catch-up cap. Snapshots of other versions are refused.
pub const FORMAT_VERSION: u32 = 4;

/// Why a snapshot could not be restored. Nothing was built or changed.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RestoreError {
    /// The snapshot was written by another format version.
    Version {
        /// The snapshot's version.
        found: u32,
        /// The version this build reads ([`FORMAT_VERSION`]).
        supported: u32,
    },
    /// The snapshot contradicts itself (edited or damaged data).
    Corrupt {
        /// What is wrong.
        reason: String,
    },
    /// The resolver had no callback for something saved: the first one it could not bind.
    Unbound {
        /// `"timer"`, `"tick function"`, `"tickable"` or `"latent action"`.
        kind: &'static str,
        /// Its name (or key, when it has no name).
        name: String,
        /// More about it: its handle, tag, owner or what was missing.
        detail: String,
    },
}

impl RestoreError {
    /// [`RestoreError::Corrupt`] with this reason.
    pub(crate) fn corrupt(reason: impl Into<String>) -> RestoreError {
        RestoreError::Corrupt {
            reason: reason.into(),
        }
    }
}

impl fmt::Display for RestoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RestoreError::Version { found, supported } => write!(
                f,
                "snapshot format version {found} cannot be read (this build reads version {supported})"
            ),
            RestoreError::Corrupt { reason } => write!(f, "corrupted snapshot: {reason}"),
            RestoreError::Unbound { kind, name, detail } => {
                write!(f, "no callback to restore {kind} `{name}` ({detail})")
            }
        }
    }
}

impl std::error::Error for RestoreError {}

/// A 64-bit hash of `value` that is the same on every platform and in every run: FNV-1a over
/// the value's [`Hash`] input, with every integer written little-endian and `usize` as `u64`.
/// [`Scheduler::state_hash`](crate::scheduler::Scheduler::state_hash) uses it; use it for your own state to compare across machines.
///
/// Compare hashes made by builds with the same Rust release, as the peers of one game are:
/// the standard library does not promise that the `Hash` input of its own types (how a `str`
/// ends, how a derived enum names its variant) stays the same from one release to the next.
/// The test of this example would catch such a change.
///
/// ```
/// // FNV-1a of the bytes 01 00 00 00 (1u32), 61 ("a") and ff (str's end marker):
/// assert_eq!(tickflow::snapshot::stable_hash(&(1u32, "a")), 0xfa0b_bfc7_3a99_6080);
/// ```
pub fn stable_hash<T: Hash + ?Sized>(value: &T) -> u64 {
    let mut h = StableHasher(0xcbf2_9ce4_8422_2325);
    value.hash(&mut h);
    h.finish()
}

struct StableHasher(u64);

impl Hasher for StableHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }

    fn write_u16(&mut self, n: u16) {
        self.write(&n.to_le_bytes());
    }

    fn write_u32(&mut self, n: u32) {
        self.write(&n.to_le_bytes());
    }

    fn write_u64(&mut self, n: u64) {
        self.write(&n.to_le_bytes());
    }

    fn write_u128(&mut self, n: u128) {
        self.write(&n.to_le_bytes());
    }

    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }

    fn write_i16(&mut self, n: i16) {
        self.write_u16(n as u16);
    }

    fn write_i32(&mut self, n: i32) {
        self.write_u32(n as u32);
    }

    fn write_i64(&mut self, n: i64) {
        self.write_u64(n as u64);
    }

    fn write_i128(&mut self, n: i128) {
        self.write_u128(n as u128);
    }

    fn write_isize(&mut self, n: isize) {
        self.write_u64(n as u64);
    }
}
