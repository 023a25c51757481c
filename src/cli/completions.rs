//! `rtbuild completions SHELL` (clap_complete) and `rtbuild man-pages --out-dir DIR` (clap_mangen):
//! what packagers ship beside the binary, made from the same clap definitions as `--help`.

use std::path::PathBuf;

use clap::{Args, CommandFactory};

use super::Cli;
use crate::error::Exit;
use crate::text::ui::Ui;

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

pub(super) fn completions(args: CompletionsArgs, ui: &Ui) -> crate::cli::error::Result<Exit> {
    let mut text = Vec::new();
    clap_complete::generate(
        args.shell,
        &mut with_value_hints(Cli::command()),
        "rtbuild",
        &mut text,
    );
    let mut script = String::from_utf8_lossy(&text).trim_end().to_string();
    if args.shell == clap_complete::Shell::Bash {
        script.push_str(BASH_BOARDS);
    }
    ui.out(script.trim_end());
    Ok(Exit::Ok)
}

/// Bash's completion of a board name also offers the boards of the `--machines-dir` on the
/// command line (or `$RTBUILD_MACHINES_DIR`): clap's `_rtbuild` runs first, then, after a flag
/// that names a machine, `rtbuild machines --names` lists that folder's catalog. The folder is
/// passed as one argument (never evaluated), and the names are matched by prefix, not through
/// `compgen -W`, which would expand them.
const BASH_BOARDS: &str = r#"

_rtbuild_machines_dir() {
    local dir=${RTBUILD_MACHINES_DIR-} i
    for ((i = 1; i < COMP_CWORD; i++)); do
        if [[ ${COMP_WORDS[i]} == --machines-dir ]]; then
            if [[ ${COMP_WORDS[i + 1]} == = ]]; then
                dir=${COMP_WORDS[i + 2]-}
            else
                dir=${COMP_WORDS[i + 1]-}
            fi
        fi
    done
    if [[ $dir == "~/"* ]]; then
        dir=$HOME/${dir#"~/"}
    fi
    printf '%s' "$dir"
}

_rtbuild_with_boards() {
    _rtbuild "$@"
    local cur=$2 prev=$3
    case $prev in
        --machine | -m | --machines) ;;
        show) [[ ${COMP_WORDS[1]-} == machines ]] || return 0 ;;
        *) return 0 ;;
    esac
    local dir name known
    dir=$(_rtbuild_machines_dir)
    [[ -n $dir ]] || return 0
    while IFS= read -r name; do
        [[ $name == "$cur"* ]] || continue
        for known in "${COMPREPLY[@]}"; do
            [[ $known == "$name" ]] && continue 2
        done
        COMPREPLY+=("$name")
    done < <(command rtbuild machines --machines-dir "$dir" --names 2>/dev/null)
    return 0
}

if [[ "${BASH_VERSINFO[0]}" -eq 4 && "${BASH_VERSINFO[1]}" -ge 4 || "${BASH_VERSINFO[0]}" -gt 4 ]]; then
    complete -F _rtbuild_with_boards -o nosort -o bashdefault -o default rtbuild
else
    complete -F _rtbuild_with_boards -o bashdefault -o default rtbuild
fi"#;

/// The scenario names `--scenario` takes (a test checks each is one `Scenario` parses).
const SCENARIOS: &[&str] =
    &["idle", "stress", "stress-isolated", "full", "system-load", "custom", "hackbench"];

/// The values the completion scripts offer, by argument id: the shipped catalog's machine names
/// and aliases (`--machine`, `--machines`, `machines show NAME`), the scenarios and the tests.
/// The lists are static (they work in bash, zsh and fish without running rtbuild); bash also
/// offers the boards of `--machines-dir` ([`BASH_BOARDS`]). Any name is accepted as typed.
fn hints() -> Vec<(&'static str, Vec<String>)> {
    let machines = super::machines::names(&crate::catalog::Catalog::embedded());
    let tests =
        crate::measure::rttests::Program::ALL.iter().map(|p| p.name().to_string()).collect();
    vec![
        ("machine", machines.clone()),
        ("machines", machines.clone()),
        ("name", machines),
        ("scenario", SCENARIOS.iter().map(|s| s.to_string()).collect()),
        ("tests", tests),
    ]
}

/// `cmd` with the [`hints`] as each matching argument's possible values, for the completion
/// script only: the command that parses arguments keeps its own parsers (a name outside the
/// catalog stays valid), and the values are hidden from the generated script's help.
fn with_value_hints(cmd: clap::Command) -> clap::Command {
    fn walk(cmd: clap::Command, hints: &[(&'static str, Vec<String>)]) -> clap::Command {
        let ids: Vec<String> = cmd
            .get_arguments()
            .filter(|a| a.get_action().takes_values())
            .map(|a| a.get_id().to_string())
            .collect();
        let mut cmd = cmd;
        for id in ids {
            if let Some((_, values)) = hints.iter().find(|(name, _)| *name == id) {
                let values = values.clone();
                cmd = cmd.mut_arg(id, move |arg| {
                    arg.value_parser(clap::builder::PossibleValuesParser::new(values))
                        .hide_possible_values(true)
                });
            }
        }
        let names: Vec<String> = cmd.get_subcommands().map(|s| s.get_name().to_string()).collect();
        for name in names {
            cmd = cmd.mut_subcommand(name, |sub| walk(sub, hints));
        }
        cmd
    }
    walk(cmd, &hints())
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

pub(super) fn man(args: ManArgs, ui: &Ui) -> crate::cli::error::Result<Exit> {
    // A device, FIFO or file is refused before a page is written (`/dev/null` would have
    // taken every page as a failed write, or a temp file beside it).
    crate::files::output::check_folder("--out-dir", &args.out_dir)
        .map_err(crate::cli::error::Refusal::Output)?;
    let pages = pages().map_err(crate::cli::error::Kind::ManPages)?;
    for (name, text) in &pages {
        let path = args.out_dir.join(name);
        crate::files::write::write_atomic(&path, text, false)?;
        ui.status("Wrote", crate::text::shown_path(&path));
    }
    if ui.json() {
        let names: Vec<&str> = pages.iter().map(|(n, _)| n.as_str()).collect();
        ui.out_json(&serde_json::json!({ "pages": names }))?;
    } else {
        ui.out(crate::text::shown_path(&args.out_dir));
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

    /// The completion hints are the catalog's names and aliases (qcs6490-rb3gen2 is one), every
    /// scenario the parser takes and every rt-tests program; the parsing command is unchanged.
    #[test]
    fn completion_hints_name_the_catalog_scenarios_and_tests() {
        let hints = super::hints();
        let of = |id: &str| hints.iter().find(|(n, _)| *n == id).unwrap().1.clone();
        assert!(of("machine").contains(&"qcs6490-rb3gen2".to_string()));
        assert!(of("machine").contains(&"rb3gen2-core-kit".to_string()));
        for scenario in super::SCENARIOS {
            assert!(scenario.parse::<crate::measure::testrun::Scenario>().is_ok(), "{scenario}");
        }
        assert!(of("tests").contains(&"oslat".to_string()));
        let hinted = super::with_value_hints(Cli::command());
        let image = hinted.find_subcommand("image").unwrap();
        let machine = image.get_arguments().find(|a| a.get_id() == "machine").unwrap();
        assert!(machine.get_possible_values().iter().any(|v| v.get_name() == "qcs6490-rb3gen2"));
        // The parser itself still takes a board the catalog does not know.
        let plain = Cli::command();
        assert!(
            plain.try_get_matches_from(["rtbuild", "generate", "--machine", "my-board"]).is_ok()
        );
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
                    let words =
                        crate::measure::toolargs::split("example", &part[at..]).expect("words");
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
