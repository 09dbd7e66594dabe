# SPDX-License-Identifier: LGPL-2.1-only
# Documentation (issue 8).
#   make docs      HTML in build/docs/ (docs/*.pandoc, docs/*.md and the
#                  man pages) and man pages in build/man/, with pandoc;
#                  any pandoc warning fails the build (docs/render).
#   make install   installs the man pages in $(PREFIX)/share/man/man[58]
#                  and the documents in $(DOCDIR).
# What the documents say is checked by tests/docs/ in `make check`.
# Always under build/, SANITIZE or not: the docs do not depend on it.

DOCS_OUT := build
# The package's documents go to its own /usr/share/doc/xl-reaper.
DOCDIR ?= $(PREFIX)/share/doc/libxl-reaper
DOC_RENDER := docs/render

MAN_SRCS := $(sort $(wildcard docs/man/*.[1-9].md))
MAN_PAGES := $(patsubst docs/man/%.md,$(DOCS_OUT)/man/%,$(MAN_SRCS))
DOC_SRCS := $(sort $(wildcard docs/*.pandoc docs/*.md))
DOC_HTML := $(patsubst docs/%,$(DOCS_OUT)/docs/%.html,\
		$(basename $(DOC_SRCS))) \
	$(patsubst docs/man/%.md,$(DOCS_OUT)/docs/man/%.html,$(MAN_SRCS))

docs: $(MAN_PAGES) $(DOC_HTML)

$(DOCS_OUT)/man/%: docs/man/%.md $(DOC_RENDER) | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(DOC_RENDER) man $< $@

$(DOCS_OUT)/docs/man/%.html: docs/man/%.md $(DOC_RENDER) | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(DOC_RENDER) html $< $@

$(DOCS_OUT)/docs/%.html: docs/%.pandoc $(DOC_RENDER) | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(DOC_RENDER) html $< $@

$(DOCS_OUT)/docs/%.html: docs/%.md $(DOC_RENDER) | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(DOC_RENDER) html $< $@

install: install-docs
.PHONY: install-docs
install-docs: docs
	for p in $(MAN_PAGES); do \
		d=$(DESTDIR)$(PREFIX)/share/man/man$${p##*.}; \
		install -d $$d && install -m 644 $$p $$d/ || exit 1; \
	done
	install -d $(DESTDIR)$(DOCDIR)
	install -m 644 $(DOC_SRCS) $(DOC_HTML) config/xl-reaper.rules.yml \
		$(DESTDIR)$(DOCDIR)/

uninstall: uninstall-docs
.PHONY: uninstall-docs
uninstall-docs:
	for p in $(notdir $(MAN_PAGES)); do \
		rm -f $(DESTDIR)$(PREFIX)/share/man/man$${p##*.}/$$p; \
	done
	rm -f $(addprefix $(DESTDIR)$(DOCDIR)/,\
		$(notdir $(DOC_SRCS) $(DOC_HTML)) xl-reaper.rules.yml)
	rmdir $(DESTDIR)$(DOCDIR) 2>/dev/null || true
