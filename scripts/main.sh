#!/usr/bin/env bash
# The main job: installs what is missing, builds, and runs a short verification campaign with
# a readable report (about two minutes on two cores):
#   1. every real PyTorch printout and every hazard program is read, placed and checked;
#   2. what each placement does on the hazard corpus (a table of oracle verdicts);
#   3. a time-boxed fuzzing campaign of the early placement;
#   4. what the early placement saves in the memory plan of the model zoo.
# SECONDS_FUZZ (default 60) sets the fuzzing time; SEED (default 1) the seed.
set -uo pipefail
cd "$(dirname "$0")/.."
mkdir -p out
echo "Installing what is missing and building (log: out/setup.log) ..."
if ! bash scripts/setup.sh > out/setup.log 2>&1; then tail -40 out/setup.log; exit 2; fi
wb=build/cli/wbcheck
seed=${SEED:-1}
status=0
hr() { printf '%s\n' "------------------------------------------------------------------------------"; }

echo; hr; echo "wbcheck $($wb --version | cut -d' ' -f2) verification campaign (seed $seed)"; hr

echo; echo "1. Real printouts and hazard programs: read, placed (early), checked against S_par"
for f in corpus/real/*.txt corpus/hazards/*.txt corpus/models/*.txt; do
  [ -f "$f" ] || continue
  if out=$($wb check "$f" --placement early --seed "$seed" --inputs 2 2>&1); then verdict=ok; else
    code=$?; verdict="FAILED (exit $code)"; [ $code -eq 1 ] && status=1
    echo "$out" | sed 's/^/      /' | head -20
  fi
  printf '   %-70s %s\n' "$f" "$verdict"
done

echo; echo "2. Each placement on the hazard corpus (holds = agrees with S_par in both view modes;"
echo "   one column per version of PR #20744, named pr20744@COMMIT)"
mapfile -t placements < <($wb placements)
printf '   %-52s' "program"; for p in "${placements[@]}"; do printf ' %-16s' "$p"; done; echo
for f in corpus/hazards/*.txt; do
  printf '   %-52s' "$(basename "$f" .txt)"
  for p in "${placements[@]}"; do
    $wb check "$f" --placement "$p" --seed "$seed" --inputs 2 >/dev/null 2>&1
    case $? in 0) v=holds;; 1) v=BUG;; 2) v=error;; *) v=unknown;; esac
    [ "$p" = early ] && [ "$v" != holds ] && status=1
    printf ' %-16s' "$v"
  done
  echo
done

echo; echo "3. Fuzzing the early placement for ${SECONDS_FUZZ:-60} s"
if $wb fuzz --help >/dev/null 2>&1; then
  mkdir -p out/campaign
  $wb fuzz --time "${SECONDS_FUZZ:-60}" --seed "$seed" --placement early --out out/campaign || status=1
else
  echo "   (wbcheck fuzz is not available in this build)"
fi

echo; echo "4. Memory: peak live bytes and greedy arena, end vs early"
for f in corpus/models/*.txt corpus/hazards/upstream_*.txt; do
  [ -f "$f" ] || continue
  echo "   $f"; $wb plan "$f" | sed 's/^/      /'
done
echo; hr
if [ $status -eq 0 ]; then echo "campaign: every check held"; else echo "campaign: something failed (see above)"; fi
exit $status
