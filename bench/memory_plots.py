#!/usr/bin/env python3
"""bench/memory_plots.py: tables and SVG plots of bench/memory_report's output (issue 21).

Usage: memory_plots.py REPORT.jsonl OUTDIR
Writes OUTDIR/memory.md (tables), OUTDIR/memory-saving-vs-layers.svg (peak saved by early
against end, per cache-update style of the decoder, and the bound's) and
OUTDIR/memory-peak-per-placement.svg (peak per placement, one group per model). SVG is written
directly (no plotting library)."""
import json
import sys
from pathlib import Path

PLACEMENTS = ["end", "early", "pr20744", "upstream"]
COLORS = {"end": "#9e9e9e", "early": "#1b7837", "pr20744": "#2166ac", "upstream": "#d6604d", "bound": "#000000"}
STYLE_COLORS = ["#1b7837", "#2166ac", "#d6604d", "#762a83", "#e08214", "#35978f", "#8c510a", "#c51b7d"]


def load(path):
    return [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]


def saved(end, x):
    return 100.0 * (end - x) / end if end else 0.0


def cell(rec, p, key):
    d = rec["placements"].get(p, {})
    if "failure" in d:
        return "fails"
    v = d.get(key)
    if v is None:
        return "-"
    mark = " (BUG)" if d.get("oracle") == "BUG" else ""
    end = rec["placements"]["end"].get(key)
    pct = f" {saved(end, v):+.1f}%".replace("+", "−" if v > end else "") if end and p != "end" else ""
    return f"{v}{pct}{mark}"


def table(rows, title):
    out = [f"#### {title}", "",
           "| program | nodes | " + " | ".join(f"{p} peak" for p in PLACEMENTS) + " | bound | early/bound | "
           + " | ".join(f"{p} arena" for p in PLACEMENTS) + " |",
           "|---|---:|" + "---:|" * (2 * len(PLACEMENTS) + 2)]
    for r in rows:
        early = r["placements"]["early"].get("peak")
        ratio = f"{early / r['bound_peak']:.3f}" if early and r["bound_peak"] else "-"
        out.append(f"| {r['program']} | {r['nodes']} | " + " | ".join(cell(r, p, "peak") for p in PLACEMENTS)
                   + f" | {r['bound_peak']} | {ratio} | " + " | ".join(cell(r, p, "arena") for p in PLACEMENTS) + " |")
    return "\n".join(out) + "\n"


def esc(s):
    return str(s).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def svg_lines(series, title, xlabel, ylabel, xs):
    """series: [(label, color, dashed, [(x, y)])]; x on a log2 axis over xs."""
    import math
    w, h, left, right, top, bottom = 760, 420, 70, 210, 40, 50
    pw, ph = w - left - right, h - top - bottom
    ys = [y for _, _, _, pts in series for _, y in pts] + [0.0]
    ymax = max(10.0, math.ceil(max(ys) / 10.0) * 10.0)
    lx = [math.log2(x) for x in xs]
    x0, x1 = min(lx), max(lx) if max(lx) > min(lx) else min(lx) + 1

    def px(x):
        return left + (math.log2(x) - x0) / (x1 - x0) * pw

    def py(y):
        return top + ph - y / ymax * ph
    o = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="12">',
         f'<rect width="{w}" height="{h}" fill="white"/>',
         f'<text x="{w / 2}" y="22" text-anchor="middle" font-size="14">{esc(title)}</text>']
    for i in range(0, int(ymax) + 1, max(10, int(ymax) // 10 // 10 * 10 or 10)):
        o.append(f'<line x1="{left}" y1="{py(i):.1f}" x2="{left + pw}" y2="{py(i):.1f}" stroke="#e0e0e0"/>')
        o.append(f'<text x="{left - 6}" y="{py(i) + 4:.1f}" text-anchor="end">{i}%</text>')
    for x in xs:
        o.append(f'<line x1="{px(x):.1f}" y1="{top + ph}" x2="{px(x):.1f}" y2="{top + ph + 5}" stroke="black"/>')
        o.append(f'<text x="{px(x):.1f}" y="{top + ph + 18}" text-anchor="middle">{x}</text>')
    o.append(f'<line x1="{left}" y1="{top + ph}" x2="{left + pw}" y2="{top + ph}" stroke="black"/>')
    o.append(f'<line x1="{left}" y1="{top}" x2="{left}" y2="{top + ph}" stroke="black"/>')
    o.append(f'<text x="{left + pw / 2}" y="{h - 10}" text-anchor="middle">{esc(xlabel)}</text>')
    o.append(f'<text transform="translate(16,{top + ph / 2}) rotate(-90)" text-anchor="middle">{esc(ylabel)}</text>')
    for k, (label, color, dashed, pts) in enumerate(series):
        d = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in pts)
        dash = ' stroke-dasharray="5,4"' if dashed else ""
        o.append(f'<polyline points="{d}" fill="none" stroke="{color}" stroke-width="2"{dash}/>')
        for x, y in pts:
            o.append(f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="3" fill="{color}"/>')
        ly = top + 10 + 18 * k
        o.append(f'<line x1="{left + pw + 12}" y1="{ly}" x2="{left + pw + 36}" y2="{ly}" stroke="{color}" stroke-width="2"{dash}/>')
        o.append(f'<text x="{left + pw + 42}" y="{ly + 4}">{esc(label)}</text>')
    o.append("</svg>")
    return "\n".join(o) + "\n"


def svg_bars(groups, title):
    """groups: [(label, {series: bytes})]; bars per group, as a share of the group's `end` peak
    (the models differ in size by 30x: absolute bars would hide the small ones)."""
    keys = PLACEMENTS + ["bound"]
    w, h, left, top, bottom = 800, 440, 130, 40, 100
    pw, ph = w - left - 150, h - top - bottom
    vmax = 100.0
    gw = pw / max(1, len(groups))
    bw = gw * 0.8 / len(keys)

    def py(v):
        return top + ph - v / vmax * ph
    o = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="12">',
         f'<rect width="{w}" height="{h}" fill="white"/>',
         f'<text x="{w / 2}" y="22" text-anchor="middle" font-size="14">{esc(title)}</text>']
    for i in range(0, 6):
        v = vmax * i / 5
        o.append(f'<line x1="{left}" y1="{py(v):.1f}" x2="{left + pw}" y2="{py(v):.1f}" stroke="#e0e0e0"/>')
        o.append(f'<text x="{left - 6}" y="{py(v) + 4:.1f}" text-anchor="end">{v:.0f}%</text>')
    for g, (label, vals) in enumerate(groups):
        x0 = left + g * gw + gw * 0.1
        end = vals.get("end") or 1
        for k, key in enumerate(keys):
            if key not in vals:
                continue
            x = x0 + k * bw
            share = 100.0 * vals[key] / end
            o.append(f'<rect x="{x:.1f}" y="{py(share):.1f}" width="{bw - 1:.1f}" height="{top + ph - py(share):.1f}" '
                     f'fill="{COLORS[key]}"><title>{esc(label)} {key}: {vals[key]} bytes ({share:.0f}% of end)</title></rect>')
        cx, cy = left + g * gw + gw / 2, top + ph + 12
        o.append(f'<text x="{cx:.1f}" y="{cy}" text-anchor="end" font-size="11" transform="rotate(-30 {cx:.1f} {cy})">'
                 f'{esc(label)} ({end} B)</text>')
    o.append(f'<line x1="{left}" y1="{top + ph}" x2="{left + pw}" y2="{top + ph}" stroke="black"/>')
    for k, key in enumerate(keys):
        ly = top + 10 + 18 * k
        o.append(f'<rect x="{left + pw + 16}" y="{ly - 8}" width="14" height="12" fill="{COLORS[key]}"/>')
        o.append(f'<text x="{left + pw + 36}" y="{ly + 2}">{key if key != "bound" else "lower bound"}</text>')
    o.append(f'<text x="{left}" y="{h - 8}" font-size="11">peak live bytes as a share of end\'s (in brackets), '
             f'ExecuTorch memory-plan model (core/memplan.h)</text>')
    o.append("</svg>")
    return "\n".join(o) + "\n"


def main():
    recs = load(sys.argv[1])
    out = Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    zoo = [r for r in recs if r["family"] != "corpus"]
    corpus = [r for r in recs if r["family"] == "corpus"]
    md = ["Peak live bytes and greedy arena (bytes) per placement; the percentage is the share saved against `end` "
          "(a negative one costs more); (BUG): the oracle finds the placement wrong on the program, so its figure is no "
          "saving. bound: the lower bound on the peak of every placement (bench/memory_report.cpp says why it is one); "
          "early/bound: how close early comes to it.", ""]
    md.append(table(zoo, "Model zoo"))
    if corpus:
        md.append(table(corpus, "Corpus (hazards, regressions, models, real printouts)"))
    # Headline figures.
    dec = [r for r in zoo if r["family"] == "decoder"]
    if dec:
        best = max(dec, key=lambda r: saved(r["placements"]["end"]["peak"], r["placements"]["early"]["peak"]))
        md.append(f"Largest peak saving on the decoders: {saved(best['placements']['end']['peak'], best['placements']['early']['peak']):.1f}% "
                  f"({best['program']}).")
    at_bound = sum(1 for r in recs if r["placements"]["early"].get("peak") == r["bound_peak"])
    md.append(f"early reaches the lower bound on {at_bound} of {len(recs)} programs.\n")
    (out / "memory.md").write_text("\n".join(md) + "\n")

    # One line per cache-update style of the decoder and per other model; the bound's line only
    # where it differs from early's.
    lines = [(f"decoder, {s}", [r for r in dec if r["style"] == s]) for s in sorted({r["style"] for r in dec})]
    lines += [(f, [r for r in zoo if r["family"] == f]) for f in sorted({r["family"] for r in zoo} - {"decoder"})]
    xs = sorted({r["layers"] for r in zoo})
    series = []
    for i, (label, rows) in enumerate(lines):
        rows = sorted(rows, key=lambda r: r["layers"])
        color = STYLE_COLORS[i % len(STYLE_COLORS)]
        series.append((label, color, False, [(r["layers"], saved(r["placements"]["end"]["peak"], r["placements"]["early"]["peak"])) for r in rows]))
        if any(r["bound_peak"] != r["placements"]["early"]["peak"] for r in rows):
            series.append((f"bound, {label}", color, True, [(r["layers"], saved(r["placements"]["end"]["peak"], r["bound_peak"])) for r in rows]))
    if series:
        (out / "memory-saving-vs-layers.svg").write_text(
            svg_lines(series, "Model zoo: peak live bytes saved by early against end", "layers (counters for counter)", "peak saved (% of end's)", xs))

    groups = []
    size = 8 if any(r["layers"] == 8 for r in zoo) else max((r["layers"] for r in zoo), default=0)
    for r in zoo:
        if r["layers"] != size:
            continue
        vals = {p: r["placements"][p]["peak"] for p in PLACEMENTS if "peak" in r["placements"].get(p, {})}
        vals["bound"] = r["bound_peak"]
        label = r["program"].rsplit("/", 1)[0].replace("decoder/", "dec ")
        groups.append((label, vals))
    if groups:
        (out / "memory-peak-per-placement.svg").write_text(svg_bars(groups, f"Peak live bytes per placement, {size} layers (counters)"))


if __name__ == "__main__":
    main()
