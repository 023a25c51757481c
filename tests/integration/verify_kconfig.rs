//! `verify` explains a dropped option from the kernel's own Kconfig files (Debian's real
//! linux-source-6.12, see [`crate::support::kernel_source`]): given with `--kernel-src`, or found in a
//! build folder's `tmp/work-shared/<machine>/kernel-source`; and says so when it falls back to
//! its built-in table. Expected file lines are looked up in the real files by the test.

use crate::support::harness::Test;
use crate::support::kernel_source::{kernel_tree, line_after, line_of};

/// The note `verify` prints when no plan names the CPUs to check.
const NO_PLAN: &str = "note: no plan given (--machine or --plan): only PREEMPT_RT, the command line and rt-tests were checked\n";

/// An arm64 config on which PREEMPT_RT was dropped because EXPERT is off.
/// Where the summary of a failed `verify --json` points.
const JSON: &str = "status `fail` in the JSON on stdout";

/// The one line a failed verify ends with: how many of its checks failed, for which source,
/// and where the failed rows are.
fn failed(count: &str, source: &str, place: &str) -> String {
    format!("warning: {count} failed for {source} ({place})\n")
}

const NO_EXPERT: &str = "CONFIG_ARM64=y\nCONFIG_SMP=y\n# CONFIG_EXPERT is not set\n\
                         CONFIG_ARCH_SUPPORTS_RT=y\nCONFIG_PREEMPT=y\nCONFIG_PREEMPTION=y\n";

fn reason(json: &serde_json::Value, check: &str) -> String {
    let checks = json["reports"][0]["checks"].as_array().unwrap();
    let found = checks.iter().find(|c| c["check"] == check).unwrap_or_else(|| panic!("{json:#}"));
    found["reason"].as_str().unwrap_or_else(|| panic!("{found}")).to_string()
}

fn expert_reason() -> String {
    let line = line_of("kernel/Kconfig.preempt", "depends on EXPERT && ARCH_SUPPORTS_RT");
    format!(
        "CONFIG_PREEMPT_RT depends on EXPERT && ARCH_SUPPORTS_RT (kernel/Kconfig.preempt:{line}), \
         but CONFIG_EXPERT is not set; add CONFIG_EXPERT=y to the fragment"
    )
}

#[test]
fn kernel_src_gives_the_real_depends_on_with_file_and_line() {
    let tree = kernel_tree();
    let run = Test::new()
        .file("c.config", NO_EXPERT)
        .args(["--json", "verify", "--kernel-config", "c.config", "--kernel-src"])
        .args([&tree])
        .run()
        .stderr_is(&format!("{NO_PLAN}{}", failed("1 of 1 check", "c.config", JSON)))
        .code_is(1);
    assert_eq!(reason(&run.json(), "CONFIG_PREEMPT_RT"), expert_reason());
    let run = Test::new()
        .file("c.config", NO_EXPERT)
        .args(["verify", "c.config", "--kernel-src"])
        .args([&tree])
        .run()
        .code_is(1);
    run.stdout_contains(&format!("  CONFIG_PREEMPT_RT: {}\n", expert_reason())).stderr_contains(
        &format!("note: dependency hints come from the Kconfig files of {}", tree.display()),
    );
}

#[test]
fn build_folder_kernel_source_is_used_without_a_flag() {
    let tree = kernel_tree();
    let shared = "build/tmp/work-shared/rb3gen2-core-kit";
    let test = Test::new().file(&format!("{shared}/kernel-build-artifacts/.config"), NO_EXPERT);
    std::os::unix::fs::symlink(&tree, test.path().join(shared).join("kernel-source")).unwrap();
    let run = test
        .args(["--json", "verify", "build"])
        .run()
        .stderr_is(&format!("{NO_PLAN}{}", failed("1 of 1 check", "build", JSON)))
        .code_is(1);
    let json = run.json();
    assert_eq!(json["reports"][0]["kind"], "build folder");
    assert_eq!(reason(&json, "CONFIG_PREEMPT_RT"), expert_reason());
    let notes = json["reports"][0]["notes"].to_string();
    assert!(
        notes.contains("Kconfig files of build/tmp/work-shared/rb3gen2-core-kit/kernel-source ("),
        "{notes}"
    );
}

#[test]
fn choice_select_inherited_if_and_unknown_names_come_from_the_tree() {
    let tree = kernel_tree();
    // EXPERT is on, yet PREEMPT_RT lost to another member of the preemption-model choice.
    let config = "CONFIG_ARM64=y\nCONFIG_SMP=y\nCONFIG_EXPERT=y\nCONFIG_ARCH_SUPPORTS_RT=y\n\
                  CONFIG_PREEMPT_VOLUNTARY=y\n# CONFIG_CGROUPS is not set\n";
    let run = Test::new()
        .file("c.config", config)
        .args(["--json", "verify", "--kernel-config", "c.config", "--machine", "rb3gen2-core-kit"])
        .args(["--config", "CONFIG_NO_SUCH_OPTION=y", "--config", "CONFIG_PREEMPT_VOLUNTARY=n"])
        .args(["--kernel-src"])
        .args([&tree])
        .run()
        .stderr_is(&failed("6 of 8 checks", "c.config", JSON))
        .code_is(1);
    let json = run.json();
    let choice = line_of("kernel/Kconfig.preempt", "choice");
    let rt = reason(&json, "CONFIG_PREEMPT_RT");
    assert!(
        rt.starts_with(&format!(
            "CONFIG_PREEMPT_RT is one member of the choice \"Preemption Model\" \
             (kernel/Kconfig.preempt:{choice}: CONFIG_PREEMPT_NONE, CONFIG_PREEMPT_VOLUNTARY, \
             CONFIG_PREEMPT, CONFIG_PREEMPT_RT), and CONFIG_PREEMPT_VOLUNTARY is set instead"
        )),
        "{rt}"
    );
    // CPUSETS sits inside `if CGROUPS` in init/Kconfig: the enclosing block is named.
    let cpusets = reason(&json, "CONFIG_CPUSETS");
    let if_cgroups = line_of("init/Kconfig", "if CGROUPS");
    assert!(
        cpusets.contains(&format!("and on CGROUPS (enclosing `if`, init/Kconfig:{if_cgroups})"))
            && cpusets.contains("CONFIG_CGROUPS is not set")
            && cpusets.contains("add CONFIG_CGROUPS=y to the fragment"),
        "{cpusets}"
    );
    let unknown = reason(&json, "CONFIG_NO_SUCH_OPTION");
    assert!(
        unknown.starts_with(&format!(
            "CONFIG_NO_SUCH_OPTION is defined nowhere in the Kconfig of {}",
            tree.display()
        )) && unknown.ends_with("for arm64); check the name against this kernel version"),
        "{unknown}"
    );

    // Asked off, but selected: PREEMPT_RT selects PREEMPTION.
    let config = "CONFIG_ARM64=y\nCONFIG_EXPERT=y\nCONFIG_ARCH_SUPPORTS_RT=y\nCONFIG_PREEMPT_RT=y\n\
                  CONFIG_PREEMPTION=y\n";
    let run = Test::new()
        .file("c.config", config)
        .args(["--json", "verify", "c.config", "--machine", "rb3gen2-core-kit"])
        .args(["--config", "CONFIG_PREEMPTION=n", "--kernel-src"])
        .args([&tree])
        .run()
        .stderr_is(&failed("4 of 7 checks", "c.config", JSON))
        .code_is(1);
    let entry = line_of("kernel/Kconfig.preempt", "config PREEMPT_RT");
    let select = line_after("kernel/Kconfig.preempt", entry, "select PREEMPTION");
    assert_eq!(
        reason(&run.json(), "CONFIG_PREEMPTION"),
        format!(
            "CONFIG_PREEMPTION is selected by CONFIG_PREEMPT_RT (kernel/Kconfig.preempt:{select}), \
             which is on; a `select` wins over the fragment: turn it off to drop it"
        )
    );
}

#[test]
fn without_kernel_source_the_table_answers_and_says_so() {
    let run = Test::new()
        .file("c.config", NO_EXPERT)
        .args(["--json", "verify", "c.config"])
        .run()
        .stderr_is(&format!("{NO_PLAN}{}", failed("1 of 1 check", "c.config", JSON)))
        .code_is(1);
    assert_eq!(
        reason(&run.json(), "CONFIG_PREEMPT_RT"),
        "CONFIG_PREEMPT_RT depends on CONFIG_EXPERT && CONFIG_ARCH_SUPPORTS_RT, but CONFIG_EXPERT \
         is not set; add CONFIG_EXPERT=y to the fragment (rtbuild's built-in table of mainline \
         dependencies: no kernel source was found; pass --kernel-src DIR to read this kernel's own \
         Kconfig)"
    );
}

#[test]
fn a_kernel_src_that_is_not_a_kernel_tree_is_one_line_exit_2() {
    for dir in ["empty", "missing"] {
        let run = Test::new()
            .file("empty/README", "")
            .file("c.config", NO_EXPERT)
            .args(["verify", "c.config", "--kernel-src", dir])
            .run();
        run.usage_error(&format!(
            "`{dir}` is not a kernel source tree: it has no top-level Kconfig; pass the kernel's \
             source folder (a build keeps it in tmp/work-shared/<machine>/kernel-source)"
        ));
    }
}
