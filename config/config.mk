# SPDX-License-Identifier: LGPL-2.1-only
# What an admin configures: the config file, the daemon's systemd unit and
# the logrotate file for its events log.
#
# `make install` lays the tree out as the Debian package does (debian/),
# with $(PREFIX) for /usr:
#   $(PREFIX)/sbin/               xl-reaper, xl-reaperd
#   $(PREFIX)/libexec/xl-reaper/  qemu-dm-restrict, xl-reaper-xen
#   $(UNITDIR)/xl-reaperd.service (default $(PREFIX)/lib/systemd/system:
#                                 systemd reads /usr/local/lib/systemd/system
#                                 as well as /usr/lib/systemd/system)
#   $(TMPFILESDIR)/xl-reaper.conf the reaper lock, made root's 0600 at
#                                 boot (config/xl-reaper.tmpfiles)
#   /etc/xen/xl-reaper.conf       only where there is none yet: an existing
#                                 config, edited or not, is never replaced
#   /etc/logrotate.d/xl-reaper
#   $(PREFIX)/share/man/, $(PREFIX)/share/doc/libxl-reaper/
# The config and logrotate paths do not follow PREFIX: the programs read
# /etc/xen/xl-reaper.conf, and logrotate reads only /etc/logrotate.d.
# `make uninstall` removes what `make install` puts, except a config that
# differs from the one it would install (an admin's edits).  The library
# and its header are not installed (nothing installed links them; the
# programs link the archive): `make install-lib` does that.
#
# FSIZE_LIMIT: fsize_limit in the installed config (default: as shipped,
# commented out, upstream's 256 KiB).  A host whose QEMU is 10 or later
# (Debian 13) needs 67108864: its display memfds count against
# RLIMIT_FSIZE.  debian/rules sets it from the Debian release.
# UNITDIR= (empty): no unit (debian/rules: dh_installsystemd places it).
# TMPFILESDIR= (empty) likewise (dh_installtmpfiles).
UNITDIR ?= $(PREFIX)/lib/systemd/system
TMPFILESDIR ?= $(PREFIX)/lib/tmpfiles.d
FSIZE_LIMIT ?=

CONF_GEN := $(BUILD)/config/xl-reaper.conf
UNIT_GEN := $(BUILD)/config/xl-reaperd.service
CONF_DST := $(DESTDIR)/etc/xen/xl-reaper.conf
LOGROTATE_DST := $(DESTDIR)/etc/logrotate.d/xl-reaper

all: $(CONF_GEN) $(UNIT_GEN)

# The commented-out default line is the one FSIZE_LIMIT turns on; the
# check fails the build if the shipped config stops having it.
$(CONF_GEN): config/xl-reaper.conf FORCE
	@mkdir -p $(@D)
	@grep -qx '#fsize_limit = 262144' $< || \
		{ echo "$<: no '#fsize_limit = 262144' line" >&2; exit 1; }
	$(if $(FSIZE_LIMIT),sed 's/^#fsize_limit = 262144$$/fsize_limit = $(FSIZE_LIMIT)/' $<,cat $<) >$@.tmp
	@if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv $@.tmp $@; fi

$(UNIT_GEN): config/xl-reaperd.service FORCE
	@mkdir -p $(@D)
	sed 's|@SBINDIR@|$(PREFIX)/sbin|g' $< >$@.tmp
	@if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv $@.tmp $@; fi

.PHONY: FORCE install-config uninstall-config install-unit uninstall-unit
FORCE:

install: install-config install-unit
install-config: $(CONF_GEN)
	install -d $(DESTDIR)/etc/xen $(DESTDIR)/etc/logrotate.d
	@if [ -e $(CONF_DST) ] || [ -L $(CONF_DST) ]; then \
		if cmp -s $(CONF_GEN) $(CONF_DST); then :; else \
		echo "install: kept $(CONF_DST), which differs from the one" \
			"this version ships ($(CONF_GEN)): compare them"; fi; \
	else echo "install -m 644 $(CONF_GEN) $(CONF_DST)"; \
		install -m 644 $(CONF_GEN) $(CONF_DST) || exit 1; fi
	install -m 644 config/xl-reaper.logrotate $(LOGROTATE_DST)
	@echo "install: in each guest's xl.cfg:" \
		"device_model_override = \"$(PREFIX)/libexec/xl-reaper/qemu-dm-restrict\""

install-unit: $(UNIT_GEN)
ifneq ($(UNITDIR),)
	install -d $(DESTDIR)$(UNITDIR)
	install -m 644 $(UNIT_GEN) $(DESTDIR)$(UNITDIR)/xl-reaperd.service
endif
ifneq ($(TMPFILESDIR),)
	install -d $(DESTDIR)$(TMPFILESDIR)
	install -m 644 config/xl-reaper.tmpfiles $(DESTDIR)$(TMPFILESDIR)/xl-reaper.conf
endif

uninstall: uninstall-config uninstall-unit
uninstall-config: $(CONF_GEN)
	@if [ ! -e $(CONF_DST) ]; then :; \
	elif cmp -s $(CONF_GEN) $(CONF_DST); then \
		echo "rm -f $(CONF_DST)"; rm -f $(CONF_DST); \
	else echo "uninstall: kept $(CONF_DST) (edited: it differs from" \
		"the one this version ships)"; fi
	rm -f $(LOGROTATE_DST)

uninstall-unit:
ifneq ($(UNITDIR),)
	rm -f $(DESTDIR)$(UNITDIR)/xl-reaperd.service
endif
ifneq ($(TMPFILESDIR),)
	rm -f $(DESTDIR)$(TMPFILESDIR)/xl-reaper.conf
endif
