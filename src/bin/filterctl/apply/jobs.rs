//! Running `apply`'s jobs: one in this thread, several in parallel.

use super::plan::Job;
use super::{apply_job, print_lines, Context, JsonFile};
use crate::batch::{self, is_stdio};
use crate::error::CliError;
use crate::guard;

/// Runs the jobs (several in parallel), printing each one's result lines;
/// returns the reports of those that ran and the run's outcome: an error
/// when one failed or a stop signal came.
pub(super) fn run_jobs(
    ctx: &Context<'_>,
    jobs: &[Job],
    to_stderr: bool,
) -> Result<(Vec<JsonFile>, Result<(), CliError>), CliError> {
    let mut files = Vec::new();
    if let [job] = jobs {
        return match apply_job(ctx, job) {
            Ok((file, lines)) => {
                print_lines(&lines, to_stderr)?;
                files.push(file);
                Ok((files, Ok(())))
            }
            // A read of stdin that a stop signal ended fails; the signal
            // says why. Any other failure keeps its own message.
            Err(e) => match guard::stopped() {
                Some(signal) if is_stdio(&job.input) => Ok((
                    files,
                    Err(CliError::Interrupted {
                        signal,
                        done: "before the input was read whole; nothing was written".into(),
                    }),
                )),
                _ => Ok((files, Err(e))),
            },
        };
    }
    let jobs_at_once = ctx.args.jobs.map_or_else(batch::default_jobs, usize::from);
    let results = batch::run_parallel(jobs, jobs_at_once, |job| apply_job(ctx, job))?;
    let (mut failed, mut skipped) = (0, 0);
    for result in results {
        match result {
            Some(Ok((file, lines))) => {
                print_lines(&lines, to_stderr)?;
                files.push(file);
            }
            Some(Err(_)) => failed += 1,
            None => skipped += 1,
        }
    }
    let outcome = if let Some(signal) = guard::stopped() {
        Err(CliError::Interrupted {
            signal,
            done: format!(
                "after {} of {} inputs ({skipped} not started), each output whole",
                jobs.len() - skipped,
                jobs.len()
            ),
        })
    } else if failed > 0 {
        Err(CliError::Failed(format!(
            "{failed} of {} inputs failed (errors above); the other {} outputs are written",
            jobs.len(),
            jobs.len() - failed
        )))
    } else {
        Ok(())
    };
    Ok((files, outcome))
}
