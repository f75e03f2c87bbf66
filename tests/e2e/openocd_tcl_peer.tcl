# A scripted peer for spoor's OpenOCD Tcl RPC client (tests/e2e/test_top_openocd_tcl.py).
#
# OpenOCD cannot run here (no probe). This peer is a real Tcl interpreter behind the Tcl RPC
# server protocol of OpenOCD's manual ("Tcl RPC server"): each message up to 0x1a is
# evaluated at global level and its result, or the error message when it fails, goes back
# followed by 0x1a (as src/server/tcl_server.c does: the interpreter's result, then 0x1a,
# whatever the command returned). The commands are OpenOCD's as its manual describes them:
# read_memory ADDR WIDTH COUNT (a Tcl list of 0x-prefixed values; "read_memory: failed to
# read memory" when the memory is not there), write_memory ADDR WIDTH {DATA}, mmw (as
# OpenOCD's startup.tcl defines it), version; with -procs, orbtop-rtos's rtos_dwt_config and
# exception_trace_enable.
#
# usage: tclsh openocd_tcl_peer.tcl RAM_FILE RAM_BASE LOG_FILE ?-numcomp N? ?-procs?
#            ?-close-after N? ?-fail-write ADDR?
# Prints the port it listens on. Memory: RAM_FILE at RAM_BASE, and a register file from
# 0xE0000000 up (DWT_CTRL's NUMCOMP = N, default 4). Each message received is appended to
# LOG_FILE, one line (newlines as \n); register writes as "= ADDR VALUE" lines.
# -close-after N: the N-th message is not answered, the connection is closed (a dead
# socket). -fail-write ADDR: write_memory there fails as OpenOCD's does.

lassign $argv ram_file ram_base log_file
set ram_base [expr {$ram_base}]
set numcomp 4
set close_after 0
set fail_write -1
set procs 0
for {set i 3} {$i < [llength $argv]} {incr i} {
    switch -- [lindex $argv $i] {
        -numcomp { set numcomp [lindex $argv [incr i]] }
        -close-after { set close_after [lindex $argv [incr i]] }
        -fail-write { set fail_write [expr {[lindex $argv [incr i]]}] }
        -procs { set procs 1 }
    }
}
set f [open $ram_file rb]
set ram [read $f]
close $f
set log [open $log_file a]
fconfigure $log -buffering line
array set regs [list [expr {0xE0001000}] [expr {$numcomp << 28}]]
set received 0

proc word {addr} {
    global ram ram_base regs
    if {$addr >= 0xE0000000} {
        if {[info exists regs($addr)]} { return $regs($addr) }
        return 0
    }
    set off [expr {$addr - $ram_base}]
    if {$off < 0 || $off + 4 > [string length $ram]} {
        error "read_memory: failed to read memory"
    }
    binary scan $ram @${off}iu v
    return $v
}

proc read_memory {address width count {phys ""}} {
    if {$width != 32} { error "read_memory: this peer reads 32-bit words only" }
    set out {}
    for {set i 0} {$i < $count} {incr i} {
        lappend out [format 0x%x [word [expr {$address + 4 * $i}]]]
    }
    return $out
}

proc write_memory {address width data {phys ""}} {
    global regs log fail_write
    if {$width != 32} { error "write_memory: this peer writes 32-bit words only" }
    set a [expr {$address}]
    foreach v $data {
        if {$a == $fail_write} { error "write_memory: failed to write memory" }
        set regs($a) [expr {$v & 0xFFFFFFFF}]
        puts $log [format "= 0x%08x 0x%08x" $a $regs($a)]
        incr a 4
    }
    return ""
}

proc mrw {reg} { return [word [expr {$reg}]] }

# OpenOCD's startup.tcl
proc mmw {reg setbits clearbits} {
    set old [mrw $reg]
    set new [expr {($old & ~$clearbits) | $setbits}]
    write_memory $reg 32 [list $new]
}

proc version {} { return "Open On-Chip Debugger 0.12.0" }

if {$procs} {
    proc rtos_dwt_config {address} { return "" }
    proc exception_trace_enable {} { return "" }
}

proc serve {chan} {
    global buffer log received close_after
    set data [read $chan]
    if {[eof $chan]} {
        close $chan
        return
    }
    append buffer($chan) $data
    while {[set end [string first \x1a $buffer($chan)]] >= 0} {
        set message [string range $buffer($chan) 0 [expr {$end - 1}]]
        set buffer($chan) [string range $buffer($chan) [expr {$end + 1}] end]
        incr received
        puts $log [string map [list \n \\n] $message]
        if {$received == $close_after} {
            close $chan
            return
        }
        catch {uplevel #0 $message} result
        puts -nonewline $chan "$result\x1a"
        flush $chan
    }
}

proc accept {chan host port} {
    global buffer
    set buffer($chan) ""
    fconfigure $chan -translation binary -blocking 0 -buffering none
    fileevent $chan readable [list serve $chan]
}

set server [socket -server accept -myaddr 127.0.0.1 0]
puts [lindex [fconfigure $server -sockname] 2]
flush stdout
vwait forever
