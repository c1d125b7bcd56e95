"""Seeds for the parts of a computation, spawned from the user's seed with ``numpy.random.SeedSequence``.

``child_seed(seed, *path)`` names a part by its path of non-negative integers (e.g. a fold, then a
fit within it): every part gets a statistically independent stream, the same path always the same
seed, and no two parts collide the way ``seed + offset`` schemes do (seed 0's fold 1 was seed 1's
fold 0).
"""

from __future__ import annotations

import numpy as np

# The first spawn key of each kind of part, so that no two kinds share a stream.
FOLD_LAYOUT, FOLDS, BOOTSTRAP, REFITS, SPLITS, REPEATS, SIMULTANEOUS = 0, 1, 2, 3, 4, 5, 6
# fairness adaptation: the jitter of discrete values (training rows 0, new rows 1) and each variable's engines (step, level)
JITTER, ENGINES = 7, 8


def child_seed(seed: int, *path: int) -> int:
    """A 32-bit seed for the part ``path`` of a computation seeded by ``seed``."""
    return int(np.random.SeedSequence(seed, spawn_key=tuple(int(p) for p in path)).generate_state(1)[0])


def child_rng(seed: int, *path: int) -> np.random.Generator:
    """A generator for the part ``path`` of a computation seeded by ``seed``."""
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=tuple(int(p) for p in path)))
