//! What was measured, read and judged: [`cyclictest`] parses cyclictest's outputs;
//! [`report`] reads result folders and logs into verdicts and renders text, HTML, JSON, JUnit
//! and OpenMetrics; [`history`] keeps a lab's runs and finds regressions; [`latency`] holds the
//! limits a verdict is judged against.

pub mod cyclictest;
pub(crate) mod history;
pub(crate) mod latency;
pub(crate) mod report;
