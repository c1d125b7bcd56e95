import pytest

from fairpath._exceptions import FairpathInputError
from fairpath._parallel import run_tasks


@pytest.mark.parametrize(("options", "message"), [
    ({"n_jobs": 0}, r"n_jobs must be a positive integer or -1"),
    ({"n_jobs": True}, r"n_jobs must be a positive integer or -1"),
    ({"workers": 0}, "workers must be an integer ≥ 1, got 0"),
    ({"workers": 2, "scheduler": "tcp://127.0.0.1:1"}, "either a Dask scheduler address or a number of local workers"),
])
def test_bad_options(options, message):
    with pytest.raises(FairpathInputError, match=message):
        run_tasks(abs, [1], **options)
