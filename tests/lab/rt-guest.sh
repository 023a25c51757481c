#!/usr/bin/env bash
# The rtbuild lab: real PREEMPT_RT targets under QEMU, reachable over ssh on 127.0.0.1 only. Used by
# tests/integration/rt_guest.rs (x86) and rt_guest_arm64.rs (arm64); a developer can run them by hand:
#
#   tests/lab/rt-guest.sh [--arch A] [--layout L] COMMAND ...
#   build            build the guest image once (needs the network; cached)
#   image            print the cached image folder, or fail naming `build`
#   start [PORT]     boot it in the background, wait for ssh, print how to log in
#   stop RUNDIR      stop a guest started by `start` (by its PID file)
#   serve PORT RUNDIR
#       boot in the foreground for a test: prints `ready PORT` once ssh answers, then keeps the guest
#       until its stdin closes (the test process ended, however it ended) and stops it by PID. QEMU
#       runs under `setpriv --pdeathsig KILL`, so it also dies if this script is killed.
#
#   --arch x86_64 (default): Debian 12's linux-image-rt-amd64, 2 CPUs, CPU 1 isolated.
#   --arch arm64: Debian 12's linux-image-rt-arm64 on `qemu-system-aarch64 -M virt` with 8 CPUs
#       (GICv3), shaped like the Qualcomm boards: --layout rb3 (default; RT CPU 7, housekeeping
#       0-6 as on QCS6490/IQ-9075/IQ-615) or --layout iq8275 (RT CPU 3, housekeeping 0-2,4-7).
#       Its root file system is unpacked from the packages without running any maintainer script
#       (mmdebstrap --variant=extract: nothing runs under emulation, no qemu-user needed) and
#       its small initramfs (static busybox, the virtio and ext4 modules) is made on the host.
#
# An image is built once per package-version set into ${RTBUILD_LAB_CACHE:-~/.cache/rtbuild-lab}/KEY
# (KEY: a hash of this recipe and the candidate versions of the guest's packages in apt's lists: the
# host's for x86, the lab's own arm64 lists for arm64), never inside the checkout. The layout is
# only the kernel command line: both layouts boot the same image. The guest boots a minimal init
# (mounts, sshd) instead of systemd: ssh answers after about 20 s (x86) under TCG instead of about a
# minute. /dev/kvm is not used: on the CI VM it is a nested hypervisor that hangs stock kernels.
set -euo pipefail

# Bump when the image recipe below changes in a way the package versions do not show.
recipe=4
recipe_arm64=2
suite=bookworm
mirror=http://deb.debian.org/debian
security=http://deb.debian.org/debian-security
cache_root=${RTBUILD_LAB_CACHE:-${HOME:-/root}/.cache/rtbuild-lab}
boot_timeout=${RTBUILD_LAB_BOOT_TIMEOUT:-600}
arch=x86_64
layout=
# Whether `serve` shares one ssh connection (a control master) among every ssh the tests and
# rtbuild run through RUNDIR/ssh_config: under TCG each new connection's key exchange costs the
# guest seconds of emulated CPU (4-6 s each on a loaded 2-CPU host, 0.2-1 s through the master).
ssh_mux=

# What each architecture's guest is: its packages, kernel command line, QEMU and serial console.
configure() {
  case $arch in
    x86_64 | amd64)
      arch=x86_64
      [ -z "$layout" ] || die "--layout is for --arch arm64 (the x86 guest has one layout: CPU 1 isolated)"
      packages=(linux-image-rt-amd64 initramfs-tools openssh-server tini iproute2 procps kmod util-linux
        mount rt-tests stress-ng rtla trace-cmd)
      # no_timer_check: under a loaded TCG host the kernel's IO-APIC timer check can time out and
      # panic ("IO-APIC + timer doesn't work"); QEMU's timer works, the check is just too impatient.
      cmdline="console=ttyS0 root=/dev/vda rw init=/sbin/rtlab-init panic=-1 no_timer_check isolcpus=1 nohz_full=1 rcu_nocbs=1 irqaffinity=0"
      ssh_mux=yes
      qemu="qemu-system-x86_64"
      # shellcheck disable=SC2054  # the commas are inside QEMU option values
      qemu_args=(-cpu max -smp 2 -m 1024
        -drive "file=@IMAGE@/rootfs.ext4,format=raw,if=virtio,snapshot=on"
        -device virtio-net-pci,netdev=net0)
      ;;
    arm64 | aarch64)
      arch=arm64
      # Nothing of these is configured on the guest (no maintainer script runs): the build writes
      # the few files their scripts would (passwd, group, shadow, sshd's configuration, awk).
      packages=(linux-image-rt-arm64 busybox-static openssh-server tini iproute2 procps kmod util-linux
        mount rt-tests stress-ng rtla trace-cmd base-files base-passwd bash coreutils dash diffutils
        findutils grep gzip hostname libc-bin mawk sed tar perl-base sysvinit-utils debianutils
        ncurses-bin)
      local rt hk
      case ${layout:-rb3} in
        rb3) rt=7 hk=0-6 ;;
        iq8275) rt=3 hk=0-2,4-7 ;;
        *) die "unknown --layout $layout; use rb3 (RT CPU 7) or iq8275 (RT CPU 3)" ;;
      esac
      layout=${layout:-rb3}
      cmdline="console=ttyAMA0 root=/dev/vda rw rootwait init=/sbin/rtlab-init panic=-1 isolcpus=$rt nohz_full=$rt rcu_nocbs=$rt irqaffinity=$hk"
      ssh_mux=yes
      qemu="qemu-system-aarch64"
      # pauth-impdef: QEMU's own pointer-authentication algorithm, several times cheaper under TCG
      # than the architected QARMA (the guest cannot tell). GICv3 as on the Qualcomm SoCs.
      # shellcheck disable=SC2054  # the commas are inside QEMU option values
      qemu_args=(-M virt,gic-version=3 -cpu max,pauth-impdef=on -smp 8 -m 2048
        -drive "file=@IMAGE@/rootfs.ext4,format=raw,if=none,id=root,snapshot=on"
        -device virtio-blk-pci,drive=root -device virtio-net-pci,netdev=net0)
      ;;
    *) die "unknown --arch $arch; use x86_64 or arm64" ;;
  esac
}

die() {
  echo "rt-guest: error: $*" >&2
  exit 1
}

as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

# The lab's own apt configuration for arm64 lists (the host's apt and dpkg are left alone: no
# foreign architecture is added): bookworm, -updates and -security for arm64 only.
arm64_apt=$cache_root/apt-arm64
arm64_apt_opts=(-o APT::Architecture=arm64 -o APT::Architectures::=arm64
  -o Dir::Etc::SourceList=/dev/null -o "Dir::Etc::SourceParts=$arm64_apt/sources.list.d"
  -o "Dir::State::Lists=$arm64_apt/lists" -o Dir::State::status=/dev/null
  -o "Dir::Cache=$arm64_apt/cache" -o Dir::Cache::pkgcache= -o Dir::Cache::srcpkgcache=
  -o Debug::NoLocking=1)

arm64_apt_update() {
  mkdir -p "$arm64_apt/sources.list.d" "$arm64_apt/lists/partial" "$arm64_apt/cache"
  printf '%s\n' 'Types: deb' "URIs: $mirror" "Suites: $suite $suite-updates" 'Components: main' \
    'Architectures: arm64' 'Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg' '' \
    'Types: deb' "URIs: $security" "Suites: $suite-security" 'Components: main' \
    'Architectures: arm64' 'Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg' \
    >"$arm64_apt/sources.list.d/lab-arm64.sources"
  apt-get "${arm64_apt_opts[@]}" -o Acquire::Retries=3 -o APT::Sandbox::User=root update -qq
}

# The cache key: the recipe plus PACKAGE=VERSION of each guest package as apt's lists (bookworm,
# -updates, -security: the suites the image is built from) would install it.
cache_key() {
  local lines p v policy=(apt-cache) fix="apt-get update (or bash .ci/setup)" r=$recipe
  if [ "$arch" = arm64 ]; then
    policy=(apt-cache "${arm64_apt_opts[@]}")
    fix="tests/lab/rt-guest.sh --arch arm64 build (or bash .ci/setup)"
    r="arm64 $recipe_arm64"
  fi
  # One apt-cache call for all (it is slow on a busy host): "PACKAGE:" then "  Candidate: V".
  lines=$("${policy[@]}" policy "${packages[@]}" 2>/dev/null \
    | sed -n -e 's/^\([a-z0-9.+-]*\):$/\1/p' -e 's/^ *Candidate: /=/p' | paste -d '' - -)
  for p in "${packages[@]}"; do
    v=$(printf '%s\n' "$lines" | sed -n "s/^$p=//p")
    if [ -z "$v" ] || [ "$v" = "(none)" ]; then
      die "apt knows no version of $p ($arch); run $fix"
    fi
  done
  printf 'recipe %s\n%s\n' "$r" "$lines" | sha256sum | cut -c1-16
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

# For the arm64 guest's init, which has no udev (the x86 guest's initramfs runs udev): each disk
# named by its file system's UUID as udev names it, before the console shell starts (LAVA's qemu
# boot mounts its test overlay disk as /dev/disk/by-uuid/UUID).
write_disk_links() {
  cat <<'LINKS'
mkdir -p /dev/disk/by-uuid
for d in /sys/class/block/*; do
  d=${d##*/}
  u=$(blkid -s UUID -o value "/dev/$d" 2>/dev/null) && [ -n "$u" ] && ln -sf "../../$d" "/dev/disk/by-uuid/$u"
done
LINKS
}

cmd_build() {
  [ "$arch" = x86_64 ] || { build_arm64; return; }
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

# The initramfs's /init (static busybox): load the virtio and ext4 modules listed in /modules (in
# dependency order, as the host's modprobe resolved them), wait for the root disk, switch to it.
write_initramfs_init() {
  cat >"$1" <<'INIT'
#!/bin/busybox sh
b=/bin/busybox
$b mkdir -p /proc /sys /dev /newroot
$b mount -t proc proc /proc
$b mount -t sysfs sysfs /sys
$b mount -t devtmpfs devtmpfs /dev
for m in $($b cat /modules); do $b insmod "/$m" || echo "rtlab-initramfs: insmod $m failed"; done
n=0
while [ ! -b /dev/vda ] && [ $n -lt 600 ]; do $b sleep 0.1; n=$((n + 1)); done
$b mount -t ext4 -o rw /dev/vda /newroot || { echo "rtlab-initramfs: no root disk"; exec $b sh; }
$b mount --move /dev /newroot/dev
$b mount --move /proc /newroot/proc
$b mount --move /sys /newroot/sys
exec $b switch_root /newroot /sbin/rtlab-init
INIT
  chmod 0755 "$1"
}

# The arm64 guest, built without running anything under emulation: mmdebstrap's extract variant
# downloads the packages with their dependencies and unpacks them (no maintainer script runs);
# the files those scripts would have written are written here, the modules' index by the host's
# depmod, and the initramfs is packed on the host.
build_arm64() {
  command -v mmdebstrap >/dev/null || die "mmdebstrap is missing; run bash .ci/setup"
  command -v mkfs.ext4 >/dev/null || die "mkfs.ext4 is missing; run bash .ci/setup (e2fsprogs)"
  command -v cpio >/dev/null || die "cpio is missing; run bash .ci/setup"
  command -v depmod >/dev/null || die "depmod is missing; run bash .ci/setup (kmod)"
  arm64_apt_update
  local dir
  dir=$(image_dir)
  if [ -f "$dir/ready" ]; then
    echo "rt-guest: arm64 image is cached: $dir"
    return 0
  fi
  mkdir -p "$cache_root"
  local tmp
  tmp=$(mktemp -d "$cache_root/.build.XXXXXX")
  # shellcheck disable=SC2064  # expand $tmp now: it is local to this function
  trap "as_root rm -rf '$tmp'" EXIT
  echo "rt-guest: building the arm64 guest image into $dir (a few minutes, needs the network)"
  ssh-keygen -q -t ed25519 -N '' -C rtbuild-lab-client -f "$tmp/id_ed25519"
  ssh-keygen -q -t ed25519 -N '' -C rtbuild-lab-host -f "$tmp/host_ed25519"
  write_init "$tmp/rtlab-init"
  sed -i 's,/dev/ttyS0,/dev/ttyAMA0,g' "$tmp/rtlab-init"
  write_disk_links >"$tmp/disk-links"
  sed -i "/^( while :; do setsid/e cat $tmp/disk-links" "$tmp/rtlab-init"
  rm -f "$tmp/disk-links"
  local include root=$tmp/root
  include=$(IFS=,; echo "${packages[*]}")
  as_root mmdebstrap --variant=extract --arch=arm64 --mode=root --quiet \
    --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr \
    --include="$include" --aptopt='Acquire::Retries "3"' --skip=download/empty \
    --customize-hook="for d in \"\$1\"/var/cache/apt/archives/*.deb; do dpkg-deb -f \"\$d\" Package Version | paste -sd= -; done | sort >'$tmp/versions.txt'" \
    --customize-hook="rm -f \"\$1\"/var/cache/apt/archives/*.deb" \
    "$suite" "$root" \
    "deb $mirror $suite main" "deb $mirror $suite-updates main" "deb $security $suite-security main"
  local release
  release=$(basename "$(ls -d "$root"/usr/lib/modules/*)")
  # What base-passwd's, openssh-server's and mawk's scripts would have done, by hand.
  # shellcheck disable=SC2016  # expanded by the inner shell
  as_root sh -e -c '
    r=$1 tmp=$2
    cp "$r/usr/share/base-passwd/passwd.master" "$r/etc/passwd"
    cp "$r/usr/share/base-passwd/group.master" "$r/etc/group"
    echo "sshd:x:100:65534::/run/sshd:/usr/sbin/nologin" >>"$r/etc/passwd"
    cut -d: -f1 "$r/etc/passwd" | sed "s/\$/:*:19000:0:99999:7:::/" >"$r/etc/shadow"
    chmod 0640 "$r/etc/shadow"
    cp "$r/usr/share/openssh/sshd_config" "$r/etc/ssh/sshd_config"
    printf "%s\n" "UsePAM no" "PermitRootLogin prohibit-password" >"$r/etc/ssh/sshd_config.d/rtlab.conf"
    install -m 0600 "$tmp/host_ed25519" "$r/etc/ssh/ssh_host_ed25519_key"
    install -m 0644 "$tmp/host_ed25519.pub" "$r/etc/ssh/ssh_host_ed25519_key.pub"
    install -d -m 0700 "$r/root/.ssh"
    install -m 0600 "$tmp/id_ed25519.pub" "$r/root/.ssh/authorized_keys"
    install -m 0755 "$tmp/rtlab-init" "$r/sbin/rtlab-init"
    ln -sf mawk "$r/usr/bin/awk"
    echo rtlab >"$r/etc/hostname"
    printf "127.0.0.1 localhost\n127.0.1.1 rtlab\n" >"$r/etc/hosts"
    rm -rf "$r/usr/share/doc" "$r/usr/share/man" "$r/usr/share/locale" "$r/usr/share/info"
  ' sh "$root" "$tmp"
  as_root depmod -b "$root" "$release"
  # The initramfs: static busybox and the modules the root disk and the network need.
  local ird=$tmp/initramfs
  mkdir -p "$ird/bin"
  cp "$root/usr/bin/busybox" "$ird/bin/busybox"
  write_initramfs_init "$ird/init"
  modprobe -d "$root" -S "$release" --show-depends -a virtio_pci virtio_blk ext4 virtio_net \
    | sed -n "s,^insmod $root/*\([^ ]*\).*,\1,p" | awk '!seen[$0]++' >"$ird/modules"
  [ -s "$ird/modules" ] || die "modprobe resolved no modules for $release"
  while read -r m; do
    mkdir -p "$ird/$(dirname "$m")"
    cp "$root/$m" "$ird/$m"
  done <"$ird/modules"
  (cd "$ird" && find . | LC_ALL=C sort | cpio -o -H newc --quiet -R 0:0 | gzip -1 >"$tmp/initrd.img")
  as_root cp "$root/boot/vmlinuz-$release" "$tmp/vmlinuz"
  as_root cp "$root/boot/config-$release" "$tmp/config"
  as_root mkfs.ext4 -q -F -L rtlab -d "$root" "$tmp/rootfs.ext4" 2G
  as_root rm -rf "$root" "$ird" "$tmp/host_ed25519"
  as_root chown -R "$(id -u):$(id -g)" "$tmp"
  touch "$tmp/ready"
  rm -rf "$dir"
  mv "$tmp" "$dir"
  trap - EXIT
  echo "rt-guest: arm64 image ready: $dir"
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
  command -v "$qemu" >/dev/null || die "$qemu is missing; run bash .ci/setup"
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
  # Never a master by itself: only `serve` starts one (mux_start); without its socket ssh
  # connects on its own.
  [ -z "$ssh_mux" ] || printf '  ControlMaster no\n  ControlPath %s\n' "$run/mux" >>"$run/ssh_config"
  rm -f "$run/qemu.pid" "$run/console.log"
  local args=("${qemu_args[@]//@IMAGE@/$dir}")
  "${guard[@]}" "$qemu" \
    -accel tcg,thread=multi "${args[@]}" \
    -nodefaults -display none -no-reboot \
    -kernel "$dir/vmlinuz" -initrd "$dir/initrd.img" -append "$cmdline" \
    -netdev "user,id=net0,restrict=on,hostfwd=tcp:127.0.0.1:$port-:22" \
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

# Polls ssh until it answers. Until the console shows sshd listening (its `-e` log), no ssh is
# tried: an attempt before that waits out its whole ConnectTimeout (slirp accepts the connection
# for the guest), so the console is read every half second instead. A console that never shows it
# is not waited for longer than a minute.
wait_ssh() {
  local port=$1 run=$2 deadline=$((SECONDS + boot_timeout)) blind=$((SECONDS + 60))
  while [ $SECONDS -lt $deadline ]; do
    kill -0 "$qemu_pid" 2>/dev/null || {
      tail -n 20 "$run/qemu.log" "$run/console.log" >&2 || true
      die "QEMU exited before ssh answered (logs in $run)"
    }
    if [ $SECONDS -lt $blind ] && ! grep -q 'Server listening on' "$run/console.log" 2>/dev/null; then
      sleep 0.5
      continue
    fi
    if ssh -F "$run/ssh_config" -o ConnectTimeout=5 -p "$port" root@127.0.0.1 true 2>/dev/null; then
      return 0
    fi
    sleep 1
  done
  tail -n 20 "$run/console.log" >&2 || true
  stop_pid "$qemu_pid"
  die "ssh did not answer on 127.0.0.1:$port within ${boot_timeout}s (console log: $run/console.log)"
}

# With $ssh_mux: starts the control master of RUNDIR/ssh_config in the background (it ends when
# QEMU does, its connection gone, or by its PID, $mux_pid) and waits up to a minute for its socket;
# without it every ssh still connects on its own.
mux_pid=
mux_start() {
  local port=$1 run=$2
  [ -n "$ssh_mux" ] || return 0
  ssh -F "$run/ssh_config" -o ControlMaster=yes -o ControlPersist=no -N -p "$port" root@127.0.0.1 \
    </dev/null >/dev/null 2>"$run/mux.log" &
  mux_pid=$!
  for _ in $(seq 300); do
    ssh -F "$run/ssh_config" -O check -p "$port" root@127.0.0.1 2>/dev/null && return 0
    kill -0 "$mux_pid" 2>/dev/null || break
    sleep 0.2
  done
  echo "rt-guest: no shared ssh connection (see $run/mux.log); each ssh connects on its own" >&2
}

cmd_serve() {
  [ $# -eq 2 ] || die "usage: rt-guest.sh serve PORT RUNDIR"
  local port=$1 run=$2
  boot "$port" "$run"
  # shellcheck disable=SC2064  # the QEMU PID is fixed now; the master's is read at exit
  trap "stop_pid $qemu_pid; [ -z \"\$mux_pid\" ] || stop_pid \"\$mux_pid\"" EXIT
  trap 'exit 130' INT TERM HUP
  # The watcher: when the test process closes our stdin (it ended, however it ended, even while
  # the guest is still booting), stop QEMU by its PID.
  # (A background job's stdin is /dev/null, so hand it ours through fd 3.)
  exec 3<&0
  ( cat <&3 >/dev/null; stop_pid "$qemu_pid" ) &
  exec 3<&-
  local started=$SECONDS
  wait_ssh "$port" "$run"
  mux_start "$port" "$run"
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
  case $arch/$layout in
    arm64/rb3) echo "  machine: --machine rb3gen2-core-kit (RT CPU 7, housekeeping 0-6)" ;;
    arm64/iq8275) echo "  machine: --machine iq-8275-evk (RT CPU 3, housekeeping 0-2,4-7)" ;;
    *) echo "  machine: --machines-dir tests/lab/machines --machine rtlab-guest" ;;
  esac
  echo "  stop:    $0 stop $run"
}

cmd_stop() {
  [ $# -eq 1 ] || die "usage: rt-guest.sh stop RUNDIR"
  local pid
  pid=$(cat "$1/qemu.pid" 2>/dev/null) || die "no $1/qemu.pid: nothing to stop"
  stop_pid "$pid"
  echo "rt-guest: stopped QEMU PID $pid"
}

# --arch and --layout may stand anywhere on the line; the rest is the command and its arguments.
rest=()
while [ $# -gt 0 ]; do
  case $1 in
    --arch) [ $# -ge 2 ] || die "--arch needs a value: x86_64 or arm64"; arch=$2; shift 2 ;;
    --arch=*) arch=${1#--arch=}; shift ;;
    --layout) [ $# -ge 2 ] || die "--layout needs a value: rb3 or iq8275"; layout=$2; shift 2 ;;
    --layout=*) layout=${1#--layout=}; shift ;;
    *) rest+=("$1"); shift ;;
  esac
done
set -- "${rest[@]+"${rest[@]}"}"
configure

case ${1:-} in
  build) shift; cmd_build "$@" ;;
  image) shift; cmd_image "$@" ;;
  key) cache_key ;;
  serve) shift; cmd_serve "$@" ;;
  start) shift; cmd_start "$@" ;;
  stop) shift; cmd_stop "$@" ;;
  *) die "usage: rt-guest.sh [--arch x86_64|arm64] [--layout rb3|iq8275] build|image|key|start [PORT]|stop RUNDIR|serve PORT RUNDIR" ;;
esac
