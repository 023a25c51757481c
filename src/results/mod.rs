//! What was measured, read and judged: [`input`] decides once what a measurement path is and
//! reads it once into the typed input every command takes; [`cyclictest`] parses cyclictest's outputs;
//! [`report`] reads result folders and logs into verdicts and renders text, HTML, JSON, JUnit
//! and OpenMetrics; [`history`] keeps a lab's runs and finds regressions. The limits a verdict
//! is judged against are the catalog's (`crate::catalog::latency`).

pub mod cyclictest;
pub(crate) mod history;
pub(crate) mod input;
#[cfg(test)]
mod input_tests;
pub(crate) mod report;
#[cfg(test)]
mod verdict_tests;
