//! module_cycles: a test that no two modules of `rust/` import each other, directly or through
//! others, so that layers stay layers (a coordinator and the handlers that extend it, the
//! runtime and the coordinators over it).
//!
//! It reads every `.rs` file under `rust/` and takes, for each module (a file, or an inline
//! `mod x { .. }`), the paths it names: its `use` declarations (re-exports included) and the
//! qualified paths in its code (`crate::..`, `super::..`, `self::..`, a child module's name and
//! `::`); comments and literals are skipped. Each path resolves to the module that defines what
//! it names, following re-exports (`pub use x::Item`, `pub use x::*`) to their source, so that an
//! import through a parent's facade counts as an import of the module behind it. The test fails
//! on every knot of that graph (modules that import each other, directly or through others)
//! and names the imports inside it, but for the knots [`KNOWN`] from before the test, outside
//! the coordinators, which may only be untangled.
//!
//! A module and its own ancestors are not an edge: a parent declares its children and may use
//! or re-export what they define, and a child may use what its parent defines (`super::Item`);
//! that is the module tree, not two modules leaning on each other. Only `rust/` is read, and
//! only source text: a path a macro builds is not seen.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::Path;

/// Module is a module's path from the crate root (`["group", "coordinator"]`; the root is `[]`).
type Module = Vec<String>;

/// Edges are the graph: for each module, the modules it names, each with the path it first
/// names it by, for the report.
type Edges = BTreeMap<Module, BTreeMap<Module, String>>;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Tok {
    Ident(String),
    Path,
    Open,
    Close,
    Semi,
    Comma,
    Star,
    Bang,
    Other,
}

/// Use is one leaf of a `use` tree: the path, and the name it binds (None for a glob).
#[derive(Debug, Clone)]
struct Use {
    path: Vec<String>,
    binds: Option<String>,
}

/// Scope is what one module says: its imports, the other paths in its code, the items it
/// defines.
#[derive(Debug, Default)]
struct Scope {
    uses: Vec<Use>,
    paths: Vec<Vec<String>>,
    defines: BTreeSet<String>,
}

/// strip blanks out comments, string literals and char literals, keeping everything else.
fn strip(src: &str) -> String {
    let c: Vec<char> = src.chars().collect();
    let mut out = String::with_capacity(src.len());
    let ident = |ch: char| ch.is_alphanumeric() || ch == '_';
    let mut i = 0;
    while i < c.len() {
        let next = c.get(i + 1).copied();
        if c[i] == '/' && next == Some('/') {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
        } else if c[i] == '/' && next == Some('*') {
            let mut depth = 0;
            while i < c.len() {
                if c[i] == '/' && c.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if c[i] == '*' && c.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            out.push(' ');
        } else if c[i] == 'r'
            && (i == 0 || !ident(c[i - 1]) || (c[i - 1] == 'b' && (i < 2 || !ident(c[i - 2]))))
            && c[i + 1..].iter().find(|ch| **ch != '#') == Some(&'"')
        {
            // A raw string: r"..", r#".."#, br"..".
            let hashes = c[i + 1..].iter().take_while(|ch| **ch == '#').count();
            i += 2 + hashes;
            while i < c.len() {
                if c[i] == '"' && c[i + 1..].iter().take(hashes).all(|ch| *ch == '#') {
                    i += 1 + hashes;
                    break;
                }
                i += 1;
            }
            out.push(' ');
        } else if c[i] == '"' {
            i += 1;
            while i < c.len() && c[i] != '"' {
                i += if c[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            out.push(' ');
        } else if c[i] == '\'' && (next == Some('\\') || c.get(i + 2) == Some(&'\'')) {
            // A char literal ('x', '\n', '\''); a lifetime ('a) has no closing quote.
            i += 1;
            while i < c.len() && c[i] != '\'' {
                i += if c[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            out.push(' ');
        } else {
            out.push(c[i]);
            i += 1;
        }
    }
    out
}

fn tokens(code: &str) -> Vec<Tok> {
    let c: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < c.len() {
        let ch = c[i];
        if ch.is_alphabetic() || ch == '_' {
            let start = i;
            while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                i += 1;
            }
            out.push(Tok::Ident(c[start..i].iter().collect()));
            continue;
        }
        if ch.is_ascii_digit() {
            while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                i += 1;
            }
            out.push(Tok::Other);
            continue;
        }
        i += 1;
        if ch.is_whitespace() {
            continue;
        }
        out.push(match ch {
            ':' if c.get(i) == Some(&':') => {
                i += 1;
                Tok::Path
            }
            '{' => Tok::Open,
            '}' => Tok::Close,
            ';' => Tok::Semi,
            ',' => Tok::Comma,
            '*' => Tok::Star,
            '!' => Tok::Bang,
            _ => Tok::Other,
        });
    }
    out
}

fn ident(t: Option<&Tok>) -> Option<&str> {
    match t {
        Some(Tok::Ident(s)) => Some(s),
        _ => None,
    }
}

/// use_tree reads the use tree at `i` (after `use`) under `prefix`, adding its leaves to
/// `out`; returns the index after it.
fn use_tree(toks: &[Tok], mut i: usize, prefix: &[String], out: &mut Vec<Use>) -> usize {
    let mut path = prefix.to_vec();
    loop {
        match toks.get(i) {
            Some(Tok::Ident(s)) => {
                // `{self, ..}` names the prefix itself.
                let is_self = s == "self" && !path.is_empty();
                if !is_self {
                    path.push(s.clone());
                }
                i += 1;
                if toks.get(i) == Some(&Tok::Path) {
                    i += 1;
                    continue;
                }
                let mut binds = path.last().cloned();
                if ident(toks.get(i)) == Some("as") {
                    binds = ident(toks.get(i + 1)).map(String::from);
                    i += 2;
                }
                out.push(Use { path, binds });
                return i;
            }
            Some(Tok::Star) => {
                out.push(Use { path, binds: None });
                return i + 1;
            }
            Some(Tok::Open) => {
                i += 1;
                while i < toks.len() && toks[i] != Tok::Close {
                    if toks[i] == Tok::Comma {
                        i += 1;
                        continue;
                    }
                    i = use_tree(toks, i, &path, out);
                }
                return i + 1;
            }
            // `use ::std::..`: another crate.
            _ => return i + 1,
        }
    }
}

/// scan reads one file, the module `file`: what it and each inline module in it say.
fn scan(file: &[String], src: &str) -> BTreeMap<Module, Scope> {
    const ITEMS: [&str; 9] = [
        "struct", "enum", "fn", "type", "const", "static", "trait", "union", "mod",
    ];
    let toks = tokens(&strip(src));
    let mut scopes: BTreeMap<Module, Scope> = BTreeMap::new();
    scopes.insert(file.to_vec(), Scope::default());
    // inline is the stack of inline modules: (path, brace depth of its body).
    let mut inline: Vec<(Module, usize)> = Vec::new();
    let mut depth = 0usize;
    let mut i = 0;
    while i < toks.len() {
        let at = inline.last().map_or(file, |(m, _)| m.as_slice()).to_vec();
        let top = depth == inline.last().map_or(0, |(_, d)| *d);
        let prev = i.checked_sub(1).map(|p| &toks[p]);
        match &toks[i] {
            Tok::Open => depth += 1,
            Tok::Close => {
                depth = depth.saturating_sub(1);
                if inline.last().is_some_and(|(_, d)| *d > depth) {
                    inline.pop();
                }
            }
            Tok::Ident(kw) if kw == "mod" && toks.get(i + 2) == Some(&Tok::Open) => {
                if let Some(name) = ident(toks.get(i + 1)) {
                    let mut m = at.clone();
                    m.push(name.to_string());
                    scopes
                        .entry(at)
                        .or_default()
                        .defines
                        .insert(name.to_string());
                    scopes.entry(m.clone()).or_default();
                    depth += 1;
                    inline.push((m, depth));
                    i += 3;
                    continue;
                }
            }
            Tok::Ident(kw) if kw == "use" && prev != Some(&Tok::Path) => {
                let mut uses = Vec::new();
                i = use_tree(&toks, i + 1, &[], &mut uses);
                scopes.entry(at).or_default().uses.extend(uses);
                continue;
            }
            Tok::Ident(kw) if top && ITEMS.contains(&kw.as_str()) => {
                if let Some(name) = ident(toks.get(i + 1)) {
                    scopes
                        .entry(at)
                        .or_default()
                        .defines
                        .insert(name.to_string());
                }
            }
            Tok::Ident(kw) if top && kw == "macro_rules" && toks.get(i + 1) == Some(&Tok::Bang) => {
                if let Some(name) = ident(toks.get(i + 2)) {
                    scopes
                        .entry(at)
                        .or_default()
                        .defines
                        .insert(name.to_string());
                }
            }
            Tok::Ident(first)
                if toks.get(i + 1) == Some(&Tok::Path)
                    && prev != Some(&Tok::Path)
                    // `pub(in crate::x)` is a visibility, not a use.
                    && ident(prev) != Some("in") =>
            {
                let mut path = vec![first.clone()];
                let mut j = i + 1;
                while toks.get(j) == Some(&Tok::Path) {
                    match ident(toks.get(j + 1)) {
                        Some(s) => path.push(s.to_string()),
                        None => break,
                    }
                    j += 2;
                }
                scopes.entry(at).or_default().paths.push(path);
                i = j;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    scopes
}

/// Crate is every module's scope, to resolve paths against.
struct Crate {
    scopes: BTreeMap<Module, Scope>,
}

impl Crate {
    fn is_module(&self, m: &[String]) -> bool {
        m.is_empty() || self.scopes.contains_key(m)
    }

    /// base is the module a path's first segments name, and the rest of the path; None for
    /// another crate, or an item in scope that is not a module.
    fn base<'p>(&self, at: &[String], path: &'p [String]) -> Option<(Module, &'p [String])> {
        let (first, mut rest) = path.split_first()?;
        let mut m: Module = match first.as_str() {
            "crate" => Vec::new(),
            "self" => at.to_vec(),
            "super" => at[..at.len().checked_sub(1)?].to_vec(),
            _ => {
                let mut child = at.to_vec();
                child.push(first.clone());
                if !self.is_module(&child) {
                    return None;
                }
                child
            }
        };
        while rest.first().is_some_and(|s| s == "super") {
            m.pop()?;
            rest = &rest[1..];
        }
        Some((m, rest))
    }

    /// resolve is the module that defines what `path`, named in module `at`, names.
    fn resolve(&self, at: &[String], path: &[String], hops: usize) -> Option<Module> {
        let (mut m, rest) = self.base(at, path)?;
        for s in rest {
            let mut child = m.clone();
            child.push(s.clone());
            if self.is_module(&child) {
                m = child;
                continue;
            }
            return Some(self.source(m.clone(), s, hops).unwrap_or(m));
        }
        Some(m)
    }

    /// source follows item `name` of module `m` to the module it is defined in when `m`
    /// imports it (by name, or through a glob); None when `m` defines it or cannot say.
    fn source(&self, m: Module, name: &str, hops: usize) -> Option<Module> {
        if hops > 8 {
            return None;
        }
        let scope = self.scopes.get(&m)?;
        if scope.defines.contains(name) {
            return None;
        }
        if let Some(u) = scope.uses.iter().find(|u| u.binds.as_deref() == Some(name)) {
            return self.resolve(&m, &u.path, hops + 1);
        }
        scope
            .uses
            .iter()
            .filter(|u| u.binds.is_none())
            .filter_map(|u| self.resolve(&m, &u.path, hops + 1))
            .find_map(|g| {
                let inner = self.scopes.get(&g)?;
                let has = inner.defines.contains(name)
                    || inner.uses.iter().any(|u| u.binds.as_deref() == Some(name));
                has.then(|| self.source(g.clone(), name, hops + 1).unwrap_or(g))
            })
    }

    /// edges builds the graph: module -> modules it names, but for its own ancestors and
    /// descendants.
    fn edges(&self) -> Edges {
        let mut g = Edges::new();
        for (m, scope) in &self.scopes {
            let out = g.entry(m.clone()).or_default();
            let named = scope.uses.iter().map(|u| &u.path).chain(scope.paths.iter());
            for path in named {
                let Some(to) = self.resolve(m, path, 0) else {
                    continue;
                };
                if to.starts_with(m) || m.starts_with(&to) {
                    continue;
                }
                out.entry(to).or_insert_with(|| path.join("::"));
            }
        }
        g
    }
}

/// module_of is the module a file under `rust/` defines: `lib.rs` the root, `a/mod.rs` and
/// `a.rs` `a`, `a/b.rs` `a::b`.
fn module_of(relative: &Path) -> Module {
    let mut m: Module = relative
        .iter()
        .map(|s| s.to_string_lossy().into_owned())
        .collect();
    let last = m.pop().unwrap_or_default();
    let stem = last.trim_end_matches(".rs");
    if !(m.is_empty() && stem == "lib") && stem != "mod" {
        m.push(stem.to_string());
    }
    m
}

/// graph builds the graph of `files` (module, source).
fn graph(files: &[(Module, String)]) -> Edges {
    let mut scopes = BTreeMap::new();
    for (file, src) in files {
        scopes.extend(scan(file, src));
    }
    Crate { scopes }.edges()
}

/// knots are the strongly connected components of more than one module (Tarjan's algorithm):
/// the sets of modules that import each other, directly or through others, in order.
fn knots(g: &Edges) -> Vec<BTreeSet<Module>> {
    struct T<'a> {
        g: &'a Edges,
        index: BTreeMap<&'a Module, usize>,
        low: BTreeMap<&'a Module, usize>,
        stack: Vec<&'a Module>,
        on: BTreeSet<&'a Module>,
        sccs: Vec<BTreeSet<&'a Module>>,
    }
    impl<'a> T<'a> {
        fn visit(&mut self, v: &'a Module) {
            let n = self.index.len();
            self.index.insert(v, n);
            self.low.insert(v, n);
            self.stack.push(v);
            self.on.insert(v);
            let g = self.g;
            for w in g.get(v).into_iter().flat_map(|e| e.keys()) {
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let low = self.low[v].min(self.low[w]);
                    self.low.insert(v, low);
                } else if self.on.contains(w) {
                    let low = self.low[v].min(self.index[w]);
                    self.low.insert(v, low);
                }
            }
            if self.low[v] == self.index[v] {
                let mut scc = BTreeSet::new();
                while let Some(w) = self.stack.pop() {
                    self.on.remove(w);
                    scc.insert(w);
                    if w == v {
                        break;
                    }
                }
                if scc.len() > 1 {
                    self.sccs.push(scc);
                }
            }
        }
    }
    let mut t = T {
        g,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        sccs: Vec::new(),
    };
    for v in g.keys() {
        if !t.index.contains_key(v) {
            t.visit(v);
        }
    }
    let mut found: Vec<BTreeSet<Module>> = t
        .sccs
        .iter()
        .map(|scc| scc.iter().map(|m| (*m).clone()).collect())
        .collect();
    found.sort();
    found
}

/// cycle is one cycle through `knot`: the shortest way from its least module back to itself.
fn cycle(g: &Edges, knot: &BTreeSet<Module>) -> Vec<Module> {
    let start = knot.iter().next().expect("a knot has modules");
    let mut prev: BTreeMap<&Module, &Module> = BTreeMap::new();
    let mut queue = VecDeque::from([start]);
    'search: while let Some(v) = queue.pop_front() {
        for w in g[v].keys().filter(|w| knot.contains(*w)) {
            if w == start {
                prev.insert(start, v);
                break 'search;
            }
            if !prev.contains_key(w) {
                prev.insert(w, v);
                queue.push_back(w);
            }
        }
    }
    let mut cycle = vec![start.clone()];
    let mut v = prev[start];
    while v != start {
        cycle.push(v.clone());
        v = prev[v];
    }
    cycle.push(start.clone());
    cycle.reverse();
    cycle
}

fn name(m: &Module) -> String {
    if m.is_empty() {
        "crate".into()
    } else {
        m.join("::")
    }
}

/// report describes each knot: its modules, one cycle through it, and every import inside it.
fn report(g: &Edges, knots: &[&BTreeSet<Module>]) -> String {
    let mut s = String::new();
    for knot in knots {
        let names: Vec<String> = knot.iter().map(name).collect();
        s.push_str(&format!("knot of {}: {}\n", knot.len(), names.join(", ")));
        let c = cycle(g, knot);
        let path: Vec<String> = c.iter().map(name).collect();
        s.push_str(&format!("  a cycle: {}\n", path.join(" -> ")));
        for from in *knot {
            for (to, by) in g[from].iter().filter(|(to, _)| knot.contains(*to)) {
                s.push_str(&format!("  {} names {} (`{by}`)\n", name(from), name(to)));
            }
        }
    }
    s
}

fn read_tree(root: &Path, dir: &Path, out: &mut Vec<(Module, String)>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("a directory entry").path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            read_tree(root, &p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            let src = std::fs::read_to_string(&p).expect("a source file");
            out.push((module_of(p.strip_prefix(root).expect("under rust/")), src));
        }
    }
}

/// KNOWN are the knots that were there before this test, in modules other than the
/// coordinators' (`coordinator`, `group`), each as its set of modules. The test holds every
/// other module to the rule now, and these to what they are: a knot that changes (untangled,
/// or grown) fails it until this list says so. A failing run's report names the imports inside
/// each knot: those to undo.
const KNOWN: &[&[&str]] = &[
    // BatchFields and TimestampType live in batch.rs, which the header, legacy and view codecs
    // read, and which calls them.
    &[
        "protocol::records::batch",
        "protocol::records::header",
        "protocol::records::legacy",
        "protocol::records::view",
    ],
    // views.rs converts values with convert.rs, which accepts views when converting back.
    &["py::protocol::convert", "py::protocol::views"],
];

#[test]
fn no_two_modules_import_each_other() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("rust");
    let mut files = Vec::new();
    read_tree(&root, &root, &mut files);
    assert!(files.len() > 100, "read {} files under rust/", files.len());
    let g = graph(&files);
    let found = knots(&g);
    let known: Vec<BTreeSet<Module>> = KNOWN
        .iter()
        .map(|k| {
            k.iter()
                .map(|m| m.split("::").map(String::from).collect())
                .collect()
        })
        .collect();
    let new: Vec<&BTreeSet<Module>> = found.iter().filter(|k| !known.contains(k)).collect();
    let gone: Vec<String> = known
        .iter()
        .filter(|k| !found.contains(k))
        .map(|k| k.iter().map(name).collect::<Vec<_>>().join(", "))
        .collect();
    assert!(
        new.is_empty(),
        "modules of rust/ that import each other, directly or through others:\n{}",
        report(&g, &new)
    );
    assert!(
        gone.is_empty(),
        "knots of KNOWN that are no longer there as listed (untangled: remove them; changed: \
         list them as they are now): {gone:?}"
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(s: &str) -> Module {
        s.split("::")
            .filter(|s| !s.is_empty())
            .map(String::from)
            .collect()
    }

    fn of(files: &[(&str, &str)]) -> Edges {
        let files: Vec<(Module, String)> =
            files.iter().map(|(p, s)| (m(p), s.to_string())).collect();
        graph(&files)
    }

    fn targets(g: &Edges, from: &str) -> Vec<String> {
        g[&m(from)].keys().map(name).collect()
    }

    /// cycle_names is one cycle through each knot.
    fn cycle_names(g: &Edges) -> Vec<Vec<String>> {
        knots(g)
            .iter()
            .map(|k| cycle(g, k).iter().map(name).collect())
            .collect()
    }

    #[test]
    fn paths_resolve_to_the_module_that_defines_them() {
        let g = of(&[
            ("", "pub mod a; pub mod d;"),
            ("a", "mod b; mod c;"),
            (
                "a::b",
                "use super::c::{self, Y as Z};\nuse crate::d::{e::F, G};\nuse std::fmt;\n\
                 fn f() { crate::a::c::g(); super::super::d::h(); }",
            ),
            ("a::c", "use ErrorCode::*; use ::std::io;"),
            ("d", "pub mod e; use super::a::c;"),
            (
                "d::e",
                "// use crate::a::b;\nconst S: &str = \"crate::a::b\";\n\
                 const R: &str = r#\"super::super::a\"#;\n\
                 fn f<'a>(c: char) -> bool { c == '\\'' || c == '\"' }",
            ),
        ]);
        assert_eq!(targets(&g, "a::b"), vec!["a::c", "d", "d::e"]);
        assert!(targets(&g, "a::c").is_empty(), "another crate, an enum");
        assert_eq!(targets(&g, "d"), vec!["a::c"]);
        assert!(
            targets(&g, "d::e").is_empty(),
            "comments and literals are skipped"
        );
    }

    #[test]
    fn reexports_are_followed_to_their_source() {
        let g = of(&[
            ("", "pub mod a; pub mod z;"),
            (
                "a",
                "mod b; mod c; pub use b::B; pub use c::*; pub struct Own;",
            ),
            ("a::b", "pub struct B;"),
            ("a::c", "pub struct C;"),
            (
                "z",
                "use crate::a::{B, C, Own}; fn f() { crate::a::B::new(); }",
            ),
        ]);
        assert_eq!(targets(&g, "z"), vec!["a", "a::b", "a::c"]);
    }

    #[test]
    fn a_module_and_its_ancestors_are_not_an_edge() {
        let g = of(&[
            ("a", "mod b; pub use b::X; pub struct Y;"),
            (
                "a::b",
                "use super::Y; pub struct X;\n#[cfg(test)]\nmod tests { use super::*; fn f() { super::X; } }",
            ),
        ]);
        assert!(targets(&g, "a").is_empty());
        assert!(targets(&g, "a::b").is_empty());
        assert!(targets(&g, "a::b::tests").is_empty());
        assert!(knots(&g).is_empty());
    }

    #[test]
    fn cycles_of_two_and_of_three_are_found() {
        let g = of(&[
            ("a", "mod x; mod y; mod z; mod p; mod q;"),
            ("a::x", "use super::y::Y;"),
            ("a::y", "use crate::a::x::X;"),
            ("a::p", "use super::q::Q;"),
            ("a::q", "use super::z::Z;"),
            ("a::z", "fn f() { super::p::g() }"),
        ]);
        assert_eq!(
            cycle_names(&g),
            vec![
                vec!["a::p", "a::q", "a::z", "a::p"],
                vec!["a::x", "a::y", "a::x"],
            ]
        );
        let found = knots(&g);
        let r = report(&g, &found.iter().collect::<Vec<_>>());
        assert!(r.contains("knot of 3: a::p, a::q, a::z"), "{r}");
        assert!(r.contains("a cycle: a::p -> a::q -> a::z -> a::p"), "{r}");
        assert!(r.contains("a::z names a::p (`super::p::g`)"), "{r}");
    }

    #[test]
    fn a_cycle_through_a_parents_reexport_is_found() {
        // join imports the coordinator through the group's facade; the coordinator imports join.
        let g = of(&[
            (
                "group",
                "mod coordinator; mod classic; pub use coordinator::Coordinator;",
            ),
            ("group::classic", "mod join;"),
            (
                "group::classic::join",
                "use crate::group::Coordinator; pub struct Rejoin;",
            ),
            (
                "group::coordinator",
                "use super::classic::join::Rejoin; pub struct Coordinator;",
            ),
        ]);
        assert_eq!(
            cycle_names(&g),
            vec![vec![
                "group::classic::join",
                "group::coordinator",
                "group::classic::join"
            ]]
        );
    }

    #[test]
    fn a_test_module_is_its_own_module() {
        let g = of(&[
            ("a", "mod x; mod y;"),
            ("a::x", "use super::y::Y; pub struct X;"),
            (
                "a::y",
                "pub struct Y;\n#[cfg(test)]\nmod tests { use crate::a::x::X; }",
            ),
        ]);
        assert_eq!(targets(&g, "a::y::tests"), vec!["a::x"]);
        assert!(knots(&g).is_empty());
    }
}
