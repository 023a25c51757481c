//! Each seed guide's own measurement, run through `rtbuild test` with the real cyclictest and
//! stress-ng at short durations: the recorded argv is the guide's command line (plus what rtbuild
//! always adds: `--mainaffinity`, `-q`, `--json`, the histogram), each scenario is valid, the
//! verdict word follows the recorded maximum (never INVALID for samples above the histogram), and
//! `rtbuild report` on the folder gives the same verdict and one summary row per thread. Behaviour
//! only, never latency values; no CPU count is assumed.

use serde_json::Value;

use crate::support::cpus::online_cpus;
use crate::support::harness::Test;
use crate::support::measuring::{latency_dependent, measuring, run_json};

/// The strings of a JSON array.
fn strings(value: &Value) -> Vec<&str> {
    value.as_array().unwrap().iter().map(|a| a.as_str().unwrap()).collect()
}

/// Whether `argv` holds `pair` as neighbours (`-l`, `300`).
fn has(argv: &[&str], pair: &[&str]) -> bool {
    argv.windows(pair.len()).any(|w| w == pair)
}

/// Every scenario valid (only this VM's scheduling may cost cycles), the verdict word the max
/// gives, and `report` agreeing on the folder with one summary row per recorded thread.
fn check_verdict_and_report(run: &crate::support::harness::Run, threshold: u64) -> Value {
    let dir = run.path().join("res");
    let json = run_json(&dir);
    let mut over = false;
    for s in json["scenarios"].as_array().unwrap() {
        let reasons = strings(&s["invalid_reasons"]);
        assert!(reasons.iter().all(|r| latency_dependent(r)), "{}: {reasons:?}", s["name"]);
        over |= s["max_us"].as_u64().unwrap() > threshold;
        for t in s["threads"].as_array().unwrap() {
            if t["overflows"].as_u64().unwrap() > 0 {
                assert!(s["notes"].to_string().contains("are bounds"), "{s}");
            }
        }
    }
    // Lost cycles, or a stress load this shared VM's other work took CPU time from.
    let scheduling = ["expected cycles", "where --load asked"]
        .iter()
        .any(|r| json["scenarios"].to_string().contains(r));
    let word = json["verdict"].as_str().unwrap();
    match word {
        "INVALID" => assert!(scheduling, "invalid only for this VM's scheduling: {json}"),
        "FAIL" => assert!(over, "{json}"),
        "PASS" => assert!(!over, "{json}"),
        other => panic!("verdict {other}"),
    }
    assert_eq!(run.code(), if word == "PASS" { 0 } else { 1 });
    let report =
        Test::new().args(["--json", "report", &dir.display().to_string()]).run().stderr_is("");
    assert_eq!(report.code(), run.code(), "report and test exit alike");
    let r = report.json();
    // One vocabulary: `report` says the word `test` wrote.
    assert_eq!(r["verdict"], word, "{r}");
    let rows = r["summary"].as_array().unwrap();
    for s in json["scenarios"].as_array().unwrap() {
        let name = s["name"].as_str().unwrap();
        let mine = rows.iter().filter(|row| row["scenario"] == name).count();
        assert_eq!(mine, s["threads"].as_array().unwrap().len(), "{name}: {rows:?}");
    }
    json
}

/// Qualcomm (seeds 000/002): `cyclictest -a 3 -t 1 -m -l 100000000 -i 1000 -p 99 -h 100
/// --mainaffinity 2` (IQ-8275), idle and with one `stress-ng --cpu 1 --cpu-load` pinned per
/// housekeeping CPU, at 3000 loops instead of 100 million.
#[test]
fn qualcomm_guide_commands_run_as_written() {
    let _one_at_a_time = measuring();
    let rt = *online_cpus().last().unwrap();
    let run = Test::new()
        .args(["test", "--local", "--rt-cpus", &rt.to_string(), "--scenario", "idle,stress"])
        .args(["--loops", "3000", "--interval-us", "1000", "--histogram-us", "100"])
        .args(["--main-cpu", "0", "--load", "60", "--out", "res"])
        .run()
        .ignore_stdout()
        // The other lines carry what this machine measured and how it is set up.
        .stderr_has_line(&format!("   Measuring idle for 3s on RT CPUs {rt}"))
        .stderr_has_line(&format!("   Measuring stress for 3s on RT CPUs {rt}"));
    let json = check_verdict_and_report(&run, 100);
    assert_eq!(json["settings"]["length"]["loops"], 3000, "{}", json["settings"]);
    for s in json["scenarios"].as_array().unwrap() {
        let ct = strings(&s["argv"]["cyclictest"]);
        for pair in [
            &["-a", &rt.to_string()][..],
            &["-t", "1"],
            &["-m"],
            &["-l", "3000"],
            &["-i", "1000"],
            &["-p", "99"],
            &["-h", "100"],
            &["--mainaffinity=0"],
        ] {
            assert!(has(&ct, pair), "{pair:?} in {ct:?}");
        }
        assert!(!ct.contains(&"-D"), "{ct:?}");
    }
    let stress = &json["scenarios"][1]["argv"]["load"];
    for load in stress.as_array().unwrap() {
        let argv = strings(load);
        assert_eq!(argv[..2], ["taskset", "-c"], "{argv:?}");
        assert!(has(&argv, &["stress-ng", "--cpu", "1", "--cpu-load", "60"]), "{argv:?}");
    }
}

/// RK3588 (seed 001): `cyclictest -c 0 -m -t 8 -p 99 -D 600` (eight threads cyclictest places
/// itself) idle and under `stress-ng -c N --io 2 --vm 1` on every CPU without isolation.
#[test]
fn rk3588_guide_commands_run_as_written() {
    let _one_at_a_time = measuring();
    let rt = *online_cpus().last().unwrap();
    let run = Test::new()
        .args(["test", "--local", "--rt-cpus", &rt.to_string(), "--scenario", "idle,system-load"])
        .args(["--threads", "8", "--unpinned", "--cyclictest-args", "-c 0", "--duration", "3"])
        .args(["--histogram-us", "100000", "--out", "res"])
        .run()
        .ignore_stdout()
        // The other lines carry what this machine measured and how it is set up.
        .stderr_has_line(&format!("   Measuring idle for 3s on RT CPUs {rt}"))
        .stderr_has_line(
            "     Loading system-load: stress-ng on every CPU (load on the measured CPUs, no isolation)",
        )
        .stderr_has_line(&format!("   Measuring system-load for 3s on RT CPUs {rt}"));
    let json = check_verdict_and_report(&run, 100);
    for s in json["scenarios"].as_array().unwrap() {
        let ct = strings(&s["argv"]["cyclictest"]);
        for pair in [&["-c", "0"][..], &["-m"], &["-t", "8"], &["-p", "99"], &["-D", "3"]] {
            assert!(has(&ct, pair), "{pair:?} in {ct:?}");
        }
        assert!(!ct.contains(&"-a") && !ct.contains(&"-d"), "unpinned, default distance: {ct:?}");
        let threads = s["threads"].as_array().unwrap();
        let numbers: Vec<u64> = threads.iter().map(|t| t["thread"].as_u64().unwrap()).collect();
        assert_eq!(numbers, (0..8).collect::<Vec<_>>(), "as cyclictest numbers them");
        assert!(threads.iter().all(|t| t["interval_us"] == 1000), "{threads:?}");
        // The `Measured` line names each of the eight figures by its thread and the CPU
        // cyclictest measured it on (the figures are this run's, read from the JSON).
        let maxes: Vec<String> = threads
            .iter()
            .map(|t| format!("thread {} on CPU{} {} µs", t["thread"], t["cpu"], t["max_us"]))
            .collect();
        let measured = format!("    Measured {}: ", s["name"].as_str().unwrap());
        let stderr = run.stderr();
        let line = stderr.lines().find(|l| l.starts_with(&measured)).expect(&stderr);
        assert!(line.contains(&format!("; max {}; ", maxes.join(", "))), "{line}");
    }
    let system = &json["scenarios"][1];
    assert_eq!(system["label"], "load on the measured CPUs, no isolation");
    let load = strings(&system["argv"]["load"][0]);
    assert_eq!(load[0], "stress-ng", "unpinned, no taskset: {load:?}");
    assert!(has(&load, &["--io", "2", "--vm", "1"]), "{load:?}");
    let text = Test::new()
        .args(["report", &run.path().join("res").display().to_string()])
        .run()
        .stderr_is("");
    assert!(matches!(text.code(), 0 | 1));
    assert!(
        text.stdout().contains("system-load (load on the measured CPUs, no isolation)"),
        "{}",
        text.stdout()
    );
}

/// RK3562J (seed 003): idle, full load without isolation, full load with CPU 3 isolated, as one
/// command. The first two are valid anywhere; the third needs the RT CPUs isolated: on a kernel
/// that does not isolate them the whole command is refused before anything runs (issue 39),
/// and the first two run on their own.
#[test]
fn rk3562j_three_states_run_as_one_command() {
    let _one_at_a_time = measuring();
    let rt = *online_cpus().last().unwrap();
    let isolated = std::fs::read_to_string("/sys/devices/system/cpu/isolated").unwrap();
    let isolated = isolated.trim();
    let rt_isolated = isolated.split(',').any(|part| {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        matches!((a.parse::<u64>(), b.parse::<u64>()), (Ok(a), Ok(b)) if (a..=b).contains(&rt))
    });
    let three = |scenarios: &str| {
        Test::new()
            .args(["test", "--local", "--rt-cpus", &rt.to_string()])
            .args(["--scenario", scenarios, "--duration", "2"])
            .args(["--histogram-us", "800", "--out", "res"])
            .run()
    };
    let scenarios = if rt_isolated {
        "idle,system-load,stress-isolated"
    } else {
        three("idle,system-load,stress-isolated")
            .code_is(2)
            .stderr_contains(&format!(
                "scenario stress-isolated runs its load unpinned, so only the kernel's isolation keeps it off the RT CPUs, but RT CPUs {rt} are not isolated"
            ))
            .nothing_written("res");
        "idle,system-load"
    };
    // The other lines carry what this machine measured and how it is set up.
    let run = scenarios.split(',').fold(three(scenarios).ignore_stdout(), |run, scenario| {
        run.stderr_has_line(&format!("   Measuring {scenario} for 2s on RT CPUs {rt}"))
    });
    assert!(matches!(run.code(), 0 | 1), "{}", run.stderr());
    let json = run_json(&run.path().join("res"));
    let names: Vec<&str> =
        json["scenarios"].as_array().unwrap().iter().map(|s| s["name"].as_str().unwrap()).collect();
    assert_eq!(names.join(","), scenarios);
    for s in json["scenarios"].as_array().unwrap() {
        let reasons = strings(&s["invalid_reasons"]);
        assert!(reasons.iter().all(|r| latency_dependent(r)), "{}: {reasons:?}", s["name"]);
    }
}

/// Qualcomm's results table (seed 002): the target's os-release, image name (`IMAGE_NAME`,
/// `/etc/buildinfo`, `/etc/version`), `uname -r`/`-v` and devfreq governors are recorded in
/// `run.json`, and `report` shows the guide's columns in text, JSON and HTML, with the tuning
/// state. The image files and devfreq come from a board-like tree (RTBUILD_SYSROOT; this VM
/// has neither).
#[test]
fn the_target_build_is_recorded_and_shown_in_the_guides_table() {
    let _one_at_a_time = measuring();
    let rt = *online_cpus().last().unwrap();
    let online = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap();
    let gpu = "sysroot/sys/class/devfreq/3d00000.gpu";
    let run = Test::new()
        .file(
            "sysroot/etc/os-release",
            "NAME=\"Qualcomm Linux\"\nVERSION_ID=2.0\nPRETTY_NAME=\"Qualcomm Linux 2.0\"\n# c\n",
        )
        .file("sysroot/etc/buildinfo", "Build Configuration:\nIMAGE_NAME = qcom-multimedia-image\n")
        .file("sysroot/etc/version", "20261201093000\n")
        .file("sysroot/sys/devices/system/cpu/online", online)
        .file(&format!("{gpu}/governor"), "performance\n")
        .file(&format!("{gpu}/cur_freq"), "300000000\n")
        .file("sysroot/sys/class/devfreq/soc:qcom,cpu0-llcc/governor", "bw_hwmon\n")
        // A qcom-distro-kvm image: Linux is the KVM host (/dev/kvm), booted by UEFI.
        .file("sysroot/dev/kvm", "")
        .file("sysroot/sys/firmware/efi/fw_platform_size", "64\n");
    let sysroot = run.path().join("sysroot");
    let run = run
        .env("RTBUILD_SYSROOT", &sysroot)
        .args(["test", "--local", "--rt-cpus", &rt.to_string(), "--scenario", "idle"])
        .args(["--duration", "2", "--histogram-us", "100000", "--out", "res"])
        .run()
        .ignore_stdout()
        // The other lines carry what this machine measured and how it is set up.
        .stderr_has_line(&format!("   Measuring idle for 2s on RT CPUs {rt}"));
    assert!(matches!(run.code(), 0 | 1), "{}", run.stderr());
    let dir = run.path().join("res");
    let mut json = run_json(&dir);
    let fp = &json["fingerprint"];
    assert_eq!(fp["os_release"]["PRETTY_NAME"], "Qualcomm Linux 2.0");
    assert_eq!(fp["image_name"], "qcom-multimedia-image");
    assert_eq!(fp["image_version"], "20261201093000");
    let uname_r = std::process::Command::new("uname").arg("-r").output().unwrap().stdout;
    assert_eq!(fp["kernel_release"], String::from_utf8_lossy(&uname_r).trim());
    assert!(!fp["kernel_version"].as_str().unwrap().is_empty());
    assert_eq!(
        fp["devfreq"],
        serde_json::json!([
            {"device": "3d00000.gpu", "governor": "performance", "cur_hz": 300_000_000u64},
            {"device": "soc:qcom,cpu0-llcc", "governor": "bw_hwmon", "cur_hz": null}
        ])
    );
    assert_eq!(fp["boot"], serde_json::json!({"kvm": true, "efi": true, "guest_checked": true}));
    let folder = dir.display().to_string();
    let code = run.code();
    let report = Test::new().args(["--json", "report", &folder]).run().stderr_is("").code_is(code);
    let rows = &report.json()["results"];
    assert_eq!(rows[0]["device"], format!("local, RT core: {rt}"), "{rows}");
    assert_eq!(rows[0]["boot_flow"], "KVM", "{rows}");
    assert_eq!(rows[0]["distro_and_image"], "Qualcomm Linux 2.0, qcom-multimedia-image");
    assert_eq!(rows[0]["use_case"], "idle");
    assert!(rows[0]["max_us"].is_number(), "{rows}");
    let text = Test::new().args(["report", &folder]).run().stderr_is("").code_is(code);
    let out = text.stdout();
    let header = out.lines().find(|l| l.starts_with("  Device ")).expect(&out);
    let columns: Vec<&str> = header.split("  ").map(str::trim).filter(|c| !c.is_empty()).collect();
    assert_eq!(
        columns,
        [
            "Device",
            "Distro and image",
            "use case",
            "Minimum latency (µs)",
            "Avg latency (µs)",
            "Max latency (µs)",
            "Duration",
            "Samples",
            "Verdict"
        ]
    );
    assert!(
        text.stdout().contains("  devfreq        3d00000.gpu performance"),
        "{}",
        text.stdout()
    );
    // The HTML says whether the tuning was applied and reverted.
    json["tuning"] = serde_json::json!({"applied": true, "reverted": true});
    std::fs::write(dir.join("run.json"), json.to_string()).unwrap();
    let html = run.path().join("r.html");
    Test::new()
        .args(["report", &folder, "--html", &html.display().to_string()])
        .run()
        .ignore_stdout()
        .stderr_is(&format!("       Wrote {}\n", html.display()))
        .code_is(code);
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("<th class=\"l\">Distro and image</th>"), "{page}");
    let device =
        format!("local, RT core: {rt}<br><span class=\"boot-flow\">Boot Flow - KVM</span>");
    assert!(page.contains(&device), "{page}");
    assert!(page.contains("applied for the run, then reverted"), "{page}");
}
