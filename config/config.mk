# The default config file (and, from the daemon's issue, its unit).
install: install-config
.PHONY: install-config
install-config:
	install -d $(DESTDIR)/etc/xen
	install -m 644 config/xl-reaper.conf $(DESTDIR)/etc/xen/xl-reaper.conf
