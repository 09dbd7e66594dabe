# SPDX-License-Identifier: LGPL-2.1-only
# make deb: the Debian package, built from a copy of this working tree in
# $(BUILD)/deb/ (dpkg-buildpackage writes its output beside the source
# tree), then checked by lintian.  The package lands in
#   $(BUILD)/deb/xl-reaper_$(VERSION)_$(DEB_ARCH).deb
# Needs root or the packages of `scripts/install-deps --deb`.
DEB_ARCH = $(shell dpkg --print-architecture)
DEB_DIR := $(BUILD)/deb
DEB_FILE = $(DEB_DIR)/xl-reaper_$(VERSION)_$(DEB_ARCH).deb

.PHONY: deb
deb:
	scripts/install-deps --deb
	rm -rf $(DEB_DIR) && mkdir -p $(DEB_DIR)/src
	tar -c --exclude=./build --exclude=./.git -f - . | \
		tar -x -C $(DEB_DIR)/src -f -
	cd $(DEB_DIR)/src && dpkg-buildpackage -us -uc -b >../build.log 2>&1 || \
		{ tail -n 40 ../build.log >&2; echo "deb: the build failed;" \
			"log in $(DEB_DIR)/build.log" >&2; exit 1; }
	rm -rf $(DEB_DIR)/src
	lintian -I --fail-on error,warning $(DEB_FILE)
	@echo "deb: $(DEB_FILE)"
