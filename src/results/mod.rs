//! What was measured, read and judged: [`cyclictest`] parses cyclictest's outputs;
//! [`report`] reads result folders and logs into verdicts and renders text, HTML, JSON, JUnit
//! and OpenMetrics; [`history`] keeps a lab's runs and finds regressions. The limits a verdict
//! is judged against are the catalog's (`crate::catalog::latency`).

pub mod cyclictest;
pub(crate) mod history;
pub(crate) mod report;
