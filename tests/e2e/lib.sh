# SPDX-License-Identifier: LGPL-2.1-only
# lib.sh: sourced by every scenario, in the test dom0. Assertions print one
# line each in the protocol dom0-init describes; the scenario's exit status
# is 1 if any assertion failed.
set -eu
: "${E2E_SID:?run by dom0-init}"

E2E=/e2e
BIN=$E2E/bin
STATE=/run/e2e
RUN=$STATE/$E2E_SID
WRAPPER=/usr/libexec/xl-reaper/qemu-dm-restrict
# The image dom0 runs (tests/e2e/images/): E2E_XEN, E2E_QEMU, and what its
# libxl does differently (E2E_LIBXL_PROBE, E2E_DM_RUN_WITH).
. $E2E/image
QEMU=$E2E_QEMU
# The flock that upstream libxl's uid reaper and this project share.
LOCK=/var/run/xen/dm-reaper-lock
# How soon after a destroy the DM uid must be empty: 2 s, the bound the
# project sets for xl-reaperd's reap of a dead domain's uid.
REAP_MS=${E2E_REAP_MS:-2000}
failed=0
mkdir -p "$RUN"

pass() { echo "E2E PASS $E2E_SID: $*"; }
fail() {
    echo "E2E FAIL $E2E_SID: $*"
    failed=1
    explain || true
}
# The scenario's status is its assertions'; but one that stopped early
# (set -e: a command outside any assertion failed) has not passed, even
# if every assertion it got to did.
scenario_exit() {
    [ "$1" = 0 ] || [ "$failed" = 1 ] ||
        fail "stopped early (status $1) with no failed assertion, at a" \
            "command outside any: the lines above say how far it got"
    exit $failed
}
trap 'scenario_exit $?' EXIT
# A scenario that cannot run here says why: counted as skipped, never as
# passed (report), so a run without it is not mistaken for a proof.
skip() { echo "E2E SKIP $E2E_SID: $*"; }
diag() { echo "E2E # $E2E_SID: $*"; }
now_ms() { date +%s%3N; }

# Every command that can wait on Xen, xenstored, libxl's lock, systemd,
# dpkg or another process's memory (ps reads /proc/PID/cmdline) runs with
# a bound, so that a stuck one fails its own assertion, named, and the
# scenario goes on, rather than the whole scenario (or boot) timing out
# with nothing said.  check and poll bound the programs they run; the
# scenarios' other calls say "bounded".
CMD_S=${E2E_CMD_TIMEOUT:-120}
bounded() { timeout -k 5 "$CMD_S" "$@"; }
# is_program NAME: NAME runs a program (not a shell function or builtin).
is_program() { case $(command -v "$1") in /*) return 0 ;; esac; return 1; }

# check DESC CMD...: one assertion on CMD's exit status; carries on.
check() {
    _d=$1
    shift
    _rc=0
    if is_program "$1"; then
        bounded "$@" >"$RUN/out" 2>&1 || _rc=$?
    else
        "$@" >"$RUN/out" 2>&1 || _rc=$?
    fi
    if [ "$_rc" = 0 ]; then
        pass "$_d"
    elif [ "$_rc" = 124 ] && is_program "$1"; then
        fail "$_d (timed out after $CMD_S s: $(tail -n 1 "$RUN/out" | cut -c1-140))"
    else
        fail "$_d (rc=$_rc: $(tail -n 1 "$RUN/out" | cut -c1-160))"
    fi
    return 0
}

# need DESC CMD...: like check, but the scenario cannot go on without it.
need() {
    _f=$failed
    failed=0
    check "$@"
    [ "$failed" = 0 ] || exit 1
    failed=$_f
}

# Print the last lines of a log as diagnostics (kept short: TCG console).
diag_tail() {
    [ -s "$1" ] || return 0
    tail -n "${2:-5}" "$1" | cut -c1-200 | while IFS= read -r l; do
        diag "  $l"
    done
}

# What explains a failure, after its FAIL line: the end of each log of
# the toolstack written since the scenario began, or since the last
# failure's (a failure's cause is in libxl's log, libvirt's, or the
# DM's, not in the command's last line): libxl's per domain (xl's
# monitor, libvirt's libxl driver), QEMU's, and whatever the scenario
# named with explain_log (libvirtd's).  Newest first, at most 4 logs of
# 30 lines and 2 KiB each, for at most E2E_EXPLAIN_MAX failures a
# scenario (the console is a serial line at 115200 baud).
EXPLAIN_GLOBS="/var/log/xen/xl-*.log /var/log/xen/qemu-dm-*.log
    /var/log/libvirt/libxl/*.log"
EXPLAIN_MAX=${E2E_EXPLAIN_MAX:-3}
explain_n=0
# "path size" of each log there is.
explain_sizes() {
    find $EXPLAIN_GLOBS -maxdepth 0 -type f -printf '%p %s\n' 2>/dev/null |
        sort -u
}
explain_sizes >"$RUN/explained"
explain_log() { EXPLAIN_GLOBS="$EXPLAIN_GLOBS $*"; }
explain() {
    if [ "$explain_n" -ge "$EXPLAIN_MAX" ]; then
        [ "$explain_n" != "$EXPLAIN_MAX" ] ||
            diag "  (the logs of this scenario's later failures not shown)"
        explain_n=$((explain_n + 1))
        return 0
    fi
    # Grown or new since the sizes last recorded, newest first (a
    # coarse mtime cannot tell writes a few ms apart).
    explain_sizes >"$RUN/explained.now"
    # (Not NR == FNR: the sizes of none, an empty file, is a case.)
    _xlogs=$(awk -v was="$RUN/explained" '
        BEGIN { while ((getline l < was) > 0) { split(l, f, " ")
            old[f[1]] = f[2] } }
        $2 > 0 && old[$1] != $2 { print $1 }' "$RUN/explained.now" |
        xargs -r ls -t 2>/dev/null | head -n 4)
    mv "$RUN/explained.now" "$RUN/explained"
    if [ -z "$_xlogs" ]; then
        diag "  (no toolstack log written since the last one shown)"
        return 0
    fi
    explain_n=$((explain_n + 1))
    for _xf in $_xlogs; do
        diag "  -- $_xf ($(wc -c <"$_xf") bytes), its end:"
        tail -n 30 "$_xf" | tr -d '\r' | cut -c1-200 | tail -c 2048 |
            while IFS= read -r _xl; do diag "  | $_xl"; done
    done
}

# poll MS CMD...: true as soon as CMD succeeds, false after MS ms.
poll() {
    _end=$(($(now_ms) + $1))
    shift
    _b=
    ! is_program "$1" || _b=bounded
    until $_b "$@" >/dev/null 2>&1; do
        [ "$(now_ms)" -lt "$_end" ] || return 1
        sleep 0.05
    done
}

need_prog() {
    [ -x "$1" ] || { fail "$1 is not installed (project build missing?)"; exit 1; }
}

# guest_cfg NAME [LINE...]: the issue's minimal HVM guest, plus LINEs.
guest_cfg() {
    _n=$1
    shift
    {
        echo "name = \"$_n\""
        echo 'type = "hvm"'
        echo 'memory = 32'
        echo 'device_model_version = "qemu-xen"'
        echo 'dm_restrict = 1'
        echo 'vnc = 0'
        echo 'serial = "pty"'
        # SeaBIOS finds no bootable device and resets the guest after
        # 60 s; xl's monitor would then destroy the domain (libxl's uid
        # reaper killing the DM uid, racers and all) and create another
        # one, with a new domid, under the scenario (seen on 4.17: 08's
        # domain 1 replaced by domain 2 during a slow dpkg -r).  Kept
        # instead, shut down, its DM alive, until the scenario destroys it.
        echo 'on_reboot = "preserve"'
        # What this image's QEMU needs of every guest (images/*).
        [ -z "${E2E_GUEST_LINES:-}" ] || echo "$E2E_GUEST_LINES"
        for _l in "$@"; do echo "$_l"; done
    } >"$RUN/$_n.cfg"
    echo "$RUN/$_n.cfg"
}

wrapper_line() { echo "device_model_override = \"$WRAPPER\""; }

# stock_dm_shim FILE: writes FILE, a device model for libxl's own stock
# path on this image: QEMU under libxl's command line, uid and limits,
# but for two things Debian 13's QEMU 10 needs that libxl 4.20 does not
# give it (images/4.20): RLIMIT_FSIZE raised to E2E_DM_FSIZE, and the
# probe (the line without -xen-domid) run in a mount namespace with an
# empty /var/run/xen, as qemu-dm-restrict runs it. libxl binds the
# probe's QMP socket and then the DM's at the same path, qmp-libxl-D, and
# QEMU unlinks its socket's path when it exits: a probe slower to exit
# than libxl is to bind the DM's socket removes the DM's, and libxl's
# next QMP connection, and xl create, fail (xlreaper_libxl_probe.c).
stock_dm_shim() {
    cat >"$1" <<EOS
#!/bin/sh
ulimit -f $((${E2E_DM_FSIZE:-262144} / 512))
case " \$* " in
*" -xen-domid "*) exec $QEMU "\$@" ;;
esac
exec unshare --mount --propagation private sh -c \\
    'mount -t tmpfs -o mode=0700,size=4k e2e-probe /var/run/xen && exec "\$0" "\$@"' \\
    $QEMU "\$@"
EOS
    chmod 755 "$1"
}

# dm_logs NAME: the ends of libxl's logs of the guest's probe and DM.
dm_logs() {
    for _l in /var/log/xen/qemu-probe-$1.log /var/log/xen/qemu-dm-$1.log; do
        [ -e "$_l" ] || continue
        diag "${_l##*/} ($(wc -c <"$_l") bytes):"
        diag_tail "$_l" 6
    done
}

# xen_state WHY: what Xen and dom0 said when a create failed, on the
# console: Xen's free memory and its own log (why populate_physmap or an
# ioreq server failed is written there, not in QEMU's), the domains (a
# dying one still holds its memory), dom0's memory and kernel log (an OOM
# kill or a crash leaves no line in the DM's log), and what is left of
# the probe QEMU.
xen_state() {
    diag "xen state ($1):"
    diag "  $(bounded xl info 2>&1 | grep -E '^(total|free|outstanding)_memory|^xen_version' |
        tr -s ' \n' ' ')"
    bounded xl list >"$RUN/xl-list" 2>&1 || true
    diag_tail "$RUN/xl-list" 8
    bounded xl dmesg >"$RUN/xl-dmesg" 2>&1 || true
    diag "xl dmesg (last lines of $(wc -l <"$RUN/xl-dmesg")):"
    diag_tail "$RUN/xl-dmesg" 25
    diag "dom0: $(awk '/^(MemFree|MemAvailable):/ { printf "%s %d MiB ", $1, $2 / 1024 }' \
        /proc/meminfo) load $(cut -d' ' -f1-3 /proc/loadavg)"
    dmesg >"$RUN/dmesg" 2>&1 || true
    diag "dom0 dmesg (last lines):"
    diag_tail "$RUN/dmesg" 12
    # libxl connects to QEMU by the path of its QMP socket.
    diag "/var/run/xen: $(ls -l /var/run/xen 2>&1 | awk 'NR > 1 { print $1, $NF }' |
        tr '\n' ';')"
    diag "qemu processes: $(bounded ps -eo pid,uid,stat,etimes,args |
        awk '/qemu-system/ && !/awk/ { $1 = $1; print }' | cut -c1-120 |
        tr '\n' ';')"
}

# create_failed NAME LOG WHAT: everything known about a failed create.
create_failed() {
    fail "$3"
    diag_tail "$2" 8
    # libxl's own account at debug level, kept by create_guest: its errors
    # and the DM's exit, without the noise.
    if [ -s "$2.vvv" ]; then
        diag "libxl said:"
        grep -a -i -E ': (error|warning|critical): |timed out|exited|signal' \
            "$2.vvv" | tail -n 15 >"$2.err" || true
        diag_tail "$2.err" 15
    fi
    dm_logs "$1"
    xen_state "create $1 failed"
}

# create_guest NAME CFG [-p]: xl create; sets DOMID and DMPID.  -p leaves
# the guest paused: its DM runs, but emulates no BIOS (below).
create_guest() {
    _t0=$(now_ms)
    # -vvv to a file of its own: read only when the create fails.
    if ! timeout 300 xl -vvv create ${3:-} "$2" >"$RUN/create-$1.log" \
        2>"$RUN/create-$1.log.vvv"; then
        create_failed "$1" "$RUN/create-$1.log" "xl create $1"
        exit 1
    fi
    DOMID=$(bounded xl domid "$1")
    echo "$DOMID" >>"$STATE/domids"
    DMPID=$(bounded xenstore-read "/local/domain/$DOMID/image/device-model-pid")
    pass "xl create $1: domid $DOMID, DM pid $DMPID ($(($(now_ms) - _t0)) ms)"
}

# create_fixed NAME DOMID [DM_OVERRIDE]: the same guest with a chosen domid,
# through libxl (xl 4.17 reads no domid from xl.cfg); sets DOMID, DMPID.
create_fixed() {
    _t0=$(now_ms)
    # The image's guest lines, said to libxl (images/4.20: no vkbd).
    _o=
    case ${E2E_GUEST_LINES:-} in *"vkb_device = 0"*) _o=--no-vkb ;; esac
    if ! E2E_XTL_DEBUG=1 timeout 300 "$BIN/create-domid" $_o "$@" \
        >"$RUN/create-$1.log" 2>"$RUN/create-$1.log.vvv"; then
        create_failed "$1" "$RUN/create-$1.log" "create $1 with domid $2"
        exit 1
    fi
    DOMID=$(tail -n 1 "$RUN/create-$1.log")
    echo "$DOMID" >>"$STATE/domids"
    DMPID=$(bounded xenstore-read "/local/domain/$DOMID/image/device-model-pid")
    pass "create $1 with domid $2: domid $DOMID, DM pid $DMPID ($(($(now_ms) - _t0)) ms)"
}

domain_exists() { bounded xl list "$1" >/dev/null 2>&1; }
domain_gone() { ! domain_exists "$1"; }
# Xen keeps a destroyed domain "dying" (state d) while a live DM still maps
# its memory: only the DM's death lets it go.
domain_dying_or_gone() {
    domain_gone "$1" ||
        bounded xl list "$1" 2>/dev/null | awk 'NR == 2 { exit $5 !~ /d/ }'
}
pid_alive() { [ -d "/proc/$1" ] && ! grep -q '^State:.*Z' "/proc/$1/status"; }
pid_gone() { ! pid_alive "$1"; }

# Upstream's DM uid for a domid: the range-base user's uid + domid.
range_base() { getent passwd xen-qemuuser-range-base | cut -d: -f3; }
expected_uid() { echo $(($(range_base) + $1)); }

# cli_ids DOMID: sets DMUID and DMGID from `xl-reaper uid DOMID`: the
# numbers after "uid" and "gid" if it labels them, else the first two.
cli_ids() {
    _o=$(bounded xl-reaper uid "$1") || { fail "xl-reaper uid $1"; exit 1; }
    DMUID=$(echo "$_o" | grep -o -E '\<uid[ =:]*[0-9]+' | head -n 1 |
        grep -o -E '[0-9]+$' || true)
    DMGID=$(echo "$_o" | grep -o -E '\<gid[ =:]*[0-9]+' | head -n 1 |
        grep -o -E '[0-9]+$' || true)
    if [ -z "$DMUID" ] || [ -z "$DMGID" ]; then
        set -- $(echo "$_o" | tr -c '0-9\n' ' ')
        DMUID=${1:-}
        DMGID=${2:-}
    fi
    [ -n "$DMGID" ] || { fail "cannot read uid and gid from '$_o'"; exit 1; }
    diag "xl-reaper uid: $(echo "$_o" | tr '\n' ' ' | cut -c1-120)"
    echo "$DMUID" >>"$STATE/uids"
}

# "ruid euid suid fsuid" / the same for gids, of PID.
proc_uids() { awk '/^Uid:/ { print $2, $3, $4, $5 }' "/proc/$1/status"; }
proc_gids() { awk '/^Gid:/ { print $2, $3, $4, $5 }' "/proc/$1/status"; }
proc_groups() { awk '/^Groups:/ { $1 = ""; print }' "/proc/$1/status" |
    sed 's/^ *//; s/ *$//'; }
all_four() { [ "$1" = "$2 $2 $2 $2" ]; }

# The kernel's task count of a uid (see src/uid-empty.c).
uid_empty() { "$BIN/uid-empty" "$1" "${2:-0}"; }
uid_busy() {
    _r=0
    "$BIN/uid-empty" "$1" 0 >/dev/null || _r=$?
    [ "$_r" = 1 ]
}

# start_racer NAME UID GID [PROG [ARG...]]: a fork racer (PROG: fork-racer,
# or stop-racer, which also SIGSTOPs whatever enters its uid; a PROG with a
# slash is taken as it is, and other tasks than racers are watched the same
# way) under UID:GID, started the way a compromised QEMU would run it. Its
# liveness is watched without /proc: all generations inherit the write end
# of a FIFO, whose reader gets EOF only when none is left alive.
start_racer() {
    _n=$1 _u=$2 _g=$3
    shift 3
    _p=${1:-fork-racer}
    [ $# -eq 0 ] || shift
    case $_p in */*) ;; *) _p=$BIN/$_p ;; esac
    _f=$RUN/$_n.fifo
    rm -f "$_f" "$RUN/$_n.dead"
    mkfifo "$_f"
    (cat "$_f" >/dev/null; : >"$RUN/$_n.dead") &
    # The double fork hands generation one to PID 1, which reaps at once:
    # an unreaped zombie would keep the uid's task count above zero.
    (setpriv --reuid "$_u" --regid "$_g" --clear-groups -- \
        "$_p" "$@" 3>"$_f" </dev/null >/dev/null 2>&1 &)
    echo "$_u" >>"$STATE/uids"
    poll 5000 uid_busy "$_u" || { fail "racer $_n did not start"; exit 1; }
}
racer_alive() { [ ! -e "$RUN/$1.dead" ]; }
racer_dead() { [ -e "$RUN/$1.dead" ]; }

# within T0 MS WHAT: passes WHAT if no more than MS ms have gone since
# T0, else fails it: a check that succeeds late (poll runs its command
# to the end, and a loaded machine may take long over it) is late.
within() {
    _dt=$(($(now_ms) - $1))
    if [ "$_dt" -le "$2" ]; then
        pass "$3 after $_dt ms"
    else
        fail "$3 only after $_dt ms, over the bound of $2 ms"
    fi
}

# assert_reaped NAME UID MS WHAT: within MS ms of now, the racer is dead
# and UID empty by the kernel's count (one deadline for both).
assert_reaped() {
    _t0=$(now_ms)
    if poll "$3" racer_dead "$1"; then
        within "$_t0" "$3" "$4: racer $1 dead"
    else
        fail "$4: racer $1 still alive after $3 ms"
    fi
    _left=$((_t0 + $3 - $(now_ms)))
    [ "$_left" -gt 0 ] || _left=0
    if uid_empty "$2" "$_left" >/dev/null; then
        within "$_t0" "$3" "$4: uid $2 empty (kernel count)"
    else
        fail "$4: uid $2 not empty (kernel count) $3 ms after"
        diag "  tasks seen: $(bounded ps -eLo uid,pid,stat,comm | awk -v u="$2" \
            '$1 == u' | head -n 5 | tr '\n' ';')"
    fi
}

# The DM options libxl uses to chroot QEMU and to switch its uid, as this
# image's libxl spells them: 4.17 says -chroot DIR and -runas U:G; 4.20,
# having probed QEMU 10 (which has no -chroot), -run-with chroot=DIR and a
# separate -run-with user=U:G.
dm_chroot_arg() {
    if [ "$E2E_DM_RUN_WITH" = 1 ]; then
        echo "-run-with chroot=/var/run/xen/qemu-root-$1"
    else
        echo "-chroot /var/run/xen/qemu-root-$1"
    fi
}
dm_user_arg() {
    if [ "$E2E_DM_RUN_WITH" = 1 ]; then
        echo "-run-with user=$1:$2"
    else
        echo "-runas $1:$2"
    fi
}
dm_cmdline() { tr '\0' ' ' <"/proc/$1/cmdline"; }

# Kill the DM by its pid only, as libxl without a uid would.
kill_dm_pid() {
    kill -KILL "$1"
    poll 5000 pid_gone "$1" || fail "DM pid $1 survived SIGKILL"
}

# The daemon, as an operator would run it. Not a child of the scenario,
# so that cleanup can stop it even if the scenario is killed.
daemon_start() {
    need_prog /usr/sbin/xl-reaperd
    (xl-reaperd --events "$RUN/events" -v 2>>"$RUN/reaperd.log" &
        echo $! >"$STATE/reaperd.pid")
    DAEMON=$(cat "$STATE/reaperd.pid")
    sleep 1
    if pid_alive "$DAEMON"; then
        pass "xl-reaperd started (pid $DAEMON)"
    else
        fail "xl-reaperd exited at start"
        diag_tail "$RUN/reaperd.log"
        exit 1
    fi
}
daemon_stop() {
    [ -s "$STATE/reaperd.pid" ] || return 0
    _p=$(cat "$STATE/reaperd.pid")
    rm -f "$STATE/reaperd.pid"
    pid_alive "$_p" || { fail "xl-reaperd died before stop"; return 0; }
    kill -TERM "$_p"
    if poll 10000 pid_gone "$_p"; then
        pass "xl-reaperd stopped on SIGTERM"
    else
        fail "xl-reaperd ignored SIGTERM"
        kill -KILL "$_p"
    fi
}
daemon_down() { [ ! -s "$STATE/reaperd.pid" ]; }

# An event of the daemon's --events file that names DOMID.
has_event() {
    grep -Eq "\"domid\" *: *$1([^0-9]|\$)" "$RUN/events" 2>/dev/null
}
assert_event() {
    if poll "$2" has_event "$1"; then
        pass "xl-reaperd logged a reap event for domid $1"
        diag "  $(grep -E "\"domid\" *: *$1([^0-9]|\$)" "$RUN/events" |
            tail -n 1 | cut -c1-200)"
    else
        fail "no xl-reaperd event for domid $1 within $2 ms"
        diag_tail "$RUN/reaperd.log"
    fi
}

# Hold the reaper lock, as a reaper mid-kill would; sets LOCKPID.
lock_hold() {
    rm -f "$RUN/locked"
    (exec 8>"$LOCK"; flock 8; : >"$RUN/locked"; exec sleep 600) &
    LOCKPID=$!
    echo "$LOCKPID" >>"$STATE/pids"
    if ! poll 5000 test -e "$RUN/locked"; then
        fail "could not take $LOCK within 5 s"
        _ino=$(stat -c %i "$LOCK")
        diag "  /proc/locks: $(grep ":$_ino " /proc/locks | tr -s ' \n' ' ;')"
        diag_tail "$RUN/reaperd.log" 5
        exit 1
    fi
}
lock_release() { kill "$LOCKPID"; wait "$LOCKPID" 2>/dev/null || true; }

# A descendant of PID blocked in flock: upstream libxl forks its uid
# reaper and that child waits for the reaper lock.  PID is the
# background job's, which runs timeout (bounded), which runs xl.
blocked_child() {
    _ps=$1
    for _depth in 1 2 3 4; do
        _next=
        for _p in $_ps; do
            for _c in $(pgrep -P "$_p"); do
                grep -qs flock "/proc/$_c/stack" && { echo "$_c"; return 0; }
                _next="$_next $_c"
            done
        done
        _ps=$_next
    done
    return 1
}

# xl_destroy_without_reap DOMID: `xl destroy` whose uid reaper is SIGKILLed
# in the middle of the destroy, while it waits for the lock we hold. Upstream
# 4.17 only logs that failure and destroys the domain anyway: after this the
# domain is gone and nothing of libxl's has killed the DM uid.
xl_destroy_without_reap() {
    lock_hold
    bounded xl destroy "$1" >"$RUN/destroy-$1.log" 2>&1 &
    _xl=$!
    if ! poll 60000 blocked_child "$_xl"; then
        fail "xl destroy $1 never blocked in its uid reaper"
        lock_release
        wait "$_xl" || true
        diag_tail "$RUN/destroy-$1.log"
        exit 1
    fi
    _c=$(blocked_child "$_xl")
    kill -KILL "$_c"
    pass "SIGKILLed xl's uid reaper (pid $_c) in the middle of destroy $1"
    lock_release
    _r=0
    wait "$_xl" || _r=$?
    diag "xl destroy $1 returned $_r with its reaper killed"
    diag_tail "$RUN/destroy-$1.log" 3
}

# The domain exists and is neither paused nor shutting down nor dying.
domain_running() {
    _s=$(bounded xl list "$1" 2>/dev/null | awk 'NR == 2 { print $5 }')
    [ -n "$_s" ] || return 1
    case $_s in *p* | *s* | *c* | *d*) return 1 ;; esac
}

# `xl-reaper audit --tap` as an assertion; its failing lines as diagnostics.
assert_audit() {
    _r=0
    # Bounded: an audit that hangs fails here, with what it said, rather
    # than eating the scenario's whole time.
    timeout "${AUDIT_TIMEOUT_S:-120}" xl-reaper -v -v audit --tap \
        >"$RUN/audit.tap" 2>&1 || _r=$?
    if [ "$_r" = 0 ]; then
        pass "xl-reaper audit passes $1"
    else
        [ "$_r" = 124 ] && _r="$_r (timed out)"
        fail "xl-reaper audit $1 exited $_r"
        grep -v -e '^ok' -e 'xencall:buffer' "$RUN/audit.tap" | tail -n 16 |
            cut -c1-200 |
            while IFS= read -r l; do diag "  $l"; done
    fi
}
