# SPDX-License-Identifier: LGPL-2.1-only
# libvirt's Xen driver as a toolstack, for the scenarios that use it
# (09) and the measurements (measure/): libvirtd started for its Xen
# driver alone, the scenarios' tiny HVM guest as libvirt describes it,
# its DM's ids, and libvirt's save and restore.  Sourced after lib.sh;
# CONF and RUN/xl-reaper.conf.orig are the caller's.

URI=xen:///system

# set_key 0|1: add_dm_restrict in the config the wrapper reads.
set_key() {
    { grep -v '^add_dm_restrict' "$RUN/xl-reaper.conf.orig"
      echo "add_dm_restrict = $1"; } >"$CONF"
}

# The e2e machine's CPU is TCG's qemu64 (tests/e2e/run) seen through
# Xen, which lacks a feature of every model in libvirt's cpu_map, qemu64
# included: libvirt's libxl driver then refuses to load ("x86Decode:
# Cannot find suitable CPU model", measured on 4.17).  A model with no
# feature of its own, for this emulated machine only (a real CPU has
# its model).
cpu_model_for_tcg() {
    _m=/usr/share/libvirt/cpu_map
    [ -f "$_m/index.xml" ] || return 0
    grep -q x86_e2e-tcg "$_m/index.xml" && return 0
    printf '%s\n' '<cpus>' "  <model name='e2e-tcg'>" \
        "    <decode host='on' guest='on'/>" '  </model>' '</cpus>' \
        >"$_m/x86_e2e-tcg.xml"
    sed -i "s|^\( *\)<include filename='x86_qemu64.xml'/>|&\n\1<include filename='x86_e2e-tcg.xml'/>|" \
        "$_m/index.xml"
    diag "cpu_map: $(grep -c x86_e2e-tcg "$_m/index.xml") include of x86_e2e-tcg.xml"
}

# What libxl said last, through libvirt's libxl driver log.
LIBXL_LOG=/var/log/libvirt/libxl/libxl-driver.log
libxl_said() {
    grep -a -E ' (error|warning|critical) *: ' "$LIBXL_LOG" 2>/dev/null |
        tail -n 3 >"$RUN/libxl-said" || true
    diag_tail "$RUN/libxl-said" 3
    : >"$LIBXL_LOG" 2>/dev/null || true
}

libvirt_start() {
    cpu_model_for_tcg
    # Debian 12's libvirt-daemon depends on the QEMU driver, whose start
    # fails without libvirt-daemon-system's user libvirt-qemu, and one
    # driver's failure stops libvirtd: only the Xen driver is wanted.
    for _q in /usr/lib/*/libvirt/connection-driver/libvirt_driver_qemu.so; do
        [ ! -e "$_q" ] || mv "$_q" "$_q.e2e-off"
    done
    # dom0's memory is fixed (dom0_mem=...,max:...): libvirt must not try
    # to balloon it down for a guest.
    mkdir -p /etc/libvirt
    echo 'autoballoon = 0' >/etc/libvirt/libxl.conf
    (LIBVIRT_LOG_OUTPUTS="3:stderr" libvirtd >"$RUN/libvirtd.log" 2>&1 &
        echo $! >"$RUN/libvirtd.pid")
    LVPID=$(cat "$RUN/libvirtd.pid")
    echo "$LVPID" >>"$STATE/pids"
    # Its end comes with every failure (lib.sh, explain).
    explain_log "$RUN/libvirtd.log"
    if poll 90000 virsh -q -c "$URI" version; then
        pass "libvirtd (pid $LVPID) answers on $URI"
        diag "$(bounded virsh -c "$URI" version 2>&1 | tr '\n' ' ' | cut -c1-200)"
    else
        fail "libvirtd did not answer on $URI within 90 s"
        diag_tail "$RUN/libvirtd.log" 10
        exit 1
    fi
}

# guest_xml NAME [ISO]: the scenarios' tiny HVM guest, as libvirt
# describes it; with ISO, that CD in the drive, booted from.
guest_xml() {
    _iso=${2:-$RUN/a.iso}
    _boot=
    [ $# -lt 2 ] || _boot="<boot dev='cdrom'/>"
    cat >"$RUN/$1.xml" <<EOF
<domain type='xen'>
  <name>$1</name>
  <memory unit='MiB'>32</memory>
  <vcpu>1</vcpu>
  <os><type arch='x86_64' machine='xenfv'>hvm</type>$_boot</os>
  <features><acpi/><apic/><pae/></features>
  <on_poweroff>destroy</on_poweroff>
  <on_reboot>preserve</on_reboot>
  <on_crash>preserve</on_crash>
  <devices>
    <emulator>$WRAPPER</emulator>
    <disk type='file' device='cdrom'>
      <driver name='qemu' type='raw'/>
      <source file='$_iso'/>
      <target dev='hdc' bus='ide'/>
      <readonly/>
    </disk>
    <serial type='pty'><target port='0'/></serial>
    <console type='pty'><target type='serial' port='0'/></console>
    <graphics type='vnc' port='-1' autoport='yes' listen='127.0.0.1'/>
  </devices>
</domain>
EOF
    echo "$RUN/$1.xml"
}

# dm_of NAME: sets DOMID, DMPID, DMUID, DMGID of libvirt's domain NAME.
dm_of() {
    DOMID=$(bounded virsh -q -c "$URI" domid "$1" | tr -d ' ')
    echo "$DOMID" >>"$STATE/domids"
    DMPID=$(bounded xenstore-read "/local/domain/$DOMID/image/device-model-pid")
    cli_ids "$DOMID"
}

# Seconds a resumed guest runs before libvirt saves it: past its
# firmware.  Debian 12's QEMU 7.2 aborts restoring a guest saved in its
# firmware's first moments, its VGA framebuffer just mapped
# ("xen_add_to_physmap: Assertion `p && p == memory_region_get_ram_ptr
# (mr)' failed"), with the wrapper or without it (libvirt's own line,
# QEMU as root); one saved 5 or 20 s after its resume restores
# (tests/e2e/measure/restore-causes.sh, runs/*-restore-causes-*.tap).
# An operator saves a guest that runs; 3 times the 5 s measured.
SAVE_AFTER_S=${E2E_SAVE_AFTER_S:-15}

# save_restore NAME [stock]: libvirt's save, then restore (a new
# domid); with "stock", the DM is root's (no wrapper).
save_restore() {
    _old=$DMUID
    rm -f "$RUN/$1.save"
    # libvirt saves only a running domain ("has to be running because
    # libxenlight will suspend it"); it is paused again by the restore.
    bounded virsh -q -c "$URI" resume "$1" || return 1
    sleep "$SAVE_AFTER_S"
    bounded virsh -q -c "$URI" save "$1" "$RUN/$1.save" || return 1
    uid_empty "$_old" "$REAP_MS" >/dev/null ||
        { echo "saved: DM uid $_old not empty within $REAP_MS ms"; return 1; }
    bounded virsh -q -c "$URI" restore --paused "$RUN/$1.save" || return 1
    rm -f "$RUN/$1.save"
    dm_of "$1"
    [ "${2:-}" = stock ] || all_four "$(proc_uids "$DMPID")" "$DMUID" ||
        { echo "restored DM not under its uid $DMUID"; return 1; }
}

lv_gone() { ! virsh -q -c "$URI" domid "$1" >/dev/null 2>&1; }
