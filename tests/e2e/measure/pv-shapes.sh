# SPDX-License-Identifier: LGPL-2.1-only
# e2e-timeout: 3000
# A measurement, not a test (prepare copies it in as scenario 90; run
# with `tests/e2e/run --extra OUT --only 90`): what libxl starts for PV
# and PVH guests under dm_restrict = 1, stock and through the wrapper.
# For each guest: libxl's DM command line and QEMU's own, every QEMU
# process's ids, limits, root, cgroup and descriptors, the xenstore
# permissions of its backends, the descriptors again once the guest's
# frontends connected (or did not), what the DM logged, what is left
# after `xl destroy`, and whether the guest's write reached the qcow2.
# Then, by hand, what a process of the DM uid meets when it opens
# xenstore the ways libxenstore's xs_open() does (the socket, then the
# xenbus device), in and out of a chroot like libxl's.  Findings are
# "E2E #" lines; the few PASS/FAIL lines only say a step was done.
. /e2e/lib.sh
M=/e2e/measure
KERNEL=$M/vmlinuz-$E2E_XEN
INITRD=$M/initrd-$E2E_XEN.gz
need_prog "$WRAPPER"
for f in "$KERNEL" "$INITRD" "$M/empty.qcow2"; do
    [ -s "$f" ] || { fail "$f missing (tests/e2e/measure/prepare)"; exit 1; }
done
# Kept short per line: a serial console at 115200 baud.
W=${E2E_MEASURE_WIDTH:-900}

# VNC of the vfb listens on 127.0.0.1 (09 does the same).
ip link set lo up 2>/dev/null || true
# The guests' consoles into files: xenconsoled restarted with its guest
# log (dom0-init started it without one).
CONS=/var/log/xen/console
mkdir -p "$CONS"
if [ -s /run/xenconsoled.pid ]; then
    kill "$(cat /run/xenconsoled.pid)" 2>/dev/null || true
    sleep 1
fi
xenconsoled --pid-file /run/xenconsoled.pid --log=guest --log-dir="$CONS" ||
    diag "xenconsoled with --log=guest did not start"

# Every process whose executable is a QEMU (the wrapper execs QEMU in
# place; the probe of 4.20 is one too, while it lives).
qemu_pids() {
    for _p in /proc/[0-9]*; do
        case $(readlink "$_p/exe" 2>/dev/null) in
        *qemu-system*) echo "${_p#/proc/}" ;;
        esac
    done
}

# snap PID DIR: what /proc says of PID, into DIR/PID.* (overwritten).
snap() {
    _s=$2/$1
    [ -d "/proc/$1" ] || return 0
    tr '\0' ' ' <"/proc/$1/cmdline" >"$_s.cmd" 2>/dev/null || true
    cat "/proc/$1/status" >"$_s.status" 2>/dev/null || true
    cat "/proc/$1/cgroup" >"$_s.cgroup" 2>/dev/null || true
    cat "/proc/$1/limits" >"$_s.limits" 2>/dev/null || true
    tr '\0' ' ' <"/proc/$1/environ" >"$_s.env" 2>/dev/null || true
    echo "root=$(readlink "/proc/$1/root" 2>/dev/null) cwd=$(readlink \
        "/proc/$1/cwd" 2>/dev/null) exe=$(readlink "/proc/$1/exe" 2>/dev/null)" \
        >"$_s.paths"
    # fd -> target, one a line; sockets with their inode only.
    for _fd in /proc/$1/fd/*; do
        [ -e "$_fd" ] || [ -L "$_fd" ] || continue
        echo "${_fd##*/} $(readlink "$_fd" 2>/dev/null)"
    done | LC_ALL=C sort >"$_s.fd"
}

# role DOMID PID: what libxl's xenstore calls PID.
role() {
    _r=
    [ "$(xenstore-read "/local/domain/$1/image/device-model-pid" 2>/dev/null)" != "$2" ] ||
        _r="device-model-pid"
    [ "$(xenstore-read "/local/domain/0/libxl/$1/qdisk-backend-pid" 2>/dev/null)" != "$2" ] ||
        _r="$_r qdisk-backend-pid"
    echo "${_r:-none of libxl's pids (probe, or another domain's)}"
}

# report TAG PID DIR [DOMID]: the snapshot of PID as diagnostics.
report() {
    _s=$3/$2
    [ -e "$_s.status" ] || { diag "$1 pid $2: no snapshot"; return 0; }
    diag "$1 pid $2 (ppid $(awk '/^PPid:/ { print $2 }' "$_s.status"))${4:+ role: $(role "$4" "$2")}"
    diag "$1 pid $2 cmdline: $(cut -c1-"$W" "$_s.cmd")"
    diag "$1 pid $2 ids: $(grep -E '^(Uid|Gid|Groups):' "$_s.status" |
        tr -s '\t ' ' ' | tr '\n' ';')"
    diag "$1 pid $2 sec: $(grep -E '^(NoNewPrivs|Seccomp|CapEff|CapBnd|Threads):' \
        "$_s.status" | tr -s '\t ' ' ' | tr '\n' ';')"
    diag "$1 pid $2 $(cat "$_s.paths"); cgroup: $(tr '\n' ' ' <"$_s.cgroup")"
    diag "$1 pid $2 limits: $(grep -E '^Max (file size|processes|core file size|open files)' \
        "$_s.limits" | tr -s ' ' | tr '\n' ';')"
    diag "$1 pid $2 env: $(cut -c1-300 "$_s.env")"
    diag "$1 pid $2 fds ($(wc -l <"$_s.fd")): $(awk '{ printf "%s:%s ", $1, $2 }' \
        "$_s.fd" | cut -c1-"$W")"
}

# fd_diff TAG PID DIR_BEFORE DIR_AFTER: descriptors gained and lost.
fd_diff() {
    [ -e "$3/$2.fd" ] && [ -e "$4/$2.fd" ] || return 0
    _g=$(LC_ALL=C comm -13 "$3/$2.fd" "$4/$2.fd" | awk '{ printf "%s:%s ", $1, $2 }')
    _l=$(LC_ALL=C comm -23 "$3/$2.fd" "$4/$2.fd" | awk '{ printf "%s:%s ", $1, $2 }')
    diag "$1 pid $2 fds gained: ${_g:-none} | lost: ${_l:-none}"
}

# states DOMID: each backend's and its frontend's XenbusState, one line.
states() {
    _o=
    for _t in qdisk vbd vbd3 vfb vkbd console 9pfs; do
        for _i in $(xenstore-list "/local/domain/0/backend/$_t/$1" 2>/dev/null); do
            _b=/local/domain/0/backend/$_t/$1/$_i
            _f=$(xenstore-read "$_b/frontend" 2>/dev/null || true)
            _o="$_o $_t/$_i=be$(xenstore-read "$_b/state" 2>/dev/null ||
                echo -),fe$(xenstore-read "$_f/state" 2>/dev/null || echo -)"
        done
    done
    echo "${_o# }"
}
# connected DOMID: every backend but the console (xenconsoled's) is 4.
connected() {
    _st=$(states "$1")
    [ -n "$_st" ] || return 1
    for _x in $_st; do
        case $_x in console/*) continue ;; esac
        case $_x in *=be4,fe4) ;; *) return 1 ;; esac
    done
}

# xs_dump TAG DOMID: the xenstore nodes of the domain's backends, of
# libxl's records and of the DM, with their permissions.
xs_dump() {
    for _x in /local/domain/0/backend/qdisk/$2 /local/domain/0/backend/vbd/$2 \
        /local/domain/0/backend/vfb/$2 /local/domain/0/backend/vkbd/$2 \
        /local/domain/0/device-model/$2 /local/domain/0/libxl/$2 \
        /libxl/$2 /local/domain/$2/device /local/domain/$2/image; do
        xenstore-exists "$_x" 2>/dev/null || { diag "$1 xs $_x: absent"; continue; }
        xenstore-ls -p "$_x" 2>/dev/null | sed 's/  */ /g' | cut -c1-200 >"$RUN/xs"
        diag "$1 xs $_x ($(xenstore-ls -p "$(dirname "$_x")" 2>/dev/null |
            awk -v b="$(basename "$_x")" '$1 == b { print $NF; exit }')):"
        while IFS= read -r _l; do diag "  $_l"; done <"$RUN/xs"
    done
}

# libxl_lines LOG: each DM command line libxl logged (xl -vvv).
libxl_lines() {
    awk '/Spawning device-model .* with arguments:/ { if (l) print l; l = "";
            on = 1; next }
         on && /Domain [0-9]+:  / { sub(/.*Domain [0-9]+:  /, ""); l = l " " $0; next }
         on { print l; l = ""; on = 0 }
         END { if (l) print l }' "$1"
}

# xs_open_probe TAG UID GID [CHROOT]: what a process of UID:GID meets on
# each way xs_open() tries (libxenstore xs.c: the daemon's socket, then
# the xenbus device, else /proc/xen/xenbus), with CHROOT like libxl's
# (root's, mode 0000) entered first as QEMU does before its setuid.
xs_open_probe() {
    _o=$(perl -e '
        use Socket;
        my ($u, $g, $d) = @ARGV;
        if ($d) { chroot($d) or die "chroot: $!\n"; chdir("/") or print "chdir /: $!; "; }
        $( = $g; $) = "$g $g"; $< = $u; $> = $u;
        printf "ids %d/%d; ", $<, $>;
        for my $p ("/var/run/xenstored/socket") {
            my $r = stat($p) ? "stat ok" : "stat: $!";
            socket(my $s, PF_UNIX, SOCK_STREAM, 0) or die "socket: $!\n";
            $r .= connect($s, pack_sockaddr_un($p)) ? ", connect ok" : ", connect: $!";
            print "$p: $r; ";
        }
        for my $p ("/dev/xen/xenbus", "/proc/xen/xenbus") {
            my $r = stat($p) ? "stat ok" : "stat: $!";
            $r .= open(my $f, "+<", $p) ? ", open rw ok" : ", open rw: $!";
            print "$p: $r; ";
        }' "$2" "$3" ${4:-} 2>&1)
    diag "$1: $_o"
}

# guest NAME TYPE OVERRIDE [DM_RESTRICT]: one guest, measured from
# create to destroy.
guest() {
    _n=$1 _type=$2 _ov=$3 _dr=${4:-1}
    _q=/var/lib/xen/$_n.qcow2
    cp "$M/empty.qcow2" "$_q"
    _cfg=$RUN/$_n.cfg
    {
        echo "name = \"$_n\""
        echo "type = \"$_type\""
        echo 'memory = 192'
        echo "kernel = \"$KERNEL\""
        echo "ramdisk = \"$INITRD\""
        echo 'extra = "console=hvc0 loglevel=4"'
        echo 'device_model_version = "qemu-xen"'
        echo "dm_restrict = $_dr"
        echo "disk = [ \"format=qcow2,vdev=xvda,access=rw,target=$_q\" ]"
        [ "$_type" != pv ] ||
            echo 'vfb = [ "vnc=1,vnclisten=127.0.0.1,vncdisplay=7" ]'
        # A panic keeps the domain (and its backends) for measuring.
        echo 'on_crash = "preserve"'
        echo 'on_poweroff = "preserve"'
        echo 'on_reboot = "preserve"'
        case $_ov in
        wrapper) wrapper_line ;;
        shim) echo "device_model_override = \"$RUN/shim\"" ;;
        esac
    } >"$_cfg"
    diag "== $_n: $(grep -v '^name' "$_cfg" | tr '\n' ' ' | tr -s ' ')"
    rm -f "/var/log/xen/qemu-dm-$_n.log" "/var/log/xen/qemu-probe-$_n.log" \
        "$CONS/guest-$_n.log"
    _D=$RUN/$_n
    mkdir -p "$_D/create" "$_D/paused" "$_D/after" "$_D/destroyed"
    # What runs during the create, in case it fails and takes it away.
    : >"$RUN/watching"
    (while [ -e "$RUN/watching" ]; do
        for _p in $(qemu_pids); do snap "$_p" "$_D/create"; done
        sleep 1
    done) &
    _wpid=$!
    _t0=$(now_ms)
    _rc=0
    timeout 300 xl -vvv create -p "$_cfg" >"$RUN/create-$_n.log" \
        2>"$RUN/create-$_n.log.vvv" || _rc=$?
    rm -f "$RUN/watching"
    wait "$_wpid" 2>/dev/null || true
    libxl_lines "$RUN/create-$_n.log.vvv" >"$RUN/lines-$_n"
    while IFS= read -r _l; do
        diag "$_n libxl's DM line:$(echo "$_l" | cut -c1-"$W")"
    done <"$RUN/lines-$_n"
    [ -s "$RUN/lines-$_n" ] || diag "$_n: libxl logged no DM command line"
    if [ "$_rc" != 0 ]; then
        fail "$_n: xl create -p exited $_rc after $(($(now_ms) - _t0)) ms"
        diag_tail "$RUN/create-$_n.log" 6
        grep -a -i -E ': (error|warning|critical): ' "$RUN/create-$_n.log.vvv" |
            tail -n 12 >"$RUN/err" || true
        diag_tail "$RUN/err" 12
        for _f in "$_D"/create/*.status; do
            [ -e "$_f" ] || continue
            _p=$(basename "$_f" .status)
            report "$_n during-create" "$_p" "$_D/create"
            pid_alive "$_p" || diag "$_n during-create pid $_p: gone after the create"
        done
        dm_logs "$_n"
        diag_tail "/var/log/xen/qdisk-$_n.log" 6
        xen_state "$_n create failed"
        _d=$(xl domid "$_n" 2>/dev/null || true)
        [ -z "$_d" ] || timeout 120 xl destroy "$_d" || true
        for _p in $(qemu_pids); do
            diag "$_n: leftover QEMU pid $_p ($(proc_uids "$_p")); killed by pid"
            kill -KILL "$_p" 2>/dev/null || true
        done
        return 0
    fi
    _d=$(bounded xl domid "$_n")
    echo "$_d" >>"$STATE/domids"
    pass "$_n: xl create -p: domid $_d ($(($(now_ms) - _t0)) ms)"
    _pids=$(qemu_pids)
    diag "$_n QEMUs at create (paused guest): $(echo $_pids)"
    diag "$_n states (paused): $(states "$_d")"
    for _p in $_pids; do
        snap "$_p" "$_D/paused"
        report "$_n paused" "$_p" "$_D/paused" "$_d"
    done
    diag "$_n chroot: $(ls -ld "/var/run/xen/qemu-root-$_d" 2>&1 | cut -c1-100)"
    bounded xl unpause "$_d" || diag "$_n: xl unpause failed"
    _t0=$(now_ms)
    _end=$((_t0 + 300000))
    _next=$((_t0 + 10000))
    # Until the guest's init is done (it waits up to 60 s for xvda; the
    # vfb and vkbd frontends are built into its kernel and connect before
    # init runs), or 300 s; a line every 10 s (TCG under load is slow:
    # the console must not go silent for the host's watchdog).
    until grep -a -q "E2EGUEST: done" "$CONS/guest-$_n.log" 2>/dev/null; do
        _now=$(now_ms)
        [ "$_now" -lt "$_end" ] || break
        if [ "$_now" -ge "$_next" ]; then
            _next=$((_now + 10000))
            _st=$(timeout -k 5 30 xl list "$_d" 2>/dev/null | awk 'NR == 2 { print $5 " " $6 }')
            diag "$_n +$(((_now - _t0) / 1000))s: $(states "$_d"); xl list (in $(($(now_ms) - _now)) ms): ${_st:-?}; guest: $(tr -d '\r' \
                2>/dev/null <"$CONS/guest-$_n.log" | grep -a . | tail -n 1 | cut -c1-100)"
            # A guest that crashed or shut down says nothing more.
            case ${_st%% *} in
            *c* | *s*) diag "$_n: the guest stopped"; break ;;
            esac
        fi
        sleep 1
    done
    if connected "$_d"; then
        pass "$_n: every backend and frontend connected ($(($(now_ms) - _t0)) ms after unpause)"
    else
        diag "$_n: not all connected $(($(now_ms) - _t0)) ms after unpause"
    fi
    diag "$_n states (running): $(states "$_d")"
    grep -a E2EGUEST "$CONS/guest-$_n.log" 2>/dev/null | tr -d '\r' >"$RUN/g" || true
    [ -s "$RUN/g" ] || tail -n 8 "$CONS/guest-$_n.log" 2>/dev/null | tr -d '\r' >"$RUN/g" || true
    diag "$_n guest console:"
    diag_tail "$RUN/g" 10
    for _p in $(qemu_pids); do
        snap "$_p" "$_D/after"
        [ -e "$_D/paused/$_p.fd" ] || report "$_n new-after-unpause" "$_p" "$_D/after" "$_d"
        fd_diff "$_n unpause->connected" "$_p" "$_D/paused" "$_D/after"
    done
    for _p in $_pids; do
        pid_alive "$_p" || diag "$_n: QEMU pid $_p died after the unpause"
    done
    xs_dump "$_n" "$_d"
    # What this project's audit says of the shape (issue: it should name
    # a root QEMU serving a guest).
    _rc=0
    timeout 120 xl-reaper -v audit --tap >"$RUN/audit-$_n.tap" 2>&1 || _rc=$?
    diag "$_n xl-reaper audit exited $_rc; its lines but the passing ones:"
    grep -v -e '^ok' -e 'xencall:buffer' "$RUN/audit-$_n.tap" | cut -c1-200 |
        tail -n 12 >"$RUN/audit-$_n.short" || true
    diag_tail "$RUN/audit-$_n.short" 12
    dm_logs "$_n"
    [ ! -e "/var/log/xen/qemu-dm-$_n.log" ] || {
        diag "$_n qemu-dm log, whole ($(wc -l <"/var/log/xen/qemu-dm-$_n.log") lines):"
        diag_tail "/var/log/xen/qemu-dm-$_n.log" 25
    }
    # A DM of the DM uid: what its uid meets on xs_open, in its chroot.
    for _p in $_pids; do
        _u=$(awk '/^Uid:/ { print $3 }' "/proc/$_p/status" 2>/dev/null || echo)
        _g=$(awk '/^Gid:/ { print $3 }' "/proc/$_p/status" 2>/dev/null || echo)
        [ -n "$_u" ] && [ "$_u" != 0 ] || continue
        xs_open_probe "$_n xs_open as pid $_p's ids $_u:$_g in its chroot" \
            "$_u" "$_g" "$(readlink "/proc/$_p/root")"
    done

    # Destroy: which QEMU dies with the domain, and how the domain ends.
    _t0=$(now_ms)
    _rc=0
    bounded xl destroy "$_d" >"$RUN/destroy-$_n.log" 2>&1 || _rc=$?
    diag "$_n: xl destroy $_d exited $_rc in $(($(now_ms) - _t0)) ms"
    sleep 3
    for _p in $_pids; do
        if pid_alive "$_p"; then
            diag "$_n after destroy: QEMU pid $_p ALIVE (uid $(proc_uids "$_p")), 3 s after"
        else
            diag "$_n after destroy: QEMU pid $_p gone"
        fi
    done
    diag "$_n after destroy: xl list: $(bounded xl list 2>/dev/null | awk 'NR > 2 {
        printf "%s(%s) ", $1, $5 }')"
    # What libxl left alive is killed here by pid, as it would be by a
    # toolstack that knew it, so the next guest starts from nothing.
    for _p in $_pids; do
        pid_alive "$_p" || continue
        kill -KILL "$_p" 2>/dev/null || true
        poll 5000 pid_gone "$_p" || diag "$_n: pid $_p survived SIGKILL"
    done
    poll 20000 domain_gone "$_d" ||
        diag "$_n: domain $_d still listed 20 s after its QEMUs died"
    if grep -a -q "E2EGUEST-WROTE-" "$_q"; then
        diag "$_n: the guest's write is in $_q ($(stat -c %s "$_q") bytes)"
    else
        diag "$_n: no guest write in $_q ($(stat -c %s "$_q") bytes)"
    fi
    rm -f "$_q"
}

diag "image: xen $E2E_XEN, $(bounded "$QEMU" -version | head -n 1)"
diag "dom0 kernel $(uname -r); guest kernel $KERNEL"
# The ways into xenstore and Xen's devices, and who may use them.
diag "xenstore ends: $(ls -ld /var/run/xenstored /var/run/xenstored/* /dev/xen \
    /dev/xen/* /proc/xen/xenbus /proc/xen/privcmd 2>&1 |
    awk '{ printf "%s %s:%s %s; ", $1, $3, $4, $NF }')"
diag "xenstored: $(ps -eo pid,uid,args | awk '/[x]enstored/ { $1 = $1; print }' | head -n 2 | tr '\n' ';')"
base=$(range_base)
u=$((base + 200))
mkdir -p "$RUN/qemu-root-x"
chmod 0000 "$RUN/qemu-root-x"
xs_open_probe "xs_open as $u:$base, no chroot" "$u" "$base"
xs_open_probe "xs_open as $u:$base, in a root-owned 0000 chroot like libxl's" \
    "$u" "$base" "$RUN/qemu-root-x"
xs_open_probe "xs_open as root in that chroot" 0 0 "$RUN/qemu-root-x"
xs_open_probe "xs_open as root, no chroot" 0 0

guest e2e-pv-stock pv stock
guest e2e-pv-wrap pv wrapper
# The uid switch without libxl's restriction: dm_restrict = 0, the
# wrapper adds -runas/-run-with user= (uid_switch = "runas") and no
# -xen-domid-restrict (add_dm_restrict is off in the shipped config):
# which of the backends a QEMU of the DM uid can serve when it keeps
# the xenstore connections it opened as root.
guest e2e-pv-wrap-nr pv wrapper 0
guest e2e-pvh-stock pvh stock
guest e2e-pvh-wrap pvh wrapper
# Where QEMU 10 needs more than libxl gives it (images/4.20: its display
# surfaces count against RLIMIT_FSIZE), libxl's own PV line once more
# through lib.sh's shim, which raises only that limit and execs QEMU.
if [ -n "${E2E_DM_FSIZE:-}" ]; then
    stock_dm_shim "$RUN/shim"
    guest e2e-pv-shim pv shim
fi
