#!/bin/sh
# tests/adapters/misbehaving.sh WBCHECK: a one-shot pass command (docs/pass-protocol.md) that
# misbehaves on some programs and is upstream's pass on the others, for the tests that fuzz and
# shrink through --pass-cmd: it crashes on a program with a cumsum, hangs on one with an in-place relu,
# prints garbage on one with a clone, and otherwise answers as `wbcheck place - --placement
# upstream` does (whose bugs B1 and B2 must still be found).
input=$(cat)
case "$input" in
  *aten.cumsum.default*) echo "misbehaving.sh: cumsum is not supported" >&2; exit 3 ;;
  *aten.relu_.default*) exec sleep 30 ;;
  *aten.clone.default*) echo "this is not a program" ;;
  *) printf '%s\n' "$input" | exec "$1" place - --placement upstream ;;
esac
