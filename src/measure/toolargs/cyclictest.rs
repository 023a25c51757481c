//! cyclictest's option table, from rt-tests 2.4's `getopt_long` call (short string
//! `a::A::b:c:d:D:F:h:H:i:l:MNo:p:mqrRsSt::uvD:x` and its long options), with the options
//! `rtbuild test` sets itself marked reserved.

use super::{Opt, Program, Use, Value};

const fn opt(short: Option<char>, long: &'static str, value: Value, rule: Use) -> Opt {
    Opt { short, long: Some(long), value, rule }
}

use Use::{Allowed, Reserved};
use Value::{None as No, Optional, Required};

const THREADS: &str = "rtbuild runs one thread per measured CPU, pinned there; choose the CPUs with --measure-cpus all|LIST, or pass --threads N --unpinned for N unpinned threads";

/// cyclictest as `rtbuild test` runs it.
pub(crate) static CYCLICTEST: Program = Program {
    name: "cyclictest",
    source: "rt-tests 2.4",
    flag: "--cyclictest-args",
    options: &[
        opt(Some('a'), "affinity", Optional, Reserved(THREADS)),
        opt(Some('A'), "aligned", Optional, Allowed),
        opt(Some('b'), "breaktrace", Required, Allowed),
        opt(Some('c'), "clock", Required, Allowed),
        opt(None, "default-system", No, Allowed),
        opt(
            Some('d'),
            "distance",
            Required,
            Reserved(
                "rtbuild gives every thread the same interval (-d 0), as its cycle-count check expects",
            ),
        ),
        opt(
            Some('D'),
            "duration",
            Required,
            Reserved("pass --duration instead (bare seconds like 600 work, as with -D)"),
        ),
        opt(Some('F'), "fifo", Required, Allowed),
        opt(Some('h'), "histogram", Required, Reserved("pass --histogram-us instead")),
        opt(
            Some('H'),
            "histofall",
            Required,
            Reserved("rtbuild sets the histogram; pass --histogram-us instead"),
        ),
        opt(
            None,
            "histfile",
            Required,
            Reserved("rtbuild keeps the histogram in the result folder"),
        ),
        opt(Some('i'), "interval", Required, Reserved("pass --interval-us instead")),
        opt(
            None,
            "json",
            Required,
            Reserved("rtbuild writes cyclictest's JSON into the result folder"),
        ),
        opt(None, "laptop", No, Allowed),
        opt(None, "latency", Required, Allowed),
        opt(Some('l'), "loops", Required, Reserved("pass --loops N instead (or --duration)")),
        opt(
            None,
            "mainaffinity",
            Required,
            Reserved("pass --main-cpu N (a housekeeping CPU) instead"),
        ),
        opt(Some('m'), "mlockall", No, Allowed),
        opt(Some('M'), "refresh_on_max", No, Allowed),
        opt(Some('N'), "nsecs", No, Reserved("rtbuild records and judges microseconds")),
        opt(
            Some('o'),
            "oscope",
            Required,
            Reserved("oscilloscope mode needs -v, whose per-sample lines rtbuild does not record"),
        ),
        opt(
            Some('p'),
            "priority",
            Required,
            Reserved(
                "rtbuild measures at SCHED_FIFO priority 99, the priority its validity checks expect",
            ),
        ),
        opt(
            None,
            "policy",
            Required,
            Reserved("rtbuild measures with SCHED_FIFO, the policy its validity checks expect"),
        ),
        opt(None, "priospread", No, Reserved("rtbuild runs every thread at priority 99")),
        opt(Some('q'), "quiet", No, Allowed),
        opt(Some('r'), "relative", No, Allowed),
        opt(Some('R'), "resolution", No, Allowed),
        opt(None, "secaligned", Optional, Allowed),
        opt(Some('s'), "system", No, Allowed),
        opt(None, "smi", No, Allowed),
        opt(Some('S'), "smp", No, Reserved(THREADS)),
        opt(None, "spike", Required, Allowed),
        opt(None, "spike-nodes", Required, Allowed),
        opt(Some('t'), "threads", Optional, Reserved(THREADS)),
        opt(None, "tracemark", No, Allowed),
        opt(Some('u'), "unbuffered", No, Allowed),
        opt(
            Some('v'),
            "verbose",
            No,
            Reserved(
                "rtbuild reads the histogram from cyclictest's output, and -v would replace it with one line per sample",
            ),
        ),
        opt(None, "dbg_cyclictest", No, Allowed),
        opt(
            None,
            "help",
            No,
            Reserved("rtbuild needs cyclictest to measure, not to print its help"),
        ),
        opt(Some('x'), "posix_timers", No, Allowed),
    ],
};
