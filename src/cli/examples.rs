//! The Examples section of each subcommand's long help (`rtbuild CMD --help`): the README's
//! main journeys, one command line each.

pub(super) const MACHINES: &str = "\
Examples:
  rtbuild machines                               # the catalog
  rtbuild machines show qcs6490-rb3gen2          # one board (aliases work)
  rtbuild machines --meta-qcom ../meta-qcom      # compared with a meta-qcom checkout
  rtbuild machines show rk3588-evb               # a board rtbuild measures, not builds

A board for measuring needs three lines (housekeeping defaults to the other CPUs), in a
*.yaml of --machines-dir:
  name: my-rk3588
  cpus: 8
  rt: { rt_cpus: \"7\" }";

pub(super) const GENERATE: &str = "\
Examples:
  rtbuild generate --machine qcs6490-rb3gen2
  rtbuild generate --machine rb3gen2-core-kit --rt-cpus 6-7 --fragment extra.cfg \\
        --cmdline threadirqs";

pub(super) const DOCTOR: &str = "\
Examples:
  rtbuild doctor --machine rb3gen2-core-kit
  rtbuild doctor --machine rb3gen2-core-kit --container
  rtbuild doctor --meta-qcom work/meta-qcom                   # did meta-qcom move under rtbuild?";

pub(super) const IMAGE: &str = "\
Examples:
  rtbuild image --machine qcs6490-rb3gen2                        # generate, build, verify
  rtbuild image --machine rb3gen2-core-kit --bundle              # and pack a flashable bundle
  rtbuild image --machine rb3gen2-core-kit --lock release-lock.yml \\
        --sstate-mirror https://sstate.example.com/all
  rtbuild image --machine rb3gen2-core-kit --target linux-qcom-rt --task compile
  KAS_WORK_DIR=/srv/kas rtbuild image --machine rb3gen2-core-kit   # kas works elsewhere";

pub(super) const SHELL: &str = "\
Examples:
  rtbuild shell --machine rb3gen2-core-kit
  rtbuild shell --machine rb3gen2-core-kit --command 'bitbake -e linux-qcom-rt'";

pub(super) const MATRIX: &str = "\
Examples:
  rtbuild matrix --machines rb3gen2-core-kit,iq-9075-evk --distro qcom-distro,nodistro
  rtbuild matrix --machines rb3gen2-core-kit,iq-9075-evk --dry-run";

pub(super) const CI: &str = "\
Examples:
  rtbuild ci --format gitlab --machines rb3gen2-core-kit,iq-9075-evk \\
        --rtbuild-from path:tools/rtbuild > .gitlab-ci.yml
  rtbuild ci --format github --machines rb3gen2-core-kit --rtbuild-from crates --lava \\
        > .github/workflows/rtbuild.yml
  rtbuild ci --format gitlab --machines rb3gen2-core-kit --rt-cpus 6-7 \\
        --fragment ci/extra.cfg --rtbuild-from path:tools/rtbuild";

pub(super) const SETUP: &str = "\
Examples:
  rtbuild setup                  # a venv with the pinned kas
  rtbuild setup --dry-run";

pub(super) const LAVA: &str = "\
Examples:
  rtbuild lava --machine qcs6490-rb3gen2 --out job.yaml \\
        --bundle-url https://files.example.com/rb3.tar.zst
  lavacli jobs submit job.yaml
  rtbuild report log.yaml --html report.html";

pub(super) const TUNE: &str = "\
Examples:
  rtbuild tune --machine rb3gen2-core-kit --target ssh://root@board --apply  # or --revert
  rtbuild tune --machine rb3gen2-core-kit --emit out/            # write rtbuild-tune.sh";

pub(super) const TEST: &str = "\
Examples:
  rtbuild test --machine rb3gen2-core-kit --target ssh://root@board --tune \\
        --scenario idle,stress --duration 24h
  rtbuild test --local --rt-cpus 1 --scenario idle,stress --duration 10s   # any Linux
  rtbuild test --local --board my-x86 --rt-cpus 3 --duration 1h      # a board not in the catalog

The seed guides' procedures, on the catalog's boards for measuring only:
  # RK3588: stress-ng -c 8 --io 2 --vm 1 --vm-bytes 1024M, cyclictest -m -t 8 -p 99 for 2 h
  rtbuild test --machine rk3588-evb --target ssh://root@rk3588 --measure-cpus all \\
        --threads 8 --unpinned --scenario idle,system-load --duration 2h
  # RK3562J (TL3562-EVM): isolcpus=3, printk 1, overcommit 2, 12 h idle, full load, isolated
  rtbuild test --machine rk3562j-evm --target ssh://root@rk3562j --tune --overcommit-never \\
        --measure-cpus all --interval-us 1000 --histogram-us 800 \\
        --scenario idle,system-load,stress-isolated --duration 12h
  # Phytium FT-2000/4: isolcpus=2,3 rcu_nocbs=2,3, governor performance, idle and loaded
  rtbuild test --machine phytium-ft2000-4 --target ssh://root@ft2000 --tune \\
        --interval-us 100 --scenario idle,full --duration 1h";

pub(super) const VERIFY: &str = "\
Examples:
  rtbuild verify --machine rb3gen2-core-kit rtbuild/rb3gen2-core-kit/build   # a build folder
  rtbuild verify /proc/config.gz                                             # any config
  rtbuild verify --machine iq-8275-evk --target ssh://root@board              # a live target
  rtbuild verify --local --rt-cpus 3                                         # this machine";

pub(super) const KCONFIG_CHECK: &str = "\
Examples:
  rtbuild kconfig-check --kernel-src /usr/src/linux-source-6.12 --fragment extra.cfg";

pub(super) const REPORT: &str = "\
Examples:
  rtbuild report results/ --html report.html --junit junit.xml
  rtbuild report results/ --threshold-us 100 --baseline last-week/
  rtbuild report lava-log.yaml --json";

pub(super) const LOCK: &str = "\
Examples:
  rtbuild lock --machine rb3gen2-core-kit                 # pin what was built
  rtbuild lock --machine rb3gen2-core-kit --check
  rtbuild lock --diff old.lock.yml new.lock.yml";

pub(super) const BUNDLE: &str = "\
Examples:
  rtbuild image --machine rb3gen2-core-kit && rtbuild bundle --machine rb3gen2-core-kit
  rtbuild bundle --check rtbuild/rb3gen2-core-kit/bundle/*.tar.zst";

pub(super) const HISTORY: &str = "\
Examples:
  rtbuild history add rtbuild-test-*        # into $XDG_DATA_HOME/rtbuild/history.sqlite
  rtbuild history add --check lava-log.yaml --db postgres://rtbuild@db.lab/rt_history
  rtbuild history compare 6.6.52-rt43 6.6.60-rt46
  rtbuild history report --html trend.html --machine rb3gen2-core-kit";

pub(super) const EXAMPLES: &str = "\
Examples:
  rtbuild examples                 # the journeys, one command a line
  rtbuild examples --json          # [{\"title\", \"commands\"}]";

pub(super) const COMPLETIONS: &str = "\
Examples:
  rtbuild completions bash > /usr/share/bash-completion/completions/rtbuild
  rtbuild completions zsh > \"${fpath[1]}/_rtbuild\"";

pub(super) const MAN: &str = "\
Examples:
  rtbuild man-pages --out-dir /usr/share/man/man1     # rtbuild.1, rtbuild-image.1, …";
