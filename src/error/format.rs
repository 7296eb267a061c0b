//! What a check of an index file's bytes can find wrong with them.

/// A problem in the bytes of an index file: what [`Error::Corrupt`](crate::Error::Corrupt)
/// carries, as its source, beside the file.
///
/// The variants a program may want to tell apart carry their data (the checksums, the lengths,
/// the versions); the others describe the problem in words. Its `Display` is the message a
/// person reads after the file's name.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum FormatError {
    /// Bytes fail their CRC-32.
    Crc {
        /// Which bytes: `the body`, `blob 7`, `column block 2`, …
        what: String,
        /// The checksum stored for them.
        expected: u32,
        /// The checksum of the bytes found.
        got: u32,
    },
    /// The bytes end before what they state, or what a read of them needs.
    Truncated {
        /// The length a read needed.
        need: usize,
        /// The length found.
        have: usize,
    },
    /// The file was written in another format version: by an older or a newer build.
    Version {
        /// The version the file states.
        found: u32,
        /// The version this build reads.
        supported: u32,
    },
    /// The magic bytes of one kind of file where another was expected.
    Magic {
        /// The magic bytes found.
        found: [u8; 4],
        /// The magic bytes of the kind expected.
        expected: [u8; 4],
    },
    /// A problem within a part of the file (a blob, a record, a section), named first.
    Within {
        /// The part of the file: `record 12`, `postings blob`, …
        part: String,
        /// The problem found there.
        problem: Box<FormatError>,
    },
    /// A problem, and what it means for the operation that found it.
    Noted {
        /// The problem found.
        problem: Box<FormatError>,
        /// What follows from it: what was refused, and what to do.
        consequence: String,
    },
    /// Any other inconsistency, in words.
    Invalid(String),
}

impl std::fmt::Display for FormatError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FormatError::Crc {
                what,
                expected,
                got,
            } => write!(
                f,
                "{what} fails its checksum (it hashes to {got:08x}, not {expected:08x})"
            ),
            FormatError::Truncated { need, have } => {
                write!(f, "it ends before byte {need} (it holds {have} bytes)")
            }
            FormatError::Version { found, supported } => write!(
                f,
                "format version {found}, this build reads {supported}: written by {} build of \
                 Reliora, the index needs a rebuild",
                if found < supported {
                    "an older"
                } else {
                    "a newer"
                }
            ),
            FormatError::Magic { found, expected } => write!(
                f,
                "file kind {:?} found where {:?} was expected",
                String::from_utf8_lossy(found),
                String::from_utf8_lossy(expected)
            ),
            FormatError::Within { part, problem } => write!(f, "{part}: {problem}"),
            FormatError::Noted {
                problem,
                consequence,
            } => write!(f, "{problem} — {consequence}"),
            FormatError::Invalid(problem) => f.write_str(problem),
        }
    }
}

impl std::error::Error for FormatError {
    /// The problem within a part of the file, or the problem noted.
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            FormatError::Within { problem, .. } | FormatError::Noted { problem, .. } => {
                Some(&**problem)
            }
            _ => None,
        }
    }
}

impl FormatError {
    /// This problem, found within `part` of the file.
    pub fn within(self, part: impl Into<String>) -> FormatError {
        FormatError::Within {
            part: part.into(),
            problem: Box::new(self),
        }
    }

    /// This problem, followed by its `consequence` for the operation that found it.
    pub fn noted(self, consequence: impl Into<String>) -> FormatError {
        FormatError::Noted {
            problem: Box::new(self),
            consequence: consequence.into(),
        }
    }

    /// A checksum failure of `what` unless `got` is the `expected` checksum.
    pub fn check_crc(what: impl FnOnce() -> String, expected: u32, got: u32) -> Result<(), Self> {
        if got == expected {
            return Ok(());
        }
        Err(FormatError::Crc {
            what: what(),
            expected,
            got,
        })
    }
}

impl From<String> for FormatError {
    fn from(problem: String) -> Self {
        FormatError::Invalid(problem)
    }
}

impl From<&String> for FormatError {
    fn from(problem: &String) -> Self {
        FormatError::Invalid(problem.clone())
    }
}

impl From<&str> for FormatError {
    fn from(problem: &str) -> Self {
        FormatError::Invalid(problem.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::error::Error as _;

    /// The messages read as the ones before the type existed did, and the cause stays reachable.
    #[test]
    fn messages_name_the_problem_and_keep_its_cause() {
        let crc = FormatError::Crc {
            what: "blob 2".into(),
            expected: 0x1234_abcd,
            got: 0xbad,
        };
        assert_eq!(
            crc.to_string(),
            "blob 2 fails its checksum (it hashes to 00000bad, not 1234abcd)"
        );
        let version = |found| FormatError::Version {
            found,
            supported: 3,
        };
        assert!(version(2).to_string().contains("written by an older build"));
        assert!(version(4).to_string().contains("written by a newer build"));
        let magic = FormatError::Magic {
            found: *b"RSTO",
            expected: *b"RCOL",
        };
        assert_eq!(
            magic.to_string(),
            r#"file kind "RSTO" found where "RCOL" was expected"#
        );
        let nested = FormatError::Truncated { need: 9, have: 4 }
            .within("record 3")
            .noted("the write was refused");
        assert_eq!(
            nested.to_string(),
            "record 3: it ends before byte 9 (it holds 4 bytes) — the write was refused"
        );
        let within = nested.source().expect("the problem noted");
        let truncated = within.source().expect("the problem within the record");
        assert_eq!(
            truncated.downcast_ref::<FormatError>(),
            Some(&FormatError::Truncated { need: 9, have: 4 })
        );
        assert_eq!(FormatError::check_crc(|| "x".into(), 7, 7), Ok(()));
    }

    /// The corrupt-index error names the file, then the problem, which is its source.
    #[test]
    fn the_corrupt_index_error_carries_the_problem_as_its_source() {
        let problem = FormatError::Truncated { need: 24, have: 10 };
        let error = crate::Error::corrupt("x.store", problem.clone());
        assert_eq!(
            error.to_string(),
            "x.store: it ends before byte 24 (it holds 10 bytes)"
        );
        assert_eq!(error.code(), crate::ErrorCode::IndexDamaged);
        let source = error.source().expect("the problem");
        assert_eq!(source.downcast_ref::<FormatError>(), Some(&problem));
        let described = crate::Error::corrupt("x.store", "a description");
        let source = described.source().expect("the problem");
        assert_eq!(
            source.downcast_ref::<FormatError>(),
            Some(&FormatError::Invalid("a description".into()))
        );
    }
}
