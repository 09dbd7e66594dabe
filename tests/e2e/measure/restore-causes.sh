# SPDX-License-Identifier: LGPL-2.1-only
# e2e-timeout: 3000
# A measurement, not a test (prepare-restore copies it in as scenario
# 91; run with `tests/e2e/run --extra OUT --only 91`): why a restored,
# restricted QEMU 7.2 now and then aborts in 09 ("xen_add_to_physmap:
# Assertion `p && p == memory_region_get_ram_ptr(mr)' failed", just
# after "Replacing a dummy mapcache entry"), and whether the wrapper is
# the cause.  Rounds of create, resume, save, restore, each of the
# variants VARIANT:RUN_S (prepare-restore's arguments), saved RUN_S
# seconds after its resume; each round's line is named VARIANT-RUN_Ss:
#   wrap1  the wrapper with add_dm_restrict = 1
#   wrap0  the wrapper with add_dm_restrict = 0
#   shim   libvirt's own line, QEMU as root, no wrapper
#   xl     xl and libxl's own dm_restrict = 1: no wrapper, no libvirt
# Without arguments: wrap1 at LATE_S (20) and at 0 (09's way before it
# waited), shim and xl at LATE_S.
# For each restore: its outcome, and what the restored QEMU said of
# the framebuffer (it replaces a dummy mapcache entry only when the
# saved VGA had its framebuffer mapped).  Findings are "E2E #" lines.
. /e2e/lib.sh
. /e2e/lib-libvirt.sh
need_prog "$WRAPPER"
need_prog /usr/sbin/libvirtd

LATE_S=${E2E_SR_LATE_S:-20}
ROUNDS=${E2E_SR_ROUNDS:-3}
CONF=/etc/xen/xl-reaper.conf
cp "$CONF" "$RUN/xl-reaper.conf.orig"
set_key 1
: >"$RUN/rounds"

# qemu_said LOG: what the restored QEMU said of the framebuffer.
qemu_said() {
    _s=no-dummy-replaced
    grep -q 'Replacing a dummy mapcache entry' "$1" 2>/dev/null &&
        _s=dummy-replaced
    grep -q 'Assertion' "$1" 2>/dev/null && _s="$_s,aborted"
    echo "$_s"
}

# saved_dm_said LOG: what the saved guest's QEMU said of memory and
# failures (libxl keeps its log as LOG.1 when it starts the restored).
saved_dm_said() {
    grep -a -i -E 'relocate|physmap|mapcache|fail|error|denied' "$1.1" \
        2>/dev/null | tail -n 4 >"$RUN/saved-said" || true
    diag "  the saved guest's QEMU said ($(wc -l <"$RUN/saved-said") lines):"
    diag_tail "$RUN/saved-said" 4
}

# round VARIANT OUTCOME DETAIL...: one line, and a tally.
round() {
    _v=$1 _o=$2
    shift 2
    diag "ROUND $_v: $_o ($*)"
    echo "$_v $_o" >>"$RUN/rounds"
}

# lv_round VARIANT EMULATOR RUN_S: libvirt's create, resume, save and
# restore of the tiny guest with EMULATOR as its <emulator>.
lv_round() {
    NAME=sr-$1
    _log=/var/log/xen/qemu-dm-$NAME.log
    guest_xml "$NAME" >/dev/null
    sed -i "s|<emulator>.*</emulator>|<emulator>$2</emulator>|" \
        "$RUN/$NAME.xml"
    _t0=$(now_ms)
    if ! bounded virsh -q -c "$URI" create --paused "$RUN/$NAME.xml" \
        >"$RUN/op.out" 2>&1; then
        round "$1" create-failed "$(tail -n 2 "$RUN/op.out" | tr '\n' ' ' | cut -c1-160)"
        return 0
    fi
    dm_of "$NAME"
    # Paused, as asked?  xl list's state column, and the CPU time the
    # guest has had.
    _st=$(bounded xl list "$DOMID" | awk 'NR == 2 { print $5 "," $6 "s" }')
    _t1=$(now_ms)
    bounded virsh -q -c "$URI" resume "$NAME" >/dev/null 2>&1
    sleep "$3"
    rm -f "$RUN/$NAME.save"
    if ! bounded virsh -q -c "$URI" save "$NAME" "$RUN/$NAME.save" \
        >"$RUN/op.out" 2>&1; then
        round "$1" save-failed "$(tail -n 2 "$RUN/op.out" | tr '\n' ' ' | cut -c1-160)"
        bounded virsh -q -c "$URI" destroy "$NAME" >/dev/null 2>&1 || true
        return 0
    fi
    _t2=$(now_ms)
    _r=ok
    bounded virsh -q -c "$URI" restore --paused "$RUN/$NAME.save" \
        >"$RUN/op.out" 2>&1 || _r=restore-FAILED
    _t3=$(now_ms)
    round "$1" "$_r" "create $((_t1 - _t0)) ms, then $_st, ran ${3} s, save $((_t2 - _t1)) ms," \
        "restore $((_t3 - _t2)) ms; restored QEMU: $(qemu_said "$_log")"
    if [ "$_r" != ok ]; then
        diag_tail "$RUN/op.out" 4
        diag_tail "$_log" 6
        saved_dm_said "$_log"
    fi
    bounded virsh -q -c "$URI" destroy "$NAME" >/dev/null 2>&1 || true
    rm -f "$RUN/$NAME.save"
}

# xl_round RUN_S: the same with xl and libxl's own dm_restrict = 1.
xl_round() {
    NAME=sr-xl
    _log=/var/log/xen/qemu-dm-$NAME.log
    # No vkbd: QEMU under -xen-domid-restrict cannot serve one (the
    # wrapper takes it out for libvirt), and libxl waits for it.
    _vkb='vkb_device = 0'
    case ${E2E_GUEST_LINES:-} in *vkb_device*) _vkb='# vkb: the image' ;; esac
    _cfg=$(guest_cfg "$NAME" "$_vkb" \
        ${XL_DM:+"device_model_override = \"$XL_DM\""})
    _t0=$(now_ms)
    if ! timeout 300 xl create -p "$_cfg" >"$RUN/op.out" 2>&1; then
        round "xl-${1}s" create-failed "$(tail -n 2 "$RUN/op.out" | tr '\n' ' ' | cut -c1-160)"
        return 0
    fi
    _d=$(bounded xl domid "$NAME")
    echo "$_d" >>"$STATE/domids"
    _t1=$(now_ms)
    bounded xl unpause "$NAME"
    sleep "$1"
    rm -f "$RUN/$NAME.save"
    if ! timeout 300 xl save "$NAME" "$RUN/$NAME.save" >"$RUN/op.out" 2>&1; then
        round "xl-${1}s" save-failed "$(tail -n 2 "$RUN/op.out" | tr '\n' ' ' | cut -c1-160)"
        bounded xl destroy "$NAME" >/dev/null 2>&1 || true
        return 0
    fi
    _t2=$(now_ms)
    _r=ok
    timeout 300 xl restore -p "$RUN/$NAME.save" >"$RUN/op.out" 2>&1 ||
        _r=restore-FAILED
    _t3=$(now_ms)
    round "xl-${1}s" "$_r" "create $((_t1 - _t0)) ms, ran ${1} s, save $((_t2 - _t1)) ms," \
        "restore $((_t3 - _t2)) ms; restored QEMU: $(qemu_said "$_log")"
    if [ "$_r" != ok ]; then
        grep -a -v '^ *$' "$RUN/op.out" | grep -a -i -E 'error|fail|denied' |
            head -n 8 >"$RUN/op.err" || true
        diag_tail "$RUN/op.err" 8
        diag_tail "$_log" 6
        saved_dm_said "$_log"
    fi
    _d=$(bounded xl domid "$NAME" 2>/dev/null) && echo "$_d" >>"$STATE/domids"
    bounded xl destroy "$NAME" >/dev/null 2>&1 || true
    rm -f "$RUN/$NAME.save"
}

ip link set lo up
dd if=/dev/zero of="$RUN/a.iso" bs=64k count=16 2>/dev/null
stock_dm_shim "$RUN/stock-dm"
# libxl's own stock path needs the shim where the image says so (06).
XL_DM=
[ -z "${E2E_DM_FSIZE:-}" ] || XL_DM=$RUN/stock-dm
daemon_start
libvirt_start
VARIANTS="wrap1:$LATE_S wrap1:0 shim:$LATE_S xl:$LATE_S"
[ ! -s /e2e/measure/restore-variants ] ||
    VARIANTS=$(cat /e2e/measure/restore-variants)
# variant NAME:RUN_S: one round of it.
variant() {
    _s=${1#*:}
    case ${1%%:*} in
    wrap1) set_key 1; lv_round "wrap1-${_s}s" "$WRAPPER" "$_s" ;;
    wrap0) set_key 0; lv_round "wrap0-${_s}s" "$WRAPPER" "$_s" ;;
    shim) lv_round "shim-${_s}s" "$RUN/stock-dm" "$_s" ;;
    xl) xl_round "$_s" ;;
    *) fail "no variant $1" ;;
    esac
}
r=1
while [ "$r" -le "$ROUNDS" ]; do
    diag "round $r of $ROUNDS: $VARIANTS"
    for v in $VARIANTS; do variant "$v"; done
    r=$((r + 1))
done
diag "ROUNDS: $(sort "$RUN/rounds" | uniq -c | tr -s ' \n' '  ')"
pass "the measurement ran its $ROUNDS rounds"
cp "$RUN/xl-reaper.conf.orig" "$CONF"
kill -TERM "$LVPID" 2>/dev/null || true
poll 10000 pid_gone "$LVPID" || kill -KILL "$LVPID" 2>/dev/null || true
daemon_stop
