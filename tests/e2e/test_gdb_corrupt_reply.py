"""spoor crash --gdb in ack mode with one byte of one answer corrupted, at every position.

QEMU's gdbstub (examples/calls on the M3, halted at level_three by gdb-multiarch) behind
faulty_gdb.py with ack=True: the session stays in ack mode, QEMU acknowledges each request
with '+' before its reply, and a '-' from spoor makes it resend its last reply. The fault
"corrupt" changes one byte of what QEMU sends while it answers one request (its '+', the
reply's '$', payload, '#', checksum) to '-', and the framing bytes and the checksum also to
the byte with its lowest bit flipped (a payload byte changed either way is the same case: a bad
checksum); when spoor sends the request again, the answer to that copy comes 0.3 s late. Two
requests are swept: the first 'm' read (4 bytes of the System Control Space, every byte of
its answer) and the read of the stack's page (256 bytes: the framing, the checksum and every
64th payload byte).

Each run must give:
  - the good run's output, exit 0, wherever the protocol can recover: a payload or checksum
    byte changed (spoor sends '-', QEMU resends), and the '+' or the '$' turned into '-'
    (spoor takes it for a refusal and sends the request again; QEMU answers both copies, and
    the answer to the first, which comes before the '+' of the second, is not the reply to
    the next request);
  - elsewhere (the '+' or '$' turned into noise, the '#' into payload: the reply cannot be
    found) the good run's output or a one-line error on stderr, nothing on stdout, exit 2.
Never exit 0 with other output. Before the client dropped the answers that come before the
'+', the '+' turned into '-' left spoor one reply behind: exit 2 ("a memory reply of 256 bytes
for a read of 16" after the stack's page), or with replies of one length, other values
silently (tests/unit/remote/test_gdb_remote.c shows that case).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import faulty_gdb  # noqa: E402
import harness  # noqa: E402
from test_live_faults import (CLIENT_TIMEOUT_S, RUN_LIMIT_S, WORKERS, crash,  # noqa: E402
                              halted_qemu, sweep_with, verdict)


def answer_layout(reply):
    """The kinds of the bytes QEMU sends for a reply payload in ack mode: '+', '$', payload
    bytes, '#', two checksum digits."""
    return ["ack", "start"] + ["payload"] * len(reply) + ["end", "checksum", "checksum"]


def must_recover(kind, byte):
    return kind in ("payload", "checksum") or (kind in ("ack", "start") and byte == b"-")


def main():
    elf, machine = harness.example("calls", "m3")
    qemus = [halted_qemu(elf, machine) for _ in range(WORKERS)]
    failed = 0
    try:
        with faulty_gdb.FaultyGdb(qemus[0].gdb_port, ack=True) as proxy:
            good, took = crash(elf, proxy.port)
        requests = proxy.requests
        if good.returncode != 0 or "level_two" not in good.stdout:
            print(f"FAIL good run: exit {good.returncode}\n{good.stdout}{good.stderr}")
            return 1
        print(f"good run: {len(requests)} requests, {took:.1f} s")
        first_m = next(i for i, r in enumerate(requests, 1) if r.startswith(b"m"))
        page = next(i for i, r in enumerate(requests, 1) if r.startswith(b"m") and
                    r.endswith(b",100"))
        for at in (first_m, page):
            # the reply's length, as QEMU gives it: from a run that records it
            with faulty_gdb.FaultyGdb(qemus[0].gdb_port, "corrupt", at=at, ack=True,
                                      pos=10**6) as p:
                crash(elf, p.port)
            answer = p.answer_bytes
            reply = answer[answer.index(b"$") + 1:answer.rindex(b"#")]
            kinds = answer_layout(reply)
            if answer[:1] != b"+" or len(kinds) != len(answer):
                print(f"FAIL request {at}: QEMU's answer {answer[:40]!r} is not '+$...#cs'")
                failed += 1
                continue
            print(f"request {at} ({requests[at - 1].decode()}): {len(answer)} bytes answered")
            positions = [pos for pos in range(len(answer))
                         if kinds[pos] != "payload" or len(reply) <= 16 or pos % 64 == 2]
            runs = [(pos, byte) for pos in positions for byte in (b"-", None)
                    if byte or kinds[pos] != "payload"]

            def proxy_for(port, run):
                pos, byte = run
                return faulty_gdb.FaultyGdb(port, "corrupt", at=at, ack=True, pos=pos,
                                            byte=byte)

            for (pos, byte), r, took, p in sweep_with(qemus, runs, proxy_for,
                                                      lambda port: crash(elf, port)):
                v = verdict(good, r)
                allowed = {"same"} if must_recover(kinds[pos], byte) else {"same", "error"}
                limit = harness.time_limit(CLIENT_TIMEOUT_S, RUN_LIMIT_S - CLIENT_TIMEOUT_S)
                ok = v in allowed and took < limit and p.fired
                what = p.corrupted and f"{p.corrupted[1]!r}->{p.corrupted[2]!r}"
                print(f"{'ok  ' if ok else 'FAIL'} request {at} byte {pos:3} ({kinds[pos]:8}) "
                      f"{what}: {v}, exit {r.returncode}, {took:.1f} s, nacks={p.nacks}"
                      + (f": {r.stderr.strip()}" if r.stderr else ""))
                failed += not ok
    finally:
        for q in qemus:
            q.close()
    print("FAILED" if failed else "all passed", f"({failed} failures)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
