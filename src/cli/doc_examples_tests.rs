//! Every `rtbuild` command line in the `sh` blocks of README.md and docs/*.md is parsed by
//! rtbuild's own argument parser, so an example cannot drift from `--help` (a required flag
//! missing, a renamed flag, a value clap refuses). The rule is written down in docs/testing.md
//! ("Examples in README.md and docs/"); `console` blocks are run by the integration test
//! `doc_examples`.

use std::path::{Path, PathBuf};

use clap::{CommandFactory, Parser};

use super::Cli;

/// The Markdown pages whose examples are checked: README.md and every docs/*.md.
fn pages() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut pages = vec![root.join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .expect("docs/")
        .map(|e| e.expect("docs/ entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    pages.extend(docs);
    pages
}

/// The fenced blocks of `text` whose info string is `info`, each with its first line's number.
fn blocks(text: &str, info: &str) -> Vec<(usize, Vec<String>)> {
    let mut found = Vec::new();
    let mut current: Option<(usize, Vec<String>)> = None;
    let mut fence_info: Option<String> = None;
    for (n, line) in text.lines().enumerate() {
        if let Some(rest) = line.trim_start().strip_prefix("```") {
            match fence_info.take() {
                None => {
                    fence_info = Some(rest.trim().to_string());
                    if rest.trim() == info {
                        current = Some((n + 2, Vec::new()));
                    }
                }
                Some(_) => {
                    if let Some(block) = current.take() {
                        found.push(block);
                    }
                }
            }
        } else if let Some((_, lines)) = current.as_mut() {
            lines.push(line.to_string());
        }
    }
    found
}

/// The command lines of an `sh` block: `\`-continued lines joined, `# comment`s dropped.
fn command_lines(block: &[String]) -> Vec<String> {
    let mut lines = Vec::new();
    let mut pending = String::new();
    for line in block {
        match line.trim_end().strip_suffix('\\') {
            Some(head) => {
                pending.push_str(head);
                pending.push(' ');
            }
            None => {
                pending.push_str(line);
                lines.push(std::mem::take(&mut pending));
            }
        }
    }
    lines
        .into_iter()
        .map(|l| l.split(" # ").next().unwrap_or_default().trim().to_string())
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect()
}

/// `line` cut at the shell's `&&`, `||`, `;` and `|` outside quotes.
fn shell_parts(line: &str) -> Vec<String> {
    let mut parts = vec![String::new()];
    let mut quote: Option<char> = None;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (None, '\'' | '"') => quote = Some(c),
            (None, ';') => parts.push(String::new()),
            (None, '&') if chars.peek() == Some(&'&') => {
                chars.next();
                parts.push(String::new());
                continue;
            }
            (None, '|') => {
                if chars.peek() == Some(&'|') {
                    chars.next();
                }
                parts.push(String::new());
                continue;
            }
            _ => {}
        }
        if let Some(last) = parts.last_mut() {
            last.push(c);
        }
    }
    parts
}

/// The `rtbuild …` commands of one command line: split at `&&`, `||`, `;` and `|` (outside
/// quotes), output redirections cut off, leading `VAR=value` assignments and `sudo` skipped.
fn rtbuild_commands(line: &str) -> Vec<String> {
    let mut commands = Vec::new();
    for part in shell_parts(line) {
        let part =
            part.split(" > ").next().unwrap_or_default().split(" 2>").next().unwrap_or_default();
        let mut words = part.split_whitespace().peekable();
        while words.peek().is_some_and(|w| w.contains('=') && !w.starts_with('-') || *w == "sudo") {
            words.next();
        }
        let rest: Vec<&str> = words.collect();
        let Some(first) = rest.first() else { continue };
        if *first == "rtbuild" || first.ends_with("/rtbuild") || first.ends_with("/rtbuild\"") {
            let mut words = rest.clone();
            words[0] = "rtbuild";
            commands.push(words.join(" "));
        }
    }
    commands
}

/// A synopsis (`[--flag VALUE]`, `a|b`, `...`) is not a command: each `--flag` it names must be
/// a flag of its subcommand.
fn check_synopsis(command: &str) -> Result<(), String> {
    let root = Cli::command();
    let mut cmd = &root;
    for word in command.split_whitespace().skip(1) {
        match cmd.find_subcommand(word) {
            Some(sub) => cmd = sub,
            None => break,
        }
    }
    let known: Vec<String> = cmd
        .get_arguments()
        .chain(root.get_arguments())
        .filter_map(|a| a.get_long().map(|l| format!("--{l}")))
        .chain(["--help".to_string(), "--version".to_string()])
        .collect();
    let given: Vec<&str> =
        command.split(|c: char| c.is_whitespace() || "[]|=".contains(c)).collect();
    for arg in cmd.get_arguments().filter(|a| a.is_required_set()) {
        if let Some(long) = arg.get_long()
            && !given.contains(&format!("--{long}").as_str())
        {
            return Err(format!(
                "the synopsis lacks `--{long}`, which `{}` requires",
                cmd.get_name()
            ));
        }
    }
    for word in given {
        let flag = word.trim_end_matches([',', '.', ')', '…']);
        if flag.starts_with("--") && flag.len() > 2 && !known.iter().any(|k| k == flag) {
            return Err(format!("`{flag}` is not a flag of `{}`", cmd.get_name()));
        }
    }
    Ok(())
}

fn check(command: &str) -> Result<(), String> {
    if command.contains('[') || command.contains("...") || command.contains('…') {
        return check_synopsis(command);
    }
    let words = crate::measure::toolargs::split("example", command).map_err(|e| e.to_string())?;
    Cli::try_parse_from(&words).map(|_| ()).map_err(|e| e.render().to_string())
}

#[test]
fn every_rtbuild_line_in_the_sh_blocks_of_readme_and_docs_parses() {
    let mut failures = Vec::new();
    let mut checked = 0;
    for page in pages() {
        let text = std::fs::read_to_string(&page).expect("read page");
        let name = page.file_name().unwrap_or_default().to_string_lossy().to_string();
        for (line_no, block) in blocks(&text, "sh") {
            for line in command_lines(&block) {
                for command in rtbuild_commands(&line) {
                    checked += 1;
                    if let Err(why) = check(&command) {
                        failures
                            .push(format!("{name} (block at line {line_no}): `{command}`\n{why}"));
                    }
                }
            }
        }
    }
    assert!(
        checked >= 40,
        "only {checked} rtbuild lines found in sh blocks: is the extractor broken?"
    );
    assert!(
        failures.is_empty(),
        "{} examples do not parse:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

/// The extractor itself: continuations, comments, `&&`, redirections, env assignments, synopses.
#[test]
fn the_example_extractor_finds_what_a_reader_would_run() {
    let md = "text\n```sh\nrtbuild machines   # all\nKAS_WORK_DIR=/x rtbuild image \\\n    --machine m > log && sudo rtbuild setup --host\necho rtbuild\n```\n```text\nrtbuild nope\n```\n";
    let sh = blocks(md, "sh");
    assert_eq!(sh.len(), 1);
    assert_eq!(sh[0].0, 3);
    let lines = command_lines(&sh[0].1);
    let commands: Vec<String> = lines.iter().flat_map(|l| rtbuild_commands(l)).collect();
    assert_eq!(commands, ["rtbuild machines", "rtbuild image --machine m", "rtbuild setup --host"]);
    assert!(check("rtbuild machines").is_ok());
    // `ci` needs --rtbuild-from: the drift docs/build.md once had.
    let err = check("rtbuild ci --format gitlab --machines rb3gen2-core-kit").unwrap_err();
    assert!(err.contains("--rtbuild-from"), "{err}");
    assert!(check("rtbuild image --machine m [--bundle] [--plain]").is_ok());
    let err = check("rtbuild ci --format gitlab --machines m [--lava]").unwrap_err();
    assert!(err.contains("--rtbuild-from"), "{err}");
    assert_eq!(
        rtbuild_commands("rtbuild shell -c \"bitbake -e x | grep y\" | tee log"),
        ["rtbuild shell -c \"bitbake -e x | grep y\""]
    );
    let err = check("rtbuild image --machine m [--no-such-flag]").unwrap_err();
    assert!(err.contains("--no-such-flag"), "{err}");
}
