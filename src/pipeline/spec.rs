//! The syntax of pipeline spec strings, in the style of ffmpeg's filtergraphs:
//!
//! ```text
//! spec   := stage ( ',' stage )*
//! stage  := name [ '=' first ( ':' option )* ]
//! first  := option | value      (a bare value sets the stage's first option)
//! option := key '=' value
//! ```
//!
//! For example `transpose,normalize=factor=2:out=u8,minmax`. Whitespace
//! around names, keys and values is ignored. Names and keys are made of
//! ASCII letters, digits, `_` and `-` (the operations and options that exist
//! are lowercase); a value is any text without `,` or `:` (the first
//! `=` of an option separates key and value, so a value may contain `=`).
//! There is no quoting yet.
//!
//! This module only checks the syntax ([`parse_stages`]). Which operations
//! and options exist is checked by [`super::compile`].
//!
//! Every error is an [`Error::Spec`] whose message names the stage (1-based)
//! and the failing token, followed by the spec with a caret line under that
//! token.

use std::ops::Range;

use crate::error::{Error, Result};

/// One stage of a spec, as written: `name=key=value:key=value`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stage {
    /// Position in the pipeline, counting from 1 (as error messages do).
    pub index: usize,
    /// The operation's name.
    pub name: String,
    /// The options in the order written, as `(key, value)`.
    pub options: Vec<(String, String)>,
    /// Byte range of the stage (without surrounding whitespace) in the spec.
    pub span: Range<usize>,
    /// Byte range of the name in the spec.
    pub name_span: Range<usize>,
    /// Byte range of each option (`key=value`) in the spec, parallel to `options`.
    pub option_spans: Vec<Range<usize>>,
}

impl Stage {
    /// The value of option `key`, if given.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.options
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// The byte range of option `key`, or the stage name's range when the
    /// option is absent (for pointing at errors).
    pub fn span_of(&self, key: &str) -> Range<usize> {
        self.options
            .iter()
            .position(|(k, _)| k == key)
            .map(|i| self.option_span(i))
            .unwrap_or_else(|| self.name_span.clone())
    }

    /// The byte range of the `i`-th option. A stage built by hand may have
    /// fewer `option_spans` than `options`; then it is the stage's range.
    pub fn option_span(&self, i: usize) -> Range<usize> {
        self.option_spans
            .get(i)
            .cloned()
            .unwrap_or_else(|| self.span.clone())
    }

    /// The prefix every error about this stage starts with: `stage 2 'normalize'`.
    pub fn label(&self) -> String {
        format!("stage {} '{}'", self.index, self.name)
    }
}

/// Builds an [`Error::Spec`]: `message`, then the spec with a caret line
/// under `span` (a zero-width span gets one caret).
///
/// Any span is accepted: one past the end of `spec` is cut to it, and ends
/// inside a multi-byte character are widened to cover the whole character.
pub fn error_at(spec: &str, span: Range<usize>, message: impl AsRef<str>) -> Error {
    if spec.trim().is_empty() {
        // Nothing to point at.
        return Error::Spec(message.as_ref().to_string());
    }
    // Columns are counted in characters; control characters are shown as
    // spaces so the caret line stays aligned.
    let shown: String = spec
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let start = floor_char_boundary(spec, span.start);
    let end = ceil_char_boundary(spec, span.end.max(start));
    let col = spec[..start].chars().count();
    let width = spec[start..end].chars().count().max(1);
    Error::Spec(format!(
        "{}\n    {shown}\n    {}{}",
        message.as_ref(),
        " ".repeat(col),
        "^".repeat(width)
    ))
}

/// The largest char boundary of `s` at or before `i` (`s.len()` at most).
fn floor_char_boundary(s: &str, i: usize) -> usize {
    let mut i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// The smallest char boundary of `s` at or after `i` (`s.len()` at most).
fn ceil_char_boundary(s: &str, i: usize) -> usize {
    let mut i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i += 1;
    }
    i
}

/// The part of `s[range]` without leading and trailing whitespace, as a range of `s`.
fn trim_range(s: &str, range: Range<usize>) -> Range<usize> {
    let part = &s[range.clone()];
    let lead = part.len() - part.trim_start().len();
    let trail = part.len() - part.trim_end().len();
    if lead == part.len() {
        // All whitespace: an empty range where the text started.
        return range.start..range.start;
    }
    range.start + lead..range.end - trail
}

/// Splits `s[range]` at every `sep`, giving the ranges of the pieces.
fn split_ranges(s: &str, range: Range<usize>, sep: char) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut start = range.start;
    for (i, c) in s[range.clone()].char_indices() {
        if c == sep {
            out.push(start..range.start + i);
            start = range.start + i + c.len_utf8();
        }
    }
    out.push(start..range.end);
    out
}

/// Whether `s` is a valid operation name or option key.
fn is_ident(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// Parses a spec string into its stages, checking only the syntax: no
/// empty stage, every option `key=value` with a non-empty key and value, no
/// key given twice in a stage.
pub fn parse_stages(spec: &str) -> Result<Vec<Stage>> {
    if spec.trim().is_empty() {
        return Err(error_at(spec, 0..spec.len(), empty_spec_message()));
    }
    split_ranges(spec, 0..spec.len(), ',')
        .into_iter()
        .enumerate()
        .map(|(i, raw)| parse_stage(spec, i + 1, raw))
        .collect()
}

/// The error for an empty spec, with an example made of the first two
/// stages the operations define.
fn empty_spec_message() -> String {
    let names: Vec<&str> = crate::ops::STAGES.iter().take(2).map(|d| d.name).collect();
    format!(
        "the spec is empty; write stages like '{}' (options as name=key=value:key=value)",
        names.join(",")
    )
}

/// Parses stage `index` (1-based), `spec[raw]` as split at the commas.
fn parse_stage(spec: &str, index: usize, raw: Range<usize>) -> Result<Stage> {
    let span = trim_range(spec, raw.clone());
    if span.is_empty() {
        let why = if index == 1 {
            "stage 1 is empty (the spec starts with ',')".to_string()
        } else if raw.end == spec.len() {
            format!("stage {index} is empty (the spec ends with ',')")
        } else {
            format!("stage {index} is empty (two ',' in a row)")
        };
        return Err(error_at(spec, span, why));
    }
    let text = &spec[span.clone()];
    let (name_raw, opts_raw) = match text.find('=') {
        Some(eq) => (
            span.start..span.start + eq,
            Some(span.start + eq + 1..span.end),
        ),
        None => (span.clone(), None),
    };
    let name_span = trim_range(spec, name_raw);
    let name = &spec[name_span.clone()];
    if name.is_empty() {
        return Err(error_at(
            spec,
            span,
            format!("stage {index}: missing operation name before '='"),
        ));
    }
    if !is_ident(name) {
        return Err(error_at(
            spec,
            name_span,
            format!(
                "stage {index} '{name}': not an operation name \
                 (names use letters, digits, _ and -; options go after '=')"
            ),
        ));
    }
    let mut stage = Stage {
        index,
        name: name.to_string(),
        options: Vec::new(),
        span,
        name_span,
        option_spans: Vec::new(),
    };
    if let Some(opts) = opts_raw {
        parse_options(spec, opts, &mut stage)?;
    }
    Ok(stage)
}

/// Parses the options after a stage's `=`, `spec[opts]`, into `stage`.
fn parse_options(spec: &str, opts: Range<usize>, stage: &mut Stage) -> Result<()> {
    if spec[opts.clone()].trim().is_empty() {
        return Err(error_at(
            spec,
            stage.span.end..stage.span.end,
            format!(
                "{}: '=' must be followed by options (key=value:key=value)",
                stage.label()
            ),
        ));
    }
    let label = stage.label();
    for raw_opt in split_ranges(spec, opts, ':') {
        let ospan = trim_range(spec, raw_opt);
        let otext = &spec[ospan.clone()];
        if otext.is_empty() {
            return Err(error_at(
                spec,
                ospan,
                format!("{label}: empty option (stray ':')"),
            ));
        }
        let Some(eq) = otext.find('=') else {
            // ffmpeg's shorthand: a bare first value belongs to the
            // stage's first option (`convert=u8`, `gaussian=2`);
            // `super::compile` resolves the empty key.
            if stage.options.is_empty() {
                stage.options.push((String::new(), otext.to_string()));
                stage.option_spans.push(ospan);
                continue;
            }
            return Err(error_at(
                spec,
                ospan,
                format!("{label}: option '{otext}' has no value (write key=value)"),
            ));
        };
        let (key, value) = (otext[..eq].trim(), otext[eq + 1..].trim());
        if let Some(why) = option_error(stage, otext, key, value) {
            return Err(error_at(spec, ospan, format!("{label}: {why}")));
        }
        stage.options.push((key.to_string(), value.to_string()));
        stage.option_spans.push(ospan);
    }
    Ok(())
}

/// What is wrong with option `otext` (`key=value`) of `stage`, if anything.
fn option_error(stage: &Stage, otext: &str, key: &str, value: &str) -> Option<String> {
    if key.is_empty() {
        Some(format!("option '{otext}' has no key (write key=value)"))
    } else if !is_ident(key) {
        Some(format!(
            "'{key}' is not an option name (keys use letters, digits, _ and -)"
        ))
    } else if value.is_empty() {
        Some(format!("option '{key}' has an empty value"))
    } else if stage.get(key).is_some() {
        Some(format!("option '{key}' is given twice"))
    } else {
        None
    }
}

pub use crate::error::edit_distance;

/// The candidate closest to `word`, if it is close enough to be a likely
/// typo: at most a third of the word's length edits away (at least 1), or a
/// candidate that starts with a word of 3 or more characters.
pub fn suggest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let lower = word.to_ascii_lowercase();
    let limit = (lower.chars().count() / 3).max(1);
    candidates
        .into_iter()
        .filter_map(|c| {
            let d = edit_distance(&lower, c);
            let prefix = lower.len() >= 3 && c.starts_with(&lower);
            (d <= limit || prefix).then_some((d, c))
        })
        .min_by_key(|&(d, _)| d)
        .map(|(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(e: Error) -> String {
        match e {
            Error::Spec(m) => m,
            other => panic!("expected a spec error, got {other:?}"),
        }
    }

    fn err(spec: &str) -> String {
        msg(parse_stages(spec).unwrap_err())
    }

    #[test]
    fn parses_names_options_and_spans() {
        let spec = "flip, scale=factor=2 : out=u8 ,blur";
        let s = parse_stages(spec).unwrap();
        assert_eq!(s.len(), 3);
        assert_eq!(s[0].name, "flip");
        assert!(s[0].options.is_empty());
        assert_eq!(s[1].index, 2);
        assert_eq!(s[1].name, "scale");
        assert_eq!(
            s[1].options,
            vec![
                ("factor".to_string(), "2".to_string()),
                ("out".to_string(), "u8".to_string())
            ]
        );
        assert_eq!(&spec[s[1].name_span.clone()], "scale");
        assert_eq!(&spec[s[1].option_spans[0].clone()], "factor=2");
        assert_eq!(&spec[s[1].option_spans[1].clone()], "out=u8");
        assert_eq!(&spec[s[1].span.clone()], "scale=factor=2 : out=u8");
        assert_eq!(s[1].get("out"), Some("u8"));
        assert_eq!(s[1].get("sub"), None);
        assert_eq!(&spec[s[1].span_of("sub")], "scale");
        assert_eq!(s[2].name, "blur");
        assert_eq!(s[2].label(), "stage 3 'blur'");
    }

    #[test]
    fn a_value_may_contain_equals() {
        let s = parse_stages("x=a=b=c").unwrap();
        assert_eq!(s[0].options, vec![("a".to_string(), "b=c".to_string())]);
    }

    #[test]
    fn empty_specs_and_stages() {
        assert!(err("").contains("the spec is empty"));
        assert_eq!(err("").lines().count(), 1);
        assert!(err("  ").contains("the spec is empty"));
        // The message's example is a spec that works.
        let m = err("");
        let example = m.split('\'').nth(1).unwrap();
        assert!(super::super::parse(example).is_ok(), "{m}");
        assert!(err(",flip").contains("stage 1 is empty"));
        assert!(err("flip,").contains("stage 2 is empty (the spec ends with ',')"));
        assert!(err("flip,,blur").contains("stage 2 is empty (two ',' in a row)"));
        assert!(err("flip, ,blur").contains("stage 2 is empty"));
    }

    #[test]
    fn bad_names() {
        assert!(err("=factor=2").contains("stage 1: missing operation name"));
        assert!(err("flip,sca/le").contains("stage 2 'sca/le': not an operation name"));
        assert!(err("trans pose").contains("not an operation name"));
    }

    #[test]
    fn bad_options() {
        assert!(err("scale=").contains("'=' must be followed by options"));
        assert!(err("scale=factor=2:").contains("empty option (stray ':')"));
        assert!(err("scale=:factor=2").contains("empty option"));
        assert!(err("scale=sub=1:factor").contains("option 'factor' has no value"));
        // A bare first value is the shorthand for the first option.
        let s = parse_stages("convert=u8").unwrap();
        assert_eq!(s[0].options, vec![(String::new(), "u8".to_string())]);
        assert!(err("scale==2").contains("option '=2' has no key"));
        assert!(err("scale=factor=").contains("option 'factor' has an empty value"));
        assert!(err("scale=fac tor=2").contains("'fac tor' is not an option name"));
        assert!(err("scale=factor=2:factor=3")
            .contains("stage 1 'scale': option 'factor' is given twice"));
    }

    #[test]
    fn errors_point_at_the_token() {
        let m = err("flip,scale=factor=2:factor=3");
        let lines: Vec<&str> = m.lines().collect();
        assert_eq!(lines.len(), 3, "{m}");
        assert_eq!(lines[1], "    flip,scale=factor=2:factor=3");
        assert_eq!(lines[2], format!("    {}^^^^^^^^", " ".repeat(20)));
        // Zero-width spans get one caret.
        let m = err("flip,");
        assert!(m.ends_with(&format!("\n    {}^", " ".repeat(5))), "{m}");
    }

    #[test]
    fn non_ascii_specs_are_errors_not_panics() {
        let m = err("gaußian");
        assert!(
            m.starts_with("stage 1 'gaußian': not an operation name"),
            "{m}"
        );
        // Columns count characters: 7 carets under the 7 characters.
        assert!(m.ends_with("\n    gaußian\n    ^^^^^^^"), "{m}");
        let m = err("é,");
        assert!(m.starts_with("stage 1 'é': not an operation name"), "{m}");
        assert!(m.ends_with("\n    é,\n    ^"), "{m}");
        let m = err(",,é");
        assert!(m.starts_with("stage 1 is empty"), "{m}");
        let m = err("flip,,é");
        assert!(
            m.ends_with(&format!("\n    flip,,é\n    {}^", " ".repeat(5))),
            "{m}"
        );
        assert!(err("é").contains("'é': not an operation name"));
        assert!(err("scale=fé=1").contains("'fé' is not an option name"));
        assert!(err("scale=sub=1:é").contains("option 'é' has no value"));
        assert!(err("scale=½=1").contains("'½' is not an option name"));
        assert!(err("tränspose=x").contains("not an operation name"));
        // Values may hold any text; the operations check them.
        let s = parse_stages("scale=factor=½:sub=é").unwrap();
        assert_eq!(s[0].get("factor"), Some("½"));
        assert_eq!(s[0].get("sub"), Some("é"));
        let spec = "scale=factor=½:sub=é";
        assert_eq!(&spec[s[0].span_of("sub")], "sub=é");
    }

    #[test]
    fn error_at_takes_any_span() {
        let spec = "aé½ß,x";
        for start in 0..=spec.len() + 2 {
            for end in 0..=spec.len() + 2 {
                let m = msg(error_at(spec, start..end, "m"));
                let carets = m.lines().nth(2).unwrap();
                assert!(carets.trim_start().chars().all(|c| c == '^'), "{m}");
            }
        }
        // A span inside 'é' (bytes 1..3) is widened to the whole character.
        let m = msg(error_at(spec, 2..2, "m"));
        assert!(m.ends_with("\n     ^"), "{m}");
        let m = msg(error_at(spec, 2..4, "m"));
        assert!(m.ends_with("\n     ^^"), "{m}");
        let m = msg(error_at(spec, 100..200, "m"));
        assert!(m.ends_with(&format!("\n    {}^", " ".repeat(6))), "{m}");
        let m = msg(error_at(spec, Range { start: 4, end: 1 }, "m"));
        assert!(m.lines().count() == 3, "{m}");
    }

    #[test]
    fn stages_with_missing_option_spans_point_at_the_stage() {
        let stage = Stage {
            index: 1,
            name: "scale".into(),
            options: vec![("sub".into(), "1".into()), ("factor".into(), "x".into())],
            span: 0..5,
            name_span: 0..3,
            option_spans: std::iter::once(4..5).collect(),
        };
        assert_eq!(stage.span_of("sub"), 4..5);
        assert_eq!(stage.span_of("factor"), 0..5);
        assert_eq!(stage.span_of("out"), 0..3);
        assert_eq!(stage.option_span(7), 0..5);
    }

    proptest::proptest! {
        /// No spec string panics the parser or the checks after it.
        #[test]
        fn no_spec_panics(spec in "[a-zé½ßü=:, \t\u{3000}\u{a0}\u{1F600}-]{0,24}") {
            let _ = super::super::parse(&spec);
        }
    }

    #[test]
    fn distances_and_suggestions() {
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("resmple", "resample"), 1);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        let names = ["sharpen", "rotate", "resample"];
        // One edit away, and case-insensitive.
        assert_eq!(suggest("resmple", names), Some("resample"));
        assert_eq!(suggest("Sharpen", names), Some("sharpen"));
        // Too far for an edit (2 > 5 / 3), but a prefix of 3 or more.
        assert_eq!(suggest("sharp", names), Some("sharpen"));
        // A short word one edit away.
        assert_eq!(suggest("rotte", names), Some("rotate"));
        assert_eq!(suggest("blur", names), None);
        assert_eq!(suggest("x", names), None);
    }
}
