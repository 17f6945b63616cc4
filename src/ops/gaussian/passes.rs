//! What each variant runs, as data: a [`Plan`] per entry of the variant
//! table (`variants::plan`), which the device code walks, and the kernels
//! each pass launches.
//!
//! Kernel names derive from the variant's name: a kernel only one variant
//! uses is `gaussian_<variant>_<pass>` ([`Kernel::Own`]), built from the
//! variant's entry with [`VariantSpec::kernel_name`]. The kernels several
//! variants share keep `gaussian_<stage>` names, and [`Shared`] is the one
//! list of them.

use super::SPEC;
use crate::ops::VariantSpec;

/// An image axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Axis {
    /// Along rows (`sigma_x`).
    X,
    /// Along columns (`sigma_y`).
    Y,
}

/// The kernels several variants share, `gaussian_<stage>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shared {
    /// User layout to the working image (`gaussian_to_w`).
    ToW,
    /// Working image to the user layout (`gaussian_from_w`).
    FromW,
    /// One work-item per column (`gaussian_iir_cols`).
    IirCols,
    /// Column blocks from zero state (`gaussian_blk_sums`).
    BlkSums,
    /// Block sums to exact incoming states, columns or rows (`gaussian_blk_carry`).
    BlkCarry,
    /// Column blocks from exact states (`gaussian_blk_apply`).
    BlkApply,
    /// Row tiles from zero state (`gaussian_rowblk_sums`).
    RowblkSums,
    /// Row tiles from exact states (`gaussian_rowblk_apply`).
    RowblkApply,
}

impl Shared {
    /// Every shared kernel.
    pub const ALL: [Shared; 8] = [
        Shared::ToW,
        Shared::FromW,
        Shared::IirCols,
        Shared::BlkSums,
        Shared::BlkCarry,
        Shared::BlkApply,
        Shared::RowblkSums,
        Shared::RowblkApply,
    ];

    /// The stage in the kernel's name `gaussian_<stage>`.
    pub fn stage(self) -> &'static str {
        match self {
            Shared::ToW => "to_w",
            Shared::FromW => "from_w",
            Shared::IirCols => "iir_cols",
            Shared::BlkSums => "blk_sums",
            Shared::BlkCarry => "blk_carry",
            Shared::BlkApply => "blk_apply",
            Shared::RowblkSums => "rowblk_sums",
            Shared::RowblkApply => "rowblk_apply",
        }
    }
}

/// One kernel of a pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kernel {
    /// The variant's own pass: `gaussian_<variant>_<pass>`.
    Own(&'static str),
    /// A kernel several variants share.
    Shared(Shared),
}

impl Kernel {
    /// The OpenCL function name of this kernel in `spec`'s program.
    pub fn name(self, spec: &VariantSpec) -> String {
        match self {
            Kernel::Own(pass) => format!("{}_{pass}", spec.kernel_name(SPEC.name)),
            Kernel::Shared(s) => format!("{}_{}", SPEC.name, s.stage()),
        }
    }
}

/// A recursive or FIR pass along one axis of the working image.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Line {
    /// Recursive, one work-item per row (`gaussian_<variant>_rows`).
    IirRows,
    /// Recursive, one work-item per column (`gaussian_iir_cols`).
    IirCols,
    /// Recursive, gray: four adjacent columns per work-item with float4
    /// (`gaussian_<variant>_cols`); colour pixels are float4 already, so
    /// colour runs [`Line::IirCols`].
    IirCols4,
    /// Recursive, block-parallel columns, blocks in registers: sums,
    /// carry, apply.
    ColBlocks,
    /// Recursive, each row whole in local memory, scanned across one
    /// work-group (`gaussian_<variant>_rows`).
    RowLocal,
    /// Recursive, rows cut into tiles scanned in local memory and joined by
    /// the carry: sums, carry, apply.
    RowBlocks,
    /// FIR along rows, segments in local memory (`gaussian_<variant>_rows`).
    FirRows,
    /// FIR along columns, tiles in local memory (`gaussian_<variant>_cols`).
    FirCols,
}

impl Line {
    /// The kernels the pass launches, in order, for a gray (1-channel) or
    /// colour (float4) working image.
    pub fn kernels(self, gray: bool) -> &'static [Kernel] {
        use Kernel::{Own, Shared as S};
        match self {
            Line::IirRows | Line::RowLocal | Line::FirRows => &[Own("rows")],
            Line::IirCols4 if gray => &[Own("cols")],
            Line::IirCols | Line::IirCols4 => &[S(Shared::IirCols)],
            Line::FirCols => &[Own("cols")],
            Line::ColBlocks => &[S(Shared::BlkSums), S(Shared::BlkCarry), S(Shared::BlkApply)],
            Line::RowBlocks => &[
                S(Shared::RowblkSums),
                S(Shared::BlkCarry),
                S(Shared::RowblkApply),
            ],
        }
    }
}

/// One step of a plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// The pass along the axis, when that axis's sigma is non-zero.
    Along(Axis, Line),
    /// The x axis as columns of the transposed image (the transpose op's
    /// `local_x4`, the column pass, the transpose back), when `sigma_x` is
    /// non-zero.
    Transposed(Line),
}

/// A pass that filters both axes at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Both {
    /// Square tiles read twice (`iir_tiles`): sums, column carry, fix-up,
    /// row carry, apply.
    Tiles,
    /// The FIR in one kernel (`fir_tiles`): strips staged in local memory,
    /// rows then columns; it runs one sigma 0 too, as a single tap.
    FirTiles,
}

impl Both {
    /// The kernels the pass launches.
    pub fn kernels(self) -> &'static [Kernel] {
        match self {
            Both::Tiles => &[
                Kernel::Own("sums"),
                Kernel::Own("carry"),
                Kernel::Own("fix"),
                Kernel::Own("apply"),
            ],
            Both::FirTiles => &[Kernel::Own("both")],
        }
    }

    /// Whether the pass runs `(sigma_x, sigma_y)`: [`Both::Tiles`] needs
    /// both non-zero (the plan's steps run the other cases), the FIR one.
    pub fn runs(self, sigma_x: f32, sigma_y: f32) -> bool {
        match self {
            Both::Tiles => sigma_x > 0.0 && sigma_y > 0.0,
            Both::FirTiles => sigma_x > 0.0 || sigma_y > 0.0,
        }
    }
}

/// The passes a variant runs on the working image.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Plan {
    /// When both sigmas are non-zero, this pass instead of `steps`.
    pub both: Option<Both>,
    /// The steps in order; each runs only if its axis's sigma is non-zero.
    pub steps: &'static [Step],
}

impl Plan {
    /// Every kernel the plan may launch in `spec`'s program, the
    /// conversions included, for a gray or colour working image.
    pub fn kernel_names(&self, spec: &VariantSpec, gray: bool) -> Vec<String> {
        let lines = self.steps.iter().map(|s| match *s {
            Step::Along(_, l) | Step::Transposed(l) => l.kernels(gray),
        });
        [&[Kernel::Shared(Shared::ToW), Kernel::Shared(Shared::FromW)][..]]
            .into_iter()
            .chain(self.both.map(Both::kernels))
            .chain(lines)
            .flatten()
            .map(|k| k.name(spec))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::super::variants::{plan, VARIANTS};
    use super::*;

    /// The kernel functions a program's files define.
    fn defined(spec: &VariantSpec) -> String {
        spec.files
            .iter()
            .map(|f| {
                let (_, text) = SPEC.sources.iter().find(|(n, _)| n == f).unwrap();
                *text
            })
            .collect()
    }

    /// Each variant's plan launches only kernels its own files define, and
    /// every kernel in a gaussian file is one a plan launches.
    #[test]
    fn plans_name_the_kernels_of_their_files() {
        let mut used = Vec::new();
        for spec in VARIANTS {
            let plan = plan(spec).expect("every variant has a plan");
            let text = defined(spec);
            for gray in [true, false] {
                for name in plan.kernel_names(spec, gray) {
                    let decl = format!("void {name}(");
                    assert!(text.contains(&decl), "{}: no {name}", spec.name);
                    used.push(name);
                }
            }
        }
        for (file, text) in SPEC.sources {
            let lines: Vec<&str> = text.lines().collect();
            for (i, line) in lines.iter().enumerate() {
                let after_kernel = i > 0 && lines[i - 1].starts_with("__kernel ");
                let decl = match line.strip_prefix("__kernel void ") {
                    Some(d) => d,
                    None if after_kernel => match line.strip_prefix("void ") {
                        Some(d) => d,
                        None => continue,
                    },
                    None => continue,
                };
                let name = decl.split('(').next().unwrap();
                assert!(used.iter().any(|u| u == name), "{file}: {name} unused");
            }
        }
        for s in Shared::ALL {
            let name = Kernel::Shared(s).name(&VARIANTS[0]);
            assert!(used.contains(&name), "shared {name} unused");
        }
    }

    #[test]
    fn own_kernels_carry_the_variant_name() {
        let spec = super::super::SPEC.variant("iir_tiles").unwrap();
        assert_eq!(Kernel::Own("fix").name(spec), "gaussian_iir_tiles_fix");
        assert_eq!(
            Kernel::Shared(Shared::BlkCarry).name(spec),
            "gaussian_blk_carry"
        );
    }
}
