# SPDX-License-Identifier: LGPL-2.1-only
# tests/osstest/stub/Osstest/TestSupport.pm - stand-ins for the parts of
# osstest's Osstest::TestSupport that ts-xl-reaper-audit uses, with the
# same signatures and the same behaviour where the step relies on it:
#   tsreadconfig       %r from OSSTEST_STUB_RUNVAR_<name>, $stash from
#                      OSSTEST_STUB_STASH (the real one reads the DB)
#   selecthost         "ident=name" or $r{ident}, as the real one
#   target_cmd_output_root  runs the command here, with sh, as the
#                      real one runs it on the host through ssh: dies
#                      "status N" on a nonzero status, "status (timed
#                      out)" after the timeout; output chomped
#   logm, fail, broken the real formats; broken() dies "BROKEN: ..."
#                      (the real one also marks the job in the DB)
#   open_unique_stashfile  the real one, on $stash
package Osstest::TestSupport;

use strict;
use warnings;

use Fcntl;
use IO::File;
use POSIX;

use Osstest;

BEGIN {
    use Exporter ();
    our (@ISA, @EXPORT);
    @ISA = qw(Exporter);
    @EXPORT = qw(tsreadconfig %r $flight $job $stash
                 fail broken logm
                 selecthost target_cmd_root target_cmd_output_root
                 open_unique_stashfile);
}

our (%r, $flight, $job, $stash);

sub tsreadconfig () {
    $flight = 'stub';
    $job = 'stub-job';
    foreach my $k (keys %ENV) {
        $r{$1} = $ENV{$k} if $k =~ m/^OSSTEST_STUB_RUNVAR_(\w+)$/;
    }
    $stash = $ENV{OSSTEST_STUB_STASH} // die "OSSTEST_STUB_STASH missing";
    logm("starting $flight.$job");
}

sub logm ($) {
    my ($m) = @_;
    my @t = gmtime;
    printf STDERR "%04d-%02d-%02d %02d:%02d:%02d Z %s\n",
        $t[5] + 1900, $t[4] + 1, $t[3], $t[2], $t[1], $t[0], $m
        or die $!;
}

sub fail ($) {
    my ($m) = @_;
    logm("FAILURE: $m");
    die "failure: $m\n";
}

sub broken ($;$) {
    my ($m) = @_;
    die "BROKEN: $m; (stub: $flight.$job not marked broken)\n";
}

sub selecthost ($) {
    my ($ident) = @_;
    my $name;
    if ($ident =~ m/=/) {
        $ident = $`;
        $name = $';
        $r{$ident} = $name;
    } else {
        $name = $r{$ident};
        die "no specified $ident" unless defined $name;
    }
    logm("host: selected $name (stub: commands run here)");
    return { Ident => $ident, Name => $name };
}

sub run_here ($$$) {
    my ($stdout, $tcmd, $timeout) = @_;
    $timeout = 30 unless defined $timeout;
    logm("executing (stub, here, not over ssh) ... $tcmd");
    my $child = fork;
    die $! unless defined $child;
    if (!$child) {
        # A group of its own, so that a timeout ends all it started.
        setpgid(0, 0) or die $!;
        open STDOUT, '>&', $stdout or die $! if defined $stdout;
        exec '/bin/sh', '-c', $tcmd;
        die "sh: $!";
    }
    my $r;
    eval {
        local $SIG{ALRM} = sub { die "alarm\n"; };
        alarm($timeout);
        $r = waitpid $child, 0;
        alarm(0);
        1;
    } or do {
        die unless $@ eq "alarm\n";
        kill 'KILL', -$child;
        waitpid $child, 0;
        logm("command timed out [$timeout]: $tcmd");
        die "status (timed out)";
    };
    die "$r $child $!" unless $r == $child;
    logm("command nonzero waitstatus $?: $tcmd") if $?;
    $? and die "status $?";
}

sub target_cmd_root ($$;$) {
    my ($ho, $tcmd, $timeout) = @_;
    run_here(undef, $tcmd, $timeout);
}

sub target_cmd_output_root ($$;$) {
    my ($ho, $tcmd, $timeout) = @_;
    my $out = IO::File::new_tmpfile() or die $!;
    run_here($out, $tcmd, $timeout);
    $out->seek(0, 0) or die $!;
    my $r;
    { local ($/) = undef; $r = <$out>; }
    die $! if !defined $r;
    close $out;
    chomp($r);
    return $r;
}

sub open_unique_stashfile ($) {
    my ($leafref) = @_;
    my $dh;
    for (;;) {
        my $df = $$leafref;
        $dh = new IO::File "$stash/$df", O_WRONLY | O_EXCL | O_CREAT;
        last if $dh;
        die "$df $!" unless $! == &EEXIST;
        $$leafref .= '+';
    }
    return $dh;
}

1;
