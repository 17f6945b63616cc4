//! Checking parsed stages against the stages the operations define
//! ([`STAGES`]) and building the typed [`Op`]s, with the common options
//! (`variant=`, and `nonfinite=` where the operation spreads non-finite
//! values).

use std::borrow::Cow;
use std::fmt;

use super::spec::{self, parse_stages, Stage};
use super::{Op, STAGES};
use crate::error::{Error, Result};
use crate::ops::stage::{StageArgs, StageDef, NONFINITE, VARIANT};

/// The definition of stage `name`.
pub fn stage_def(name: &str) -> Option<&'static StageDef> {
    STAGES.iter().copied().find(|d| d.name == name)
}

/// A stage being checked, with the spec text for error carets.
pub(super) struct Args<'a> {
    pub(super) spec: &'a str,
    pub(super) stage: &'a Stage,
}

impl StageArgs for Args<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.stage.get(key)
    }

    fn error(&self, key: &str, message: &dyn fmt::Display) -> Error {
        spec::error_at(
            self.spec,
            self.stage.span_of(key),
            format!("{}: {message}", self.stage.label()),
        )
    }

    fn name_error(&self, message: &dyn fmt::Display) -> Error {
        spec::error_at(
            self.spec,
            self.stage.name_span.clone(),
            format!("{}: {message}", self.stage.label()),
        )
    }
}

/// Checks parsed stages against [`STAGES`] and builds the typed ops.
/// `spec` is the text the stages were parsed from (for error carets).
pub fn compile(spec: &str, stages: &[Stage]) -> Result<Vec<Op>> {
    stages.iter().map(|s| compile_stage(spec, s)).collect()
}

fn compile_stage(spec: &str, stage: &Stage) -> Result<Op> {
    let Some(def) = stage_def(&stage.name) else {
        let names = STAGES.iter().map(|d| d.name);
        let hint = match spec::suggest(&stage.name, names.clone()) {
            Some(s) => format!("did you mean '{s}'?"),
            None => format!("known: {}", names.collect::<Vec<_>>().join(", ")),
        };
        return Err(spec::error_at(
            spec,
            stage.name_span.clone(),
            format!("{}: unknown operation ({hint})", stage.label()),
        ));
    };
    let keys = def.keys();
    let stage = resolve_short_form(spec, def, &keys, stage)?;
    let stage = stage.as_ref();
    for (i, (key, _)) in stage.options.iter().enumerate() {
        if !keys.contains(&key.as_str()) {
            let mut m = format!(
                "{}: option '{key}' unknown (known: {})",
                stage.label(),
                keys.join(", ")
            );
            if let Some(s) = spec::suggest(key, keys.iter().copied()) {
                m.push_str(&format!("; did you mean '{s}'?"));
            }
            return Err(spec::error_at(spec, stage.option_span(i), m));
        }
    }
    let args = Args { spec, stage };
    let variant = match stage.get(VARIANT) {
        None => None,
        Some(v) => {
            let known = def.op.names();
            if !known.contains(&v) {
                let mut m = format!("variant={v} unknown (known: {}", known.join(", "));
                if let Some(s) = spec::suggest(v, known.iter().copied()) {
                    m.push_str(&format!("; did you mean '{s}'?"));
                }
                m.push(')');
                return Err(args.error(VARIANT, &m));
            }
            Some(v.to_string())
        }
    };
    let op = Op::from_boxed((def.build)(&args)?, variant);
    Ok(match stage.get(NONFINITE) {
        None => op,
        Some(v) => op.with_nonfinite(v.parse().map_err(|_| {
            args.error(
                NONFINITE,
                &format_args!("nonfinite={v} is not error, zero or clamp"),
            )
        })?),
    })
}

/// A first option without a key (`convert=u8`) is the stage's first
/// option's value.
fn resolve_short_form<'a>(
    spec: &str,
    def: &StageDef,
    keys: &[&str],
    stage: &'a Stage,
) -> Result<Cow<'a, Stage>> {
    let Some((_, v)) = stage.options.first().filter(|(k, _)| k.is_empty()) else {
        return Ok(Cow::Borrowed(stage));
    };
    let span = stage.option_span(0);
    if keys.contains(&v.as_str()) {
        return Err(spec::error_at(
            spec,
            span,
            format!(
                "{}: option '{v}' has no value (write key=value)",
                stage.label()
            ),
        ));
    }
    let Some(first) = def.options.first() else {
        return Err(spec::error_at(
            spec,
            span,
            format!(
                "{}: takes no value (options: {})",
                stage.label(),
                keys.join(", ")
            ),
        ));
    };
    if stage.get(first.key).is_some() {
        return Err(spec::error_at(
            spec,
            span,
            format!(
                "{}: option '{}' is given twice ('{v}' is short for {}={v})",
                stage.label(),
                first.key,
                first.key
            ),
        ));
    }
    let mut s = stage.clone();
    s.options[0].0 = first.key.to_string();
    Ok(Cow::Owned(s))
}

/// Parses and checks a spec string: [`parse_stages`] then [`compile`].
pub fn parse(spec: &str) -> Result<Vec<Op>> {
    compile(spec, &parse_stages(spec)?)
}
