# SPDX-License-Identifier: LGPL-2.1-only
# tests/osstest/stub/Osstest.pm - a stand-in for osstest's Osstest.pm,
# enough for ts-xl-reaper-audit to compile (perl -c) and run in the
# project's tests without a controller, a database or a test host.
# What the step uses is in Osstest/TestSupport.pm beside this file.
package Osstest;

use strict;
use warnings;

BEGIN {
    use Exporter ();
    our (@ISA, @EXPORT);
    @ISA = qw(Exporter);
    @EXPORT = qw(%c);
}

our %c;

1;
