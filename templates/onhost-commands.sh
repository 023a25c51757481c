# rtbuild-test helper, second part: the subcommands. rtbuild sends it after
# onhost-functions.sh (the header and the shell functions) as one script to `sh -s`.

cmd=${1:-}
[ $# -gt 0 ] && shift
case $cmd in
    prepare)
        dir=$(mktemp -d /tmp/rtbuild-test.XXXXXX) || exit 3
        echo "state $dir"
        echo "uid $(id -u)"
        # shellcheck disable=SC3045
        echo "rtprio $(ulimit -r 2>/dev/null || echo unknown)"
        # shellcheck disable=SC3045
        echo "memlock $(ulimit -l 2>/dev/null || echo unknown)"
        # Extra tools a run needs (the --load-cmd program) follow the subcommand.
        for tool in cyclictest stress-ng taskset setsid timeout "$@"; do
            command -v "$tool" >/dev/null 2>&1 || echo "missing $tool"
        done
        ;;
    fingerprint)
        echo "=== uname"
        uname -a
        echo "=== cmdline"
        cat /proc/cmdline
        echo "=== preempt"
        if [ -r /proc/config.gz ]; then
            zcat /proc/config.gz 2>/dev/null | grep -E '^(# )?CONFIG_PREEMPT' || true
        elif [ -r "/boot/config-$(uname -r)" ]; then
            grep -E '^(# )?CONFIG_PREEMPT' "/boot/config-$(uname -r)" || true
        fi
        echo "=== realtime"
        cat /sys/kernel/realtime 2>/dev/null || echo 0
        echo "=== online"
        cat /sys/devices/system/cpu/online
        echo "=== isolated"
        cat /sys/devices/system/cpu/isolated 2>/dev/null
        echo "=== nohz_full"
        cat /sys/devices/system/cpu/nohz_full 2>/dev/null
        echo "=== governors"
        for g in /sys/devices/system/cpu/cpufreq/policy*/scaling_governor; do
            [ -r "$g" ] && echo "$(basename "$(dirname "$g")") $(cat "$g")"
        done
        # System facts (seed 004 records them first; seed 001 warns about temperature). The
        # sysfs parts honour RTBUILD_SYSROOT so tests can give a board's tree.
        root=${RTBUILD_SYSROOT:-}
        echo "=== cpu_model"
        sed -nE 's/^(model name|Hardware|cpu model)[[:space:]]*:[[:space:]]*//p' /proc/cpuinfo | head -n 1
        sed -nE 's/^CPU (implementer|part)[[:space:]]*:[[:space:]]*/\1 /p' /proc/cpuinfo | sort -u
        echo "=== board"
        if [ -r "$root/sys/firmware/devicetree/base/model" ]; then
            tr -d '\000' <"$root/sys/firmware/devicetree/base/model"
            echo
        fi
        echo "=== cpufreq"
        # CPU CUR_KHZ MIN_KHZ MAX_KHZ GOVERNOR (- when the kernel does not say)
        for d in "$root"/sys/devices/system/cpu/cpu[0-9]*; do
            f=$d/cpufreq
            [ -d "$f" ] || continue
            set --
            for k in scaling_cur_freq scaling_min_freq scaling_max_freq scaling_governor; do
                v=$(cat "$f/$k" 2>/dev/null) || v=-
                set -- "$@" "${v:--}"
            done
            echo "${d##*/cpu} $*"
        done
        echo "=== thermal"
        # ZONE MILLIDEGREES TYPE
        for z in "$root"/sys/class/thermal/thermal_zone*; do
            [ -r "$z/temp" ] || continue
            t=$(cat "$z/temp" 2>/dev/null) || t=-
            echo "${z##*/} ${t:--} $(cat "$z/type" 2>/dev/null)"
        done
        echo "=== throttle"
        # NAME COUNT: x86 thermal throttle counters, cooling-device transition counters
        for f in "$root"/sys/devices/system/cpu/cpu[0-9]*/thermal_throttle/*_throttle_count; do
            [ -r "$f" ] || continue
            c=${f%/thermal_throttle/*}
            echo "${c##*/}/${f##*/} $(cat "$f")"
        done
        for c in "$root"/sys/class/thermal/cooling_device*; do
            [ -r "$c/stats/total_trans" ] || continue
            echo "${c##*/}($(cat "$c/type" 2>/dev/null | tr -c 'A-Za-z0-9_.\n-' _))/total_trans $(cat "$c/stats/total_trans")"
        done
        # The build the target runs (the Qualcomm guide's "Distro and image" column): os-release,
        # and the image files Yocto images carry when present, bounded, never read as headers.
        echo "=== os_release"
        for f in "$root/etc/os-release" "$root/usr/lib/os-release"; do
            [ -f "$f" ] && { head -c 4096 "$f" | sed 's/^===/ ===/'; echo; break; }
        done
        echo "=== buildinfo"
        [ -f "$root/etc/buildinfo" ] && head -c 4096 "$root/etc/buildinfo" | sed 's/^===/ ===/'
        echo "=== image_version"
        [ -f "$root/etc/version" ] && head -c 256 "$root/etc/version" | head -n 1
        echo "=== kernel"
        echo "release $(uname -r)"
        echo "version $(uname -v)"
        # sha256 of the running kernel's config, uncompressed (what `rtbuild verify` digests):
        # IKCONFIG's /proc/config.gz, else the distro's /boot/config-$(uname -r). An empty
        # digest (a reader that failed half-way) is no digest.
        empty=e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
        sum='' from=''
        if [ -r /proc/config.gz ] && zcat /proc/config.gz >/dev/null 2>&1; then
            sum=$(zcat /proc/config.gz 2>/dev/null | sha256sum 2>/dev/null) && from=/proc/config.gz
        fi
        if [ -z "${sum%% *}" ] || [ "${sum%% *}" = "$empty" ]; then
            sum=
            f="/boot/config-$(uname -r)"
            [ -f "$f" ] && [ -r "$f" ] && sum=$(sha256sum <"$f" 2>/dev/null) && from=$f
        fi
        sum=${sum%% *}
        if [ -n "$sum" ] && [ "$sum" != "$empty" ]; then
            echo "config_sha256 $sum"
            echo "config_source $from"
        fi
        echo "=== boot_flow"
        # The Qualcomm guide's "Boot Flow": `kvm` when /dev/kvm exists (qcom-distro-kvm's
        # xbl_config_kvm.elf hands Linux EL2; a guest with nested KVM has it too), `efi` when
        # UEFI booted it, the device tree's hypervisor node (a hypervisor below Linux), and
        # every sign of running as a guest: x86's `hypervisor` CPU flag, Xen's /sys/hypervisor,
        # a virtual machine's DMI vendor, QEMU's arm64 `virt` board.
        [ -e "$root/dev/kvm" ] && echo "kvm"
        [ -d "$root/sys/firmware/efi" ] && echo "efi"
        f="$root/sys/firmware/devicetree/base/hypervisor/compatible"
        [ -r "$f" ] && echo "hypervisor $(head -c 200 "$f" | tr -c 'A-Za-z0-9,._-' ' ')"
        echo "guest_checked"
        grep -qw hypervisor "$root/proc/cpuinfo" 2>/dev/null && echo "guest cpu-flag-hypervisor"
        [ -s "$root/sys/hypervisor/type" ] && echo "guest sys-hypervisor"
        case "$(head -c 100 "$root/sys/class/dmi/id/sys_vendor" 2>/dev/null)" in
            QEMU*|*KVM*|Xen*|VMware*|innotek*|Parallels*) echo "guest dmi-vendor" ;;
        esac
        grep -qa 'linux,dummy-virt' "$root/sys/firmware/devicetree/base/compatible" 2>/dev/null && echo "guest dt-dummy-virt"
        echo "=== devfreq"
        # DEVICE GOVERNOR CUR_HZ: the L3, LLCC and DDR scaling next to cpufreq
        for d in "$root"/sys/class/devfreq/*; do
            [ -r "$d/governor" ] || continue
            g=$(cat "$d/governor" 2>/dev/null) || g=-
            c=$(cat "$d/cur_freq" 2>/dev/null) || c=-
            echo "${d##*/} ${g:--} ${c:--}"
        done
        echo "=== urm"
        # Qualcomm's userspace resource manager re-tunes when cyclictest starts.
        if urm_active; then
            echo "urm.service active"
        fi
        echo "=== interrupts"
        cat /proc/interrupts
        echo "=== softirqs"
        cat /proc/softirqs
        echo "=== irq_affinity"
        # IRQ SMP_AFFINITY_LIST EFFECTIVE_AFFINITY_LIST (- where the kernel has none): where each
        # device interrupt may fire and where it does, to see one moved onto an RT CPU.
        for d in "$root"/proc/irq/[0-9]*; do
            [ -d "$d" ] || continue
            s=- e=-
            { read -r s <"$d/smp_affinity_list"; } 2>/dev/null || s=-
            { read -r e <"$d/effective_affinity_list"; } 2>/dev/null || e=-
            echo "${d##*/} ${s:--} ${e:--}"
        done
        echo "=== irqbalance"
        # PID BANNED: every running irqbalance and its IRQBALANCE_BANNED_CPULIST (- when unset).
        for c in "$root"/proc/[0-9]*/comm; do
            [ -r "$c" ] || continue
            n=
            { read -r n <"$c"; } 2>/dev/null || continue
            [ "$n" = irqbalance ] || continue
            p=${c%/comm}
            b=$({ tr '\000' '\n' <"$p/environ"; } 2>/dev/null | sed -n 's/^IRQBALANCE_BANNED_CPULIST=//p' | head -n 1)
            p=${p#"$root"}
            echo "${p#/proc/} ${b:--}"
        done
        echo "=== kernel_warnings"
        # The kernel log's warnings (the last 200, each cut to 300 characters): the lines new
        # after a scenario were logged during it.
        { dmesg 2>/dev/null || echo "rtbuild: dmesg failed"; } |
            grep -E 'BUG:|WARNING:|Oops|RT throttling activated|hrtimer: interrupt took|^rtbuild: dmesg failed' |
            tail -n 200 | cut -c1-300
        ;;
    start-loads)
        # start-loads STATE [NAME CPULIST|- ARGC ARG...]...: starts every load of a scenario in
        # one call (one connection to the target, not one per housekeeping CPU), each in its
        # own session, pinned to CPULIST with taskset unless it is `-`, records its process
        # group and says `started PGID`, in the order given. ARGC counts the load's ARGs.
        state=$1
        shift
        state_ok "$state" || exit 3
        wide='' wide_read=0
        while [ $# -ge 3 ]; do
            argc=$3
            case $argc in
                '' | *[!0-9]*) exit 3 ;;
            esac
            [ "$argc" -ge 1 ] && [ "$argc" -le $(($# - 3)) ] || exit 3
            if [ "$2" = - ] && [ "$wide_read" = 0 ]; then
                wide=$(default_cpus) wide_read=1
            fi
            start_load "$state" "$@"
            shift $((3 + argc))
        done
        [ $# = 0 ] || exit 3
        ;;
    run-cyclictest)
        # run-cyclictest STATE CPULIST|- ARGV...: with a CPULIST cyclictest's process may use
        # exactly those CPUs (unpinned threads are placed on the CPUs of its own mask), not
        # the helper's own pinned mask.
        state=$1 cpus=$2
        shift 2
        state_ok "$state" || exit 3
        echo "$$" >"$state/cyclictest.pid"
        if [ "$cpus" != - ]; then
            exec taskset -c "$cpus" "$@"
        fi
        exec "$@"
        ;;
    run-program)
        # run-program STATE COMM ARGV...: runs another rt-tests program (COMM: its process name).
        state=$1 comm=$2
        shift 2
        state_ok "$state" || exit 3
        echo "$comm" >"$state/program.comm"
        echo "$$" >"$state/program.pid"
        # svsematest (rt-tests 2.4) names its SysV semaphore with ftok(getenv("_")): without
        # `_` (which only bash sets) it exits 0 having measured nothing.
        exec env "_=$(command -v "$1" || echo "$1")" "$@"
        ;;
    isolation)
        # What the kernel isolates, before a run: the isolated and nohz_full CPU lists and the
        # command line (under RTBUILD_SYSROOT, like the online CPUs, so tests can give a tree).
        root=${RTBUILD_SYSROOT:-}
        echo "isolated $(cat "$root/sys/devices/system/cpu/isolated" 2>/dev/null)"
        echo "nohz_full $(cat "$root/sys/devices/system/cpu/nohz_full" 2>/dev/null)"
        echo "cmdline $(head -c 4096 "$root/proc/cmdline" 2>/dev/null | tr -d '\000' | head -n 1)"
        ;;
    has-hwlat)
        # Whether the kernel has the hwlat tracer hwlatdetect needs.
        for t in /sys/kernel/tracing /sys/kernel/debug/tracing; do
            if [ -r "$t/available_tracers" ]; then
                if grep -qw hwlat "$t/available_tracers"; then echo "hwlat yes"; else echo "hwlat no"; fi
                exit 0
            fi
        done
        echo "hwlat unknown"
        ;;
    probe)
        # probe STATE [--status]: cyclictest's threads, the load and this helper itself; with
        # --status it first asks cyclictest for its current T: lines (as `status` does), so one
        # call serves both the progress display and the check.
        state=$1
        state_ok "$state" || exit 3
        if [ "${2:-}" = --status ] && pid=$(running_cyclictest "$state"); then
            kill -USR1 "$pid" 2>/dev/null
        fi
        # Shell builtins only (one `sh`, no program started): under the load on a slow board
        # every program start would cost the housekeeping CPUs seconds.
        describe_task helper "/proc/$$"
        if [ -f "$state/cyclictest.pid" ] && read -r pid <"$state/cyclictest.pid"; then
            echo "ctpid $pid"
            for t in /proc/"$pid"/task/*; do
                [ -d "$t" ] && describe_task ct "$t"
            done
        fi
        if [ -f "$state/load.pids" ]; then
            # Every load group in one pass over /proc.
            load_groups "$state/load.pids"
            for s in /proc/[0-9]*/stat; do
                { read -r line <"$s"; } 2>/dev/null || continue
                rest=${line##*) }
                # shellcheck disable=SC2086
                set -- $rest
                [ "$1" != Z ] || continue
                case " $want_groups " in
                    *" $3 "*) describe_task load "${s%/stat}" ;;
                esac
            done
        fi
        ;;
    load-alive)
        # alive N, then the CPU time of each live load process and the load it belongs to
        # (its process group, as start-load said): usage PID TICKS START_TICKS GROUP
        state=$1
        state_ok "$state" || exit 3
        # One pass over /proc for every load group, with shell builtins (as probe).
        n=0
        if [ -f "$state/load.pids" ]; then
            load_groups "$state/load.pids"
            for s in /proc/[0-9]*/stat; do
                { read -r line <"$s"; } 2>/dev/null || continue
                # shellcheck disable=SC2086
                set -- ${line##*) }
                [ "$1" != Z ] || continue
                case " $want_groups " in
                    *" $3 "*) ;;
                    *) continue ;;
                esac
                n=$((n + 1))
                p=${s#/proc/}
                echo "usage ${p%/stat} $((${12} + ${13})) ${20} $3"
            done
        fi
        echo "alive $n"
        echo "clk $(getconf CLK_TCK 2>/dev/null || echo 100)"
        read -r up _ </proc/uptime
        echo "uptime $up"
        ;;
    stop)
        # Stops cyclictest (SIGINT, so it still writes its results) and every load group.
        state=$1
        state_ok "$state" || exit 3
        if pid=$(running_cyclictest "$state"); then
            kill -INT "$pid" 2>/dev/null && echo "interrupted cyclictest $pid"
            # Give it time to write its JSON results.
            tries=0
            while running_cyclictest "$state" >/dev/null && [ "$tries" -lt 50 ]; do
                tries=$((tries + 1))
                sleep 0.1 2>/dev/null || sleep 1
            done
        fi
        if pid=$(running_program "$state"); then
            kill -INT "$pid" 2>/dev/null && echo "interrupted program $pid"
            tries=0
            while running_program "$state" >/dev/null && [ "$tries" -lt 50 ]; do
                tries=$((tries + 1))
                sleep 0.1 2>/dev/null || sleep 1
            done
            running_program "$state" >/dev/null && kill -KILL "$pid" 2>/dev/null
        fi
        if [ -f "$state/load.pids" ]; then
            load_groups "$state/load.pids"
            count_live
            for g in $live; do
                kill -TERM "-$g" 2>/dev/null
            done
            tries=0
            while :; do
                count_live
                [ "$left" = 0 ] && break
                tries=$((tries + 1))
                if [ "$tries" -ge 50 ]; then
                    for g in $live; do
                        kill -KILL "-$g" 2>/dev/null
                    done
                fi
                [ "$tries" -ge 60 ] && break
                sleep 0.1 2>/dev/null || sleep 1
            done
            echo "left $left"
            rm -f "$state/load.pids"
        else
            echo "left 0"
        fi
        ;;
    abort)
        # abort STATE [FILE]: the second Ctrl-C. Kills every load group at once, gives
        # cyclictest two seconds after SIGINT to write its JSON, then kills it; prints FILE
        # from the state folder (the running scenario's JSON) and removes the state folder.
        state=$1
        state_ok "$state" || exit 3
        if [ -f "$state/load.pids" ]; then
            while read -r g; do
                kill -KILL "-$g" 2>/dev/null
            done <"$state/load.pids"
        fi
        if pid=$(running_cyclictest "$state"); then
            kill -INT "$pid" 2>/dev/null
            tries=0
            while running_cyclictest "$state" >/dev/null && [ "$tries" -lt 20 ]; do
                tries=$((tries + 1))
                sleep 0.1 2>/dev/null || sleep 1
            done
            if pid=$(running_cyclictest "$state"); then
                kill -KILL "$pid" 2>/dev/null
            fi
        fi
        # The other rt-tests program of --tests, if one runs: killed at once.
        if pid=$(running_program "$state"); then
            kill -KILL "$pid" 2>/dev/null
        fi
        # The tracing settings --trace-above-us changed go back before the state folder goes,
        # and so does a urm.service --stop-urm stopped.
        trace_restore "$state" >/dev/null
        urm_restore "$state" >/dev/null
        if [ $# -ge 2 ]; then
            case $2 in
                */* | .*) ;;
                *) [ -f "$state/$2" ] && cat "$state/$2" ;;
            esac
        fi
        rm -rf "$state"
        ;;
    status)
        # Asks cyclictest to print its current T: lines on its stderr (SIGUSR1).
        state=$1
        state_ok "$state" || exit 3
        if pid=$(running_cyclictest "$state"); then
            kill -USR1 "$pid" 2>/dev/null
        fi
        ;;
    fetch)
        state=$1 name=$2
        state_ok "$state" || exit 3
        case $name in */* | .*) exit 3 ;; esac
        cat "$state/$name"
        ;;
    trace-setup)
        # trace-setup STATE CPUMASK BUFFER_KB ANALYZER EVENT...: records the EVENTs this kernel has
        # (`group:event` or `group:*`) on the CPUs of CPUMASK (tracefs hex) in the top-level
        # buffer, which cyclictest's --tracemark stops at the breach. Saves every setting it
        # changes first; mounts tracefs when it is not. Says `unavailable WHY` when it cannot.
        # With ANALYZER rtla it saves the same settings and changes none.
        state=$1 mask=$2 kb=$3 analyzer=$4
        shift 4
        state_ok "$state" || exit 3
        t=
        for d in ${RTBUILD_TRACEFS:-/sys/kernel/tracing /sys/kernel/debug/tracing}; do
            if [ -e "$d/trace_marker" ]; then t=$d; break; fi
        done
        if [ -z "$t" ] && [ -n "${RTBUILD_TRACEFS:-}" ]; then
            echo "unavailable no tracefs at $RTBUILD_TRACEFS (RTBUILD_TRACEFS); unset it or point it at tracefs"
            exit 0
        fi
        if [ -z "$t" ]; then
            if [ "$(id -u)" != 0 ]; then
                echo "unavailable tracing needs root: user id $(id -u) cannot reach tracefs (/sys/kernel/tracing, /sys/kernel/debug/tracing) or mount it; log in as root"
                exit 0
            fi
            if ! grep -qw tracefs /proc/filesystems 2>/dev/null; then
                echo "unavailable the kernel has no tracefs (CONFIG_FTRACE); build it with CONFIG_FTRACE and CONFIG_ENABLE_DEFAULT_TRACERS, or drop --trace-above-us"
                exit 0
            fi
            if ! mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null; then
                echo "unavailable could not mount tracefs on /sys/kernel/tracing; mount it by hand (mount -t tracefs nodev /sys/kernel/tracing) or drop --trace-above-us"
                exit 0
            fi
            t=/sys/kernel/tracing
            : >"$state/trace.mounted"
        fi
        if [ ! -w "$t/tracing_on" ] || [ ! -w "$t/trace_marker" ]; then
            echo "unavailable tracing needs root: user id $(id -u) may not write $t; log in as root"
            [ -f "$state/trace.mounted" ] && umount "$t" 2>/dev/null && rm -f "$state/trace.mounted"
            exit 0
        fi
        tracer=$(cat "$t/current_tracer" 2>/dev/null)
        if [ "$tracer" != nop ]; then
            echo "unavailable the $tracer tracer is in use in $t (current_tracer); stop that trace first (echo nop > $t/current_tracer) or drop --trace-above-us"
            exit 0
        fi
        if [ "$analyzer" = rtla ]; then
            if ! grep -qw timerlat "$t/available_tracers" 2>/dev/null; then
                echo "unavailable the kernel has no timerlat tracer (CONFIG_TIMERLAT_TRACER; $t/available_tracers lacks timerlat); use --analyzer ftrace"
                exit 0
            fi
            if ! command -v rtla >/dev/null 2>&1; then
                echo "unavailable rtla is not installed; install rtla (Debian/Ubuntu package rtla, or linux-tools) or use --analyzer ftrace"
                exit 0
            fi
        fi
        # One rtbuild trace at a time on this machine: the top-level buffer is shared. The
        # lock names the run's state folder; a lock whose folder is gone is stale.
        lock=/tmp/rtbuild-trace.lock
        if ! mkdir "$lock" 2>/dev/null; then
            owner=$(cat "$lock/owner" 2>/dev/null)
            if [ -z "$owner" ] || [ -d "$owner" ]; then
                echo "unavailable tracing is in use by another rtbuild run (${owner:-starting}); wait for it to end, or remove $lock if none runs"
                exit 0
            fi
            rm -rf "$lock"
            if ! mkdir "$lock" 2>/dev/null; then
                echo "unavailable tracing is in use by another rtbuild run; wait for it to end"
                exit 0
            fi
        fi
        echo "$state" >"$lock/owner"
        {
            echo "$t"
            cat "$t/tracing_on"
            cat "$t/buffer_size_kb"
            cat "$t/tracing_cpumask"
        } >"$state/trace.saved"
        cp "$t/set_event" "$state/trace.events"
        if [ "$analyzer" = rtla ]; then
            # rtla records in a tracing instance of its own, but the top-level settings can be
            # changed after it (tracing_on read 0 after an rtla stop on a 6.12 PREEMPT_RT
            # guest): they are saved as for ftrace, left as they are, and put back and read
            # back afterwards.
            [ -f "$state/trace.mounted" ] && echo mounted
            echo "tracefs $t"
            exit 0
        fi
        echo 0 >"$t/tracing_on"
        echo "$kb" >"$t/buffer_size_kb" 2>/dev/null
        echo "$mask" >"$t/tracing_cpumask"
        : >"$t/set_event"
        for e in "$@"; do
            group=${e%%:*} name=${e#*:}
            if [ "$name" = "*" ]; then dir=$t/events/$group; else dir=$t/events/$group/$name; fi
            [ -d "$dir" ] && echo "$e" >>"$t/set_event" 2>/dev/null && echo "event $e"
        done
        : >"$t/trace"
        echo 1 >"$t/tracing_on"
        [ -f "$state/trace.mounted" ] && echo mounted
        echo "tracefs $t"
        ;;
    trace-arm)
        # Empties the buffer and starts recording again (before each scenario's cyclictest).
        state=$1
        state_ok "$state" || exit 3
        t=$(trace_dir "$state")
        [ -n "$t" ] || exit 3
        echo 0 >"$t/tracing_on" && : >"$t/trace" && echo 1 >"$t/tracing_on"
        ;;
    trace-read)
        state=$1
        state_ok "$state" || exit 3
        t=$(trace_dir "$state")
        [ -n "$t" ] || exit 3
        echo 0 >"$t/tracing_on"
        # The header, then the last 100000 events: the breach mark is at the end, and the
        # window kept is far shorter, so a large buffer does not cross a slow link whole.
        head -n 20 "$t/trace" | grep '^#'
        grep -v '^#' "$t/trace" | tail -n 100000
        ;;
    trace-restore)
        state=$1
        state_ok "$state" || exit 3
        trace_restore "$state"
        ;;
    urm-stop)
        # urm-stop STATE: `--stop-urm`. Stops an active urm.service for the run; the marker
        # written first makes every way out of the run start it again.
        state=$1
        state_ok "$state" || exit 3
        if ! urm_active; then
            echo "urm inactive"
            exit 0
        fi
        : >"$state/urm.stopped"
        if systemctl stop urm.service 2>/dev/null && ! urm_active; then
            echo "urm stopped"
        else
            echo "urm failed to stop"
        fi
        ;;
    urm-start)
        state=$1
        state_ok "$state" || exit 3
        urm_restore "$state"
        ;;
    cleanup)
        state=$1
        state_ok "$state" && trace_restore "$state" >/dev/null
        state_ok "$state" && urm_restore "$state" >/dev/null
        state_ok "$state" && rm -rf "$state"
        ;;
    *)
        echo "rtbuild-test helper: unknown subcommand '$cmd'" >&2
        exit 2
        ;;
esac
