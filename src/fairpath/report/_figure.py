"""The figure class of fairpath's plots (see :func:`fairpath.report.new_figure`), in its own module so that importing
fairpath.report does not load matplotlib."""

from __future__ import annotations

import io

from matplotlib.figure import Figure


class FairpathFigure(Figure):
    """A :class:`~matplotlib.figure.Figure` that a notebook shows as PNG even where no backend is active (IPython
    uses ``_repr_png_`` only when the inline backend has not registered its own display of figures)."""

    def _repr_png_(self) -> bytes:
        buffer = io.BytesIO()
        self.savefig(buffer, format="png", bbox_inches="tight")
        return buffer.getvalue()
