//! Text in and out: [`ui`] is the one output channel (results to stdout, everything a person
//! reads to stderr); [`printable`] escapes text from outside rtbuild before it is printed;
//! [`table`] lays out terminal tables; [`quote`] quotes for display and for the one shell
//! rtbuild crosses (the remote side of `ssh`); [`utc`] reads and writes dates; [`yaml`] loads
//! YAML from outside within a time budget; [`duration`](mod@duration) is the one way a length
//! of time is shown, and [`counted`] the one way a number of things is (`1 repo`, `2 repos`).

mod count;
mod duration;
mod printable;
pub(crate) mod quote;
pub(crate) mod table;
pub(crate) mod templates;
pub(crate) mod ui;
mod utc;
pub(crate) mod yaml;

pub(crate) use count::counted;
pub(crate) use duration::{clock, duration};
pub(crate) use printable::{
    escape_controls, escape_controls_but_lines, escape_json_text, is_hidden_format, needs_escape,
    printable, printable_first, shown, shown_at, shown_path, shown_tail,
};
pub(crate) use utc::{iso_from_epoch, parse_date};
