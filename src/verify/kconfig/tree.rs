//! The Kconfig files of a kernel source tree, read the way `make olddefconfig` reads them:
//! from the top `Kconfig`, following `source` (with `$(SRCARCH)` set to the architecture),
//! carrying the conditions of enclosing `if`, `menu … depends on` and `choice` blocks down to
//! every `config` entry. What `verify` needs from them: each symbol's definitions with their
//! `depends on` (file and line), the choice a symbol belongs to, whether it has a prompt, and
//! which symbols `select` it.
//!
//! Reading is bounded (files, nesting, file size) and never fails on a line it does not
//! understand: the kernel's own parser is the judge of syntax, this reader only gathers facts.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use super::KernelConfig;
use super::expr::{self, Expr};
use crate::files::limits::MAX_KCONFIG_FILE;

/// At most this many Kconfig files are read (Linux 6.12 arm64 reads about 1,700).
const MAX_FILES: usize = 20_000;
/// `source` nesting deeper than this is not followed (Linux nests 6 deep).
const MAX_NESTING: usize = 32;

/// Where something is written: a path relative to the tree, and a 1-based line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Location {
    pub file: String,
    pub line: usize,
}

impl std::fmt::Display for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.file, self.line)
    }
}

/// Where a dependency comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DepFrom {
    /// The entry's own `depends on`.
    DependsOn,
    /// An enclosing `if … endif`.
    If,
    /// An enclosing `menu`'s `depends on`.
    Menu,
    /// An enclosing `choice`'s `depends on`.
    Choice,
}

/// One dependency: an expression and the line it was written on.
#[derive(Debug, Clone)]
pub(crate) struct Dep {
    pub expr: Expr,
    pub at: Location,
    pub from: DepFrom,
}

/// One `config`/`menuconfig` entry (a symbol may have several).
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    /// The symbol without `CONFIG_`.
    pub symbol: String,
    pub at: Location,
    /// Its own `depends on` lines, in order.
    pub depends: Vec<Dep>,
    /// Conditions of the blocks around it, outermost first.
    pub inherited: Vec<Dep>,
    /// Whether a user can set it (a type with a prompt, or `prompt`).
    pub prompt: bool,
    /// Index into [`KconfigTree::choices`] when it is a choice member.
    pub choice: Option<usize>,
}

/// A `choice … endchoice` block.
#[derive(Debug, Clone)]
pub(crate) struct Choice {
    pub at: Location,
    pub prompt: Option<String>,
    pub depends: Vec<Dep>,
    /// Member symbols, in order.
    pub members: Vec<String>,
}

/// `select TARGET [if COND]` in the entry of `by`.
#[derive(Debug, Clone)]
pub(crate) struct Select {
    pub by: String,
    pub target: String,
    pub cond: Option<Expr>,
    pub at: Location,
}

/// Everything read from one tree.
#[derive(Debug, Clone)]
pub(crate) struct KconfigTree {
    pub root: PathBuf,
    /// `SRCARCH` used for `source "arch/$(SRCARCH)/…"`; `None` skips those files.
    pub arch: Option<String>,
    pub files: usize,
    pub entries: Vec<Entry>,
    pub choices: Vec<Choice>,
    pub selects: Vec<Select>,
}

/// A folder that is not a kernel source tree.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "`{}` is not a kernel source tree: it has no top-level Kconfig; pass the kernel's source \
     folder (a build keeps it in tmp/work-shared/<machine>/kernel-source)",
    .0.display()
)]
pub(crate) struct NotKernelSource(pub PathBuf);

/// The architecture a config was made for (`CONFIG_ARM64=y` → `arm64`), as `SRCARCH`.
pub(crate) fn arch_of(config: &KernelConfig) -> Option<&'static str> {
    const ARCHES: &[(&str, &str)] = &[
        ("CONFIG_ARM64", "arm64"),
        ("CONFIG_X86", "x86"),
        ("CONFIG_RISCV", "riscv"),
        ("CONFIG_LOONGARCH", "loongarch"),
        ("CONFIG_PPC", "powerpc"),
        ("CONFIG_S390", "s390"),
        ("CONFIG_MIPS", "mips"),
        ("CONFIG_ARM", "arm"),
    ];
    ARCHES.iter().find(|(symbol, _)| config.state(symbol).is_enabled()).map(|(_, arch)| *arch)
}

/// Whether `dir` holds a kernel source tree (a top-level `Kconfig`).
pub(crate) fn check_root(dir: &Path) -> Result<(), NotKernelSource> {
    if dir.join("Kconfig").is_file() { Ok(()) } else { Err(NotKernelSource(dir.to_path_buf())) }
}

/// A block open around the lines being read.
#[derive(Debug)]
enum Block {
    If(Dep),
    Menu(Vec<Dep>),
    Choice(usize),
}

/// What `depends on`, `select`, `prompt` and `help` lines belong to.
#[derive(Debug, Clone, Copy)]
enum Current {
    Nothing,
    Config(usize),
    /// The menu at this index of the block stack.
    Menu(usize),
    Choice(usize),
}

struct Reader {
    tree: KconfigTree,
    blocks: Vec<Block>,
    current: Current,
    seen: HashSet<PathBuf>,
}

impl KconfigTree {
    /// Reads every Kconfig file reachable from `root/Kconfig` for `arch`.
    pub(crate) fn read(root: &Path, arch: Option<&str>) -> Result<KconfigTree, NotKernelSource> {
        check_root(root)?;
        let arch = arch
            .filter(|a| !a.is_empty() && a.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'));
        let mut reader = Reader {
            tree: KconfigTree {
                root: root.to_path_buf(),
                arch: arch.map(str::to_string),
                files: 0,
                entries: Vec::new(),
                choices: Vec::new(),
                selects: Vec::new(),
            },
            blocks: Vec::new(),
            current: Current::Nothing,
            seen: HashSet::new(),
        };
        reader.file("Kconfig", 0);
        Ok(reader.tree)
    }

    /// The definitions of `symbol` (without `CONFIG_`).
    pub(crate) fn definitions(&self, symbol: &str) -> Vec<&Entry> {
        self.entries.iter().filter(|e| e.symbol == symbol).collect()
    }

    /// Whether any definition of `symbol` has a prompt.
    pub(crate) fn has_prompt(&self, symbol: &str) -> bool {
        self.entries.iter().any(|e| e.symbol == symbol && e.prompt)
    }

    /// The `select` lines that name `symbol`.
    pub(crate) fn selectors(&self, symbol: &str) -> Vec<&Select> {
        self.selects.iter().filter(|s| s.target == symbol).collect()
    }
}

/// Indentation width with tabs at 8 columns, as Kconfig measures help text.
fn indent(line: &str) -> usize {
    let mut width = 0;
    for b in line.bytes() {
        match b {
            b' ' => width += 1,
            b'\t' => width = (width / 8 + 1) * 8,
            _ => break,
        }
    }
    width
}

/// The line without a `#` comment (a `#` inside quotes is kept).
fn strip_comment(line: &str) -> &str {
    let mut quote: Option<char> = None;
    for (i, c) in line.char_indices() {
        match (quote, c) {
            (None, '"' | '\'') => quote = Some(c),
            (Some(q), _) if c == q => quote = None,
            (None, '#') => return &line[..i],
            _ => {}
        }
    }
    line
}

/// The text between the first pair of quotes.
fn quoted(text: &str) -> Option<&str> {
    let text = text.trim_start();
    let q = text.chars().next().filter(|c| *c == '"' || *c == '\'')?;
    let rest = &text[1..];
    rest.find(q).map(|end| &rest[..end])
}

impl Reader {
    fn file(&mut self, relative: &str, nesting: usize) {
        if nesting > MAX_NESTING || self.tree.files >= MAX_FILES {
            return;
        }
        let path = self.tree.root.join(relative);
        let Ok(canonical) = path.canonicalize() else { return };
        if !self.seen.insert(canonical) {
            return;
        }
        let too_big =
            std::fs::metadata(&path).map_or(true, |m| !m.is_file() || m.len() > MAX_KCONFIG_FILE);
        if too_big {
            return;
        }
        // Opened without blocking, checked again on the descriptor: a FIFO swapped in is skipped.
        let Ok(bytes) = crate::files::input::read(&path, MAX_KCONFIG_FILE) else { return };
        self.tree.files += 1;
        let text = String::from_utf8_lossy(&bytes);
        let depth = self.blocks.len();
        self.current = Current::Nothing;
        let mut help: Option<Option<usize>> = None;
        let mut lines = text.lines().enumerate().peekable();
        while let Some((n, raw)) = lines.next() {
            if let Some(help_indent) = help {
                if raw.trim().is_empty() {
                    continue;
                }
                let width = indent(raw);
                match help_indent {
                    None if width > 0 => {
                        help = Some(Some(width));
                        continue;
                    }
                    Some(w) if width >= w => continue,
                    _ => help = None,
                }
            }
            let mut line = raw.to_string();
            while line.ends_with('\\') {
                line.pop();
                match lines.next() {
                    Some((_, next)) => line.push_str(next),
                    None => break,
                }
            }
            let at = Location { file: relative.to_string(), line: n + 1 };
            if self.line(strip_comment(&line).trim(), at, nesting) {
                help = Some(None);
            }
        }
        // A file closes its own blocks; an unbalanced one must not leak into the next.
        self.blocks.truncate(depth);
        self.current = Current::Nothing;
    }

    /// Handles one logical line; true when it starts help text.
    fn line(&mut self, line: &str, at: Location, nesting: usize) -> bool {
        let (keyword, rest) = match line.split_once(|c: char| c.is_ascii_whitespace()) {
            Some((k, r)) => (k, r.trim()),
            None => (line, ""),
        };
        match keyword {
            "config" | "menuconfig" => self.entry(rest, at),
            "choice" => {
                let depends = Vec::new();
                self.tree.choices.push(Choice { at, prompt: None, depends, members: Vec::new() });
                let index = self.tree.choices.len() - 1;
                self.blocks.push(Block::Choice(index));
                self.current = Current::Choice(index);
            }
            "endchoice" => self.close(|b| matches!(b, Block::Choice(_))),
            "menu" => {
                self.blocks.push(Block::Menu(Vec::new()));
                self.current = Current::Menu(self.blocks.len() - 1);
            }
            "endmenu" => self.close(|b| matches!(b, Block::Menu(_))),
            "if" => {
                let expr = expr::parse(rest).unwrap_or_else(|| Expr::Macro(rest.to_string()));
                self.blocks.push(Block::If(Dep { expr, at, from: DepFrom::If }));
                self.current = Current::Nothing;
            }
            "endif" => self.close(|b| matches!(b, Block::If(_))),
            "source" | "osource" | "rsource" | "orsource" => {
                self.current = Current::Nothing;
                if let Some(path) = quoted(rest).and_then(|p| self.source_path(p, keyword, &at)) {
                    self.file(&path, nesting + 1);
                }
            }
            "comment" | "mainmenu" => self.current = Current::Nothing,
            "depends" => {
                if let Some(text) = rest.strip_prefix("on") {
                    let text = text.trim();
                    let expr = expr::parse(text).unwrap_or_else(|| Expr::Macro(text.to_string()));
                    self.depends(Dep { expr, at, from: DepFrom::DependsOn });
                }
            }
            "bool" | "tristate" | "string" | "int" | "hex" | "prompt" => {
                if let Some(prompt) = quoted(rest) {
                    match self.current {
                        Current::Config(i) => self.tree.entries[i].prompt = true,
                        Current::Choice(i) => {
                            self.tree.choices[i].prompt = Some(prompt.to_string());
                        }
                        _ => {}
                    }
                }
            }
            "select" => {
                if let Current::Config(i) = self.current {
                    let (target, cond) = match rest.split_once(" if ") {
                        Some((t, c)) => (t.trim(), expr::parse(c.trim())),
                        None => (rest, None),
                    };
                    let by = self.tree.entries[i].symbol.clone();
                    let target = target.to_string();
                    self.tree.selects.push(Select { by, target, cond, at });
                }
            }
            "help" | "---help---" => return true,
            _ => {}
        }
        false
    }

    fn entry(&mut self, name: &str, at: Location) {
        let symbol = name.split_whitespace().next().unwrap_or_default().to_string();
        if symbol.is_empty() {
            self.current = Current::Nothing;
            return;
        }
        let inherited = self.inherited();
        let choice = self.blocks.iter().rev().find_map(|b| match b {
            Block::Choice(i) => Some(*i),
            _ => None,
        });
        if let Some(i) = choice {
            self.tree.choices[i].members.push(symbol.clone());
        }
        let entry = Entry { symbol, at, depends: Vec::new(), inherited, prompt: false, choice };
        self.tree.entries.push(entry);
        self.current = Current::Config(self.tree.entries.len() - 1);
    }

    /// The conditions of every open block, outermost first.
    fn inherited(&self) -> Vec<Dep> {
        let mut deps = Vec::new();
        for block in &self.blocks {
            match block {
                Block::If(dep) => deps.push(dep.clone()),
                Block::Menu(menu) => {
                    deps.extend(menu.iter().cloned().map(|d| Dep { from: DepFrom::Menu, ..d }))
                }
                Block::Choice(i) => deps.extend(
                    self.tree.choices[*i]
                        .depends
                        .iter()
                        .cloned()
                        .map(|d| Dep { from: DepFrom::Choice, ..d }),
                ),
            }
        }
        deps
    }

    fn depends(&mut self, dep: Dep) {
        match self.current {
            Current::Config(i) => self.tree.entries[i].depends.push(dep),
            Current::Choice(i) => self.tree.choices[i].depends.push(dep),
            Current::Menu(i) => {
                if let Some(Block::Menu(deps)) = self.blocks.get_mut(i) {
                    deps.push(dep);
                }
            }
            Current::Nothing => {}
        }
    }

    /// Pops blocks up to and including the innermost one `is_it` matches.
    fn close(&mut self, is_it: impl Fn(&Block) -> bool) {
        if let Some(pos) = self.blocks.iter().rposition(is_it) {
            self.blocks.truncate(pos);
        }
        self.current = Current::Nothing;
    }

    /// The file a `source` line names, relative to the tree; `None` when it uses a macro other
    /// than `$(SRCARCH)`/`$(ARCH)` or leaves the tree.
    fn source_path(&self, written: &str, keyword: &str, at: &Location) -> Option<String> {
        let mut path = written.to_string();
        if path.contains("$(") {
            let arch = self.tree.arch.as_deref()?;
            path = path.replace("$(SRCARCH)", arch).replace("$(ARCH)", arch);
            if path.contains("$(") {
                return None;
            }
        }
        if keyword.starts_with('r') || keyword.starts_with("or") {
            let dir = Path::new(&at.file).parent().unwrap_or(Path::new(""));
            path = dir.join(&path).to_string_lossy().into_owned();
        }
        let inside = !path.starts_with('/') && !path.split('/').any(|part| part == "..");
        inside.then_some(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(files: &[(&str, &str)], arch: Option<&str>) -> (tempfile::TempDir, KconfigTree) {
        let dir = tempfile::tempdir().unwrap();
        for (name, text) in files {
            let path = dir.path().join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            crate::files::write::fixture(path, text).unwrap();
        }
        let tree = KconfigTree::read(dir.path(), arch).unwrap();
        (dir, tree)
    }

    #[test]
    fn follows_sources_and_carries_block_conditions() {
        let (_dir, t) = tree(
            &[
                (
                    "Kconfig",
                    "mainmenu \"x\"\nsource \"init/Kconfig\"\nsource \"arch/$(SRCARCH)/Kconfig\"\n",
                ),
                (
                    "init/Kconfig",
                    "menu \"General\"\n\tdepends on MMU\n\nif SMP\nconfig A\n\tbool \"A\"\n\tdepends on B && \\\n\t\t  !C # why\n\tselect D if E\n\thelp\n\t  config NOT_A_SYMBOL\n\t  depends on NOTHING\n\nconfig B\n\tdef_bool y\nendif\nendmenu\n\nchoice\n\tprompt \"Model\"\n\tdepends on F\nconfig X\n\tbool \"X\"\nconfig Y\n\tbool \"Y\"\nendchoice\n",
                ),
                ("arch/arm64/Kconfig", "config ARM64\n\tdef_bool y\n\tselect B\n"),
                ("arch/x86/Kconfig", "config X86\n\tdef_bool y\n"),
            ],
            Some("arm64"),
        );
        assert_eq!(t.files, 3);
        let names: Vec<&str> = t.entries.iter().map(|e| e.symbol.as_str()).collect();
        assert_eq!(names, ["A", "B", "X", "Y", "ARM64"], "help text and x86 are not read");
        let a = t.definitions("A")[0];
        assert_eq!(a.at.to_string(), "init/Kconfig:5");
        assert!(a.prompt && !t.has_prompt("B"));
        assert_eq!(a.depends.len(), 1);
        assert_eq!(a.depends[0].expr.to_text(), "B && !C");
        assert_eq!(a.depends[0].at.line, 7);
        let inherited: Vec<(String, DepFrom, usize)> =
            a.inherited.iter().map(|d| (d.expr.to_text(), d.from, d.at.line)).collect();
        assert_eq!(inherited, [("MMU".into(), DepFrom::Menu, 2), ("SMP".into(), DepFrom::If, 4)]);
        let x = t.definitions("X")[0];
        let choice = &t.choices[x.choice.unwrap()];
        assert_eq!((choice.prompt.as_deref(), choice.at.line), (Some("Model"), 19));
        assert_eq!(choice.members, ["X", "Y"]);
        assert_eq!(x.inherited[0].expr.to_text(), "F");
        assert_eq!(x.inherited[0].from, DepFrom::Choice);
        let by: Vec<&str> = t.selectors("B").iter().map(|s| s.by.as_str()).collect();
        assert_eq!(by, ["ARM64"]);
        assert_eq!(t.selectors("D")[0].cond.as_ref().unwrap().to_text(), "E");
    }

    #[test]
    fn loops_escapes_and_unknown_macros_are_not_followed() {
        let (_dir, t) = tree(
            &[
                (
                    "Kconfig",
                    "source \"Kconfig\"\nsource \"../etc/Kconfig\"\nsource \"/etc/Kconfig\"\nsource \"arch/$(HEADER_ARCH)/Kconfig\"\nrsource \"sub/Kconfig\"\nconfig Z\n",
                ),
                ("sub/Kconfig", "source \"sub/Kconfig\"\nconfig S\n\tdepends on ((((\n"),
            ],
            None,
        );
        assert_eq!(t.files, 2);
        let s = t.definitions("S")[0];
        assert_eq!(s.depends[0].expr, Expr::Macro("((((".into()), "unparsable text counts as met");
        assert_eq!(t.definitions("Z").len(), 1);
    }

    #[test]
    fn a_folder_without_kconfig_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let err = KconfigTree::read(dir.path(), Some("arm64")).unwrap_err().to_string();
        assert!(err.ends_with("is not a kernel source tree: it has no top-level Kconfig; pass the kernel's source folder (a build keeps it in tmp/work-shared/<machine>/kernel-source)"), "{err}");
    }
}
