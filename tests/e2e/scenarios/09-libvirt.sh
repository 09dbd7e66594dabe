# SPDX-License-Identifier: LGPL-2.1-only
# e2e-timeout: 1200
# (9) libvirt's Xen driver as the toolstack: libvirtd with Debian's
# libvirt-daemon-driver-xen, `virsh create` of an HVM guest whose
# <emulator> is the wrapper.  libvirt asks libxl for no dm_restrict, so
# the DM line has no uid switch, chroot or -xen-domid-restrict: the
# wrapper adds the uid switch, and with add_dm_restrict = 1 the other
# two (and takes out the guest's vkbd, which QEMU cannot serve under
# -xen-domid-restrict).  Both ways, the DM runs under its own uid, a
# fork racer planted in that uid is gone within REAP_MS of `virsh
# destroy` (xl-reaperd), and each of libvirt's operations (console, VNC,
# cdrom change, reboot, save and restore) is tried: what works is
# asserted, what does not is said (docs/qemu-deprivilege.pandoc, "With
# libvirt", has the table).  With the key on, two more ends of a DM:
# the guest powering itself off (ACPI S5, libvirt's on_poweroff
# destroy), and libvirtd killed while its guest runs, the domain then
# destroyed with xl; each time the uid is verified empty by xl-reaperd.
. /e2e/lib.sh
. /e2e/lib-libvirt.sh
need_prog "$WRAPPER"
need_prog /usr/sbin/xl-reaper
need_prog /usr/sbin/libvirtd
need_prog /usr/bin/virsh

CONF=/etc/xen/xl-reaper.conf
cp "$CONF" "$RUN/xl-reaper.conf.orig"

# What each operation does under the wrapper, as measured on both images
# (E2E_XEN), with the key off (0) and on (1): "works" is asserted;
# "fails" is tried and said, and said again, loudly, if it starts to
# work (then this table is out of date).
expect() {
    case $1:$2:$E2E_XEN in
    start:* | console:* | vnc:*) echo works ;;
    # libxl 4.17 fails to change the medium of a QEMU that switched uid
    # but has no -xen-domid-restrict ("libxenlight failed to change
    # media"), and changes it with the key on; 4.20 with the key off.
    cdrom:0:4.17) echo fails ;;
    cdrom:*) echo works ;;
    # libxl reboots an HVM guest through its PV drivers; this one has
    # none (SeaBIOS, no OS), so reboot says nothing of the wrapper.
    reboot:*) echo fails ;;
    # 4.17, key off: a fresh guest's save and restore worked, once of
    # twice (one resumed after the other operations did not resume).
    save:0:4.17) echo try ;;
    # Without the wrapper (stock): said, for comparison, never asserted.
    save:stock:*) echo try ;;
    save:*) echo works ;;
    *) echo try ;;
    esac
}

# op NAME KEY DESC CMD...: one of libvirt's operations, judged by expect.
op() {
    _n=$1 _k=$2 _d=$3
    shift 3
    _e=$(expect "$_n" "$_k")
    _r=0
    "$@" >"$RUN/op.out" 2>&1 || _r=$?
    _why=$(tail -n 2 "$RUN/op.out" | tr '\n' ' ' | cut -c1-200)
    if [ "$_r" = 0 ]; then
        case $_e in
        works) pass "key $_k: $_d works" ;;
        try) diag "key $_k: $_d works (tried, not asserted)" ;;
        *) diag "key $_k: $_d WORKS (expected: $_e): $_why" ;;
        esac
        echo "$_n key=$_k works" >>"$RUN/ops"
    else
        case $_e in
        works) fail "key $_k: $_d (rc=$_r: $_why)" ;;
        # Tried: why it failed this time is the point.
        try)
            diag "key $_k: $_d does not work (rc=$_r): $_why"
            explain
            ;;
        *) diag "key $_k: $_d does not work (rc=$_r): $_why" ;;
        esac
        echo "$_n key=$_k fails" >>"$RUN/ops"
        libxl_said
    fi
}

# dm_checks KEY: the DM is QEMU exec'd in place, under its own uid, with
# what the wrapper added, said in its one log line.
dm_checks() {
    _log=/var/log/xen/qemu-dm-$NAME.log
    check "key $1: DM is $QEMU, exec'd in place" \
        test "$(readlink "/proc/$DMPID/exe")" = "$QEMU"
    check "key $1: DM real/effective/saved/fs uid all $DMUID" \
        all_four "$(proc_uids "$DMPID")" "$DMUID"
    check "key $1: DM uid $DMUID = range base + domid $DOMID" \
        test "$DMUID" = "$(expected_uid "$DOMID")"
    check "key $1: DM has NoNewPrivs" \
        grep -q '^NoNewPrivs:[[:space:]]*1' "/proc/$DMPID/status"
    _cmd=$(dm_cmdline "$DMPID")
    diag "key $1: DM cmdline: $(echo "$_cmd" | cut -c1-600)"
    grep -a 'added:' "$_log" >"$RUN/added" 2>/dev/null || true
    diag_tail "$RUN/added" 2
    check "key $1: the wrapper said what it added, in one line ($_log)" \
        test "$(wc -l <"$RUN/added")" = 1
    check "key $1: that line names the uid switch it added" \
        grep -q -- "added: $(dm_user_arg "$DMUID" "$DMGID")" "$RUN/added"
    _n=$(echo "$_cmd" | tr ' ' '\n' | grep -c '^-xen-domid-restrict$' || true)
    if [ "$1" = 1 ]; then
        check "key 1: DM has -xen-domid-restrict, once" test "$_n" = 1
        case "$_cmd " in
        *" $(dm_chroot_arg "$DOMID") "*) pass "key 1: DM chroots with '$(dm_chroot_arg "$DOMID")'" ;;
        *) fail "key 1: DM lacks '$(dm_chroot_arg "$DOMID")'" ;;
        esac
        check "key 1: the DM's root is its chroot" \
            test "$(readlink "/proc/$DMPID/root")" = \
            "$(readlink -f "/var/run/xen/qemu-root-$DOMID")"
        # libxl gave the guest a vkbd (vkb_device defaults on, libvirt
        # sets nothing), which the restricted QEMU cannot serve.
        check "key 1: the wrapper said it removed the guest's vkbd 0" \
            grep -q "removed the domain's vkbd 0 " "$_log"
        # libxl, having asked no restriction, waits for QEMU to write
        # "running" to xenstore, which QEMU 10 restricted does not.
        check "key 1: the wrapper told libxl the restricted DM runs" \
            poll 10000 grep -q 'wrote "running" to device-model' "$_log"
        check "key 1: xenstore has no vkbd for domain $DOMID" \
            sh -c "! xenstore-read /local/domain/0/backend/vkbd/$DOMID/0/frontend &&
                ! xenstore-read /local/domain/$DOMID/device/vkbd/0/backend"
    else
        check "key 0: DM has no -xen-domid-restrict (libvirt's line)" \
            test "$_n" = 0
        check "key 0: the wrapper said it did not add -xen-domid-restrict" \
            grep -q 'not -xen-domid-restrict (add_dm_restrict = 0)' "$RUN/added"
    fi
}

vnc_banner() {
    _p=$(bounded virsh -q -c "$URI" vncdisplay "$1" | sed -n 's/.*:\([0-9][0-9]*\)$/\1/p')
    [ -n "$_p" ] || { echo "no VNC display"; return 1; }
    _b=$(timeout 10 bash -c "exec 3<>/dev/tcp/127.0.0.1/$((5900 + _p)) && head -c 12 <&3") || true
    echo "display :$_p: '$_b'"
    case $_b in RFB\ *) return 0 ;; esac
    return 1
}

console_pty() {
    _t=$(bounded virsh -q -c "$URI" ttyconsole "$1") || return 1
    echo "pty $_t"
    test -c "$_t" || return 1
    # The DM holds the pty's master.
    ls -l "/proc/$DMPID/fd" 2>/dev/null | grep -q ptmx
}

cdrom_change() {
    bounded virsh -q -c "$URI" change-media "$1" hdc "$RUN/b.iso" --update \
        --live || return 1
    # QEMU opened the new image (by name or by a descriptor libxl gave).
    poll 10000 sh -c "ls -l /proc/$DMPID/fd | grep -q b.iso" ||
        { echo "the DM has no b.iso open"; return 1; }
}

do_reboot() { bounded virsh -q -c "$URI" reboot "$1"; }

# boot_iso FILE: a CD the tiny guest boots (El Torito, no emulation,
# as SeaBIOS reads it) whose one sector of code powers the guest off as
# an OS does: SLP_EN with SLP_TYP 0 (S5 in Xen's DSDT) written to
# PM1a_CNT, 0xb004, where hvmloader puts the PIIX4 PM block of qemu-xen.
# QEMU emulates that register: it asks Xen to shut the domain down
# (xendevicemodel_shutdown, allowed under -xen-domid-restrict).
#   mov dx, 0xb004; mov ax, 0x2000; out dx, ax; cli; hlt; jmp hlt
boot_iso() {
    dd if=/dev/zero of="$1" bs=2048 count=32 2>/dev/null
    iso_put "$1" $((16 * 2048)) '\001CD001\001'
    iso_put "$1" $((17 * 2048)) '\000CD001\001EL TORITO SPECIFICATION'
    iso_put "$1" $((17 * 2048 + 71)) '\023\000\000\000' # catalog: 19
    iso_put "$1" $((18 * 2048)) '\377CD001\001'
    # Validation entry (x86, words summing to 0, 55 AA), then the
    # bootable entry: no emulation, segment 0x7c0, 1 sector, at 20.
    iso_put "$1" $((19 * 2048)) '\001'
    iso_put "$1" $((19 * 2048 + 28)) '\252\125\125\252'
    iso_put "$1" $((19 * 2048 + 32)) \
        '\210\000\000\000\000\000\001\000\024\000\000\000'
    iso_put "$1" $((20 * 2048)) \
        '\272\004\260\270\000\040\357\372\364\353\375'
}
iso_put() {
    printf "$3" | dd of="$1" bs=1 seek="$2" conv=notrunc 2>/dev/null
}

# dm_refused WHO: what QEMU said it could not set up (its PV backends,
# each realized with a xenstore connection of its own, opened after
# the uid switch), from the DM's log.
dm_refused() {
    grep -a -E 'failed to create|[Pp]ermission denied' \
        "/var/log/xen/qemu-dm-$NAME.log" 2>/dev/null | cut -c1-180 |
        head -n 3 | while IFS= read -r _l; do diag "$1: QEMU: $_l"; done
}

# reaps DOMID: each of xl-reaperd's reap events for DOMID, in short.
reaps() {
    grep -E "\"domid\" *: *$1([^0-9]|\$)" "$RUN/events" 2>/dev/null |
        sed -n 's/.*"trigger":"\([a-z]*\)".*"outcome":"\([a-z]*\)","was_empty":\([a-z]*\).*/\1: \2, was_empty \3/p' |
        tr '\n' ';'
}

# QEMU's VNC server listens on 127.0.0.1, which dom0-init leaves down.
ip link set lo up
dd if=/dev/zero of="$RUN/a.iso" bs=64k count=16 2>/dev/null
dd if=/dev/zero of="$RUN/b.iso" bs=64k count=16 2>/dev/null
boot_iso "$RUN/off.iso"
: >"$RUN/ops"
daemon_start
libvirt_start

for key in 0 1; do
    set_key "$key"
    NAME=e2e-lv$key
    rm -f "/var/log/xen/qemu-dm-$NAME.log"
    t0=$(now_ms)
    # Paused: the DM runs, SeaBIOS does not (no CPU burnt under TCG).
    if ! bounded virsh -q -c "$URI" create --paused "$(guest_xml "$NAME")" \
        >"$RUN/create-$NAME.log" 2>&1; then
        if [ "$(expect start "$key")" = works ]; then
            fail "key $key: virsh create $NAME"
        else
            diag "key $key: virsh create $NAME does not work"
        fi
        echo "start key=$key fails" >>"$RUN/ops"
        diag_tail "$RUN/create-$NAME.log" 4
        dm_logs "$NAME"
        diag_tail "$RUN/libvirtd.log" 6
        continue
    fi
    echo "start key=$key works" >>"$RUN/ops"
    pass "key $key: virsh create $NAME ($(($(now_ms) - t0)) ms)"
    dm_of "$NAME"
    dm_checks "$key"
    if [ "$key" = 1 ]; then
        assert_audit "with libvirt's domain $DOMID (add_dm_restrict = 1)"
    else
        # Without -xen-domid-restrict QEMU keeps Xen handles for every
        # domain: the audit is expected to say so.
        _r=0
        timeout 120 xl-reaper audit --tap >"$RUN/audit.tap" 2>&1 || _r=$?
        diag "key 0: xl-reaper audit exits $_r; its findings:"
        grep '^not ok' "$RUN/audit.tap" | cut -c1-200 | head -n 6 |
            while IFS= read -r l; do diag "  $l"; done
    fi

    op console "$key" "console (virsh ttyconsole, the DM's pty)" \
        console_pty "$NAME"
    op vnc "$key" "VNC (virsh vncdisplay, the RFB banner)" vnc_banner "$NAME"
    op cdrom "$key" "cdrom change (virsh change-media --update)" \
        cdrom_change "$NAME"
    op reboot "$key" "reboot (virsh reboot; the guest has no PV drivers)" \
        do_reboot "$NAME"
    if ! domain_exists "$DOMID"; then
        fail "key $key: domain $NAME gone after the operations"
        continue
    fi

    # The compromised DM: a fork racer in its uid; libvirt's destroy
    # kills the DM by pid only, xl-reaperd the uid.
    dm_refused "key $key"
    start_racer "lv$key" "$DMUID" "$DMGID"
    check "key $key: virsh destroy $NAME" virsh -q -c "$URI" destroy "$NAME"
    assert_reaped "lv$key" "$DMUID" "$REAP_MS" \
        "key $key: virsh destroy + xl-reaperd"
    assert_event "$DOMID" 5000

    # Save and restore last, on a guest of their own: a failed save can
    # leave the domain gone.
    if bounded virsh -q -c "$URI" create --paused "$RUN/$NAME.xml" \
        >"$RUN/create-$NAME.log" 2>&1; then
        dm_of "$NAME"
        op save "$key" "save and restore (virsh save, virsh restore)" \
            save_restore "$NAME"
        dm_refused "key $key, restored"
        bounded virsh -q -c "$URI" destroy "$NAME" >/dev/null 2>&1 || true
        check "key $key: DM uid $DMUID empty within $REAP_MS ms of the last destroy" \
            uid_empty "$DMUID" "$REAP_MS"
    else
        fail "key $key: virsh create $NAME again, for save and restore"
    fi
done

# The same save and restore without the wrapper, said and never
# asserted: libvirt's own DM line, QEMU as root, given only what this
# image needs of any DM (stock_dm_shim: RLIMIT_FSIZE, and libxl 4.20's
# probe in a mount namespace of its own).  A restore that fails here as
# under the wrapper is libxl's or libvirt's, not the wrapper's.
NAME=e2e-stock
stock_dm_shim "$RUN/stock-dm"
guest_xml "$NAME" >/dev/null
sed -i "s|<emulator>.*</emulator>|<emulator>$RUN/stock-dm</emulator>|" \
    "$RUN/$NAME.xml"
if bounded virsh -q -c "$URI" create --paused "$RUN/$NAME.xml" \
    >"$RUN/create-$NAME.log" 2>&1; then
    dm_of "$NAME"
    op save stock "save and restore without the wrapper (DM root's)" \
        save_restore "$NAME" stock
    dm_refused "stock, restored"
    bounded virsh -q -c "$URI" destroy "$NAME" >/dev/null 2>&1 || true
else
    diag "without the wrapper: virsh create $NAME does not work"
    diag_tail "$RUN/create-$NAME.log" 4
fi

# The guest's own poweroff, with the key on: libvirt (on_poweroff
# destroy) destroys the domain on libxl's shutdown event and kills the
# DM by pid; a task left in the DM uid is xl-reaperd's.
set_key 1
NAME=e2e-off
(timeout 600 stdbuf -oL virsh -c "$URI" event --loop --event lifecycle \
    >"$RUN/lv-events" 2>&1 &
    echo $! >"$RUN/lv-events.pid")
t0=$(now_ms)
if bounded virsh -q -c "$URI" create "$(guest_xml "$NAME" "$RUN/off.iso")" \
    >"$RUN/create-$NAME.log" 2>&1; then
    pass "key 1: virsh create $NAME, running, booting its CD ($(($(now_ms) - t0)) ms)"
    dm_of "$NAME"
    check "key 1: $NAME's DM under its own uid $DMUID" \
        all_four "$(proc_uids "$DMPID")" "$DMUID"
    check "key 1: $NAME's DM has -xen-domid-restrict" \
        grep -q -- '-xen-domid-restrict' "/proc/$DMPID/cmdline"
    # Not a racer: a task of the DM uid that burns no CPU (the guest it
    # shares the emulated CPUs with is booting).
    start_racer off "$DMUID" "$DMGID" /bin/sleep 100000
    sleep 1
    check "key 1: a task of $NAME's DM uid besides the DM (a sleeper)" \
        racer_alive off
    if poll 300000 lv_gone "$NAME"; then
        t1=$(now_ms)
        pass "key 1: $NAME powered itself off; libvirt destroyed it" \
            "($((t1 - t0)) ms after create)"
        assert_reaped off "$DMUID" "$REAP_MS" \
            "key 1: guest poweroff + libvirt's destroy + xl-reaperd"
        assert_event "$DOMID" 5000
        diag "  xl-reaperd's reaps of domid $DOMID: $(reaps "$DOMID")"
    else
        fail "key 1: $NAME still there 300 s after create: it did not" \
            "power itself off"
        diag "  $(bounded xl list 2>&1 | tr '\n' ';' | cut -c1-300)"
        dm_logs "$NAME"
        bounded virsh -q -c "$URI" destroy "$NAME" >/dev/null 2>&1 || true
    fi
    check "key 1: libvirt's lifecycle events say $NAME shut down" \
        grep -q -i "'$NAME'.*shutdown" "$RUN/lv-events"
    diag_tail "$RUN/lv-events" 4
else
    fail "key 1: virsh create $NAME"
    diag_tail "$RUN/create-$NAME.log" 4
    dm_logs "$NAME"
fi
kill "$(cat "$RUN/lv-events.pid")" 2>/dev/null || true

# libvirtd killed while its guest runs (its DM under the key on, a fork
# racer in the DM uid): the DM lives on; the operator then destroys the
# domain with xl, which kills the DM by pid only (libvirt recorded no
# uid for libxl to kill), and xl-reaperd empties the uid.
NAME=e2e-crash
if bounded virsh -q -c "$URI" create --paused "$(guest_xml "$NAME")" \
    >"$RUN/create-$NAME.log" 2>&1; then
    dm_of "$NAME"
    start_racer crash "$DMUID" "$DMGID"
    kill -KILL "$LVPID"
    check "libvirtd (pid $LVPID) killed with SIGKILL" poll 10000 pid_gone "$LVPID"
    check "key 1: $NAME's DM (pid $DMPID) outlives libvirtd" pid_alive "$DMPID"
    check "key 1: xl destroy $DOMID, libvirtd dead" xl destroy "$DOMID"
    assert_reaped crash "$DMUID" "$REAP_MS" \
        "key 1: libvirtd killed, xl destroy + xl-reaperd"
    assert_event "$DOMID" 5000
    diag "  xl-reaperd's reaps of domid $DOMID: $(reaps "$DOMID")"
else
    fail "key 1: virsh create $NAME"
    diag_tail "$RUN/create-$NAME.log" 4
fi

diag "libvirt's operations under the wrapper on Xen $E2E_XEN:" \
    "$(tr '\n' ';' <"$RUN/ops")"
cp "$RUN/xl-reaper.conf.orig" "$CONF"
kill -TERM "$LVPID" 2>/dev/null || true
poll 10000 pid_gone "$LVPID" || kill -KILL "$LVPID" 2>/dev/null || true
check "xl-reaperd still running" pid_alive "$DAEMON"
daemon_stop
