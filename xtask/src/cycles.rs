//! `cargo xtask cycles`: the import cycles of every workspace crate (issue 40). For each
//! module its child modules are the nodes; child A → child B when anything in A's subtree
//! names anything in B's subtree (a child naming its own ancestors' items is no edge); a
//! strongly connected component of two or more children is one cycle.
//!
//! The names come from cargo-modules (rust-analyzer's resolution, re-exports followed to the
//! item's real home), installed into `<target>/xtask-tools` on first use; this module only
//! lifts its item graph to sibling modules and finds the components. What it sees, and so
//! what this count sees: `use` items, the types in fields and in free functions' signatures.
//! What it does not: paths written inside function bodies, and methods (an `impl` may sit in
//! any module, and cargo-modules files its methods under their type, so they are left out;
//! the `use` items of the impl's module still count). Test modules count only with
//! `--cfg-test`.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};

use crate::{Cargo, path_str, plugins};

/// The cargo-modules release that reads the item graph. Pinned exactly: its DOT output is what
/// [`Graph::parse`] reads, and 0.28 needs a newer rustc than the workspace's 1.95.
const CARGO_MODULES: &str = "cargo-modules@0.27.0";

pub fn run(args: &[String]) -> anyhow::Result<()> {
    let mut report = false;
    let mut cfg_test = false;
    let mut only = Vec::new();
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--report" => report = true,
            "--cfg-test" => cfg_test = true,
            "-p" => only.push(args.next().context("-p needs a package name")?.clone()),
            other => bail!("cycles: unknown argument {other}"),
        }
    }
    let tool = ensure_tool()?;
    let mut total = 0;
    for target in targets(&only)? {
        let graph = Graph::parse(&target.dependencies(&tool, cfg_test)?);
        let cycles = cycles(&graph.sibling_edges());
        println!("{} ({}): {} cycles", target.package, target.name(), cycles.len());
        for (parent, members) in &cycles {
            println!("  in {parent}: {}", members.join(", "));
        }
        total += cycles.len();
    }
    println!("{total} import cycles");
    if total > 0 && !report {
        bail!("{total} import cycles (--report lists them without failing)");
    }
    Ok(())
}

/// The cargo-modules executable, installed into `<target>/xtask-tools` when missing. It
/// builds in its own target folder: rust-analyzer's crates take minutes on two cores and must
/// not hold the workspace's build lock meanwhile.
fn ensure_tool() -> anyhow::Result<PathBuf> {
    let root = plugins::target_dir()?.join("xtask-tools");
    let tool = root.join("bin").join("cargo-modules");
    let stamp = root.join("cargo-modules.version");
    if tool.is_file() && std::fs::read_to_string(&stamp).ok().as_deref() == Some(CARGO_MODULES) {
        return Ok(tool);
    }
    let build = root.join("build");
    Cargo::workspace().run(&[
        "install",
        "--locked",
        "--force",
        CARGO_MODULES,
        "--root",
        path_str(&root)?,
        "--target-dir",
        path_str(&build)?,
    ])?;
    std::fs::write(&stamp, CARGO_MODULES)
        .with_context(|| format!("cannot write {}", stamp.display()))?;
    Ok(tool)
}

/// One crate cargo-modules reads: a package's library or one of its binaries.
struct Target {
    package: String,
    /// None: the library.
    bin: Option<String>,
}

impl Target {
    fn name(&self) -> String {
        self.bin.as_ref().map_or("lib".to_string(), |bin| format!("bin {bin}"))
    }

    /// cargo-modules' item graph of the target, as DOT. Run as `cargo modules` with the tool
    /// first on the PATH, so it gets the environment every cargo this xtask starts gets.
    fn dependencies(&self, tool: &Path, cfg_test: bool) -> anyhow::Result<String> {
        let mut args = vec!["modules", "dependencies", "--package", &self.package];
        args.extend(["--no-externs", "--no-sysroot"]);
        match &self.bin {
            Some(bin) => args.extend(["--bin", bin]),
            None => args.push("--lib"),
        }
        if cfg_test {
            args.push("--cfg-test");
        }
        let mut command = Cargo::workspace().command(&args);
        let bin_dir = tool.parent().context("the tool is in a folder")?.to_path_buf();
        let path = std::env::var_os("PATH").unwrap_or_default();
        let paths = std::iter::once(bin_dir).chain(std::env::split_paths(&path));
        command.env("PATH", std::env::join_paths(paths)?);
        let output = command.output().context("cannot run cargo-modules")?;
        if !output.status.success() {
            bail!(
                "cargo-modules failed on {} ({}): {}",
                self.package,
                self.name(),
                String::from_utf8_lossy(&output.stderr)
            );
        }
        Ok(String::from_utf8_lossy(&output.stdout).into_owned())
    }
}

/// Every workspace package's library and binaries (`only`: of these packages), by name.
fn targets(only: &[String]) -> anyhow::Result<Vec<Target>> {
    let metadata = Cargo::workspace().metadata()?;
    let mut targets = Vec::new();
    for package in metadata["packages"].as_array().context("cargo metadata lists packages")? {
        let name = package["name"].as_str().context("a package has a name")?;
        if !only.is_empty() && !only.iter().any(|o| o == name) {
            continue;
        }
        for target in package["targets"].as_array().into_iter().flatten() {
            let kinds: Vec<&str> = target["kind"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|k| k.as_str())
                .collect();
            let bin = target["name"].as_str().map(str::to_string);
            if kinds.contains(&"bin") {
                targets.push(Target { package: name.to_string(), bin });
            } else if kinds.iter().any(|k| ["lib", "rlib", "cdylib"].contains(k)) {
                targets.push(Target { package: name.to_string(), bin: None });
            }
        }
    }
    if targets.is_empty() {
        bail!("no workspace package matches {only:?}");
    }
    targets.sort_by(|a, b| (&a.package, &a.bin).cmp(&(&b.package, &b.bin)));
    Ok(targets)
}

/// cargo-modules' item graph: every item with its kind, who owns whom, who uses what.
#[derive(Debug, Default)]
struct Graph {
    /// Item path → kind (`crate`, `mod`, `fn`, `struct`, ...).
    kinds: HashMap<String, String>,
    /// Item path → the item that owns it (a module owns its items, a type its methods).
    owner: HashMap<String, String>,
    uses: Vec<(String, String)>,
}

impl Graph {
    /// Reads cargo-modules' DOT: node lines `"path" [...]; // "kind" node` and edge lines
    /// `"from" -> "to" [...]; // "owns" edge` (or `"uses" edge`).
    fn parse(dot: &str) -> Self {
        let mut graph = Graph::default();
        for line in dot.lines() {
            let quoted: Vec<&str> = line.split('"').skip(1).step_by(2).collect();
            let Some(comment) = line.rsplit_once("// ").map(|(_, c)| c) else { continue };
            match (quoted.as_slice(), comment.ends_with(" node"), comment.ends_with(" edge")) {
                ([item, .., kind], true, false) => {
                    graph.kinds.insert(item.to_string(), kind.to_string());
                }
                ([from, to, .., "owns"], false, true) => {
                    graph.owner.insert(to.to_string(), from.to_string());
                }
                ([from, to, .., "uses"], false, true) => {
                    graph.uses.push((from.to_string(), to.to_string()));
                }
                _ => {}
            }
        }
        graph
    }

    /// The module an item is in (a module is in itself).
    fn module_of<'a>(&'a self, mut item: &'a str) -> Option<&'a str> {
        loop {
            match self.kinds.get(item)?.as_str() {
                "mod" | "crate" => return Some(item),
                _ => item = self.owner.get(item)?,
            }
        }
    }

    /// Whether `item` is a method or another associated item (owned by a type or trait).
    fn is_associated(&self, item: &str) -> bool {
        self.owner
            .get(item)
            .and_then(|owner| self.kinds.get(owner))
            .is_some_and(|kind| !matches!(kind.as_str(), "mod" | "crate"))
    }

    /// Parent module → its children's edges (child A → child B, by name), lifted from the
    /// item uses to the two children under the modules' lowest common ancestor.
    fn sibling_edges(&self) -> BTreeMap<String, BTreeSet<(String, String)>> {
        let mut edges: BTreeMap<String, BTreeSet<(String, String)>> = BTreeMap::new();
        for (from, to) in &self.uses {
            if self.is_associated(from) {
                continue;
            }
            let (Some(from), Some(to)) = (self.module_of(from), self.module_of(to)) else {
                continue;
            };
            let (from, to): (Vec<&str>, Vec<&str>) =
                (from.split("::").collect(), to.split("::").collect());
            let shared = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
            if shared < from.len() && shared < to.len() {
                let edge = (from[shared].to_string(), to[shared].to_string());
                edges.entry(from[..shared].join("::")).or_default().insert(edge);
            }
        }
        edges
    }
}

/// The cycles of every parent module: (parent, its children in one strongly connected
/// component of two or more, sorted).
fn cycles(edges: &BTreeMap<String, BTreeSet<(String, String)>>) -> Vec<(String, Vec<String>)> {
    let mut found = Vec::new();
    for (parent, children) in edges {
        for component in components(children) {
            found.push((parent.clone(), component));
        }
    }
    found
}

/// The strongly connected components of two or more nodes (Tarjan's algorithm).
fn components(edges: &BTreeSet<(String, String)>) -> Vec<Vec<String>> {
    struct Tarjan<'a> {
        next: BTreeMap<&'a str, Vec<&'a str>>,
        index: HashMap<&'a str, usize>,
        low: HashMap<&'a str, usize>,
        stack: Vec<&'a str>,
        found: Vec<Vec<String>>,
    }
    impl<'a> Tarjan<'a> {
        fn visit(&mut self, node: &'a str) {
            let index = self.index.len();
            self.index.insert(node, index);
            self.low.insert(node, index);
            self.stack.push(node);
            for next in self.next.get(node).cloned().unwrap_or_default() {
                if !self.index.contains_key(next) {
                    self.visit(next);
                    self.low.insert(node, self.low[node].min(self.low[next]));
                } else if self.stack.contains(&next) {
                    self.low.insert(node, self.low[node].min(self.index[next]));
                }
            }
            if self.low[node] == self.index[node] {
                let at = self.stack.iter().rposition(|n| *n == node).unwrap_or(0);
                let mut component: Vec<String> =
                    self.stack.drain(at..).map(str::to_string).collect();
                if component.len() > 1 {
                    component.sort();
                    self.found.push(component);
                }
            }
        }
    }
    let mut tarjan = Tarjan {
        next: BTreeMap::new(),
        index: HashMap::new(),
        low: HashMap::new(),
        stack: Vec::new(),
        found: Vec::new(),
    };
    for (from, to) in edges {
        tarjan.next.entry(from.as_str()).or_default().push(to.as_str());
    }
    let nodes: Vec<&str> = tarjan.next.keys().copied().collect();
    for node in nodes {
        if !tarjan.index.contains_key(node) {
            tarjan.visit(node);
        }
    }
    tarjan.found.sort();
    tarjan.found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(path: &str, kind: &str) -> String {
        format!(
            "    \"{path}\" [label=\"pub {kind}|x\", fillcolor=\"#81c169\"]; // \"{kind}\" node\n"
        )
    }

    fn edge(from: &str, to: &str, kind: &str) -> String {
        format!("    \"{from}\" -> \"{to}\" [label=\"{kind}\"]; // \"{kind}\" edge\n")
    }

    /// c::a and c::b name each other (one through a nested module, one through a free
    /// function's signature); c::a::x names its parent; a method of c::b's type names c::d,
    /// which is left out (its impl could be anywhere).
    fn sample() -> Graph {
        let mut dot = String::from("digraph {\n");
        for (path, kind) in [
            ("c", "crate"),
            ("c::a", "mod"),
            ("c::a::x", "mod"),
            ("c::a::x::f", "fn"),
            ("c::b", "mod"),
            ("c::b::T", "struct"),
            ("c::b::T::m", "fn"),
            ("c::d", "mod"),
            ("c::d::U", "struct"),
        ] {
            dot.push_str(&node(path, kind));
        }
        for (from, to) in [
            ("c", "c::a"),
            ("c::a", "c::a::x"),
            ("c::a::x", "c::a::x::f"),
            ("c", "c::b"),
            ("c::b", "c::b::T"),
            ("c::b::T", "c::b::T::m"),
            ("c", "c::d"),
            ("c::d", "c::d::U"),
        ] {
            dot.push_str(&edge(from, to, "owns"));
        }
        for (from, to) in [
            ("c::a::x::f", "c::b::T"),
            ("c::b", "c::a::x::f"),
            ("c::a::x", "c::a"),
            ("c::b::T::m", "c::d::U"),
            ("c::d", "c::b::T"),
        ] {
            dot.push_str(&edge(from, to, "uses"));
        }
        dot.push('}');
        Graph::parse(&dot)
    }

    #[test]
    fn uses_are_lifted_to_the_children_under_the_common_parent() {
        let edges = sample().sibling_edges();
        let pairs = |list: &[(&str, &str)]| {
            list.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect::<BTreeSet<_>>()
        };
        assert_eq!(edges["c"], pairs(&[("a", "b"), ("b", "a"), ("d", "b")]));
        assert_eq!(edges.len(), 1, "a child naming its parent is no edge: {edges:?}");
    }

    #[test]
    fn a_component_of_two_or_more_children_is_one_cycle() {
        let cycles = cycles(&sample().sibling_edges());
        assert_eq!(cycles, [("c".to_string(), vec!["a".to_string(), "b".to_string()])]);
    }

    #[test]
    fn a_chain_is_no_cycle_and_every_ring_is_one() {
        let edges: BTreeSet<(String, String)> =
            [("a", "b"), ("b", "c"), ("c", "a"), ("c", "d"), ("d", "e"), ("e", "d"), ("f", "a")]
                .iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect();
        let ring = |names: &[&str]| names.iter().map(|n| n.to_string()).collect::<Vec<_>>();
        assert_eq!(components(&edges), [ring(&["a", "b", "c"]), ring(&["d", "e"])]);
    }
}
