"""One look for every fairpath figure: font sizes, figure widths, resolution, colours.

Reports show figures at their natural size up to the page width (about 1,050 px), so a figure at most
``FULL_WIDTH`` inches wide at ``DPI`` is never scaled down, and ``FONT_SIZE`` points stay about 15 px.
"""

from __future__ import annotations

from contextlib import contextmanager

DPI = 110
FULL_WIDTH = 9.0  # inches: 990 px at DPI, within the report's page width
HALF_WIDTH = 6.0
FONT_SIZE = 11
RC = {
    "font.size": FONT_SIZE,
    "axes.titlesize": FONT_SIZE + 1,
    "axes.titleweight": "bold",
    "axes.labelsize": FONT_SIZE,
    "xtick.labelsize": FONT_SIZE - 1,
    "ytick.labelsize": FONT_SIZE - 1,
    "legend.fontsize": FONT_SIZE - 1,
    "legend.title_fontsize": FONT_SIZE - 1,
    "figure.titlesize": FONT_SIZE + 2,
    "figure.dpi": DPI,
    "savefig.dpi": DPI,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
}
# Outcome first, then predictors: one colour per series in every figure.
SERIES_COLOURS = ("#486581", "#d64545", "#3ebd93", "#f0b429", "#9f7aea", "#2186eb", "#8d6e63", "#52606d")


@contextmanager
def styled():
    """Matplotlib settings of fairpath's figures, for the figures created (and saved) inside the block; the backend
    is never touched (fairpath's figures need none: :func:`new_figure`)."""
    import matplotlib

    with matplotlib.rc_context(RC):
        yield


def new_figure(nrows: int = 1, ncols: int = 1, *, figsize: tuple[float, float], **options):
    """``(figure, axes)`` as ``matplotlib.pyplot.subplots(nrows, ncols, figsize=figsize, **options)`` makes them, on a
    figure that pyplot does not manage: a plot neither selects nor changes the user's backend nor adds to pyplot's
    open figures (which stay alive until closed); the figure is freed with its last reference, written with
    ``savefig`` and shown by a notebook. ``options`` go to ``Figure.subplots`` (``sharex``, ``gridspec_kw`` ...)."""
    from fairpath.report._figure import FairpathFigure

    fig = FairpathFigure(figsize=figsize)
    return fig, fig.subplots(nrows, ncols, **options)


def subplots(nrows: int = 1, ncols: int = 1, *, width: float = FULL_WIDTH, height: float = 4.0, **options):
    """:func:`new_figure` in fairpath's style (width in inches, at most ``FULL_WIDTH`` for a report)."""
    with styled():
        return new_figure(nrows, ncols, figsize=(min(width, FULL_WIDTH), height), **options)


def legend_below(ax, *, gap: float = 4.0, across_figure: bool = False, **options):
    """The legend of ``ax`` under its tick and axis labels, where it can cover no data (``tight_layout`` and the
    reports' ``bbox_inches="tight"`` make room for it): centred under ``ax``, or with ``across_figure`` a figure
    legend centred under the whole figure (one legend for a row of panels; ``tight_layout`` leaves it out, so
    the panels keep their widths, and ``bbox_inches="tight"`` saves it). ``options`` go to ``legend`` (handles, ncol ...)."""
    from matplotlib.transforms import blended_transform_factory, offset_copy

    fig = ax.figure
    # the labels' depth in points does not change when tight_layout later resizes the axes (renderer None:
    # matplotlib's own, also for a Figure without pyplot)
    depth = (ax.get_window_extent().y0 - ax.get_tightbbox().y0) * 72 / fig.dpi
    anchor = offset_copy(ax.transAxes, fig=fig, y=-depth - gap, units="points")
    options.setdefault("frameon", False)
    if across_figure:
        return fig.legend(loc="upper center", bbox_to_anchor=(0.5, 0), bbox_transform=blended_transform_factory(fig.transFigure, anchor), **options)
    return ax.legend(loc="upper center", bbox_to_anchor=(0.5, 0), bbox_transform=anchor, **options)
