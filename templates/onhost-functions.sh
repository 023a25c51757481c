# rtbuild-test helper: the on-target half of `rtbuild test`. Sent to `sh -s` on every call;
# rtbuild passes only positional arguments (state folder, CPU lists, argv of tools).
# Subcommands: prepare [TOOL...] | fingerprint | isolation | start-loads | run-cyclictest |
#              run-program | has-hwlat | probe | load-alive | status | stop | abort | fetch | cleanup |
#              trace-setup | trace-arm | trace-read | trace-restore
set -u

# The process groups of load file $1 (one per line, as start-load writes them), into
# $want_groups, blank-separated.
load_groups() {
    want_groups=''
    while read -r g; do
        want_groups="$want_groups $g"
    done <"$1"
}

# Sets $live to the groups of $want_groups that have a live (non-zombie) process and $left to
# how many such processes there are: one pass over /proc with the shell's own `read`, no program
# started (on a loaded board, or an emulated one, every program start costs the housekeeping
# CPUs time).
count_live() {
    live='' left=0
    for s in /proc/[0-9]*/stat; do
        { read -r line <"$s"; } 2>/dev/null || continue
        # shellcheck disable=SC2086
        set -- ${line##*) }
        [ "$1" != Z ] || continue
        case " $want_groups " in
            *" $3 "*)
                left=$((left + 1))
                case " $live " in
                    *" $3 "*) ;;
                    *) live="$live $3" ;;
                esac
                ;;
        esac
    done
}

# One line per task: KIND TID|CPUS_ALLOWED|STAT-FIELDS-AFTER-COMM|COMM (last: it may hold `|`).
# Read with the shell's own `read`, no program: the probe runs it for every thread it looks at.
describe_task() {
    kind=$1
    dir=$2
    [ -r "$dir/stat" ] || return 0
    { read -r line <"$dir/stat"; } 2>/dev/null || return 0
    allowed=''
    {
        while read -r key value; do
            if [ "$key" = Cpus_allowed_list: ]; then
                allowed=$value
                break
            fi
        done <"$dir/status"
    } 2>/dev/null
    name=''
    { IFS= read -r name <"$dir/comm"; } 2>/dev/null
    printf '%s %s|%s|%s|%s\n' "$kind" "${dir##*/}" "$allowed" "${line##*) }" "$name"
}

# The cyclictest this run started, if it still runs (the PID file may outlive it).
running_cyclictest() {
    [ -f "$1/cyclictest.pid" ] || return 1
    read -r pid <"$1/cyclictest.pid" || return 1
    ct_comm=''
    { read -r ct_comm <"/proc/$pid/comm"; } 2>/dev/null
    [ "$ct_comm" = cyclictest ] || return 1
    { read -r line <"/proc/$pid/stat"; } 2>/dev/null || return 1
    rest=${line##*) }
    # A zombie has finished; its parent has not collected it yet.
    [ "${rest%% *}" != Z ] && echo "$pid"
}

# The other rt-tests program this run started, if it still runs.
running_program() {
    [ -f "$1/program.pid" ] && [ -f "$1/program.comm" ] || return 1
    pid=$(cat "$1/program.pid")
    [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$(cat "$1/program.comm")" ] || return 1
    { read -r line <"/proc/$pid/stat"; } 2>/dev/null || return 1
    rest=${line##*) }
    [ "${rest%% *}" != Z ] && echo "$pid"
}

state_ok() {
    case $1 in
        /tmp/rtbuild-test.*) [ -d "$1" ] ;;
        *) false ;;
    esac
}

# The tracefs folder trace-setup chose (empty when none).
trace_dir() {
    [ -f "$1/trace.saved" ] && sed -n 1p "$1/trace.saved"
}

# Puts back every tracing setting trace-setup saved in state folder $1 (tracing_on, buffer
# size, CPU mask, enabled events), clears the events rtbuild recorded, unmounts tracefs if
# rtbuild mounted it, and says `restored`, or `problem SETTING` for each that did not take.
trace_restore() {
    [ -f "$1/trace.saved" ] || return 0
    t=$(trace_dir "$1")
    on=$(sed -n 2p "$1/trace.saved")
    kb=$(sed -n 3p "$1/trace.saved")
    mask=$(sed -n 4p "$1/trace.saved")
    echo 0 >"$t/tracing_on" 2>/dev/null
    : >"$t/set_event" 2>/dev/null
    while IFS= read -r e; do
        [ -n "$e" ] && echo "$e" >>"$t/set_event" 2>/dev/null
    done <"$1/trace.events"
    # `7 (expanded: 1408)`: the buffer was never used; 1408 is the size it would have grown to.
    case $kb in
        *expanded:*) kb=${kb##*expanded: } kb=${kb%)} ;;
    esac
    echo "$kb" >"$t/buffer_size_kb" 2>/dev/null
    echo "$mask" >"$t/tracing_cpumask" 2>/dev/null
    : >"$t/trace" 2>/dev/null
    echo "$on" >"$t/tracing_on" 2>/dev/null
    ok=1
    [ "$(cat "$t/tracing_on")" = "$on" ] || { echo "problem tracing_on"; ok=0; }
    # The kernel rounds the size up to whole buffer pages (4080 data bytes each on 6.1: 1408
    # reads back as 1410), so up to 4 KB more is the saved size.
    now_kb=$(cat "$t/buffer_size_kb")
    now_kb=${now_kb%% *}
    case $now_kb$kb in
        *[!0-9]*) [ "$now_kb" = "$kb" ] ;;
        *) [ "$now_kb" -ge "$kb" ] && [ "$now_kb" -le $((kb + 4)) ] ;;
    esac || { echo "problem buffer_size_kb"; ok=0; }
    [ "$(cat "$t/tracing_cpumask")" = "$mask" ] || { echo "problem tracing_cpumask"; ok=0; }
    [ "$(sort "$t/set_event")" = "$(sort "$1/trace.events")" ] || { echo "problem set_event"; ok=0; }
    if [ -f "$1/trace.mounted" ]; then
        umount "$t" 2>/dev/null || { echo "problem mount $t"; ok=0; }
    fi
    rm -f "$1/trace.saved" "$1/trace.events" "$1/trace.mounted"
    [ "$(cat /tmp/rtbuild-trace.lock/owner 2>/dev/null)" = "$1" ] && rm -rf /tmp/rtbuild-trace.lock
    [ "$ok" = 1 ] && echo restored
    return 0
}

# The service manager's word on Qualcomm's userspace resource manager, which re-tunes knobs
# when cyclictest starts.
urm_active() {
    command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet urm.service 2>/dev/null
}

# Starts urm.service again when `urm-stop` stopped it for the run (its marker in the state
# folder), and reads it back: every way out of a run (the end, cleanup, abort) calls this.
urm_restore() {
    [ -f "$1/urm.stopped" ] || return 0
    if systemctl start urm.service 2>/dev/null && urm_active; then
        rm -f "$1/urm.stopped"
        echo "urm started"
    else
        echo "urm failed to start again"
    fi
}

# `--pin CPUS SUBCOMMAND …`: the helper first confines itself to CPUS (the housekeeping CPUs
# that are not measured), so it and everything it starts stay off the measured CPUs. What the
# kernel allowed is visible in the probe's `helper` line.
if [ "${1:-}" = --pin ] && [ $# -ge 2 ]; then
    taskset -pc "$2" $$ >/dev/null 2>&1 || echo "rtbuild-test helper: could not pin itself to CPUs $2 (taskset)" >&2
    shift 2
fi

# start_load STATE NAME CPULIST|- ARGC ARG... [MORE...]: starts the first ARGC ARGs in their own
# session (pinned to CPULIST, or to $wide when it is `-`), records the process group in the state
# folder and says `started PGID`. Whatever follows the ARGC ARGs is left alone.
start_load() {
    st=$1 nm=$2 cp=$3 argc=$4
    shift 4
    # Keep only the first ARGC arguments: append them, then drop the originals.
    n=$#
    i=0
    for a do
        [ "$i" -lt "$argc" ] && set -- "$@" "$a"
        i=$((i + 1))
    done
    shift "$n"
    if [ "$cp" != - ]; then
        setsid taskset -c "$cp" "$@" </dev/null >"$st/load-$nm.log" 2>&1 &
    elif [ -n "$wide" ]; then
        setsid taskset -c "$wide" "$@" </dev/null >"$st/load-$nm.log" 2>&1 &
    else
        setsid "$@" </dev/null >"$st/load-$nm.log" 2>&1 &
    fi
    echo "$!" >>"$st/load.pids"
    echo "started $!"
}

# The CPUs an ordinary process gets (PID 1's mask: the kernel leaves isolcpus= CPUs out of it),
# for loads left to the kernel's isolation: the helper's own pinned mask must not narrow them.
default_cpus() {
    sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/1/status 2>/dev/null
}
