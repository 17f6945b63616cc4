//! What the view's keys change, on the pipeline alone (no window): the
//! selected stage, its main parameter and its forced variant. Everything is
//! generic over the registry: a stage's main parameter is the first numeric
//! option of its canonical spec text, and its variants are its operation's
//! table, so a new operation needs no edit here.

use clfilter::ops::OPERATIONS;
use clfilter::pipeline::{self, Op};

/// How much one Up or Down key press scales the main parameter.
pub const STEP: f64 = 1.25;

/// The pipeline being shown and the stage the keys act on.
#[derive(Debug, Clone)]
pub struct Controls {
    /// The stages, as checked by the spec parser.
    pub ops: Vec<Op>,
    /// The stage Up, Down and V act on (0 when there are none).
    pub selected: usize,
}

impl Controls {
    /// Controls for `ops`, with the first stage selected.
    pub fn new(ops: Vec<Op>) -> Self {
        Controls { ops, selected: 0 }
    }

    /// The selected stage, if the pipeline has any.
    pub fn stage(&self) -> Option<&Op> {
        self.ops.get(self.selected)
    }

    /// Selects the next stage, wrapping around.
    pub fn select_next(&mut self) {
        if !self.ops.is_empty() {
            self.selected = (self.selected + 1) % self.ops.len();
        }
    }

    /// The pipeline with the selected stage's main parameter multiplied by
    /// `factor` (a zero becomes `factor - 1`, so it can leave zero), checked
    /// by the spec parser: `Ok(None)` when the stage has no numeric option,
    /// an error when the new value is out of the stage's range.
    pub fn scaled(&self, factor: f64) -> clfilter::Result<Option<Vec<Op>>> {
        let Some(op) = self.stage() else {
            return Ok(None);
        };
        let text = op.to_string();
        let Some(stage) = pipeline::parse_stages(&text)?.into_iter().next() else {
            return Ok(None);
        };
        let Some(i) = stage
            .options
            .iter()
            .position(|(_, v)| v.parse::<f64>().is_ok_and(f64::is_finite))
        else {
            return Ok(None);
        };
        let mut options = stage.options.clone();
        let old: f64 = options[i].1.parse().unwrap_or_default();
        let new = if old == 0.0 {
            factor - 1.0
        } else {
            old * factor
        };
        // Three decimals keep the title and the spec readable after many presses.
        options[i].1 = format!("{}", (new * 1000.0).round() / 1000.0);
        let edited = options
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(":");
        self.replaced(&format!("{}={edited}", stage.name)).map(Some)
    }

    /// The variants the selected stage can be forced to, in cycling order:
    /// automatic (`None`), its operation's table, then the CPU path.
    pub fn variants(&self) -> Vec<Option<String>> {
        let Some(op) = self.stage() else {
            return Vec::new();
        };
        let def = op.def();
        let table = OPERATIONS
            .iter()
            .find(|o| o.stages.iter().any(|d| std::ptr::eq(*d, def)))
            .map(|o| o.spec.variants)
            .unwrap_or_default();
        std::iter::once(None)
            .chain(table.iter().map(|v| Some(v.name.to_string())))
            .chain(std::iter::once(Some("cpu".to_string())))
            .collect()
    }

    /// The pipeline with the selected stage forced to `variant` (`None`:
    /// automatic), checked by the spec parser.
    pub fn with_variant(&self, variant: Option<String>) -> clfilter::Result<Vec<Op>> {
        let Some(op) = self.stage() else {
            return Ok(self.ops.clone());
        };
        let forced = Op {
            variant,
            ..op.clone()
        };
        self.replaced(&forced.to_string())
    }

    /// The variant after the selected stage's current one, wrapping around.
    pub fn next_variant(&self, current: &Option<String>) -> Option<String> {
        let all = self.variants();
        let at = all.iter().position(|v| v == current).unwrap_or(0);
        all.get((at + 1) % all.len().max(1)).cloned().flatten()
    }

    /// The pipeline with the selected stage's spec text replaced by `text`,
    /// parsed again as a whole.
    fn replaced(&self, text: &str) -> clfilter::Result<Vec<Op>> {
        let spec = self
            .ops
            .iter()
            .enumerate()
            .map(|(i, op)| {
                if i == self.selected {
                    text.to_string()
                } else {
                    op.to_string()
                }
            })
            .collect::<Vec<_>>()
            .join(",");
        pipeline::parse(&spec)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn controls(spec: &str) -> Controls {
        Controls::new(pipeline::parse(spec).unwrap())
    }

    #[test]
    fn up_and_down_scale_the_first_numeric_option() {
        let c = controls("transpose,gaussian=sigma=4");
        assert!(c.scaled(STEP).unwrap().is_none(), "transpose has none");
        let mut c = c;
        c.select_next();
        let up = c.scaled(STEP).unwrap().unwrap();
        assert_eq!(pipeline::to_spec(&up), "transpose,gaussian=sigma=5");
        let down = c.scaled(1.0 / STEP).unwrap().unwrap();
        assert_eq!(pipeline::to_spec(&down), "transpose,gaussian=sigma=3.2");
    }

    #[test]
    fn out_of_range_values_are_refused() {
        let c = controls("gaussian=sigma=9000");
        assert!(c.scaled(STEP).is_err());
    }

    #[test]
    fn variants_cycle_through_the_table_and_back_to_automatic() {
        let c = controls("gaussian=sigma=2");
        let all = c.variants();
        assert_eq!(all.first(), Some(&None));
        assert_eq!(all.last(), Some(&Some("cpu".to_string())));
        assert!(all.len() > 2);
        let mut v = None;
        let mut seen = Vec::new();
        for _ in 0..all.len() {
            v = c.next_variant(&v);
            let ops = c.with_variant(v.clone()).unwrap();
            assert_eq!(ops[0].variant, v);
            seen.push(v.clone());
        }
        assert_eq!(v, None, "a full cycle ends on automatic: {seen:?}");
    }
}
