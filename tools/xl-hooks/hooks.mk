# Where libxl-reaper meets xl: the admin CLI, the DM wrapper, the daemon.
XLR_SRCS := $(wildcard tools/xl-hooks/xl_reaper_*.c)
XLR_BIN := $(BUILD)/bin/xl-reaper

all: $(XLR_BIN)

$(XLR_BIN): $(call obj,$(XLR_SRCS)) $(LIB_A)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(PKG_LIBS) -lpthread

install: install-hooks
.PHONY: install-hooks
install-hooks: $(XLR_BIN)
	install -d $(DESTDIR)$(PREFIX)/sbin
	install -m 755 $(XLR_BIN) $(DESTDIR)$(PREFIX)/sbin/xl-reaper
