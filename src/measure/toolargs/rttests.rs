//! The option tables of the other rt-tests programs `rtbuild test --tests` runs (rt-tests 2.4,
//! from each program's `--help` on Debian 12, and `hwlatdetect`'s argparse definitions), for
//! `--test-args NAME="…"`. Options rtbuild sets by default but a user may change (`-D`, `-p`,
//! `-i`, …) are allowed: the user's value then replaces rtbuild's (see
//! `crate::measure::rttests::argv`). Options rtbuild relies on to place, record or read a run are
//! reserved.

use super::{Opt, Program, Use, Value};

const fn opt(short: char, long: &'static str, value: Value, rule: Use) -> Opt {
    Opt { short: Some(short), long: Some(long), value, rule }
}

const fn long(long: &'static str, value: Value, rule: Use) -> Opt {
    Opt { short: None, long: Some(long), value, rule }
}

use Use::{Allowed, Reserved};
use Value::{None as No, Optional, Required};

const SOURCE: &str = "rt-tests 2.4";

const JSON: Opt =
    long("json", Required, Reserved("rtbuild writes the JSON results into its result folder"));
const QUIET: Opt = opt('q', "quiet", No, Reserved("rtbuild already runs it quietly"));
const HELP: Opt = opt('h', "help", No, Reserved("it would print its help instead of measuring"));
const AFFINITY: Opt = opt(
    'a',
    "affinity",
    Optional,
    Reserved("rtbuild pins the threads to each RT CPU in turn (--rt-cpus)"),
);
const THREADS_OPT: Opt =
    opt('t', "threads", Optional, Reserved("rtbuild runs one measurement per RT CPU"));
const SMP: Opt =
    opt('S', "smp", No, Reserved("it spreads threads over every CPU, not the RT CPUs"));
const DURATION: Opt = opt('D', "duration", Required, Allowed);
const INTERVAL: Opt = opt('i', "interval", Required, Allowed);
const PRIO: Opt = opt('p', "prio", Required, Allowed);
const BREAKTRACE: Opt = opt('b', "breaktrace", Required, Allowed);
const DISTANCE: Opt = opt('d', "distance", Required, Allowed);
const LOOPS: Opt = opt('l', "loops", Required, Allowed);

pub(crate) static CYCLICDEADLINE: Program = Program {
    name: "cyclicdeadline",
    source: SOURCE,
    flag: "--test-args cyclicdeadline",
    options: &[
        AFFINITY,
        DURATION,
        HELP,
        INTERVAL,
        JSON,
        opt('s', "step", Required, Allowed),
        opt('t', "threads", Required, Reserved("rtbuild runs one deadline thread per RT CPU")),
        QUIET,
        BREAKTRACE,
        long("tracemark", No, Allowed),
    ],
};

pub(crate) static OSLAT: Program = Program {
    name: "oslat",
    source: SOURCE,
    flag: "--test-args oslat",
    options: &[
        opt('b', "bucket-size", Required, Allowed),
        opt('B', "bias", No, Allowed),
        opt('c', "cpu-list", Required, Reserved("rtbuild runs oslat on the RT CPUs (--rt-cpus)")),
        opt(
            'C',
            "cpu-main-thread",
            Required,
            Reserved("rtbuild keeps oslat's main thread on a housekeeping CPU"),
        ),
        DURATION,
        JSON,
        opt('f', "rtprio", Required, Allowed),
        opt('m', "workload-mem", Required, Allowed),
        QUIET,
        opt('s', "single-preheat", No, Allowed),
        opt('T', "trace-threshold", Required, Allowed),
        opt('v', "version", No, Reserved("it prints its version instead of measuring")),
        opt('w', "workload", Required, Allowed),
        opt('z', "zero-omit", No, Allowed),
        HELP,
    ],
};

pub(crate) static HACKBENCH: Program = Program {
    name: "hackbench",
    source: SOURCE,
    flag: "--test-args hackbench",
    options: &[
        opt('f', "fds", Required, Allowed),
        opt('F', "fifo", No, Allowed),
        opt('g', "groups", Required, Allowed),
        HELP,
        opt('l', "loops", Required, Reserved("rtbuild runs hackbench until the scenario ends")),
        opt('p', "pipe", No, Allowed),
        opt('i', "inet", No, Allowed),
        opt('s', "datasize", Required, Allowed),
        opt('T', "threads", No, Allowed),
        opt('P', "process", No, Allowed),
    ],
};

pub(crate) static PI_STRESS: Program = Program {
    name: "pi_stress",
    source: SOURCE,
    flag: "--test-args pi_stress",
    options: &[
        opt('d', "debug", No, Allowed),
        DURATION,
        opt('g', "groups", Required, Allowed),
        HELP,
        opt('i', "inversions", Required, Allowed),
        JSON,
        opt('m', "mlockall", No, Allowed),
        opt('p', "prompt", No, Reserved("it waits for a key press before starting")),
        QUIET,
        opt('r', "rr", No, Allowed),
        opt('s', "sched", Required, Allowed),
        opt('u', "uniprocessor", No, Allowed),
        opt('v', "verbose", No, Allowed),
        opt('V', "version", No, Reserved("it prints its version instead of testing")),
    ],
};

pub(crate) static PMQTEST: Program = Program {
    name: "pmqtest",
    source: SOURCE,
    flag: "--test-args pmqtest",
    options: &[
        AFFINITY,
        BREAKTRACE,
        DISTANCE,
        DURATION,
        opt('f', "forcetimeout", Required, Allowed),
        HELP,
        INTERVAL,
        JSON,
        LOOPS,
        PRIO,
        QUIET,
        SMP,
        THREADS_OPT,
        opt('T', "timeout", Required, Allowed),
    ],
};

pub(crate) static PTSEMATEST: Program = Program {
    name: "ptsematest",
    source: SOURCE,
    flag: "--test-args ptsematest",
    options: &[
        AFFINITY,
        BREAKTRACE,
        DISTANCE,
        DURATION,
        HELP,
        INTERVAL,
        JSON,
        LOOPS,
        PRIO,
        QUIET,
        SMP,
        THREADS_OPT,
    ],
};

const SEMA_OPTIONS: &[Opt] = &[
    AFFINITY,
    BREAKTRACE,
    DISTANCE,
    DURATION,
    opt('f', "fork", Optional, Allowed),
    HELP,
    INTERVAL,
    JSON,
    LOOPS,
    PRIO,
    QUIET,
    SMP,
    THREADS_OPT,
];

pub(crate) static SVSEMATEST: Program = Program {
    name: "svsematest",
    source: SOURCE,
    flag: "--test-args svsematest",
    options: SEMA_OPTIONS,
};

pub(crate) static SIGWAITTEST: Program = Program {
    name: "sigwaittest",
    source: SOURCE,
    flag: "--test-args sigwaittest",
    options: SEMA_OPTIONS,
};

pub(crate) static RT_MIGRATE_TEST: Program = Program {
    name: "rt-migrate-test",
    source: SOURCE,
    flag: "--test-args rt-migrate-test",
    options: &[
        opt('c', "check", No, Allowed),
        DURATION,
        opt('e', "equal", No, Allowed),
        HELP,
        JSON,
        LOOPS,
        opt('m', "maxerr", Required, Allowed),
        opt('p', "prio", Required, Allowed),
        QUIET,
        opt('r', "run-time", Required, Allowed),
        opt('s', "sleep-time", Required, Allowed),
    ],
};

pub(crate) static SSDD: Program = Program {
    name: "ssdd",
    source: SOURCE,
    flag: "--test-args ssdd",
    options: &[
        opt('f', "forks", Required, Allowed),
        HELP,
        JSON,
        opt('q', "quiet", No, Allowed),
        opt('i', "iters", Required, Allowed),
    ],
};

pub(crate) static SIGNALTEST: Program = Program {
    name: "signaltest",
    source: SOURCE,
    flag: "--test-args signaltest",
    options: &[
        AFFINITY,
        BREAKTRACE,
        DURATION,
        HELP,
        JSON,
        LOOPS,
        opt('m', "mlockall", No, Allowed),
        PRIO,
        QUIET,
        opt('t', "threads", Required, Allowed),
        opt(
            'v',
            "verbose",
            No,
            Reserved("it prints every sample instead of the summary rtbuild reads"),
        ),
    ],
};

pub(crate) static HWLATDETECT: Program = Program {
    name: "hwlatdetect",
    source: "hwlatdetect in rt-tests 2.4",
    flag: "--test-args hwlatdetect",
    options: &[
        opt('h', "help", No, Reserved("it prints the help instead of measuring")),
        long("duration", Required, Allowed),
        long("threshold", Required, Allowed),
        long("hardlimit", Required, Allowed),
        long("window", Required, Allowed),
        long("width", Required, Allowed),
        long(
            "report",
            Required,
            Reserved("rtbuild keeps hwlatdetect's output in its result folder"),
        ),
        long(
            "cpu-list",
            Required,
            Reserved("rtbuild runs the hwlat tracer on the RT CPUs (--rt-cpus)"),
        ),
        long("debug", No, Allowed),
        long("quiet", No, Reserved("rtbuild reads hwlatdetect's summary, which --quiet removes")),
        long("watch", No, Reserved("rtbuild reads hwlatdetect's summary, which --watch replaces")),
    ],
};
