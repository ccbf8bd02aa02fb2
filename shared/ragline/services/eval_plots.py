"""The plots of an evaluation report, as inline SVG: no script, no font, nothing fetched.

Each function returns one ``<svg>`` element (no ``xmlns``: inline SVG in HTML needs none) whose every
text is escaped, sized in user units and scaled by its ``viewBox``.
"""

from __future__ import annotations

from html import escape

from ragline.domain.evaluations import MetricDifference

COLOURS = ("#4c78a8", "#f58518", "#54a24b", "#b279a2")
"""A configuration's colour, by its position."""
SIGNIFICANT = "#c0392b"
MUTED = "#888888"


def colour(index: int) -> str:
    return COLOURS[index % len(COLOURS)]


def _e(text: object) -> str:
    return escape(str(text), quote=True)


def _num(x: float) -> str:
    return f"{x:.1f}"


def histogram_svg(title: str, series: list[tuple[str, list[int]]], *, width: int = 320) -> str:
    """A histogram of ten bins of [0, 1]: per bin, one bar per series (a configuration) side by side,
    heights on one scale; each bar's tooltip says its series, bin and count."""
    height, left, bottom, top = 150, 28, 22, 18
    plot_w, plot_h = width - left - 8, height - bottom - top
    peak = max((c for _, counts in series for c in counts), default=0) or 1
    bins = max((len(counts) for _, counts in series), default=0) or 10
    slot = plot_w / bins
    bar = (slot - 2) / max(len(series), 1)
    parts = [
        f'<svg class="plot" viewBox="0 0 {width} {height}" width="{width}" height="{height}" role="img"'
        f' aria-label="{_e(title)}">',
        f'<text x="{left}" y="12" class="t">{_e(title)}</text>',
        f'<line x1="{left}" y1="{top + plot_h}" x2="{left + plot_w}" y2="{top + plot_h}" stroke="#444"/>',
        f'<text x="{left - 4}" y="{top + 4}" class="a" text-anchor="end">{peak}</text>',
        f'<text x="{left - 4}" y="{top + plot_h}" class="a" text-anchor="end">0</text>',
    ]
    for tick in (0.0, 0.5, 1.0):
        x = left + tick * plot_w
        parts.append(f'<text x="{_num(x)}" y="{height - 6}" class="a" text-anchor="middle">{tick:g}</text>')
    for s, (label, counts) in enumerate(series):
        for i, count in enumerate(counts):
            h = plot_h * count / peak
            x = left + i * slot + 1 + s * bar
            tip = f"{label}: [{i / bins:.1f}, {(i + 1) / bins:.1f}{']' if i == bins - 1 else ')'} {count}"
            parts.append(
                f'<rect x="{_num(x)}" y="{_num(top + plot_h - h)}" width="{_num(bar)}" height="{_num(h)}"'
                f' fill="{colour(s)}"><title>{_e(tip)}</title></rect>'
            )
    parts.append("</svg>")
    return "".join(parts)


def _scale(differences: list[MetricDifference]) -> float:
    """The half-width of a forest plot's axis: the widest bound from 0 and a tenth more, at least 0.05."""
    bounds = [abs(v) for d in differences for v in (d.ci_low, d.ci_high, d.difference) if v is not None]
    return max([0.05, *(1.1 * b for b in bounds)])


def forest_svg(differences: list[MetricDifference], *, width: int = 480) -> str:
    """A forest plot of B - A: a row per metric, its 95 % interval as a bar and the mean difference as a
    dot on an axis centred on 0; significant rows in red with a ``*``, rows without data say so."""
    row, top, label_w, right = 22, 20, 150, 16
    height = top + row * len(differences) + 24
    half = _scale(differences)
    plot_w = width - label_w - right
    zero = label_w + plot_w / 2

    def x_of(v: float) -> str:
        return _num(zero + v / half * plot_w / 2)

    parts = [
        f'<svg class="plot" viewBox="0 0 {width} {height}" width="{width}" height="{height}" role="img"'
        ' aria-label="B minus A, 95% intervals">',
        f'<line x1="{_num(zero)}" y1="{top - 8}" x2="{_num(zero)}" y2="{height - 20}" stroke="#444"'
        ' stroke-dasharray="3,3"/>',
    ]
    for tick in (-half, 0.0, half):
        parts.append(
            f'<text x="{x_of(tick)}" y="{height - 6}" class="a" text-anchor="middle">'
            f"{f'{tick:+.2f}' if tick else '0'}</text>"
        )
    for i, d in enumerate(differences):
        y = top + i * row + row / 2
        mark = " *" if d.significant else ""
        parts.append(f'<text x="4" y="{_num(y + 4)}" class="a">{_e(d.metric)}{mark}</text>')
        if d.difference is None or d.ci_low is None or d.ci_high is None:
            parts.append(f'<text x="{_num(zero + 6)}" y="{_num(y + 4)}" class="a">no data</text>')
            continue
        ink = SIGNIFICANT if d.significant else MUTED
        tip = f"{d.metric}: {d.difference:+.3f} [{d.ci_low:+.3f}, {d.ci_high:+.3f}], n={d.n}"
        parts.append(
            f'<g><title>{_e(tip)}</title><line x1="{x_of(d.ci_low)}" y1="{_num(y)}" x2="{x_of(d.ci_high)}"'
            f' y2="{_num(y)}" stroke="{ink}" stroke-width="3"/>'
            f'<circle cx="{x_of(d.difference)}" cy="{_num(y)}" r="4" fill="{ink}"/></g>'
        )
    parts.append("</svg>")
    return "".join(parts)
