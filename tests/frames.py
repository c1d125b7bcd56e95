"""Helpers for tests that compare a saved table with the frame it was written from."""

from __future__ import annotations

import io

import pandas as pd


def as_read(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` as ``pd.read_csv`` reads it back from its CSV: what a saved ``result.csv`` must equal (a contrast named
    ``"1"`` reads back as the number 1, as any text column of digits does)."""
    return pd.read_csv(io.StringIO(frame.to_csv(index=False)))
