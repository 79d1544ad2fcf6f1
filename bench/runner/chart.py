"""An SVG chart of strata's advantage over every arm, phase by phase (bench/run).

One row per phase, grouped by suite; for every arm a dot at the median ratio
over rounds and a line from its min to its max, on a log scale where 1 is
parity and right of it means strata did better. Standard library only: the
file is plain SVG text that any browser shows.
"""

import math
from xml.sax.saxutils import escape

ARM_COLOURS = {
    "native": "#4c72b0", "overlayfs": "#55a868", "passthrough_ll": "#c44e52",
    "passthrough_ll-60s": "#8172b2", "passthrough_ll-60s-perm": "#3f3275",
    "fuse-overlayfs": "#ccb974", "squashfuse": "#937860",
    "restic": "#da8bc3", "borg": "#8c8c8c",
}
FALLBACK_COLOURS = ["#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#e6ab02"]

LO, HI = -4, 4  # log2 range of the axis: 1/16 .. 16; ratios beyond are drawn at the edge


def colour(arm, arms):
    if arm in ARM_COLOURS:
        return ARM_COLOURS[arm]
    return FALLBACK_COLOURS[arms.index(arm) % len(FALLBACK_COLOURS)]


def svg(summaries, title, subtitle=""):
    """The chart as SVG text; summaries as from results.summarise()."""
    rows = [s for s in summaries if s["ratios"]]
    arms = []
    for s in rows:
        for a in s["ratios"]:
            if a not in arms:
                arms.append(a)
    left, width, right = 300, 560, 30
    line_h, arm_h, top = 6, 5, 70
    row_h = max(16, arm_h * len(arms) + 6)
    suites = list(dict.fromkeys(s["suite"] for s in rows))
    height = top + row_h * len(rows) + 24 * len(suites) + 70 + 16 * ((len(arms) + 3) // 4)
    total_w = left + width + right

    def x(r):
        v = max(LO, min(HI, math.log2(r))) if r > 0 else LO
        return left + (v - LO) / (HI - LO) * width

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{total_w}" height="{height}" '
           'font-family="sans-serif" font-size="11">',
           '<rect width="100%" height="100%" fill="white"/>',
           f'<text x="10" y="20" font-size="14" font-weight="bold">{escape(title)}</text>',
           '<text x="10" y="37">strata\'s advantage over each arm: dot = median over rounds, line = min–max; '
           'log scale, right of 1 = strata better</text>']
    if subtitle:
        out.append(f'<text x="10" y="53" fill="#555">{escape(subtitle)}</text>')
    axis_bottom = height - 60 - 16 * ((len(arms) + 3) // 4)
    for e in range(LO, HI + 1):
        gx = left + (e - LO) / (HI - LO) * width
        out.append(f'<line x1="{gx:.1f}" y1="{top - 6}" x2="{gx:.1f}" y2="{axis_bottom}" '
                   f'stroke="{"#000" if e == 0 else "#e0e0e0"}"/>')
        label = f"{2 ** e:g}" if e >= 0 else f"1/{2 ** -e:g}"
        out.append(f'<text x="{gx:.1f}" y="{axis_bottom + 14}" text-anchor="middle">{label}×</text>')
    y = top
    current = None
    for s in rows:
        if s["suite"] != current:
            current = s["suite"]
            out.append(f'<text x="10" y="{y + 14}" font-weight="bold">{escape(current)}</text>')
            out.append(f'<line x1="10" y1="{y + 19}" x2="{total_w - right}" y2="{y + 19}" stroke="#bbb"/>')
            y += 24
        out.append(f'<text x="{left - 8}" y="{y + row_h / 2 + 4:.1f}" text-anchor="end">'
                   f'{escape(s["phase"])} ({escape(s["unit"])})</text>')
        for j, arm in enumerate(arms):
            r = s["ratios"].get(arm)
            if r is None:
                continue
            cy = y + 3 + j * arm_h + arm_h / 2
            c = colour(arm, arms)
            tip = escape(f"{s['suite']} {s['phase']}: strata vs {arm} {r['median']:.2f}× "
                         f"({r['min']:.2f}–{r['max']:.2f}, {r['n']} rounds)")
            out.append(f'<g><title>{tip}</title>'
                       f'<line x1="{x(r["min"]):.1f}" y1="{cy:.1f}" x2="{x(r["max"]):.1f}" y2="{cy:.1f}" '
                       f'stroke="{c}" stroke-width="{line_h / 3:.1f}"/>'
                       f'<circle cx="{x(r["median"]):.1f}" cy="{cy:.1f}" r="{arm_h / 2 + 0.5:.1f}" fill="{c}"/></g>')
        y += row_h
    ly = axis_bottom + 36
    for i, arm in enumerate(arms):
        lx = 10 + (i % 4) * 200
        yy = ly + (i // 4) * 16
        out.append(f'<circle cx="{lx + 5}" cy="{yy - 4}" r="4" fill="{colour(arm, arms)}"/>')
        out.append(f'<text x="{lx + 14}" y="{yy}">vs {escape(arm)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"
