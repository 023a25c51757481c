//! `rtbuild completions SHELL` (clap_complete) and `rtbuild man-pages --out-dir DIR` (clap_mangen):
//! what packagers ship beside the binary, made from the same clap definitions as `--help`.

use std::path::PathBuf;

use clap::{Args, CommandFactory};

use super::Cli;
use crate::exit::Exit;
use crate::ui::Ui;

#[derive(Debug, Args)]
pub(crate) struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Debug, Args)]
pub(crate) struct ManArgs {
    /// Folder to write the pages into (created when missing).
    #[arg(long, value_name = "DIR")]
    pub out_dir: PathBuf,
}

pub(super) fn completions(args: CompletionsArgs, ui: &Ui) -> crate::error::Result<Exit> {
    let mut text = Vec::new();
    clap_complete::generate(args.shell, &mut Cli::command(), "rtbuild", &mut text);
    ui.out(String::from_utf8_lossy(&text).trim_end());
    Ok(Exit::Ok)
}

/// The pages: `rtbuild.1` for the program, `rtbuild-<sub>.1` for each subcommand and
/// `rtbuild-<sub>-<sub>.1` for each of theirs (`rtbuild-history-add.1`), so every page a page's
/// SUBCOMMANDS section names is written. clap's `help` subcommand gets no page and is not named.
pub(super) fn pages() -> std::io::Result<Vec<(String, Vec<u8>)>> {
    fn without_help(cmd: clap::Command) -> clap::Command {
        cmd.disable_help_subcommand(true).mut_subcommands(without_help)
    }
    fn add(
        cmd: &clap::Command,
        name: String,
        pages: &mut Vec<(String, Vec<u8>)>,
    ) -> std::io::Result<()> {
        let mut text = Vec::new();
        clap_mangen::Man::new(cmd.clone().name(name.clone())).render(&mut text)?;
        pages.push((format!("{name}.1"), text));
        for sub in cmd.get_subcommands() {
            add(sub, format!("{name}-{}", sub.get_name()), pages)?;
        }
        Ok(())
    }
    let mut cli = without_help(Cli::command());
    cli.build();
    let mut pages = Vec::new();
    add(&cli, "rtbuild".to_string(), &mut pages)?;
    Ok(pages)
}

pub(super) fn man(args: ManArgs, ui: &Ui) -> crate::error::Result<Exit> {
    // A device, FIFO or file is refused before a page is written (`/dev/null` would have
    // taken every page as a failed write, or a temp file beside it).
    crate::base::output::check_folder("--out-dir", &args.out_dir)
        .map_err(crate::error::Refusal::Output)?;
    let pages = pages().map_err(crate::error::Kind::ManPages)?;
    for (name, text) in &pages {
        let path = args.out_dir.join(name);
        crate::write::write_atomic(&path, text, false)?;
        ui.status("Wrote", crate::base::shown_path(&path));
    }
    if ui.json() {
        let names: Vec<&str> = pages.iter().map(|(n, _)| n.as_str()).collect();
        ui.out_json(&serde_json::json!({ "pages": names }))?;
    } else {
        ui.out(crate::base::shown_path(&args.out_dir));
    }
    Ok(Exit::Ok)
}

#[cfg(test)]
mod tests {
    use clap::{CommandFactory, Parser};

    use crate::cli::Cli;

    #[test]
    fn one_man_page_per_subcommand_each_with_its_examples() {
        let pages = super::pages().expect("pages");
        let cli = Cli::command();
        let subs: Vec<&str> =
            cli.get_subcommands().map(clap::Command::get_name).filter(|n| *n != "help").collect();
        for sub in subs {
            let (_, page) = pages
                .iter()
                .find(|(name, _)| *name == format!("rtbuild-{sub}.1"))
                .unwrap_or_else(|| panic!("no page for {sub}"));
            let text = String::from_utf8_lossy(page);
            assert!(text.starts_with(".ie"), "{sub}: not roff: {}", &text[..40.min(text.len())]);
            assert!(text.contains(&format!("rtbuild\\-{}", sub.replace('-', "\\-"))), "{sub}");
            assert!(text.contains("Examples:"), "{sub}: no examples");
        }
    }

    /// A page's SUBCOMMANDS section names `rtbuild-history-add(1)`: each named page is written
    /// (`rtbuild-history.1` once named pages that were not), and `help` is neither.
    #[test]
    fn every_man_page_a_page_names_is_written() {
        let pages = super::pages().expect("pages");
        let names: Vec<&str> = pages.iter().map(|(n, _)| n.as_str()).collect();
        for wanted in
            ["rtbuild-history-add.1", "rtbuild-history-report.1", "rtbuild-machines-show.1"]
        {
            assert!(names.contains(&wanted), "{wanted} not among {names:?}");
        }
        for (name, page) in &pages {
            let text = String::from_utf8_lossy(page);
            for line in text.lines().filter(|l| l.starts_with("rtbuild") && l.ends_with("(1)")) {
                let page_name = format!("{}.1", line.trim_end_matches("(1)").replace("\\-", "-"));
                assert!(!page_name.ends_with("-help.1"), "{name} names {line}");
                assert!(names.contains(&page_name.as_str()), "{name} names {line}: not written");
            }
        }
    }

    #[test]
    fn every_subcommand_has_examples_that_parse_and_global_options_have_their_heading() {
        let mut cli = Cli::command();
        cli.build();
        for sub in cli.get_subcommands().filter(|s| s.get_name() != "help") {
            let help = sub.clone().render_long_help().to_string();
            let examples = help.split("Examples:").nth(1).unwrap_or_else(|| {
                panic!("`rtbuild {} --help` has no Examples section", sub.get_name())
            });
            // Each example that runs rtbuild parses (values are not checked: files are made up).
            let joined = examples.replace(" \\\n", " ");
            for line in joined.lines().map(str::trim).filter(|l| l.contains("rtbuild ")) {
                let command = line.split(" # ").next().unwrap_or(line);
                for part in command.split("&&").map(str::trim) {
                    let part = part.split(" > ").next().unwrap_or(part);
                    let Some(at) = part.find("rtbuild ") else { continue };
                    let words = crate::toolargs::split("example", &part[at..]).expect("words");
                    if let Err(e) = Cli::try_parse_from(&words) {
                        panic!("example `{part}` does not parse:\n{e}");
                    }
                }
            }
            let global = help.split("Global options:").nth(1).unwrap_or_else(|| {
                panic!("`rtbuild {} --help` has no Global options heading", sub.get_name())
            });
            for flag in ["--json", "--quiet", "--verbose", "--plain"] {
                assert!(
                    global.contains(flag),
                    "{}: {flag} not under Global options",
                    sub.get_name()
                );
                let own = help.split("Global options:").next().unwrap_or_default();
                assert!(
                    !own.contains(&format!("      {flag}")),
                    "{}: {flag} among its own",
                    sub.get_name()
                );
            }
        }
    }
}
