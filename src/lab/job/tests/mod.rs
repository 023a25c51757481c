//! The job's tests, by the part of the job they check, over one [`request`].

use std::collections::BTreeMap;

use super::render::job;
use super::testdef::{script, steps, test};
use super::*;
use crate::catalog::Deploy;
use crate::formats::lava_job::{
    Action, AutoLogin, Boot, ContextValue, Deploy as DeployAction, Minutes, QcomflashImage,
};
use crate::host::cpus::CpuLayout;
use crate::lab::qemu::QemuImages;
use crate::measure::rttests::Program;
use crate::measure::testrun::{CommandSpec, Measurement, Scenario, Span, Threads};
use crate::plan::{CpuSet, Distro};
use crate::text::quote;

pub(crate) fn request() -> JobRequest {
    let online = CpuSet::range(0, 8);
    JobRequest {
        machine: "rb3gen2-core-kit".into(),
        image: "qcom-multimedia-image".into(),
        lab: Lab::resolve("rb3gen2-core-kit", None, "master", None, None).unwrap(),
        distro: Distro::QcomDistro,
        artifacts: Artifacts::Bundle(
            BundleUrl::parse("https://ci.example.com/b/rb3gen2-core-kit-rt.tar.gz").unwrap(),
        ),
        layout: CpuLayout::new(
            &online,
            &CpuSet::parse("7").unwrap(),
            None,
            crate::host::cpus::Board::Given,
        )
        .unwrap(),
        measurement: Measurement {
            custom_load: None,
            scenarios: vec![Scenario::Idle, Scenario::Stress],
            span: Span::parse("5m").unwrap(),
            duration_text: "5m".into(),
            interval_us: 1000,
            histogram_us: 1000,
            load_percent: 60,
            cyclictest_args: vec!["--spike=250".into()],
            tests: vec![Program::Cyclictest],
            test_args: BTreeMap::new(),
            noise_us: 20,
            main_cpu: None,
            threads: crate::measure::testrun::Threads::PerCpu,
        },
        threshold_us: 100,
        tags: vec![],
        lava_version: LavaVersion::CURRENT,
        headers: vec![],
    }
}

mod actions;
mod render;
mod request;
mod testdef;
