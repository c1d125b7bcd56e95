"""Names of a package loaded from its private modules on first use (PEP 562), so that importing the package
(the command line's parser, a settings class) does not import torch or the other heavy modules behind them."""

from __future__ import annotations

import sys
from importlib import import_module


def lazy_attributes(package: str, modules: dict[str, str]):
    """``(__getattr__, __dir__)`` for ``package``: each name of ``modules`` loads from ``package.<module>`` when first
    read, and is then kept in the package, so later look-ups skip ``__getattr__``."""

    def __getattr__(name: str):
        if name not in modules:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(f"{package}.{modules[name]}"), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(modules))

    return __getattr__, __dir__
