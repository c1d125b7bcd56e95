"""Reading tables from files, with errors that name the file (shared by the CLI and the text corpora)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from fairpath._exceptions import FairpathInputError


def read_table(path: str | Path) -> pd.DataFrame:
    """Read a CSV or Parquet file, with an error that names the file when it cannot be used."""
    path = Path(path)
    if not path.exists():
        raise FairpathInputError(f"data file {str(path)!r} does not exist; check the path")
    try:
        if path.suffix.lower() in {".parquet", ".pq"}:
            return pd.read_parquet(path)
        return pd.read_csv(path, keep_default_na=False, na_values=["NA", "NaN", "nan", "null"])
    except Exception as error:  # pandas raises many parser-specific types
        raise FairpathInputError(
            f"could not parse data file {str(path)!r} as {'Parquet' if path.suffix.lower() in {'.parquet', '.pq'} else 'CSV'}: {error}"
        ) from error
