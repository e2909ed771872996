#!/usr/bin/env python3
"""tests/adapters/misbehaving_persistent.py MODE: a pass command that speaks the persistent
protocol (docs/pass-protocol.md) and breaks it as MODE says, for the session's tests. On the
programs MODE does not break it answers with the program it was sent (a valid frame).

  echo            every answer right
  partial         the header and half the bytes, then silence (a hang)
  short           a header that announces fewer bytes than follow
  oversize        a header that announces far more bytes than the output cap
  not-a-count     a header that is not a byte count
  die-mid-frame   the header and half the bytes, then exit 1
  crash-on:WORD    exit 7 on a program that contains WORD, answer the others
  hang-on:WORD     no answer (sleep) on a program that contains WORD, answer the others
  partial-on:WORD  the header and half the bytes of the answer to a program that contains WORD,
                   then silence; answer the others
  slow:SECONDS     every answer right, each after SECONDS
  noise-between   after each answer, stray bytes (out of step with the next request)
  stderr          answer right and write to standard error too
"""
import sys
import time

mode = sys.argv[1]
into, out = sys.stdin.buffer, sys.stdout.buffer


def send(data):
    out.write(data)
    out.flush()


while True:
    header = into.readline()
    if not header:
        break
    program = into.read(int(header))
    frame = b"%d\n" % len(program) + program
    half = b"%d\n" % len(program) + program[: len(program) // 2]
    if mode == "partial":
        send(half)
        time.sleep(60)
    elif mode == "short":
        send(b"%d\n" % (len(program) // 2) + program)
    elif mode == "oversize":
        send(b"999999999999\n")
        time.sleep(60)
    elif mode == "not-a-count":
        send(b"hello world\n")
    elif mode == "die-mid-frame":
        send(half)
        sys.exit(1)
    elif mode.startswith("crash-on:") and mode[len("crash-on:"):].encode() in program:
        sys.stderr.write("%s: not supported\n" % mode[len("crash-on:"):])
        sys.exit(7)
    elif mode.startswith("hang-on:") and mode[len("hang-on:"):].encode() in program:
        time.sleep(60)
    elif mode.startswith("partial-on:") and mode[len("partial-on:"):].encode() in program:
        send(half)
        time.sleep(60)
    elif mode.startswith("slow:"):
        time.sleep(float(mode[len("slow:"):]))
        send(frame)
    elif mode == "noise-between":
        send(frame)
        time.sleep(0.05)
        send(b"stray bytes\n")
    elif mode == "stderr":
        sys.stderr.write("placing %d bytes\n" % len(program))
        sys.stderr.flush()
        send(frame)
    else:
        send(frame)
