# SPDX-License-Identifier: LGPL-2.1-only
# (1) xl create with device_model_override = our wrapper and dm_restrict=1:
# the domain runs, the DM is the real QEMU exec'd in place under uid
# base + domid with the image's libxl's chroot and uid options, libxl
# 4.20's probe of QEMU went through the wrapper, and `xl-reaper audit`
# passes.
. /e2e/lib.sh
need_prog "$WRAPPER"
need_prog /usr/sbin/xl-reaper

cfg=$(guest_cfg e2e-wrap "$(wrapper_line)")
rm -f /var/log/xen/qemu-probe-e2e-wrap.log /var/log/xen/qemu-dm-e2e-wrap.log
create_guest e2e-wrap "$cfg"
check "domain $DOMID is running" domain_running "$DOMID"
check "DM pid $DMPID is alive" pid_alive "$DMPID"
check "DM is $QEMU, exec'd in place by the wrapper" \
    test "$(readlink "/proc/$DMPID/exe")" = "$QEMU"

cli_ids "$DOMID"
base=$(range_base)
cmd=$(dm_cmdline "$DMPID")
diag "DM cmdline: $(echo "$cmd" | cut -c1-400)"
# libxl 4.20 runs the DM binary (here the wrapper) once as root to probe
# QEMU's options before the DM itself; 4.17 does not. Only a probe that
# reached the real QEMU makes libxl choose -run-with, which QEMU 10 needs
# (it has no -chroot): the DM's own options are the proof it worked.
if [ "$E2E_LIBXL_PROBE" = 1 ]; then
    p=/var/log/xen/qemu-probe-e2e-wrap.log
    check "libxl probed QEMU through the wrapper ($p)" test -e "$p"
    diag_tail "$p" 3
    # The wrapper says on the probe's stderr that it served it; a refusal
    # would say why instead (qemu-dm-restrict(8)).
    check "the wrapper served the probe (exec'd QEMU, a line in $p)" \
        grep -q "^qemu-dm-restrict: .*probe.*exec" "$p"
    check "the wrapper refused nothing in the probe" \
        sh -c "! grep -q -i 'refus' $p"
fi
d=/var/log/xen/qemu-dm-e2e-wrap.log
check "the DM logged to $d" test -e "$d"
diag_tail "$d" 3
u=$(expected_uid "$DOMID")
case $cmd in
*" $(dm_chroot_arg "$DOMID") "*) pass "DM chroots with '$(dm_chroot_arg "$DOMID")'" ;;
*) fail "DM lacks '$(dm_chroot_arg "$DOMID")'" ;;
esac
case "$cmd " in
*" $(dm_user_arg "$u" "$DMGID") "*) pass "DM switches uid with '$(dm_user_arg "$u" "$DMGID")'" ;;
*) fail "DM lacks '$(dm_user_arg "$u" "$DMGID")'" ;;
esac
check "xl-reaper uid $DOMID: $DMUID = range base $base + domid" \
    test "$DMUID" = "$(expected_uid "$DOMID")"
check "DM real/effective/saved/fs uid all $DMUID" \
    all_four "$(proc_uids "$DMPID")" "$DMUID"
check "DM real/effective/saved/fs gid all $DMGID" \
    all_four "$(proc_gids "$DMPID")" "$DMGID"
g=$(proc_groups "$DMPID")
# QEMU's -runas leaves exactly its own gid as the one supplementary group.
check "DM has no supplementary group but its own gid (Groups: '$g')" \
    test -z "$g" -o "$g" = "$DMGID"
check "DM has NoNewPrivs" grep -q '^NoNewPrivs:[[:space:]]*1' \
    "/proc/$DMPID/status"
diag "DM threads: $(awk '/^Threads:/ { print $2 }' "/proc/$DMPID/status")"
assert_audit "with domain $DOMID running"

check "xl destroy $DOMID" xl destroy "$DOMID"
check "uid $DMUID empty within $REAP_MS ms of destroy" \
    uid_empty "$DMUID" "$REAP_MS"
