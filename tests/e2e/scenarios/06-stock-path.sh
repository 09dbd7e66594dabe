# SPDX-License-Identifier: LGPL-2.1-only
# (6) The stock upstream path, no wrapper: libxl starts QEMU with -runas
# (4.17) or -run-with user= (4.20) itself. Records what that DM looks like
# (command line, ids, threads), then knocks out libxl's own uid reaper
# during destroy (4.20 still kills by uid in a forked child that waits for
# dm-reaper-lock, as 4.17 does): only xl-reaperd, which keys on the uid and
# not on how QEMU was started, can empty the uid.
. /e2e/lib.sh

qv=$("$QEMU" -version | head -n 1)
diag "qemu: $qv"
help=$("$QEMU" -help)
for o in -runas -run-with -xen-domid-restrict -chroot; do
    case $help in *"$o "*) diag "qemu accepts $o" ;; *) diag "qemu lacks $o" ;; esac
done

cfg=$(guest_cfg e2e-stock)
if [ -n "${E2E_DM_FSIZE:-}" ]; then
    # This image's stock DM dies of SIGXFSZ under libxl's 256 KiB
    # RLIMIT_FSIZE (images/4.20). Say what the truly stock create does,
    # then give libxl's own command line, uid and reaper a QEMU that can
    # start: a shim that raises RLIMIT_FSIZE and keeps the probe's exit
    # off the DM's QMP socket (stock_dm_shim), then execs QEMU.
    if timeout 300 xl create "$cfg" >"$RUN/create-stock0.log" 2>&1; then
        diag "stock create without the shim: the DM started"
        bounded xl destroy e2e-stock || true
    else
        diag "stock create without the shim failed, as measured before:"
        diag_tail "$RUN/create-stock0.log" 2
        dm_logs e2e-stock
    fi
    stock_dm_shim "$RUN/dm-fsize"
    cfg=$(guest_cfg e2e-stock "device_model_override = \"$RUN/dm-fsize\"")
fi
create_guest e2e-stock "$cfg"
U=$(expected_uid "$DOMID")
cmd=$(dm_cmdline "$DMPID")
diag "cmdline: $(echo "$cmd" | cut -c1-600)"
diag "status: uids $(proc_uids "$DMPID"), gids $(proc_gids "$DMPID")"
diag "status: Groups '$(proc_groups "$DMPID")', $(grep -E \
    '^(NoNewPrivs|Seccomp|CapEff)' "/proc/$DMPID/status" | tr -s '\t\n' ' ')"
diag "limits: $(grep -E '^Max (processes|open files|core file size|file size)' \
    "/proc/$DMPID/limits" | tr -s ' ' | tr '\n' ';')"
diag "root: $(readlink "/proc/$DMPID/root")"
G=$(proc_gids "$DMPID" | cut -d' ' -f1)
echo "$U" >>"$STATE/uids"
case $cmd in
*"-xen-domid $DOMID "*"-xen-domid-restrict"*) pass "QEMU restricted to domid $DOMID" ;;
*) fail "QEMU lacks -xen-domid $DOMID ... -xen-domid-restrict" ;;
esac
# 4.17 says -chroot DIR and -runas U:G; 4.20 (having probed QEMU 10)
# -run-with chroot=DIR and -run-with user=U:G (see dm_chroot_arg).
c=$(dm_chroot_arg "$DOMID")
case "$cmd " in
*" $c "*) pass "QEMU chroots with '$c'" ;;
*) fail "QEMU lacks '$c'" ;;
esac
a=$(dm_user_arg "$U" "$G")
case "$cmd " in
*" $a "*) pass "QEMU switches uid with '$a' (range base + domid)" ;;
*) fail "QEMU lacks '$a'" ;;
esac
if [ "$E2E_LIBXL_PROBE" = 1 ]; then
    check "libxl probed QEMU first (qemu-probe-e2e-stock.log)" \
        test -e /var/log/xen/qemu-probe-e2e-stock.log
fi
check "stock DM uids all $U" all_four "$(proc_uids "$DMPID")" "$U"
check "xenstore device-model-kill-uid is $U" test "$(bounded xenstore-read \
    "/local/domain/$DOMID/image/device-model-kill-uid")" = "$U"
sleep 3
diag "threads: $(awk '/^Threads:/ { print $2 }' "/proc/$DMPID/status") \
(tasks of uid $U: $(bounded ps -eLo uid= | awk -v u="$U" '$1 == u' | wc -l))"
diag "thread names: $(for t in /proc/$DMPID/task/*; do cat "$t/comm"; done |
    sort | uniq -c | tr -s ' \n' ' ')"

start_racer r "$U" "$G"
kill_dm_pid "$DMPID"
sleep 1
check "racer survives a kill of the DM pid" racer_alive r

daemon_start
xl_destroy_without_reap "$DOMID"
check "domain $DOMID is gone" poll 10000 domain_gone "$DOMID"
assert_reaped r "$U" "$REAP_MS" "xl-reaperd, stock DM"
assert_event "$DOMID" 5000
daemon_stop
