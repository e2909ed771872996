#!/usr/bin/env bash
# bench/time_to_find.sh: time to find, and shrunk size, of every bug class that
# executorch-semantics attributes to each modelled placement (verification-anchors §4: per
# mutant, over >= 10 seeds, medians).
#
# For each placement and seed it runs
#   wbcheck fuzz --placement P --seed S --until-classes all --time LIMIT --jobs 1
# (stops once every expected class was found) and reads the summary table: per class, the
# time of the first find (seconds since the start, before shrinking) and the smallest shrunk
# program (body nodes). Then it prints, per (placement, class): how many seeds found it, the
# median and maximum time, the median and maximum shrunk size.
#
# Usage: bench/time_to_find.sh [WBCHECK] [SEEDS] [LIMIT]
#   WBCHECK  the wbcheck binary (a Release build; default build-campaign-rel/cli/wbcheck)
#   SEEDS    number of seeds, 1..SEEDS (default 10)
#   LIMIT    seconds per run before giving up (default 60)
# Environment: PLACEMENTS (default: every model of real code `wbcheck placements` lists, i.e.
# upstream, each version pr20744@COMMIT, draft13857), MODE (realistic | adversarial; default:
# drawn per case), OUT (directory for runs; default a temporary one). The classes expected of
# each placement are campaign/campaign.cpp's expectedHazards, as `wbcheck fuzz` prints them.
set -euo pipefail

here="$(cd "$(dirname "$0")/.." && pwd)"
wbcheck="${1:-$here/build-campaign-rel/cli/wbcheck}"
seeds="${2:-10}"
limit="${3:-60}"
out="${OUT:-$(mktemp -d)}"
mkdir -p "$out"
mode_args=()
if [[ -n "${MODE:-}" ]]; then mode_args=(--mode "$MODE"); fi

[[ -x "$wbcheck" ]] || { echo "time_to_find.sh: no wbcheck binary at $wbcheck" >&2; exit 2; }
placements="${PLACEMENTS:-$("$wbcheck" placements | grep -v -x -e early -e end | tr '\n' ' ')}"
echo "# $("$wbcheck" --version), seeds 1..$seeds, limit ${limit}s, runs in $out"

for p in $placements; do
  for s in $(seq 1 "$seeds"); do
    # Exit code 1 means "found something": expected here.
    "$wbcheck" fuzz --placement "$p" --seed "$s" --until-classes all --time "$limit" --jobs 1 \
      "${mode_args[@]}" --out "$out/$p-$s" > "$out/$p-$s.txt" || true
  done
done

python3 - "$out" "$seeds" "$placements" "$wbcheck" <<'EOF'
import statistics, subprocess, sys
out, seeds, placements, wbcheck = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(), sys.argv[4]

def parse(path):
    """Summary rows of one run: {hazard label: (first seconds, smallest nodes)}, cases/s, and
    the classes the run wanted (its `wanted:` line: expectedHazards of the placement)."""
    rows, rate, wanted, columns = {}, None, [], None
    for line in open(path):
        if line.startswith("placement ") and "cases in" in line:
            rate = float(line.split("(")[1].split()[0])
            continue
        if line.startswith("wanted: "):
            wanted = [w.strip() for w in line[len("wanted: "):].split(";") if w.strip()]
            continue
        if line.startswith("placement ") and "hazard class" in line:
            columns = (line.index("hazard class"), line.index("first(s)") - 1)
            continue
        if columns is None or len(line) < columns[1] or line.startswith("#"):
            continue
        hazard = line[columns[0]:columns[1]].strip()
        rest = line[columns[1]:].split()
        try:
            first, nodes = float(rest[0]), int(rest[1])
        except (ValueError, IndexError):
            continue
        if hazard not in rows or first < rows[hazard][0]:
            rows[hazard] = (first, min(nodes, rows.get(hazard, (0, nodes))[1]))
    return rows, rate, wanted

print(f"{'placement':<17} {'bug class':<30} {'found':>6} {'median s':>9} {'max s':>7} {'med nodes':>9} {'max nodes':>9}")
ok = True
for p in placements:
    runs = [parse(f"{out}/{p}-{s}.txt") for s in range(1, seeds + 1)]
    expected = next((r[2] for r in runs if r[2]), [])
    for hazard in expected:
        hits = [r[0][hazard] for r in runs if hazard in r[0]]
        times = [t for t, _ in hits]
        nodes = [n for _, n in hits]
        med_t = statistics.median(times) if len(hits) == seeds else float("inf")
        line = f"{p:<17} {hazard:<30} {len(hits):>3}/{seeds:<2} "
        line += f"{statistics.median(times):>9.2f} {max(times):>7.2f} " if times else f"{'-':>9} {'-':>7} "
        line += f"{statistics.median(nodes):>9.1f} {max(nodes):>9}" if nodes else f"{'-':>9} {'-':>9}"
        print(line)
        ok = ok and len(hits) == seeds and med_t < 10 and max(nodes) <= 6
    rates = [r[1] for r in runs if r[1]]
    if rates:
        print(f"{p:<17} {'(cases/s, median over runs)':<30} {'':>6} {statistics.median(rates):>9.1f}")
print("targets (every class found on every seed, median < 10 s, <= 6 nodes):", "met" if ok else "NOT met")
EOF
