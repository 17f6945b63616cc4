//! The CLI's error type and its exit codes.

use std::error::Error as _;
use std::path::PathBuf;

/// Everything a subcommand can fail with.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// An error from the engine.
    #[error(transparent)]
    Engine(#[from] clfilter::Error),

    /// The arguments do not make sense together (exit code 2).
    #[error("{0}")]
    Usage(String),

    /// A file or folder the CLI itself reads or writes.
    #[error("{}: {source}", path.display())]
    Io {
        /// The path involved.
        path: PathBuf,
        /// What went wrong.
        #[source]
        source: std::io::Error,
    },

    /// Writing results to stdout failed (for example a closed pipe).
    #[error("writing to stdout: {0}")]
    Stdout(#[source] std::io::Error),

    /// Serializing a JSON report failed.
    #[error("writing JSON: {0}")]
    Json(#[from] serde_json::Error),

    /// A check the command makes failed (exit code 1).
    #[error("{0}")]
    Failed(String),

    /// A stop signal (SIGINT, SIGTERM, SIGHUP) ended the run early, after
    /// whole outputs only (exit code 128 + the signal's number).
    #[error("stopped by signal {signal} {done}")]
    Interrupted {
        /// The signal's number.
        signal: i32,
        /// What was finished and kept, for example `after 12 frames`.
        done: String,
    },

    /// `source`, with what the CLI was doing when it happened.
    #[error("{context}")]
    Context {
        /// For example the input file and the stage.
        context: String,
        /// The error.
        #[source]
        source: Box<CliError>,
    },
}

impl CliError {
    /// A usage error.
    pub fn usage(msg: impl Into<String>) -> Self {
        CliError::Usage(msg.into())
    }

    /// Wraps `self` with what was being done.
    pub fn context(self, context: impl Into<String>) -> Self {
        CliError::Context {
            context: context.into(),
            source: Box::new(self),
        }
    }

    /// The innermost error that is not a [`CliError::Context`].
    fn root(&self) -> &CliError {
        match self {
            CliError::Context { source, .. } => source.root(),
            other => other,
        }
    }

    /// The exit code (docs/CLI.md has the table): 2 for usage errors (bad
    /// arguments, specs, variant names, devices), 128 + N after stop signal
    /// N, 1 for everything else.
    pub fn exit_code(&self) -> u8 {
        use clfilter::Error as E;
        match self.root() {
            CliError::Usage(_) => 2,
            CliError::Interrupted { signal, .. } => u8::try_from(128 + signal).unwrap_or(1),
            CliError::Engine(
                E::Spec(_)
                | E::InvalidArgument(_)
                | E::UnknownVariant { .. }
                | E::DeviceNotFound { .. },
            ) => 2,
            _ => 1,
        }
    }

    /// Whether this is a write to a closed pipe (`filterctl ... | head`,
    /// stdout or a raw frame stream), which ends the program quietly.
    pub fn is_broken_pipe(&self) -> bool {
        if matches!(self.root(), CliError::Stdout(e) if e.kind() == std::io::ErrorKind::BrokenPipe)
        {
            return true;
        }
        let mut e: Option<&(dyn std::error::Error + 'static)> = Some(self);
        while let Some(err) = e {
            if let Some(io) = err.downcast_ref::<std::io::Error>() {
                if io.kind() == std::io::ErrorKind::BrokenPipe {
                    return true;
                }
            }
            e = err.source();
        }
        false
    }

    /// The message to print: `filterctl: error: CONTEXT: ERROR`, then one
    /// `caused by:` line per underlying error whose text the line above does
    /// not already contain.
    pub fn report(&self) -> String {
        let mut prefix = String::new();
        let mut e = self;
        while let CliError::Context { context, source } = e {
            prefix.push_str(context);
            prefix.push_str(": ");
            e = source;
        }
        let mut text = format!("filterctl: error: {prefix}{e}");
        let mut shown = e.to_string();
        let mut cause = e.source();
        // `Engine` is transparent: its source is the engine error's source.
        while let Some(c) = cause {
            let line = c.to_string();
            if !shown.contains(&line) {
                text.push_str(&format!("\n  caused by: {line}"));
            }
            shown = line;
            cause = c.source();
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes() {
        assert_eq!(CliError::usage("x").exit_code(), 2);
        assert_eq!(
            CliError::from(clfilter::Error::Spec("x".into())).exit_code(),
            2
        );
        assert_eq!(
            CliError::from(clfilter::Error::InvalidInput("x".into()))
                .context("a.png")
                .exit_code(),
            1
        );
        assert_eq!(
            CliError::from(clfilter::Error::DeviceNotFound {
                selector: "x".into(),
                available: "y".into()
            })
            .context("a")
            .context("b")
            .exit_code(),
            2
        );
        assert_eq!(CliError::Failed("x".into()).exit_code(), 1);
    }

    #[test]
    fn report_joins_context_and_skips_repeated_causes() {
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "no such file");
        let e = CliError::from(clfilter::Error::Io {
            path: "a.png".into(),
            source: io,
        })
        .context("loading");
        assert_eq!(e.report(), "filterctl: error: loading: a.png: no such file");
        let e = CliError::Stdout(std::io::Error::other("boom"));
        assert_eq!(e.report(), "filterctl: error: writing to stdout: boom");
    }
}
