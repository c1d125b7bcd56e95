"""Large tables: the settings chosen by size, shared bins, design matrices, and the Dask fold path."""

import re

import numpy as np
import pandas as pd
import pytest

from fairpath.causal import SFM, decompose
from fairpath.causal._decompose import LARGE_FOLDS, LARGE_ROWS, SMALL_FOLDS, resolve_n_folds
from fairpath._learners import LARGE_FIT_ROWS, make_learner
from fairpath._presets import EarlyStoppingGBM, SharedBins, StackedLearner
from fairpath.causal._nuisance import design, level_features
from fairpath.datasets import make_mixed_sfm

MAIN = ("tv", "ctfde", "ctfie", "ctfse")


@pytest.fixture(scope="module")
def large():
    sample = make_mixed_sfm(200_000, seed=11)
    return sample, decompose(sample.data, sample.sfm, seed=5, measures=MAIN)


def test_a_200000_row_decomposition_uses_the_large_data_settings_and_finds_the_truth_within_3_se(large):
    sample, result = large
    assert (result.settings["n_folds"], result.settings["learner"], result.settings["n_rep"]) == (LARGE_FOLDS, "stack", 1)
    for measure in MAIN:
        found = result.estimate(measure)
        assert abs(found.estimate - sample.truth[measure]) <= 3 * found.se, (measure, found, sample.truth[measure])
        assert 0.003 < found.se < 0.02  # about 1/sqrt(n) on this model's scale: the SE is not inflated either


def test_folds_and_learner_follow_the_size():
    assert [resolve_n_folds("auto", n) for n in (2000, LARGE_ROWS - 1, LARGE_ROWS)] == [SMALL_FOLDS, SMALL_FOLDS, LARGE_FOLDS]
    assert resolve_n_folds(7, 10**6) == 7
    small = make_mixed_sfm(2000, seed=1)
    settings = decompose(small.data, small.sfm, seed=1, measures=["tv"]).settings
    assert (settings["n_folds"], settings["learner"]) == (SMALL_FOLDS, "stack")


def test_the_gbm_and_stack_presets_switch_to_their_large_fit_settings():
    small, big = make_learner("gbm", False, 0, LARGE_FIT_ROWS - 1), make_learner("gbm", False, 0, LARGE_FIT_ROWS)
    assert (small.num_leaves, small.learning_rate) == (15, 0.1)
    assert (big.num_leaves, big.learning_rate, big.min_child_samples) == (63, 0.2, 100)
    assert not make_learner("stack", False, 0, LARGE_FIT_ROWS - 1).large and make_learner("stack", False, 0, LARGE_FIT_ROWS).large


def test_the_large_stack_fits_its_glm_on_a_subsample_and_predicts_from_its_coefficients():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(60_000, 30))
    y = X[:, 0] - 0.5 * X[:, 1] * X[:, 2] + rng.normal(size=60_000)
    stack = StackedLearner(large=True, random_state=1).fit(X, y)
    glm = stack.glm_
    # 30 linear terms and the 55 squares and products of the 10 columns the GBM gained most from, the
    # three that matter among them; 4,000,000 cells of them hold 47,058 rows
    assert {0, 1, 2} <= set(glm.steps[0][1].interacting) and len(glm.steps[0][1].interacting) == 10
    assert glm.steps[-1][1].n_features_in_ == 85 and stack.glm_rows_ == 47_058
    assert np.allclose(stack._glm_predict(glm, X), glm.predict(X), rtol=0, atol=1e-12)


def test_quadratic_features_of_some_columns_are_those_columns_squares_and_products():
    from fairpath._presets import QuadraticFeatures

    X = np.random.default_rng(3).normal(size=(200, 4))
    some, every = QuadraticFeatures([1, 3]).fit(X), QuadraticFeatures().fit(X)
    Z = (X - X.mean(axis=0)) / X.std(axis=0)
    raw = np.column_stack([Z, Z[:, 1] ** 2, Z[:, 1] * Z[:, 3], Z[:, 3] ** 2])
    assert np.allclose(some.transform(X), (raw - raw.mean(axis=0)) / raw.std(axis=0))
    assert every.transform(X).shape == (200, 14) and some.transform(X).shape == (200, 7)


def test_design_fills_the_same_matrix_as_stacking_copies():
    rng = np.random.default_rng(0)
    z, w, x = rng.normal(size=(50, 3)), rng.normal(size=(50, 2)), rng.integers(0, 2, 50)
    rows = np.array([3, 7, 7, 40])
    assert np.array_equal(design((z, w), rows, x_column=level_features(x[rows], 2)), np.hstack([x[:, None], z, w])[rows])
    assert np.array_equal(design((z,), rows, x_column=level_features(1, 2)), np.hstack([np.ones((4, 1)), z[rows]]))
    assert np.array_equal(design((z, w), rows), np.hstack([z, w])[rows])
    # three levels: two indicator columns, level 0 both zero
    codes = np.array([0, 2, 1, 2])
    assert np.array_equal(design((z,), rows, x_column=level_features(codes, 3)),
                          np.hstack([[[0, 0], [0, 1], [1, 0], [0, 1]], z[rows]]))
    assert np.array_equal(design((z,), rows, x_column=level_features(2, 3)), np.hstack([np.tile([0.0, 1.0], (4, 1)), z[rows]]))


def test_fits_on_shared_bins_keep_their_own_labels_and_match_a_fit_on_the_values():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(6000, 4))
    y1, y2 = X[:, 0] + rng.normal(size=6000), np.sin(2 * X[:, 1]) + rng.normal(size=6000)
    rows = np.sort(rng.choice(6000, 4000, replace=False))
    shared = SharedBins(X)
    first = EarlyStoppingGBM(random_state=3).fit(shared.rows(rows), y1[rows]).predict(X)
    second = EarlyStoppingGBM(random_state=3).fit(shared.rows(rows), y2[rows]).predict(X)
    alone = EarlyStoppingGBM(random_state=3).fit(SharedBins(X).rows(rows), y2[rows]).predict(X)
    assert np.array_equal(second, alone)  # the first fit's labels did not leak into the second
    on_values = EarlyStoppingGBM(random_state=3).fit(X[rows], y1[rows]).predict(X)
    assert np.corrcoef(first, on_values)[0, 1] > 0.98  # only the bin edges differ (all rows against the training rows)
    assert np.corrcoef(first, X[:, 0])[0, 1] > 0.95


@pytest.fixture(scope="module")
def cluster():
    distributed = pytest.importorskip("distributed")
    pytest.importorskip("dask.dataframe")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        yield client


def test_a_dask_dataframe_is_decomposed_on_the_workers_with_the_local_numbers(cluster):
    import dask.dataframe as dd

    sample = make_mixed_sfm(3000, seed=2)
    data = sample.data.assign(x=np.where(np.arange(3000) % 97 == 0, 2, sample.data["x"]))  # rows of another level
    with pytest.warns(UserWarning, match="31 rows excluded because 'x' is neither 0 nor 1"):
        local = decompose(data, sample.sfm, seed=3, n_rep=2)
    with pytest.warns(UserWarning, match="31 rows excluded because 'x' is neither 0 nor 1"):
        remote = decompose(dd.from_pandas(data, npartitions=4), sample.sfm, seed=3, n_rep=2, scheduler=cluster)
    pd.testing.assert_frame_equal(local.to_frame(), remote.to_frame())
    assert remote.counts["n_excluded"] == 31 and remote.for_contrast().encoded == local.for_contrast().encoded
    assert "Dask DataFrame of 4 partitions" in remote.settings["provenance"]["call"]


@pytest.mark.parametrize("change, message", [
    (lambda d: d.assign(region="north"), "confounder (Z) column 'region' is constant ('north')"),
    (lambda d: d.assign(x=1), "protected attribute 'x' has no rows with level(s) [0]"),
    (lambda d: d.assign(y=d["y"].where(d.index != 2500, np.nan)), "missing values (NaN) in used columns ('y': 1)"),
])
def test_a_dask_dataframe_gets_the_messages_of_a_local_one(cluster, change, message):
    import dask.dataframe as dd

    from fairpath import FairpathInputError

    sample = make_mixed_sfm(3000, seed=2)
    data = change(sample.data)
    with pytest.raises(FairpathInputError, match=message.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")):
        decompose(data, sample.sfm, seed=3)
    with pytest.raises(FairpathInputError, match=message.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")):
        decompose(dd.from_pandas(data, npartitions=3), sample.sfm, seed=3, scheduler=cluster)


def test_what_a_dask_dataframe_cannot_do_is_refused_with_the_way_out(cluster):
    import dask.dataframe as dd

    from fairpath import FairpathInputError

    sample = make_mixed_sfm(600, seed=2)
    data = dd.from_pandas(sample.data, npartitions=2)
    with pytest.raises(FairpathInputError, match="method 'medDML' resamples the rows for each refit.*pass a pandas DataFrame"):
        decompose(data, sample.sfm, method="medDML", scheduler=cluster)
    with pytest.raises(FairpathInputError, match="a Dask DataFrame stays on a Dask cluster: pass scheduler="):
        decompose(data, sample.sfm)
    with pytest.raises(FairpathInputError, match="predictor_functions read the table's rows in this process"):
        decompose(data.assign(p=data["y"]), sample.sfm, predictors=["p"], predictor_functions={"p": lambda rows: rows["y"]},
                  scheduler=cluster)


def _bad_cell_file(tmp_path, column: str, token: str, line: int = 2500):
    sample = make_mixed_sfm(3000, seed=4)
    lines = sample.data.to_csv(index=False).splitlines()
    cells = lines[line].split(",")
    cells[lines[0].split(",").index(column)] = token
    lines[line] = ",".join(cells)
    path = tmp_path / f"{column}-{token or 'empty'}.csv"
    path.write_text("\n".join(lines) + "\n")
    return path, sample


@pytest.mark.parametrize("column, token", [("z1", "abc"), ("y", "?"), ("w1", "")])
def test_a_bad_cell_in_the_last_part_of_a_file_gets_the_local_readers_message(cluster, tmp_path, column, token):
    """Each part of the file is typed by its own cells, as the local reader types the whole file: the same column,
    token, counts and row, where Dask's reader failed with "Mismatched dtypes" (or coerced the part)."""
    from fairpath import FairpathInputError
    from fairpath._io import read_partitioned, read_table

    path, sample = _bad_cell_file(tmp_path, column, token)  # row 2499, in the last of several parts
    with pytest.raises(FairpathInputError) as local:
        decompose(read_table(path), sample.sfm, seed=3)
    partitioned = read_partitioned(path, blocksize="40KB")
    assert partitioned.npartitions >= 4
    with pytest.raises(FairpathInputError) as remote:
        decompose(partitioned, sample.sfm, seed=3, scheduler=cluster)
    assert str(remote.value) == str(local.value)
    assert {"z1": "column 'z1' holds numbers in 2999 of 3000 non-missing cells and the non-numeric token(s) 'abc' (1x), the first "
                  "in row 2499 (data row 2500, line 2501 of a CSV file with a header)",
            "y": "outcome column 'y' is not numeric: 1 of 3000 non-missing cells are not numbers, token(s) '?' (1x), the first in "
                 "row 2499 (data row 2500, line 2501",
            "w1": "missing values (NaN) in used columns ('w1': 1)"}[column] in str(local.value)


def test_a_column_typed_differently_by_the_parts_of_a_file_must_be_declared_categorical(cluster, tmp_path):
    from fairpath import FairpathInputError
    from fairpath._io import read_partitioned

    sample = make_mixed_sfm(3000, seed=4)
    data = sample.data.assign(code=np.where(np.arange(3000) < 2000, "1", "region-a"))  # numbers, then text only
    data.to_csv(tmp_path / "codes.csv", index=False)
    sfm = SFM(x="x", x0=0, x1=1, z=[*sample.sfm.z, "code"], w=sample.sfm.w, y="y")
    with pytest.raises(FairpathInputError, match=re.escape("column 'code' reads as numbers in some parts of the table and as text "
                                                           "in others (each part is read on its own); declare it categorical "
                                                           "(categorical=['code'])")):
        decompose(read_partitioned(tmp_path / "codes.csv", blocksize="40KB"), sfm, seed=3, scheduler=cluster)
    import dask

    parts = dask.compute(*read_partitioned(tmp_path / "codes.csv", blocksize="40KB", categorical=["code"]).to_delayed(), scheduler="sync")
    assert len(parts) >= 4 and {str(part["code"].dtype) for part in parts} == {"category"}
    assert pd.concat([part["code"].astype(str) for part in parts]).tolist() == data["code"].tolist()


def test_a_partitioned_file_that_is_not_utf8_is_refused_naming_it(cluster, tmp_path):
    from fairpath import FairpathInputError
    from fairpath._io import read_partitioned

    sample = make_mixed_sfm(3000, seed=4)
    lines = sample.data.to_csv(index=False).splitlines()
    (tmp_path / "latin.csv").write_bytes("\n".join(lines).replace("north", "nörth").encode("latin-1"))
    with pytest.raises(FairpathInputError, match=r"data file '.*latin.csv' is not UTF-8 \(byte 0xf6 at position \d+\); it looks like"):
        decompose(read_partitioned(tmp_path / "latin.csv", blocksize="40KB"), sample.sfm, seed=3, scheduler=cluster)
