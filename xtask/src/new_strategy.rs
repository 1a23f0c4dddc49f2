//! `cargo xtask new-strategy <name> [--scanner]`: creates `strategies/<name>` from an example
//! crate (`examples/strategy-template`, or `examples/scanner-template` with `--scanner`) by
//! copying its files and replacing the example's names with the new ones: package, plugin
//! name (`NAME`, `bot`, `[strategy.<name>]`, API path), type, README title and wasm file. The
//! workspace lists `strategies/*` as members, so the new crate builds at once with
//! `cargo test -p <name>` and `cargo xtask plugins -p <name>`.
//!
//! `my_strategy` and `my-strategy` both give: folder and package `my-strategy`, plugin
//! `my_strategy`, type `MyStrategy`, config section `[strategy.my_strategy]`, file
//! `plugins/my_strategy.wasm`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use proc_macro2::{TokenStream, TokenTree};

use crate::Cargo;

/// Plugin names of the repository's own plugins: a new plugin must not shadow one.
const TAKEN_PLUGINS: &[&str] = &["mr_combined", "pump_momentum", "template", "scanner_template"];

/// Rust keywords (strict and reserved): cargo refuses them as package or library names.
const KEYWORDS: &[&str] = &[
    "abstract", "as", "async", "await", "become", "box", "break", "const", "continue", "crate",
    "do", "dyn", "else", "enum", "extern", "false", "final", "fn", "for", "gen", "if", "impl",
    "in", "let", "loop", "macro", "match", "mod", "move", "mut", "override", "priv", "pub", "ref",
    "return", "self", "static", "struct", "super", "trait", "true", "try", "type", "typeof",
    "unsafe", "unsized", "use", "virtual", "where", "while", "yield",
];

/// Names cargo refuses for a package (built-in crates, its own output folders) or that
/// Windows cannot use as a folder.
const CARGO_RESERVED: &[&str] = &[
    "alloc",
    "core",
    "std",
    "proc_macro",
    "test",
    "build",
    "deps",
    "examples",
    "incremental",
    "con",
    "prn",
    "aux",
    "nul",
];

/// Types of Rust's prelude: a plugin type of that name would shadow them.
const PRELUDE: &[&str] = &[
    "AsMut",
    "AsRef",
    "Box",
    "Clone",
    "Copy",
    "Debug",
    "Default",
    "DoubleEndedIterator",
    "Drop",
    "Eq",
    "Err",
    "ExactSizeIterator",
    "Extend",
    "Fn",
    "FnMut",
    "FnOnce",
    "From",
    "FromIterator",
    "Hash",
    "Into",
    "IntoIterator",
    "Iterator",
    "None",
    "Ok",
    "Option",
    "Ord",
    "PartialEq",
    "PartialOrd",
    "Result",
    "Send",
    "Sized",
    "Some",
    "String",
    "Sync",
    "ToOwned",
    "ToString",
    "TryFrom",
    "TryInto",
    "Unpin",
    "Vec",
];

const USAGE: &str = "usage: cargo xtask new-strategy <name> [--scanner]";

/// What to create: a strategy (results, which may become signals) or a scanner (alerts only).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Strategy,
    Scanner,
}

impl Kind {
    /// The example crate copied, relative to the workspace root.
    fn example(self) -> &'static str {
        match self {
            Kind::Strategy => "examples/strategy-template",
            Kind::Scanner => "examples/scanner-template",
        }
    }

    /// The example's names and what replaces each, longest first where one starts another.
    fn replacements(self, names: &Names) -> Vec<(&'static str, String)> {
        match self {
            Kind::Strategy => vec![
                ("strategy-template", names.package.clone()),
                ("strategy_template", names.plugin.clone()),
                ("Template", names.type_name.clone()),
                ("template", names.plugin.clone()),
            ],
            Kind::Scanner => vec![
                ("scanner-template", names.package.clone()),
                ("scanner_template", names.plugin.clone()),
                ("ScannerTemplate", names.type_name.clone()),
            ],
        }
    }
}

/// The names of a new plugin crate, all derived from the one the user gives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Names {
    /// `my_strategy`: the manifest's `name`, `bot` of results, `[strategy.<plugin>]`, the API
    /// path, the library name and the wasm file's stem.
    pub plugin: String,
    /// `my-strategy`: the folder under `strategies/` and the package (`cargo -p`).
    pub package: String,
    /// `MyStrategy`: the type implementing `Strategy`.
    pub type_name: String,
}

impl Names {
    /// Derives the names from `my_strategy` or `my-strategy`; refuses a name that is not a
    /// plugin name (`[a-z][a-z0-9_]{0,63}`, `-` read as `_`), one of the repository's
    /// plugins, a Rust keyword or a name cargo reserves.
    pub fn derive(input: &str) -> anyhow::Result<Names> {
        let plugin = input.replace('-', "_");
        let mut chars = plugin.chars();
        let valid = plugin.len() <= 64
            && chars.next().is_some_and(|c| c.is_ascii_lowercase())
            && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
        if !valid {
            bail!(
                "bad name {input:?}: use a lowercase letter, then at most 63 lowercase letters, \
                 digits, '_' or '-' (e.g. my_strategy)"
            );
        }
        if TAKEN_PLUGINS.contains(&plugin.as_str()) {
            bail!("the name {input:?} is taken: plugin {plugin} is part of spotbot");
        }
        if KEYWORDS.contains(&plugin.as_str()) {
            bail!("bad name {input:?}: {plugin} is a Rust keyword");
        }
        let windows_device = (plugin.starts_with("com") || plugin.starts_with("lpt"))
            && plugin.len() == 4
            && plugin.ends_with(|c: char| ('1'..='9').contains(&c));
        if CARGO_RESERVED.contains(&plugin.as_str()) || windows_device {
            bail!("bad name {input:?}: cargo reserves {plugin}");
        }
        let type_name = plugin
            .split('_')
            .filter(|part| !part.is_empty())
            .map(|part| {
                let mut chars = part.chars();
                let first = chars.next().map(|c| c.to_ascii_uppercase());
                first.into_iter().chain(chars).collect::<String>()
            })
            .collect();
        Ok(Names { package: plugin.replace('_', "-"), plugin, type_name })
    }

    /// The component's file in `plugins/`.
    pub fn wasm_file(&self) -> String {
        format!("{}.wasm", self.plugin)
    }

    /// The section of the service's config file.
    pub fn config_section(&self) -> String {
        format!("[strategy.{}]", self.plugin)
    }
}

/// Package names already in use.
#[derive(Debug, Clone, Default)]
pub struct Taken {
    /// The workspace's packages.
    pub members: Vec<String>,
    /// Every package of `Cargo.lock` (dependencies included): `-p <name>` would be ambiguous.
    pub locked: Vec<String>,
}

impl Taken {
    /// The packages of the workspace at `cargo`'s root.
    fn of(cargo: &Cargo) -> anyhow::Result<Taken> {
        let metadata = cargo.metadata()?;
        let members = metadata["packages"]
            .as_array()
            .map(|packages| {
                packages.iter().filter_map(|p| p["name"].as_str().map(String::from)).collect()
            })
            .unwrap_or_default();
        let lock = std::fs::read_to_string(cargo.root.join("Cargo.lock")).unwrap_or_default();
        let locked = lock
            .lines()
            .filter_map(|line| line.strip_prefix("name = \""))
            .filter_map(|rest| rest.strip_suffix('"'))
            .map(String::from)
            .collect();
        Ok(Taken { members, locked })
    }
}

/// `cargo xtask new-strategy <name> [--scanner]`.
pub fn run(args: &[String]) -> anyhow::Result<()> {
    let mut kind = Kind::Strategy;
    let mut input = None;
    for arg in args {
        match arg.as_str() {
            "--scanner" => kind = Kind::Scanner,
            flag if flag.starts_with('-') => bail!("unknown option {flag:?} ({USAGE})"),
            name if input.is_none() => input = Some(name.to_string()),
            extra => bail!("one name only, got also {extra:?} ({USAGE})"),
        }
    }
    let input = input.with_context(|| format!("a name is needed ({USAGE})"))?;
    let names = Names::derive(&input)?;
    let cargo = Cargo::workspace();
    let taken = Taken::of(&cargo)?;
    let lock_before = std::fs::read_to_string(cargo.root.join("Cargo.lock")).ok();
    let dir = create(&cargo.root, &cargo.root, &names, kind, &taken)?;
    let relative = dir.strip_prefix(&cargo.root).unwrap_or(&dir).display().to_string();

    // The workspace lists `strategies/*`: make sure cargo sees the new crate.
    let members = Taken::of(&cargo)?.members;
    if !members.contains(&names.package) {
        bail!(
            "{relative} was created but is no workspace member: add \"strategies/*\" to \
             [workspace] members in Cargo.toml"
        );
    }
    if let Err(err) = format(&cargo, &names.package) {
        eprintln!("note: {err:#} (the crate builds; `cargo fmt` would reformat it)");
    }
    let Names { plugin, package, type_name } = &names;
    println!("created {relative} from {}", kind.example());
    // Cargo records every workspace member in the lock file: say so rather than leave an
    // unexplained change in the tree.
    if std::fs::read_to_string(cargo.root.join("Cargo.lock")).ok() != lock_before {
        println!(
            "  Cargo.lock: cargo added the package {package} (every workspace member is listed \
             there); commit it with {relative}"
        );
    }
    println!(
        "  package {package}, plugin {plugin}, type {type_name}, config {}, file plugins/{}",
        names.config_section(),
        names.wasm_file()
    );
    println!("next:");
    println!("  edit    {relative}/src/lib.rs   ({relative}/README.md explains it)");
    println!("  test    cargo test -p {package}");
    println!(
        "  deploy  cargo xtask plugins -p {package}   (a running service loads it within a second)"
    );
    println!(
        "  scan    curl -s -XPOST localhost:8000/api/strategies/{plugin}/scan \
         -H 'content-type: application/json' -d '{{\"symbols\":[\"BTCUSDT\",\"ETHUSDT\"]}}'"
    );
    Ok(())
}

/// Formats the new crate: longer names than the example's can need other line breaks, and
/// `cargo xtask test` checks the formatting of every member.
fn format(cargo: &Cargo, package: &str) -> anyhow::Result<()> {
    let status = cargo.command(&["fmt", "--package", package]).status()?;
    if !status.success() {
        bail!("cargo fmt --package {package} failed ({status})");
    }
    Ok(())
}

/// Creates `strategies/<package>` under `dest_root` from the example crate of `kind` under
/// `source_root`; refuses an existing folder, a taken package name and a type name the
/// example's code already uses. Nothing is left behind when it fails.
pub fn create(
    dest_root: &Path,
    source_root: &Path,
    names: &Names,
    kind: Kind,
    taken: &Taken,
) -> anyhow::Result<PathBuf> {
    let parent = dest_root.join("strategies");
    let dest = parent.join(&names.package);
    if dest.exists() {
        bail!("strategies/{} already exists: choose another name", names.package);
    }
    let same = |p: &String| p.replace('-', "_") == names.plugin;
    if taken.members.iter().any(same) {
        bail!("a package named {} is already in the workspace: choose another name", names.package);
    }
    if taken.locked.iter().any(same) {
        bail!(
            "a package named {} is already in Cargo.lock (a dependency; `-p {}` would be \
             ambiguous): choose another name",
            names.package,
            names.package
        );
    }
    let example = source_root.join(kind.example());
    check_type_name(names, &example)?;
    std::fs::create_dir_all(&parent)?;
    std::fs::create_dir(&dest).with_context(|| format!("cannot create {}", dest.display()))?;
    if let Err(err) = copy_renamed(&example, &dest, &kind.replacements(names)) {
        let _ = std::fs::remove_dir_all(&dest);
        return Err(err);
    }
    Ok(dest)
}

/// Refuses a type name that the example's code (or Rust's prelude) already uses: the new type
/// would collide with it.
fn check_type_name(names: &Names, example: &Path) -> anyhow::Result<()> {
    let mut used = BTreeSet::new();
    for file in files(example)? {
        if file.extension().is_some_and(|e| e == "rs") {
            let code = std::fs::read_to_string(&file)?;
            used.extend(identifiers(&code).with_context(|| file.display().to_string())?);
        }
    }
    if used.contains(&names.type_name) || PRELUDE.contains(&names.type_name.as_str()) {
        bail!(
            "bad name {:?}: its type {} is a name the strategy code already uses: choose another \
             name",
            names.plugin,
            names.type_name
        );
    }
    Ok(())
}

/// The files under `dir`, recursively, sorted; hidden entries and `target` left out.
fn files(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .with_context(|| format!("cannot read {}", dir.display()))?
        .collect::<Result<_, _>>()?;
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.starts_with('.') || name == "target" {
            continue;
        }
        if entry.file_type()?.is_dir() {
            out.extend(files(&entry.path())?);
        } else {
            out.push(entry.path());
        }
    }
    Ok(out)
}

/// Copies every file of `from` into `to`, with the names of `table` replaced in its text.
fn copy_renamed(from: &Path, to: &Path, table: &[(&str, String)]) -> anyhow::Result<()> {
    for file in files(from)? {
        let relative = file.strip_prefix(from)?.to_string_lossy().into_owned();
        let dest = to.join(rename(&relative, table));
        if let Some(dir) = dest.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let text = std::fs::read_to_string(&file)
            .with_context(|| format!("{} is not a text file", file.display()))?;
        std::fs::write(&dest, rename(&text, table))
            .with_context(|| format!("cannot write {}", dest.display()))?;
    }
    Ok(())
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Replaces each whole occurrence (not inside a longer identifier) of a name of `table`, in
/// one pass: a replacement is never replaced again.
fn rename(text: &str, table: &[(&str, String)]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    let mut prev: Option<char> = None;
    'scan: while let Some(c) = rest.chars().next() {
        if prev.is_none_or(|p| !is_ident(p)) {
            for (from, to) in table {
                if let Some(after) = rest.strip_prefix(from)
                    && after.chars().next().is_none_or(|n| !is_ident(n))
                {
                    out.push_str(to);
                    prev = from.chars().last();
                    rest = after;
                    continue 'scan;
                }
            }
        }
        out.push(c);
        prev = Some(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

/// The identifiers of Rust code, leaving out comments, string and char literals and numbers:
/// the identifier tokens of `proc-macro2`'s lexer, in every group.
fn identifiers(code: &str) -> anyhow::Result<BTreeSet<String>> {
    fn collect(tokens: TokenStream, ids: &mut BTreeSet<String>) {
        for token in tokens {
            match token {
                TokenTree::Ident(ident) => {
                    ids.insert(ident.to_string());
                }
                TokenTree::Group(group) => collect(group.stream(), ids),
                TokenTree::Punct(_) | TokenTree::Literal(_) => {}
            }
        }
    }
    let tokens: TokenStream =
        code.parse().map_err(|e| anyhow::anyhow!("the example's code does not lex: {e}"))?;
    let mut ids = BTreeSet::new();
    collect(tokens, &mut ids);
    Ok(ids)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{plugins, workspace_root};

    /// A fresh directory under the system's temporary folder, removed when dropped.
    struct TempDir(PathBuf);

    impl TempDir {
        fn new(tag: &str) -> TempDir {
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or_default();
            let dir = std::env::temp_dir()
                .join(format!("spotbot-xtask-{tag}-{}-{nanos}", std::process::id()));
            std::fs::create_dir_all(&dir).unwrap();
            TempDir(dir)
        }
    }

    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn names(input: &str) -> Names {
        Names::derive(input).unwrap()
    }

    fn refusal(input: &str) -> String {
        let err = Names::derive(input)
            .and_then(|n| check_type_name(&n, &workspace_root().join(Kind::Strategy.example())))
            .unwrap_err();
        format!("{err:#}")
    }

    #[test]
    fn names_derive_from_either_spelling() {
        let n = names("my_strategy");
        assert_eq!(n, names("my-strategy"));
        assert_eq!(n.plugin, "my_strategy");
        assert_eq!(n.package, "my-strategy");
        assert_eq!(n.type_name, "MyStrategy");
        assert_eq!(n.config_section(), "[strategy.my_strategy]");
        assert_eq!(n.wasm_file(), "my_strategy.wasm");
        assert_eq!(names("rsi2_dip-v3").type_name, "Rsi2DipV3");
        assert_eq!(names("a").type_name, "A");
        let long = format!("a{}", "b".repeat(63));
        assert_eq!(names(&long).plugin.len(), 64);
    }

    #[test]
    fn bad_names_are_refused_in_one_line() {
        for bad in ["", "My", "1abc", "_x", "my strategy", "my.strategy", "über", "a/b"] {
            assert!(refusal(bad).starts_with("bad name"), "{bad}: {}", refusal(bad));
        }
        assert!(refusal(&format!("a{}", "b".repeat(64))).starts_with("bad name"));
        for taken in ["mr_combined", "mr-combined", "pump_momentum", "template", "scanner-template"]
        {
            assert!(refusal(taken).contains("is taken"), "{taken}: {}", refusal(taken));
        }
        assert!(refusal("fn").contains("Rust keyword"));
        for reserved in ["test", "core", "std", "deps", "com1", "nul"] {
            assert!(refusal(reserved).contains("cargo reserves"), "{reserved}");
        }
        // Types the example's code uses, or the prelude's.
        for clash in ["config", "strategy", "checklist", "scan_request", "symbol_data", "vec"] {
            assert!(refusal(clash).contains("already uses"), "{clash}: {}", refusal(clash));
        }
        for input in ["", "fn", "template", "config", "1x"] {
            assert!(!refusal(input).contains('\n'), "{input}");
        }
        // Words only in the example's comments and strings are free.
        for free in ["stop", "the", "idea", "a", "momentum"] {
            let n = names(free);
            check_type_name(&n, &workspace_root().join(Kind::Strategy.example())).unwrap();
            check_type_name(&n, &workspace_root().join(Kind::Scanner.example())).unwrap();
        }
    }

    #[test]
    fn identifiers_leave_out_comments_and_literals() {
        let code = r####"
            // Stop here
            /* Block */ struct Real; /// Doc
            let s = "Quoted \" Still"; let r = r#"Raw " Inner"#; let b = b"Bytes";
            let c = '"'; let d = '\''; fn f<'a>(x: &'a Lifetime) -> u32 { 1_000.0e3 as u32 }
        "####;
        let ids = identifiers(code).unwrap();
        for word in ["struct", "Real", "let", "s", "r", "b", "c", "d", "f", "x", "Lifetime"] {
            assert!(ids.contains(word), "{word}: {ids:?}");
        }
        for word in ["Stop", "Block", "Doc", "Quoted", "Still", "Raw", "Inner", "Bytes", "e3"] {
            assert!(!ids.contains(word), "{word}: {ids:?}");
        }
    }

    #[test]
    fn rename_replaces_whole_names_once() {
        let table = Kind::Strategy.replacements(&names("template_x"));
        let text = "strategy-template Template template strategy_template templates Templates \
                    [strategy.template] /api/strategies/template/scan MyTemplate";
        assert_eq!(
            rename(text, &table),
            "template-x TemplateX template_x template_x templates Templates \
             [strategy.template_x] /api/strategies/template_x/scan MyTemplate"
        );
    }

    #[test]
    fn an_existing_folder_or_package_is_refused_and_nothing_is_written() {
        let scratch = TempDir::new("refusals");
        let root = workspace_root();
        let n = names("my-strategy");
        let folder = scratch.0.join("strategies").join("my-strategy");
        std::fs::create_dir_all(&folder).unwrap();
        let err = create(&scratch.0, &root, &n, Kind::Strategy, &Taken::default()).unwrap_err();
        assert_eq!(err.to_string(), "strategies/my-strategy already exists: choose another name");
        assert_eq!(std::fs::read_dir(&folder).unwrap().count(), 0, "left as it was");
        std::fs::remove_dir(&folder).unwrap();

        let member = Taken { members: vec!["my_strategy".into()], locked: Vec::new() };
        let err = create(&scratch.0, &root, &n, Kind::Strategy, &member).unwrap_err();
        assert!(err.to_string().contains("already in the workspace"), "{err}");
        let locked = Taken { members: Vec::new(), locked: vec!["my-strategy".into()] };
        let err = create(&scratch.0, &root, &n, Kind::Scanner, &locked).unwrap_err();
        assert!(err.to_string().contains("already in Cargo.lock"), "{err}");
        assert!(!folder.exists());
    }

    #[test]
    fn the_real_workspace_refuses_its_own_packages() {
        let taken = Taken::of(&Cargo::workspace()).unwrap();
        for package in ["xtask", "spotbot-sdk", "serde"] {
            let n = names(package);
            let err = create(&workspace_root(), &workspace_root(), &n, Kind::Strategy, &taken)
                .unwrap_err();
            assert!(err.to_string().contains("already in"), "{package}: {err}");
        }
    }

    /// The workspace's manifest with `strategies/*` as the only members and its path
    /// dependencies (the SDK) pointing into this repository.
    fn scratch_manifest(root: &Path) -> String {
        let text = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
        let start = text.find("members = [").expect("the workspace lists members");
        let end = start + text[start..].find(']').unwrap() + 1;
        let text = format!("{}members = [\"strategies/*\"]{}", &text[..start], &text[end..]);
        text.replace("{ path = \"", &format!("{{ path = \"{}/", root.display()))
    }

    /// Generates a strategy and a scanner into a scratch workspace that uses this repository's
    /// SDK, runs their tests as generated, and deploys each one alone with `plugins -p`. The
    /// build goes to this workspace's target directory, so a warm run takes seconds.
    #[test]
    fn generated_strategy_and_scanner_pass_their_tests_and_deploy_alone() {
        let real = Cargo::workspace();
        let target_dir = plugins::target_dir_of(&real).unwrap();
        let scratch = TempDir::new("new-strategy");
        let ws = scratch.0.clone();
        std::fs::write(ws.join("Cargo.toml"), scratch_manifest(&real.root)).unwrap();
        for file in ["Cargo.lock", "rustfmt.toml"] {
            std::fs::copy(real.root.join(file), ws.join(file)).unwrap();
        }

        let strategy = names("xtask-probe-strategy");
        let scanner = names("xtask_probe_scanner");
        let none = Taken::default();
        create(&ws, &real.root, &strategy, Kind::Strategy, &none).unwrap();
        create(&ws, &real.root, &scanner, Kind::Scanner, &none).unwrap();
        let again = create(&ws, &real.root, &scanner, Kind::Scanner, &none).unwrap_err();
        assert!(again.to_string().contains("already exists"), "{again}");

        // Every name of the examples is replaced.
        let generated = files(&ws.join("strategies")).unwrap();
        // The strategy: Cargo.toml, README.md, optimize.toml (its search space), src/lib.rs.
        assert_eq!(generated.len(), 7, "{generated:?}");
        for file in &generated {
            let text = std::fs::read_to_string(file).unwrap();
            assert!(!text.to_lowercase().contains("template"), "{}", file.display());
        }
        let read = |path: &str| std::fs::read_to_string(ws.join(path)).unwrap();
        let space = read("strategies/xtask-probe-strategy/optimize.toml");
        assert!(space.contains("--plugin plugins/xtask_probe_strategy.wasm"), "{space}");
        let lib = read("strategies/xtask-probe-strategy/src/lib.rs");
        assert!(lib.contains("pub const NAME: &str = \"xtask_probe_strategy\";"));
        assert!(lib.contains("pub struct XtaskProbeStrategy;"));
        assert!(lib.contains("export_strategy!(XtaskProbeStrategy);"));
        let manifest = read("strategies/xtask-probe-strategy/Cargo.toml");
        assert!(manifest.contains("name = \"xtask-probe-strategy\""), "{manifest}");
        let readme = read("strategies/xtask-probe-strategy/README.md");
        assert!(readme.starts_with("# xtask-probe-strategy\n"), "{readme}");
        for text in ["[strategy.xtask_probe_strategy]", "plugins/xtask_probe_strategy.wasm"] {
            assert!(readme.contains(text), "{text}");
        }
        let lib = read("strategies/xtask-probe-scanner/src/lib.rs");
        assert!(lib.contains("pub struct XtaskProbeScanner;"));
        assert!(lib.contains("pub const NAME: &str = \"xtask_probe_scanner\";"));

        // Formatted as `cargo xtask test` wants, their tests pass as generated.
        let cargo = Cargo { root: ws.clone(), target_dir: Some(target_dir) };
        format(&cargo, &strategy.package).unwrap();
        format(&cargo, &scanner.package).unwrap();
        let (a, b) = (&strategy.package, &scanner.package);
        let check = cargo.command(&["fmt", "--check", "-p", a, "-p", b]).output().unwrap();
        assert!(check.status.success(), "{}", String::from_utf8_lossy(&check.stdout));
        let output = cargo.command(&["test"]).output().unwrap();
        let log = format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(output.status.success(), "{log}");
        for test in [
            "example_textbook_pullback_buys_then_cools_down ... ok",
            "state_records_the_buys_and_the_cooldown_survives_a_round_trip ... ok",
            "example_volume_spike_alerts_then_cools_down ... ok",
            "state_records_the_alerts_and_the_cooldown_survives_a_round_trip ... ok",
        ] {
            assert!(log.contains(test), "{test}: {log}");
        }

        // `plugins -p` builds and deploys only the one named, as a Wasm component.
        let deployed = || {
            let mut names: Vec<String> = std::fs::read_dir(ws.join("plugins"))
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            names.sort();
            names
        };
        let written = plugins::build(&cargo, &["xtask-probe-strategy".to_string()]).unwrap();
        assert_eq!(written, [ws.join("plugins").join(strategy.wasm_file())]);
        assert_eq!(deployed(), [strategy.wasm_file()]);
        let bytes = std::fs::read(&written[0]).unwrap();
        assert_eq!(bytes[..8], [0x00, 0x61, 0x73, 0x6d, 0x0d, 0x00, 0x01, 0x00], "a component");
        plugins::build(&cargo, &["xtask_probe_scanner".to_string()]).unwrap();
        assert_eq!(deployed(), [scanner.wasm_file(), strategy.wasm_file()]);
    }
}
