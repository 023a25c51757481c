#!/usr/bin/env bash
# The rtbuild lab: a real PREEMPT_RT target (Debian 12's linux-image-rt-amd64) under QEMU, reachable
# over ssh on 127.0.0.1 only. Used by tests/integration/rt_guest.rs; a developer can run it by hand:
#
#   tests/lab/rt-guest.sh build            build the guest image once (needs the network; cached)
#   tests/lab/rt-guest.sh image            print the cached image folder, or fail naming `build`
#   tests/lab/rt-guest.sh start [PORT]     boot it in the background, wait for ssh, print how to log in
#   tests/lab/rt-guest.sh stop RUNDIR      stop a guest started by `start` (by its PID file)
#   tests/lab/rt-guest.sh serve PORT RUNDIR
#       boot in the foreground for a test: prints `ready PORT` once ssh answers, then keeps the guest
#       until its stdin closes (the test process ended, however it ended) and stops it by PID. QEMU
#       runs under `setpriv --pdeathsig KILL`, so it also dies if this script is killed.
#
# The image is built once per package-version set into ${RTBUILD_LAB_CACHE:-~/.cache/rtbuild-lab}/KEY
# (KEY: a hash of this recipe and the candidate versions of the guest's packages in the host's apt
# lists), never inside the checkout. The guest boots a minimal init (mounts, sshd) instead of systemd:
# ssh answers after about 20 s under TCG instead of about a minute. /dev/kvm is not used: on the CI
# VM it is a nested hypervisor that hangs stock kernels.
set -euo pipefail

# Bump when the image recipe below changes in a way the package versions do not show.
recipe=4
suite=bookworm
mirror=http://deb.debian.org/debian
security=http://deb.debian.org/debian-security
packages=(linux-image-rt-amd64 initramfs-tools openssh-server tini iproute2 procps kmod util-linux mount
  rt-tests stress-ng rtla trace-cmd)
# no_timer_check: under a loaded TCG host the kernel's IO-APIC timer check can time out and panic
# ("IO-APIC + timer doesn't work"); QEMU's timer works, the check is just too impatient.
cmdline="console=ttyS0 root=/dev/vda rw init=/sbin/rtlab-init panic=-1 no_timer_check isolcpus=1 nohz_full=1 rcu_nocbs=1 irqaffinity=0"
cache_root=${RTBUILD_LAB_CACHE:-${HOME:-/root}/.cache/rtbuild-lab}
boot_timeout=${RTBUILD_LAB_BOOT_TIMEOUT:-600}

die() {
  echo "rt-guest: error: $*" >&2
  exit 1
}

as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

# The cache key: this recipe plus PACKAGE=VERSION of each guest package as the host's apt lists
# (bookworm, -updates, -security: the suites the image is built from) would install it.
cache_key() {
  local lines p v
  # One apt-cache call for all (it is slow on a busy host): "PACKAGE:" then "  Candidate: V".
  lines=$(apt-cache policy "${packages[@]}" 2>/dev/null \
    | sed -n -e 's/^\([a-z0-9.+-]*\):$/\1/p' -e 's/^ *Candidate: /=/p' | paste -d '' - -)
  for p in "${packages[@]}"; do
    v=$(printf '%s\n' "$lines" | sed -n "s/^$p=//p")
    if [ -z "$v" ] || [ "$v" = "(none)" ]; then
      die "apt knows no version of $p; run \`apt-get update\` (or bash .ci/setup)"
    fi
  done
  printf 'recipe %s\n%s\n' "$recipe" "$lines" | sha256sum | cut -c1-16
}

image_dir() { echo "$cache_root/$(cache_key)"; }

# The guest's PID 1: mount what a freshly booted target has (the initramfs already moved /dev,
# /proc, /sys and /run onto the root), bring up the user-mode network by hand (no udev, no DHCP),
# put a root shell on the serial console, and hand over to tini, which reaps orphans and runs sshd.
write_init() {
  cat >"$1" <<'INIT'
#!/bin/sh
PATH=/usr/sbin:/usr/bin:/sbin:/bin
export PATH
mountpoint -q /proc || mount -t proc proc /proc
mountpoint -q /sys || mount -t sysfs sysfs /sys
mountpoint -q /dev || mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/pts /dev/shm
mountpoint -q /dev/pts || mount -t devpts devpts /dev/pts
mountpoint -q /dev/shm || mount -t tmpfs tmpfs /dev/shm
mountpoint -q /run || mount -t tmpfs tmpfs /run
mount -t tmpfs tmpfs /tmp
mount -t tracefs tracefs /sys/kernel/tracing
mount -t debugfs debugfs /sys/kernel/debug
mkdir -p /run/sshd
hostname rtlab
modprobe virtio_net 2>/dev/null
ip link set lo up
for dev in /sys/class/net/*; do
  dev=${dev##*/}
  [ "$dev" = lo ] && continue
  ip link set "$dev" up
  ip addr add 10.0.2.15/24 dev "$dev"
  ip route add default via 10.0.2.2
  break
done
( while :; do setsid -c sh -l <>/dev/ttyS0 >&0 2>&0; done ) &
echo "rtlab-init: starting sshd" >/dev/ttyS0
exec tini -s -- /usr/sbin/sshd -D -e
INIT
  chmod 0755 "$1"
}

cmd_build() {
  command -v mmdebstrap >/dev/null || die "mmdebstrap is missing; run bash .ci/setup"
  command -v mkfs.ext4 >/dev/null || die "mkfs.ext4 is missing; run bash .ci/setup (e2fsprogs)"
  local dir
  dir=$(image_dir)
  if [ -f "$dir/ready" ]; then
    echo "rt-guest: image is cached: $dir"
    return 0
  fi
  mkdir -p "$cache_root"
  local tmp
  tmp=$(mktemp -d "$cache_root/.build.XXXXXX")
  # shellcheck disable=SC2064  # expand $tmp now: it is local to this function
  trap "as_root rm -rf '$tmp'" EXIT
  echo "rt-guest: building the guest image into $dir (a few minutes, needs the network)"
  ssh-keygen -q -t ed25519 -N '' -C rtbuild-lab-client -f "$tmp/id_ed25519"
  ssh-keygen -q -t ed25519 -N '' -C rtbuild-lab-host -f "$tmp/host_ed25519"
  write_init "$tmp/rtlab-init"
  local include
  include=$(IFS=,; echo "${packages[*]}")
  as_root mmdebstrap --variant=apt --mode=root --quiet \
    --include="$include" \
    --aptopt='Acquire::Retries "3"' \
    --customize-hook="rm -f \"\$1\"/etc/ssh/ssh_host_*" \
    --customize-hook="install -m 0600 '$tmp/host_ed25519' \"\$1\"/etc/ssh/ssh_host_ed25519_key" \
    --customize-hook="install -m 0644 '$tmp/host_ed25519.pub' \"\$1\"/etc/ssh/ssh_host_ed25519_key.pub" \
    --customize-hook="install -d -m 0700 \"\$1\"/root/.ssh" \
    --customize-hook="install -m 0600 '$tmp/id_ed25519.pub' \"\$1\"/root/.ssh/authorized_keys" \
    --customize-hook="install -m 0755 '$tmp/rtlab-init' \"\$1\"/sbin/rtlab-init" \
    --customize-hook="echo rtlab >\"\$1\"/etc/hostname" \
    --customize-hook="chroot \"\$1\" dpkg-query -W -f '\${Package}=\${Version}\n' >'$tmp/versions.txt'" \
    "$suite" "$tmp/root" \
    "deb $mirror $suite main" "deb $mirror $suite-updates main" "deb $security $suite-security main"
  as_root cp "$(ls "$tmp"/root/boot/vmlinuz-*)" "$tmp/vmlinuz"
  as_root cp "$(ls "$tmp"/root/boot/initrd.img-*)" "$tmp/initrd.img"
  as_root mkfs.ext4 -q -F -L rtlab -d "$tmp/root" "$tmp/rootfs.ext4" 2G
  as_root rm -rf "$tmp/root" "$tmp/host_ed25519"
  as_root chown -R "$(id -u):$(id -g)" "$tmp"
  touch "$tmp/ready"
  rm -rf "$dir"
  mv "$tmp" "$dir"
  trap - EXIT
  echo "rt-guest: image ready: $dir"
}

cmd_image() {
  local dir
  dir=$(image_dir)
  [ -f "$dir/ready" ] || die "no guest image for this package set at $dir; run tests/lab/rt-guest.sh build (bash .ci/setup does)"
  echo "$dir"
}

# Writes RUNDIR/ssh_config (throwaway client key, host-key checking on against the image's own
# host key) and starts QEMU in the background, under `setpriv --pdeathsig KILL` (it dies with this
# script) unless DETACH is given (`start`: in its own session); sets $qemu_pid.
boot() {
  local port=$1 run=$2 detach=${3:-} dir guard=(setpriv --pdeathsig KILL --)
  dir=$(cmd_image)
  [ -z "$detach" ] || guard=(setsid)
  command -v qemu-system-x86_64 >/dev/null || die "qemu-system-x86_64 is missing; run bash .ci/setup"
  mkdir -p "$run"
  printf '[127.0.0.1]:%s %s\n' "$port" "$(cut -d' ' -f1,2 "$dir/host_ed25519.pub")" >"$run/known_hosts"
  cat >"$run/ssh_config" <<EOF
Host *
  IdentityFile $dir/id_ed25519
  IdentitiesOnly yes
  UserKnownHostsFile $run/known_hosts
  GlobalKnownHostsFile /dev/null
  StrictHostKeyChecking yes
  BatchMode yes
  LogLevel ERROR
EOF
  rm -f "$run/qemu.pid" "$run/console.log"
  "${guard[@]}" qemu-system-x86_64 \
    -accel tcg,thread=multi -cpu max -smp 2 -m 1024 \
    -nodefaults -display none -no-reboot \
    -kernel "$dir/vmlinuz" -initrd "$dir/initrd.img" -append "$cmdline" \
    -drive "file=$dir/rootfs.ext4,format=raw,if=virtio,snapshot=on" \
    -netdev "user,id=net0,restrict=on,hostfwd=tcp:127.0.0.1:$port-:22" \
    -device virtio-net-pci,netdev=net0 \
    -serial "file:$run/console.log" -pidfile "$run/qemu.pid" \
    </dev/null >"$run/qemu.log" 2>&1 &
  qemu_pid=$!
  echo "$qemu_pid" >"$run/qemu.pid.parent"
}

stop_pid() {
  local pid=$1
  kill "$pid" 2>/dev/null || return 0
  for _ in $(seq 50); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null || true
}

wait_ssh() {
  local port=$1 run=$2 deadline=$((SECONDS + boot_timeout))
  while [ $SECONDS -lt $deadline ]; do
    kill -0 "$qemu_pid" 2>/dev/null || {
      tail -n 20 "$run/qemu.log" "$run/console.log" >&2 || true
      die "QEMU exited before ssh answered (logs in $run)"
    }
    if ssh -F "$run/ssh_config" -o ConnectTimeout=5 -p "$port" root@127.0.0.1 true 2>/dev/null; then
      return 0
    fi
    sleep 2
  done
  tail -n 20 "$run/console.log" >&2 || true
  stop_pid "$qemu_pid"
  die "ssh did not answer on 127.0.0.1:$port within ${boot_timeout}s (console log: $run/console.log)"
}

cmd_serve() {
  [ $# -eq 2 ] || die "usage: rt-guest.sh serve PORT RUNDIR"
  local port=$1 run=$2
  boot "$port" "$run"
  # shellcheck disable=SC2064  # the PID is fixed now
  trap "stop_pid $qemu_pid" EXIT
  trap 'exit 130' INT TERM HUP
  # The watcher: when the test process closes our stdin (it ended, however it ended, even while
  # the guest is still booting), stop QEMU by its PID.
  # (A background job's stdin is /dev/null, so hand it ours through fd 3.)
  exec 3<&0
  ( cat <&3 >/dev/null; stop_pid "$qemu_pid" ) &
  exec 3<&-
  local started=$SECONDS
  wait_ssh "$port" "$run"
  echo "ready $port $((SECONDS - started))s"
  wait "$qemu_pid" || true
}

cmd_start() {
  local port=${1:-10022} run
  run=$(mktemp -d "${TMPDIR:-/tmp}/rtbuild-lab.XXXXXX")
  boot "$port" "$run" detach
  local started=$SECONDS
  wait_ssh "$port" "$run"
  echo "rt-guest: ssh answered after $((SECONDS - started))s; QEMU PID $qemu_pid (state in $run)"
  echo "  log in:  ssh -F $run/ssh_config -p $port root@127.0.0.1"
  echo "  rtbuild: --target ssh://root@127.0.0.1:$port --ssh-config $run/ssh_config"
  echo "  stop:    $0 stop $run"
}

cmd_stop() {
  [ $# -eq 1 ] || die "usage: rt-guest.sh stop RUNDIR"
  local pid
  pid=$(cat "$1/qemu.pid" 2>/dev/null) || die "no $1/qemu.pid: nothing to stop"
  stop_pid "$pid"
  echo "rt-guest: stopped QEMU PID $pid"
}

case ${1:-} in
  build) shift; cmd_build "$@" ;;
  image) shift; cmd_image "$@" ;;
  key) cache_key ;;
  serve) shift; cmd_serve "$@" ;;
  start) shift; cmd_start "$@" ;;
  stop) shift; cmd_stop "$@" ;;
  *) die "usage: rt-guest.sh build|image|key|start [PORT]|stop RUNDIR|serve PORT RUNDIR" ;;
esac
