//! The `console` blocks of README.md and docs/*.md are run as written and their output compared
//! (the rule is in docs/testing.md, "Examples in README.md and docs/"): each `$ rtbuild …` line
//! runs the built binary, without a shell, in a fresh folder shared by the block's commands;
//! the lines up to the next `$ ` line are what it prints (stderr and stdout as they interleave
//! on a terminal), `...` on a line of its own stands for any lines, `[..]` for any text within a
//! line, and `? N` right after the command for a non-zero exit code. The `sh` blocks are parsed
//! by the unit test `cli::doc_examples_tests`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::support::harness::{project_root, rtbuild_bin};

/// One `$ ` command of a console block, with what the page says it prints.
#[derive(Debug)]
struct Example {
    page: String,
    line: usize,
    words: Vec<String>,
    code: i32,
    expected: Vec<String>,
}

fn pages() -> Vec<PathBuf> {
    let root = project_root();
    let mut pages = vec![root.join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .expect("docs/")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    pages.extend(docs);
    pages
}

/// The console blocks of one page, each a list of examples.
fn console_blocks(page: &Path) -> Vec<Vec<Example>> {
    let text = std::fs::read_to_string(page).expect("read page");
    let name = page.file_name().unwrap_or_default().to_string_lossy().to_string();
    let mut blocks = Vec::new();
    let mut in_fence = false;
    let mut current: Option<Vec<Example>> = None;
    for (n, line) in text.lines().enumerate() {
        if let Some(info) = line.trim_start().strip_prefix("```") {
            if in_fence {
                in_fence = false;
                if let Some(block) = current.take() {
                    blocks.push(block);
                }
            } else {
                in_fence = true;
                if info.trim() == "console" {
                    current = Some(Vec::new());
                }
            }
            continue;
        }
        let Some(block) = current.as_mut() else { continue };
        if let Some(command) = line.strip_prefix("$ ") {
            let words = split_words(command)
                .unwrap_or_else(|| panic!("{name}:{}: unclosed quote in `{command}`", n + 1));
            assert_eq!(
                words.first().map(String::as_str),
                Some("rtbuild"),
                "{name}:{}: a console block runs rtbuild only: `{command}`",
                n + 1
            );
            block.push(Example {
                page: name.clone(),
                line: n + 1,
                words,
                code: 0,
                expected: Vec::new(),
            });
        } else if let Some(example) = block.last_mut() {
            match line.strip_prefix("? ") {
                Some(code) if example.expected.is_empty() => {
                    example.code = code.trim().parse().unwrap_or_else(|_| {
                        panic!("{name}:{}: `? N` needs a number: {line}", n + 1)
                    });
                }
                _ => example.expected.push(line.to_string()),
            }
        } else {
            panic!("{name}:{}: a console block starts with a `$ ` line: {line}", n + 1);
        }
    }
    blocks
}

/// Shell-like words: whitespace splits, '…' and "…" group (no expansion: nothing runs a shell).
fn split_words(text: &str) -> Option<Vec<String>> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut started = false;
    let mut quote: Option<char> = None;
    for c in text.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                started = true;
            }
            (None, c) if c.is_whitespace() => {
                if started {
                    words.push(std::mem::take(&mut word));
                    started = false;
                }
            }
            (None, c) => {
                word.push(c);
                started = true;
            }
        }
    }
    if quote.is_some() {
        return None;
    }
    if started {
        words.push(word);
    }
    Some(words)
}

/// Whether one output line matches one expected line (`[..]`: any text).
fn line_matches(expected: &str, actual: &str) -> bool {
    let mut pieces = expected.split("[..]");
    let first = pieces.next().unwrap_or_default();
    let Some(mut rest) = actual.strip_prefix(first) else { return false };
    let pieces: Vec<&str> = pieces.collect();
    for (i, piece) in pieces.iter().enumerate() {
        if i + 1 == pieces.len() {
            return rest.ends_with(piece);
        }
        match rest.find(piece) {
            Some(at) => rest = &rest[at + piece.len()..],
            None => return false,
        }
    }
    rest.is_empty()
}

/// Whether the output lines match the expected ones (`...`: any lines, also none).
fn lines_match(expected: &[String], actual: &[&str]) -> bool {
    match expected.split_first() {
        None => actual.is_empty(),
        Some((first, rest)) if first == "..." => {
            (0..=actual.len()).any(|skip| lines_match(rest, &actual[skip..]))
        }
        Some((first, rest)) => {
            actual.first().is_some_and(|a| line_matches(first, a))
                && lines_match(rest, &actual[1..])
        }
    }
}

/// Runs one example in `dir`: stdout and stderr share one file, so they keep their order.
fn run(example: &Example, dir: &Path, home: &Path) -> (i32, String) {
    let log = dir.join(".rtbuild-example-output");
    let file = std::fs::File::create(&log).expect("output file");
    let status = Command::new("timeout")
        .args(["--kill-after=5", "120"])
        .arg(rtbuild_bin())
        .args(&example.words[1..])
        .current_dir(dir)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("LANG", "C.UTF-8")
        .env("COLUMNS", "100")
        .stdin(Stdio::null())
        .stdout(file.try_clone().expect("clone"))
        .stderr(file)
        .status()
        .expect("run rtbuild");
    let output = std::fs::read_to_string(&log).expect("read output");
    std::fs::remove_file(&log).expect("remove output");
    (status.code().unwrap_or(-1), output)
}

#[test]
fn console_blocks_in_readme_and_docs_run_as_written() {
    let mut failures = Vec::new();
    let mut ran = 0;
    for page in pages() {
        for block in console_blocks(&page) {
            let dir = tempfile::tempdir().expect("tempdir");
            let home = tempfile::tempdir().expect("home");
            for example in &block {
                ran += 1;
                let (code, output) = run(example, dir.path(), home.path());
                let actual: Vec<&str> = output.lines().collect();
                if code != example.code || !lines_match(&example.expected, &actual) {
                    failures.push(format!(
                        "{}:{}: `{}`\nexpected (exit {}):\n{}\ngot (exit {code}):\n{output}",
                        example.page,
                        example.line,
                        example.words.join(" "),
                        example.code,
                        example.expected.join("\n"),
                    ));
                }
            }
        }
    }
    assert!(ran >= 5, "only {ran} console examples found: is the extractor broken?");
    assert!(
        failures.is_empty(),
        "{} console examples differ:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

/// The matcher itself, on made-up output: wildcards match what they should and nothing else.
#[test]
fn console_example_matcher_accepts_wildcards_and_refuses_differences() {
    let expected: Vec<String> = ["a [..] c", "...", "end"].map(String::from).to_vec();
    assert!(lines_match(&expected, &["a b c", "x", "y", "end"]));
    assert!(lines_match(&expected, &["a  c", "end"]));
    assert!(!lines_match(&expected, &["a b d", "end"]));
    assert!(!lines_match(&expected, &["a b c", "end", "more"]));
    assert!(!lines_match(&["exact".to_string()], &["exact but longer"]));
    assert_eq!(
        split_words("rtbuild report 'a b' \"c\" d").unwrap(),
        ["rtbuild", "report", "a b", "c", "d"]
    );
    assert!(split_words("rtbuild 'open").is_none());
}
