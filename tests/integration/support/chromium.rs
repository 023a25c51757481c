//! Headless Chromium, for the HTML reports.

use std::path::Path;
use std::process::Command;

pub(crate) fn chromium(args: &[&str], profile: &Path) -> std::process::Output {
    Command::new("timeout")
        .arg("120")
        .arg("/usr/bin/chromium")
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"])
        .args(["--disable-component-update", "--disable-sync", "--no-first-run"])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .output()
        .expect("chromium is installed by .ci/setup")
}
