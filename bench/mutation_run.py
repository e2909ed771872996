#!/usr/bin/env python3
"""bench/mutation_run.py: runs the components of the suite against prebuilt mutant binaries
(bench/mutation.sh builds them into OUT/bin/NAME/) and writes OUT/mutation.json and
OUT/mutation.md. See bench/mutation.sh for the components and the targets.

A mutant is killed on a seed when some seeded component finds it with that seed, or a
deterministic one (corpus, prove) finds it at all. The JSON is rewritten after every mutant,
so an interrupted campaign leaves the mutants it finished."""
import argparse
import datetime
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

PROPS = ["GenProperties.EarlyEqualsSParInBothViewModes", "GenProperties.PlacedProgramsValidate",
         "GenProperties.NoCopyLaterUnderEarlyThanUnderEnd", "GenProperties.EarlyPeakLiveBytesAtMostEnd"]
ZPROPS = ["ProofsOrderingProperties.EarlyIsProvedMinimalOnGeneratedPrograms"]


def corpus_files(repo):
    files = []
    for d in ["corpus/hazards", "corpus/regressions", "corpus/regressions/false-alarms", "corpus/regressions/mutants"]:
        files += sorted(str(p.relative_to(repo)) for p in (repo / d).glob("*.txt"))
    return files


def run_fuzz(wb, seed, cap, rundir):
    out = rundir / f"fuzz-{seed}"
    cmd = [wb, "fuzz", "--placement", "early", "--seed", str(seed), "--time", str(cap), "--jobs", "1",
           "--until-found", "--no-draw", "--out", str(out)]
    start = time.monotonic()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=cap + 120)
        text = p.stdout
        code = p.returncode
        err = p.stderr
    except subprocess.TimeoutExpired as e:
        text = (e.stdout or b"").decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        code, err = None, ""
    wall = time.monotonic() - start
    (rundir / f"fuzz-{seed}.txt").write_text(text + err)
    r = {"seed": seed, "killed": False, "wall": round(wall, 2)}
    if code is not None and code not in (0, 1):
        # wbcheck fuzz itself died on the mutant (an exception in the placement, a signal): found.
        last = (err.strip().splitlines() or ["exit %d" % code])[-1]
        r.update(killed=True, seconds=round(wall, 2), verdict="crash", hazard=last[:120])
        return r
    m = re.search(r"(\d+) cases in ([\d.]+) s", text)
    if m:
        r["cases_run"] = int(m.group(1))
    columns = None
    for line in text.splitlines():
        if line.startswith("placement ") and "hazard class" in line:
            columns = (line.index("verdict"), line.index("modes"), line.index("hazard class"), line.index("first(s)") - 1)
            continue
        if columns is None or not line.startswith("early "):
            continue
        rest = line[columns[3]:].split()
        try:
            first, nodes = float(rest[0]), int(rest[1])
        except (ValueError, IndexError):
            continue
        if not r["killed"] or first < r["seconds"]:
            r.update(killed=True, seconds=first, nodes=nodes, cases=r.get("cases_run"),
                     verdict=line[columns[0]:columns[1]].strip(), hazard=line[columns[2]:columns[3]].strip())
    return r


def program_nodes(log):
    """Body nodes of the last program printed in a RapidCheck log (its forward's assignments)."""
    blocks = re.split(r"def forward\(", log)
    if len(blocks) < 2:
        return None
    body = blocks[-1].split("return", 1)[0]
    return sum(1 for line in body.splitlines()[1:] if re.match(r"\s+\w+(: \"[^\"]*\")? = ", line))


def run_gtest(binary, tests, seed, cap, rundir, tag):
    env = dict(os.environ)
    env["RC_PARAMS"] = f"seed={seed} max_success={os.environ.get('RC_MAX_SUCCESS', '100000')} max_size=100"
    cmd = [binary, "--gtest_filter=" + ":".join(tests)]
    # One process per property, each with its share of the cap: the first property alone
    # would otherwise use all of it on a mutant that survives.
    r = {"seed": seed, "killed": False}
    spent = 0.0
    log_all = ""
    share = cap / len(tests)
    for t in tests:
        start = time.monotonic()
        crashed = False
        try:
            p = subprocess.run([binary, "--gtest_filter=" + t], capture_output=True, text=True, timeout=share, env=env)
            text = p.stdout + p.stderr
            # Died without GoogleTest's verdict (an exception escaping, a signal): found.
            crashed = p.returncode != 0 and "[  PASSED  ]" not in text and "[  FAILED  ]" not in text
        except subprocess.TimeoutExpired:
            text = ""
        took = time.monotonic() - start
        log_all += f"### {t}\n{text}\n" + (f"(exit {p.returncode})\n" if crashed else "")
        m = re.search(r"Falsifiable after (\d+) tests?(?: and (\d+) shrinks?)?", text)
        failed = m or "[  FAILED  ]" in text or crashed
        if failed:
            r.update(killed=True, seconds=round(spent + took, 2), property=t.split(".")[1] + (" (crash)" if crashed else ""),
                     cases=int(m.group(1)) if m else None, nodes=program_nodes(text))
            break
        spent += took
    (rundir / f"{tag}-{seed}.txt").write_text(log_all)
    return r


def run_files(wb, files, repo, args, tag, rundir):
    killers, unknown, errors = [], [], []
    start = time.monotonic()
    log = ""
    for f in files:
        try:
            p = subprocess.run([wb] + args[0] + [f] + args[1], capture_output=True, text=True, timeout=300, cwd=repo)
            code = p.returncode
            log += f"### {f}: exit {code}\n{p.stdout}{p.stderr}\n"
        except subprocess.TimeoutExpired:
            code = 3
            log += f"### {f}: timeout\n"
        if code == 3:
            unknown.append(f)
        elif code != 0:
            # 1: a placement bug or a refuted proof; 2 or a signal on a file the unmutated tree
            # reads and holds on: the mutant crashed (an internal error). Both find it.
            killers.append(f)
            if code != 1:
                errors.append(f)
    (rundir / f"{tag}.txt").write_text(log)
    return {"killed": bool(killers), "files": killers, "unknown": unknown, "errors": errors,
            "seconds": round(time.monotonic() - start, 2)}


def describe(repo, name):
    if name == "baseline":
        return "the unmutated tree", []
    p = repo / "bench/mutants" / f"{name}.patch"
    text = p.read_text()
    files = re.findall(r"^diff --git a/(\S+)", text, re.M)
    return text.split("\n", 1)[0], files


def med(values):
    return statistics.median(values) if values else None


def summarize(entry, seeds):
    c = entry["components"]
    per_seed = []
    deterministic = [k for k in ("corpus", "prove") if k in c and c[k]["killed"]]
    for s in range(1, seeds + 1):
        times = []
        for k in ("fuzz", "props", "zprops"):
            for r in c.get(k, []):
                if r["seed"] == s and r["killed"] and r.get("seconds") is not None:
                    times.append(r["seconds"])
        if "corpus" in deterministic:  # the oracle over the corpus: its time per file, at most
            times.append(c["corpus"]["seconds"])
        elif "prove" in deterministic:
            times.append(c["prove"]["seconds"])
        per_seed.append(min(times) if times else None)
    killed = [t for t in per_seed if t is not None]
    nodes = [r["nodes"] for k in ("fuzz",) for r in c.get(k, []) if r["killed"] and r.get("nodes") is not None]
    entry["summary"] = {
        "killed_seeds": len(killed), "seeds": seeds,
        "killed_on_every_seed": len(killed) == seeds,
        "median_seconds_to_kill": med(killed), "max_seconds_to_kill": max(killed) if killed else None,
        "fuzz_median_nodes": med(nodes), "fuzz_max_nodes": max(nodes) if nodes else None,
        "killed_by": [k for k in ("fuzz", "props", "zprops") if any(r["killed"] for r in c.get(k, []))] + deterministic,
    }


def fmt(x, digits=1):
    if x is None:
        return "-"
    if isinstance(x, float):
        return f"{x:.{digits}f}"
    return str(x)


def seeded_cell(rows, key):
    hits = [r for r in rows if r["killed"]]
    if not rows:
        return "n/a"
    cell = f"{len(hits)}/{len(rows)}"
    vals = [r[key] for r in hits if r.get(key) is not None]
    if vals:
        cell += f" {fmt(med(vals), 2 if key == 'seconds' else 0)} ({fmt(min(vals), 2 if key == 'seconds' else 0)}-{fmt(max(vals), 2 if key == 'seconds' else 0)})"
    return cell


def markdown(result):
    meta = result["meta"]
    runs = meta.get("runs") or [{k: meta.get(k) for k in ("components", "seeds", "cap", "head", "date")}]
    lines = [f"Mutation score: {meta['mutants']} mutants of `early` and the alias analysis; the components ran as follows.", ""]
    lines += [f"- {', '.join(r['components'])}: seeds 1..{r['seeds']}, cap {r['cap']} s per seeded run, "
              f"commit `{(r['head'] or '?')[:10]}`, {r['date']}" for r in runs]
    lines += ["",
             "Seeded cells: seeds killed / seeds run, then the median (range) over the killed seeds. "
             "fuzz: seconds to the first finding, cases run, shrunk body nodes; props: seconds (incl. shrinking); "
             "corpus/prove: the files that kill it (of "
             f"{meta['corpus_files']}).", "",
             "| mutant | bug class | fuzz s | fuzz cases | fuzz nodes | props s | props nodes | zprops s | corpus (oracle) | prove | killed on every seed | median s to kill |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for e in result["mutants"]:
        c = e["components"]
        s = e["summary"]

        def files_cell(k):
            if k not in c:
                return "n/a"
            d = c[k]
            if not d["killed"]:
                return "survives" + (f" ({len(d['unknown'])} unknown)" if d.get("unknown") else "")
            names = [Path(f).stem for f in d["files"]]
            return f"{len(names)}: " + ", ".join(names[:3]) + (" ..." if len(names) > 3 else "")
        lines.append("| " + " | ".join([
            f"`{e['name']}`", e["description"].replace("|", "\\|"),
            seeded_cell(c.get("fuzz", []), "seconds"), seeded_cell(c.get("fuzz", []), "cases"),
            seeded_cell(c.get("fuzz", []), "nodes"), seeded_cell(c.get("props", []), "seconds"),
            seeded_cell(c.get("props", []), "nodes"), seeded_cell(c.get("zprops", []), "seconds"),
            files_cell("corpus"), files_cell("prove"),
            ("nothing fires (as it must)" if not s["killed_by"] else f"**false alarm** ({s['killed_by']})")
            if e["name"] == "baseline" else
            "yes" if s["killed_on_every_seed"] else f"**no** ({s['killed_seeds']}/{s['seeds']})",
            fmt(s["median_seconds_to_kill"], 2)]) + " |")
    ms = [e for e in result["mutants"] if e["name"] != "baseline"]
    every = sum(1 for e in ms if e["summary"]["killed_on_every_seed"])
    meds = [e["summary"]["median_seconds_to_kill"] for e in ms if e["summary"]["median_seconds_to_kill"] is not None]
    nodes = [e["summary"]["fuzz_max_nodes"] for e in ms if e["summary"]["fuzz_max_nodes"] is not None]
    lines += ["", f"Killed on every seed: {every} of {len(ms)} mutants. "
              f"Median seconds to kill (per mutant, fastest component per seed): "
              f"{fmt(med(meds), 2)} over mutants, worst mutant {fmt(max(meds) if meds else None, 2)}. "
              f"Largest shrunk fuzz finding: {fmt(max(nodes) if nodes else None)} nodes."]
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repo", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--bin", help="the mutants' binaries, BIN/NAME/ (default OUT/bin)")
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--cap", type=float, default=30)
    ap.add_argument("--components", default="fuzz props zprops corpus prove")
    ap.add_argument("--head", default="")
    ap.add_argument("--keep", action="store_true",
                    help="keep the components this run leaves out from OUT/mutation.json (e.g. rerun corpus and prove only)")
    ap.add_argument("names", nargs="+")
    a = ap.parse_args()
    repo, out = Path(a.repo), Path(a.out)
    bins = Path(a.bin) if a.bin else out / "bin"
    comps = a.components.split()
    files = corpus_files(repo)
    result = {"meta": {"head": a.head, "seeds": a.seeds, "cap": a.cap, "components": comps,
                       "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
                       "machine": f"{platform.machine()}, {os.cpu_count()} cpus, load {os.getloadavg()[0]:.1f} at start",
                       "corpus_files": len(files), "mutants": len([n for n in a.names if n != "baseline"])},
              "mutants": []}
    this_run = {k: result["meta"][k] for k in ("components", "seeds", "cap", "head", "date")}
    result["meta"]["runs"] = [this_run]
    previous = {}
    if a.keep and (out / "mutation.json").exists():
        old = json.loads((out / "mutation.json").read_text())
        previous = {e["name"]: e for e in old["mutants"]}
        # Which components ran with which settings: the components kept from the old run keep
        # theirs (a run before this list existed is described by its own meta).
        runs = old["meta"].get("runs") or [{k: old["meta"].get(k) for k in ("components", "seeds", "cap", "head", "date")}]
        for r in runs:
            r["components"] = [k for k in r["components"] if k not in comps]
        runs = [r for r in runs if r["components"]]
        result["meta"]["runs"] = runs + [this_run]
        result["meta"]["seeds"] = max(r["seeds"] for r in result["meta"]["runs"])
        result["meta"]["components"] = sorted(set(old["meta"].get("components", [])) | set(comps))
    excluded = set()
    for name in a.names:
        wb = str(bins / name / "wbcheck")
        rundir = out / "runs" / name
        rundir.mkdir(parents=True, exist_ok=True)
        desc, touched = describe(repo, name)
        seeds = 1 if name == "baseline" else a.seeds
        entry = {"name": name, "description": desc, "files": touched, "components": {}}
        t0 = time.monotonic()
        c = entry["components"]
        live = [f for f in files if f not in excluded]
        if "corpus" in comps:
            c["corpus"] = run_files(wb, live, repo, (["check"], ["--placement", "early"]), "corpus", rundir)
        if "prove" in comps:
            c["prove"] = run_files(wb, live, repo, (["prove"], ["--placement", "early", "--only", "ordering"]), "prove", rundir)
        for s in range(1, seeds + 1):
            if "fuzz" in comps:
                c.setdefault("fuzz", []).append(run_fuzz(wb, s, a.cap, rundir))
            if "props" in comps:
                c.setdefault("props", []).append(run_gtest(str(bins / name / "gen_properties_test"), PROPS, s, a.cap, rundir, "props"))
            if "zprops" in comps:
                c.setdefault("zprops", []).append(run_gtest(str(bins / name / "proofs_ordering_test"), ZPROPS, s, a.cap, rundir, "zprops"))
            print(f"#   {name} seed {s}: " + ", ".join(f"{k} {'KILLED' if c[k][-1]['killed'] else 'survived'}"
                                                       for k in ("fuzz", "props", "zprops") if k in c), file=sys.stderr, flush=True)
        for k, v in previous.get(name, {}).get("components", {}).items():
            c.setdefault(k, v)
        if name in previous:
            seeds = max(seeds, previous[name]["summary"]["seeds"])
        summarize(entry, seeds)
        entry["wall_seconds"] = round(time.monotonic() - t0, 1)
        if name == "baseline":
            # The unmutated tree must hold everywhere: a file that fails there says nothing
            # about a mutant, so it is left out (and reported).
            for k in ("corpus", "prove"):
                if k in c:
                    excluded.update(c[k]["files"] + c[k]["unknown"] + c[k]["errors"])
            result["meta"]["baseline_false_kills"] = entry["summary"]["killed_by"]
            result["meta"]["excluded_files"] = sorted(excluded)
        result["mutants"].append(entry)
        print(f"# {name}: killed on {entry['summary']['killed_seeds']}/{seeds} seeds by {entry['summary']['killed_by']}, "
              f"median {fmt(entry['summary']['median_seconds_to_kill'], 2)} s ({entry['wall_seconds']} s)", file=sys.stderr, flush=True)
        done = {e["name"] for e in result["mutants"]}
        kept = [e for n, e in sorted(previous.items()) if n not in done and n not in a.names]
        full = dict(result, mutants=sorted(result["mutants"] + kept, key=lambda e: (e["name"] != "baseline", e["name"])))
        (out / "mutation.json").write_text(json.dumps(full, indent=1) + "\n")
        (out / "mutation.md").write_text(markdown(full))
    print((out / "mutation.md").read_text())


if __name__ == "__main__":
    main()
