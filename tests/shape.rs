//! The shape rules of issue 16 as tests, so they cannot regress: layers
//! import downward, generic layers name no operation, files and functions
//! stay small, and `unsafe` lives only in `src/backend/opencl/` and
//! `src/simd/`, each use under a `// SAFETY:` note.
//!
//! The tests read the source tree (`CARGO_MANIFEST_DIR`), not the compiled
//! crate, with a small lexer that blanks comments (and, where asked, string
//! and char literals) while keeping every line in place, so offenders are
//! reported as `file:line`. Each failing test lists every offender.
//!
//! Run them with `cargo test --test shape -- --ignored` while they are
//! ignored. When a module is renamed or added, update [`LAYERS`].

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

/// The layers from the bottom, by top-level module of `src/` (a folder
/// `src/<m>/` or a file `src/<m>.rs`). A file may import (`crate::<m>`) its
/// own layer and those below. `error` is in the bottom layer, so anything may
/// import it. Modules not listed (lib.rs re-exports such as
/// `crate::Engine`) are exempt, and so is `src/lib.rs`. `src/bin/` is the top
/// layer: its `crate::` paths name the binary's own modules, so it is not
/// scanned (it reaches the library through `clfilter::`).
const LAYERS: &[(&str, u8)] = &[
    ("image", 1),
    ("error", 1),
    ("backend", 2),
    ("simd", 2),
    ("kernels", 2),
    ("ops", 3),
    ("dispatch", 4),
    ("engine", 4),
    ("pipeline", 5),
    ("tune", 5),
    ("bench", 5),
    ("bin", 6),
];

/// Where an operation may be named: its own folder, the CLI, the SIMD
/// kernels and the crate root's re-exports.
const MAY_NAME_OPS: &[&str] = &["src/ops/", "src/bin/", "src/simd/", "src/lib.rs"];

/// Largest source file (`src/**/*.rs`, `cl/**/*.cl`), in lines.
const MAX_FILE_LINES: usize = 600;

/// Files exempt from [`MAX_FILE_LINES`], each with its reason.
const LONG_FILES_ALLOWED: &[(&str, &str)] = &[(
    "src/ops/colormap/tables.rs",
    "generated tables: the colour maps' 256-entry lookup tables",
)];

/// Largest `fn` in `src/**/*.rs` (tests included), in lines from the line
/// of `fn` to the line of its closing brace (signature and body; doc comments
/// and attributes not counted), as issue 16 counts them.
const MAX_FN_LINES: usize = 80;

/// The only places `unsafe` may appear.
const UNSAFE_ALLOWED: &[&str] = &["src/backend/opencl/", "src/simd/"];

/// How many lines above an `unsafe` its `// SAFETY:` note may start (the note
/// may also be a longer comment block that ends within this many lines).
const SAFETY_WITHIN: usize = 3;

// ---------------------------------------------------------------- the tree

struct Source {
    /// Path relative to the crate root, with `/` separators.
    path: String,
    text: String,
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn walk(dir: &Path, ext: &str, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let p = entry.path();
        if p.is_dir() {
            walk(&p, ext, out);
        } else if p.extension().is_some_and(|e| e == ext) {
            out.push(p);
        }
    }
}

/// Every file under `dir` (relative to the crate root) ending in `.ext`,
/// sorted by path.
fn sources(dir: &str, ext: &str) -> Vec<Source> {
    let root = root();
    let mut paths = Vec::new();
    walk(&root.join(dir), ext, &mut paths);
    let mut v: Vec<Source> = paths
        .into_iter()
        .map(|p| {
            let rel = p.strip_prefix(&root).unwrap_or(&p);
            let path = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join("/");
            let text = fs::read_to_string(&p).unwrap_or_else(|e| panic!("{path}: {e}"));
            Source { path, text }
        })
        .collect();
    v.sort_by(|a, b| a.path.cmp(&b.path));
    assert!(!v.is_empty(), "no .{ext} files under {dir}");
    v
}

/// The top-level module of a file under `src/`: `src/ops/x/y.rs` -> `ops`,
/// `src/engine.rs` -> `engine`.
fn module_of(path: &str) -> &str {
    let rest = path.strip_prefix("src/").unwrap_or(path);
    let first = rest.split('/').next().unwrap_or(rest);
    first.strip_suffix(".rs").unwrap_or(first)
}

fn layer_of(module: &str) -> Option<u8> {
    LAYERS.iter().find(|(m, _)| *m == module).map(|(_, l)| *l)
}

/// The operations: the names in the `registry!` invocation of
/// `src/ops/mod.rs` (folders under `src/ops/` that are not in it, such as
/// `work/`, hold generic code). Every name must have its folder.
fn operations() -> Vec<String> {
    let text = fs::read_to_string(root().join("src/ops/mod.rs")).expect("src/ops/mod.rs");
    let at = text
        .find("\nregistry! {")
        .expect("a registry! { ... } invocation");
    let body = &text[at + "\nregistry! {".len()..];
    let body = &body[..body.find('}').expect("the registry's closing brace")];
    let mut ops: Vec<String> = body
        .split(',')
        .map(|n| n.trim().to_string())
        .filter(|n| !n.is_empty())
        .collect();
    for op in &ops {
        assert!(
            root().join("src/ops").join(op).is_dir(),
            "src/ops/{op}/ is missing"
        );
    }
    ops.sort();
    assert!(!ops.is_empty(), "no operation in the registry");
    ops
}

/// The identifiers of a line of code, leaving out method calls
/// (`.reduce(`, `.sum::<`): a library's method (rayon's `reduce`) that
/// shares an operation's name does not name the operation.
fn identifiers(line: &str) -> impl Iterator<Item = &str> {
    let is_id = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in line
        .char_indices()
        .chain(std::iter::once((line.len(), ' ')))
    {
        match (start, is_id(c)) {
            (None, true) => start = Some(i),
            (Some(s), false) => {
                let method = line[..s].ends_with('.')
                    && (line[i..].starts_with('(') || line[i..].starts_with("::<"));
                if !method {
                    out.push(&line[s..i]);
                }
                start = None;
            }
            _ => {}
        }
    }
    out.into_iter()
}

/// 1-based line of byte offset `at`.
fn line_at(text: &str, at: usize) -> usize {
    text.as_bytes()[..at]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

fn report(what: &str, offenders: &[String]) {
    let mut msg = String::new();
    for o in offenders {
        let _ = writeln!(msg, "  {o}");
    }
    assert!(
        offenders.is_empty(),
        "{what}: {} offenders\n{msg}",
        offenders.len()
    );
}

// ---------------------------------------------------------------- the lexer

/// `text` with comments (doc comments included) replaced by spaces, and
/// string and char literals too unless `keep_strings`. Newlines stay, so
/// byte offsets and lines are the original's. Handles nested block
/// comments, escapes, raw strings (`r#"..."#`, `br"..."`) and tells char
/// literals from lifetimes. Works for OpenCL C as well (no raw strings or
/// lifetimes there).
fn blank(text: &str, keep_strings: bool) -> String {
    let b = text.as_bytes();
    let mut out = b.to_vec();
    let clear = |out: &mut Vec<u8>, from: usize, to: usize| {
        for c in &mut out[from..to.min(b.len())] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
    };
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let next = b.get(i + 1).copied().unwrap_or(0);
        if c == b'/' && next == b'/' {
            let end = b[i..]
                .iter()
                .position(|&x| x == b'\n')
                .map_or(b.len(), |n| i + n);
            clear(&mut out, i, end);
            i = end;
        } else if c == b'/' && next == b'*' {
            let (mut j, mut depth) = (i + 2, 1);
            while j < b.len() && depth > 0 {
                if b[j] == b'/' && b.get(j + 1) == Some(&b'*') {
                    depth += 1;
                    j += 2;
                } else if b[j] == b'*' && b.get(j + 1) == Some(&b'/') {
                    depth -= 1;
                    j += 2;
                } else {
                    j += 1;
                }
            }
            clear(&mut out, i, j);
            i = j;
        } else if (c == b'r' || (c == b'b' && next == b'r')) && (i == 0 || !ident(b[i - 1])) && {
            let k = if c == b'b' { i + 2 } else { i + 1 };
            let hashes = b[k..].iter().take_while(|&&x| x == b'#').count();
            b.get(k + hashes) == Some(&b'"')
        } {
            // Raw string: r"..." or r#"..."# (any number of #).
            let k = if c == b'b' { i + 2 } else { i + 1 };
            let hashes = b[k..].iter().take_while(|&&x| x == b'#').count();
            let body = k + hashes + 1;
            let mut close = vec![b'"'];
            close.extend(std::iter::repeat_n(b'#', hashes));
            let end = b[body..]
                .windows(close.len())
                .position(|w| w == close.as_slice())
                .map_or(b.len(), |n| body + n + close.len());
            if !keep_strings {
                clear(&mut out, body, end - close.len());
            }
            i = end;
        } else if c == b'"' {
            let mut j = i + 1;
            while j < b.len() && b[j] != b'"' {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            if !keep_strings {
                clear(&mut out, i + 1, j);
            }
            i = j + 1;
        } else if c == b'\'' {
            // A char literal is 'x' or '\...'; anything else is a lifetime.
            let end = if next == b'\\' {
                b[i + 2..]
                    .iter()
                    .position(|&x| x == b'\'')
                    .map(|n| i + 2 + n)
            } else {
                let ch = text[i + 1..].chars().next().map_or(1, char::len_utf8);
                (b.get(i + 1 + ch) == Some(&b'\'')).then_some(i + 1 + ch)
            };
            match end {
                Some(e) => {
                    if !keep_strings {
                        clear(&mut out, i + 1, e);
                    }
                    i = e + 1;
                }
                None => i += 1,
            }
        } else {
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Byte offsets of `word` as a whole identifier (not part of a longer one).
fn word_at(code: &str, word: &str) -> Vec<usize> {
    let b = code.as_bytes();
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    code.match_indices(word)
        .map(|(at, _)| at)
        .filter(|&at| {
            (at == 0 || !ident(b[at - 1])) && b.get(at + word.len()).is_none_or(|&c| !ident(c))
        })
        .collect()
}

// ---------------------------------------------------------------- layers

/// Every top-level module named by a `crate::` path in `code` (comments
/// and strings blanked), with its byte offset: `crate::ops::x`,
/// `use crate::{engine::Engine, tune}` (each item of the group), `$crate`
/// excluded.
fn crate_paths(code: &str) -> Vec<(usize, String)> {
    let b = code.as_bytes();
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let read_ident = |from: usize| -> String {
        let n = b[from..].iter().take_while(|&&c| ident(c)).count();
        code[from..from + n].to_string()
    };
    let skip_ws = |mut j: usize| {
        while j < b.len() && b[j].is_ascii_whitespace() {
            j += 1;
        }
        j
    };
    let mut found = Vec::new();
    for at in word_at(code, "crate") {
        if at > 0 && b[at - 1] == b'$' {
            continue;
        }
        let mut j = skip_ws(at + "crate".len());
        if !code[j..].starts_with("::") {
            continue;
        }
        j = skip_ws(j + 2);
        if b.get(j) != Some(&b'{') {
            let m = read_ident(j);
            if !m.is_empty() {
                found.push((j, m));
            }
            continue;
        }
        // A group: the first identifier of each item at depth 1.
        let (mut depth, mut item_start) = (0usize, true);
        while j < b.len() {
            match b[j] {
                b'{' => {
                    depth += 1;
                    item_start = depth == 1;
                }
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                b',' if depth == 1 => item_start = true,
                c if item_start && depth == 1 && ident(c) => {
                    let m = read_ident(j);
                    j += m.len();
                    if m != "self" {
                        found.push((j - m.len(), m));
                    }
                    item_start = false;
                    continue;
                }
                _ => {}
            }
            j += 1;
        }
    }
    found
}

#[test]
fn layers_import_downward() {
    let mut offenders = Vec::new();
    for s in sources("src", "rs") {
        let me = module_of(&s.path);
        if s.path == "src/lib.rs" || me == "bin" {
            continue;
        }
        let Some(mine) = layer_of(me) else {
            continue;
        };
        let code = blank(&s.text, false);
        for (at, m) in crate_paths(&code) {
            if let Some(theirs) = layer_of(&m) {
                if theirs > mine {
                    offenders.push(format!(
                        "{}:{}: {me} (layer {mine}) imports crate::{m} (layer {theirs})",
                        s.path,
                        line_at(&code, at)
                    ));
                }
            }
        }
    }
    report("imports from a higher layer", &offenders);
}

// ---------------------------------------------------------------- op names

/// The words of an identifier: its `_`-separated parts, each CamelCase part
/// split before each capital (an all-capitals part is one word), all in
/// lowercase. `OpKind` -> op, kind; `gaussian_into` -> gaussian, into.
fn words(ident: &str) -> Vec<String> {
    let mut words = Vec::new();
    for part in ident.split('_').filter(|p| !p.is_empty()) {
        if part.chars().all(|c| !c.is_ascii_lowercase()) {
            words.push(part.to_ascii_lowercase());
            continue;
        }
        let mut w = String::new();
        for c in part.chars() {
            if c.is_ascii_uppercase() && !w.is_empty() {
                words.push(std::mem::take(&mut w));
            }
            w.push(c.to_ascii_lowercase());
        }
        words.push(w);
    }
    words
}

/// Whether the identifier names `op`: some run of its consecutive words
/// spells it (`gaussian`, `GaussianParams`, `OpKind::MinMax`, `ColorMap`,
/// `time_colormap`, `GAUSSIAN_MAX`).
/// Identifiers that contain an operation's name but name no operation:
/// the standard library's sorts (`sort` is also an operation) and the
/// median of timings (`median` is also an operation).
const GENERIC_WORDS: &[&str] = &[
    "sort",
    "sort_by",
    "sort_by_key",
    "sort_unstable",
    "sort_unstable_by",
    "sort_unstable_by_key",
    "par_sort_unstable",
    "median_ms",
    "winner_median_ms",
];

fn names(ident: &str, op: &str) -> bool {
    let w = words(ident);
    (0..w.len()).any(|i| {
        let mut s = String::new();
        w[i..].iter().any(|x| {
            s.push_str(x);
            s == op
        })
    })
}

#[test]
fn generic_layers_name_no_operation() {
    let ops = operations();
    let mut offenders = Vec::new();
    let mut pairs = std::collections::BTreeSet::new();
    for s in sources("src", "rs") {
        if MAY_NAME_OPS.iter().any(|p| s.path.starts_with(p)) {
            continue;
        }
        // Comments out, string literals in: `"gaussian" =>` is wiring.
        let code = blank(&s.text, true);
        for (n, line) in code.lines().enumerate() {
            let hit: Vec<&str> = ops
                .iter()
                .filter(|op| {
                    identifiers(line).any(|id| !GENERIC_WORDS.contains(&id) && names(id, op))
                })
                .map(String::as_str)
                .collect();
            for op in &hit {
                pairs.insert((op.to_string(), s.path.clone()));
            }
            if !hit.is_empty() {
                offenders.push(format!(
                    "{}:{}: [{}] {}",
                    s.path,
                    n + 1,
                    hit.join(","),
                    line.trim()
                ));
            }
        }
    }
    println!(
        "(operation, file) pairs outside src/ops, src/bin, src/simd, src/lib.rs: {}",
        pairs.len()
    );
    report("lines naming an operation outside its folder", &offenders);
}

// ---------------------------------------------------------------- sizes

#[test]
fn files_are_small() {
    let mut offenders = Vec::new();
    for s in sources("src", "rs").into_iter().chain(sources("cl", "cl")) {
        let n = s.text.lines().count();
        if n > MAX_FILE_LINES && !LONG_FILES_ALLOWED.iter().any(|(p, _)| *p == s.path) {
            offenders.push(format!("{}: {n} lines (limit {MAX_FILE_LINES})", s.path));
        }
    }
    report("files over the limit", &offenders);
}

/// Every `fn` item with a body in `code` (comments and strings blanked):
/// (name, offset of `fn`, offset of `{`, offset of the matching `}`).
/// Function pointer types (`fn(`) and bodiless declarations are skipped.
fn functions(code: &str) -> Vec<(String, usize, usize, usize)> {
    let b = code.as_bytes();
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let mut v = Vec::new();
    for at in word_at(code, "fn") {
        let mut j = at + 2;
        while j < b.len() && b[j].is_ascii_whitespace() {
            j += 1;
        }
        let n = b[j..].iter().take_while(|&&c| ident(c)).count();
        if n == 0 {
            continue;
        }
        let name = code[j..j + n].to_string();
        // The body's `{`, outside the parameter list and brackets; `;` first
        // means a declaration.
        let (mut k, mut depth, mut open) = (j + n, 0i32, None);
        while k < b.len() {
            match b[k] {
                b'(' | b'[' => depth += 1,
                b')' | b']' => depth -= 1,
                b';' if depth == 0 => break,
                b'{' if depth == 0 => {
                    open = Some(k);
                    break;
                }
                _ => {}
            }
            k += 1;
        }
        let Some(open) = open else {
            continue;
        };
        let mut depth = 0i32;
        let close = (open..b.len()).find(|&k| {
            match b[k] {
                b'{' => depth += 1,
                b'}' => depth -= 1,
                _ => {}
            }
            depth == 0
        });
        if let Some(close) = close {
            v.push((name, at, open, close));
        }
    }
    v
}

#[test]
fn functions_are_short() {
    let mut offenders = Vec::new();
    for s in sources("src", "rs") {
        let code = blank(&s.text, false);
        for (name, at, open, close) in functions(&code) {
            debug_assert!(open < close);
            let n = line_at(&code, close) - line_at(&code, at) + 1;
            if n > MAX_FN_LINES {
                offenders.push((
                    n,
                    format!("{}:{}: fn {name}: {n} lines", s.path, line_at(&code, at)),
                ));
            }
        }
    }
    offenders.sort_by_key(|o| std::cmp::Reverse(o.0));
    let list: Vec<String> = offenders.into_iter().map(|(_, o)| o).collect();
    report(&format!("functions over {MAX_FN_LINES} lines"), &list);
}

// ---------------------------------------------------------------- unsafe

/// Whether the `unsafe` on line `line` (1-based) has its note: `SAFETY:` in
/// a comment on that line or the [`SAFETY_WITHIN`] lines above, or in a
/// `//` comment block that ends within them; for an `unsafe fn`, also a
/// `# Safety` section in the doc comment above it (attributes skipped).
fn has_safety_note(lines: &[&str], line: usize, is_fn: bool) -> bool {
    let idx = line - 1;
    let comment = |l: &str| l.trim_start().starts_with("//");
    let from = idx.saturating_sub(SAFETY_WITHIN);
    if lines[from..=idx]
        .iter()
        .any(|l| l.find("//").is_some_and(|c| l[c..].contains("SAFETY:")))
    {
        return true;
    }
    // A longer comment block ending within the window.
    for end in (from..idx).rev() {
        if comment(lines[end]) {
            let mut k = end;
            while k > 0 && comment(lines[k - 1]) {
                k -= 1;
            }
            if lines[k..=end].iter().any(|l| l.contains("SAFETY:")) {
                return true;
            }
            break;
        }
    }
    if is_fn {
        let mut k = idx;
        while k > 0 {
            let l = lines[k - 1].trim_start();
            if l.starts_with("#[") || l.starts_with("///") {
                if l.starts_with("/// # Safety") {
                    return true;
                }
                k -= 1;
            } else {
                break;
            }
        }
    }
    false
}

#[test]
fn unsafe_only_in_backend_opencl_and_simd() {
    let mut outside = Vec::new();
    let mut unnoted = Vec::new();
    for s in sources("src", "rs") {
        let code = blank(&s.text, false);
        let lines: Vec<&str> = s.text.lines().collect();
        let allowed = UNSAFE_ALLOWED.iter().any(|p| s.path.starts_with(p));
        for at in word_at(&code, "unsafe") {
            let line = line_at(&code, at);
            let text = lines[line - 1].trim();
            if !allowed {
                outside.push(format!("{}:{line}: {text}", s.path));
                continue;
            }
            let after = code[at + "unsafe".len()..].trim_start();
            let is_fn = after.starts_with("fn") || after.starts_with("extern");
            if !has_safety_note(&lines, line, is_fn) {
                unnoted.push(format!("{}:{line}: no SAFETY note: {text}", s.path));
            }
        }
    }
    println!(
        "unsafe outside {UNSAFE_ALLOWED:?}: {}; without a SAFETY note inside: {}",
        outside.len(),
        unnoted.len()
    );
    outside.append(&mut unnoted);
    report(
        "unsafe outside its places or without a SAFETY note",
        &outside,
    );
}

// ---------------------------------------------------------------- the checker itself

#[test]
fn lexer_and_parsers_work() {
    let src = "let a = \"crate::ops\"; // crate::tune\n/* crate::engine /* nested */ */ let c = '\"'; let l: &'a str = r#\"x\"#;\nuse crate::{\n  engine::Engine,\n  ops::{gaussian, Op},\n  self,\n};\nlet x = crate::pipeline::run();\n";
    let code = blank(src, false);
    assert_eq!(code.lines().count(), src.lines().count());
    let found: Vec<(usize, String)> = crate_paths(&code)
        .into_iter()
        .map(|(at, m)| (line_at(&code, at), m))
        .collect();
    let expect = [(4, "engine"), (5, "ops"), (8, "pipeline")];
    let expect: Vec<(usize, String)> = expect.iter().map(|(l, m)| (*l, m.to_string())).collect();
    assert_eq!(found, expect);
    assert!(blank(src, true).contains("\"crate::ops\""));

    assert!(names("GaussianParams", "gaussian"));
    assert!(names("MinMax", "minmax"));
    assert!(names("ColorMap", "colormap"));
    assert!(names("time_colormap", "colormap"));
    assert!(names("GAUSSIAN_MAX", "gaussian"));
    assert!(!names("gaussians", "gaussian"));
    assert!(!names("Minimum", "minmax"));

    let f = "fn a() {\n    let p: fn(u8) -> u8 = b;\n    if x { y }\n}\ntrait T { fn d(&self); }\nfn c<T: Fn()>(x: [u8; 2]) -> T where T: Copy {\n}\n";
    let fns: Vec<(String, usize)> = functions(f)
        .into_iter()
        .map(|(n, at, _, c)| (n, line_at(f, c) - line_at(f, at) + 1))
        .collect();
    assert_eq!(fns, vec![("a".to_string(), 4), ("c".to_string(), 2)]);
}

/// The files that switch between the OpenCL build and the CPU-only one:
/// the backend, the device files (`device.rs`, `device/`), and the no-value
/// stand-ins of the device chain (`ops/work.rs`).
fn may_switch_on_opencl(path: &str) -> bool {
    path.starts_with("src/backend/")
        || path.ends_with("/device.rs")
        || path.contains("/device/")
        || path == "src/ops/work.rs"
}

#[test]
fn opencl_cfg_only_in_backend_and_device_files() {
    let mut bad = Vec::new();
    for s in sources("src", "rs") {
        if may_switch_on_opencl(&s.path) {
            continue;
        }
        for (i, line) in s.text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            if code.contains("feature = \"opencl\"") {
                bad.push(format!("  {}:{}: {}", s.path, i + 1, line.trim()));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "cfg(feature = \"opencl\") outside the backend and device files: {} offenders\n{}",
        bad.len(),
        bad.join("\n")
    );
}
