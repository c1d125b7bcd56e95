import re

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


@pytest.mark.parametrize("address", ["not a url", "http://10.0.0.5:8786", "", "tcp://10.0.0.5:99999", "scheduler.json", 8786])
def test_a_malformed_scheduler_address_is_refused_before_any_connection(address, monkeypatch):
    import fairpath._parallel as parallel
    from fairpath._parallel import task_client

    def connect(*args):
        raise AssertionError("a malformed address reached the network")

    monkeypatch.setattr(parallel, "_client", connect)
    message = r"scheduler must be a Dask scheduler's address, tcp://HOST:PORT \(e.g. tcp://10.0.0.5:8786;.*got " + re.escape(repr(address))
    with pytest.raises(FairpathInputError, match=message + r".*workers=N runs a local cluster instead"):
        run_tasks(abs, [1], scheduler=address)
    with pytest.raises(FairpathInputError, match=message), task_client(scheduler=address):
        pass


@pytest.mark.parametrize("address", ["tcp://10.0.0.5:8786", "10.0.0.5:8786", "tls://dask.example.org:8786", "tcp://[::1]:8786", "tcp://node7"])
def test_well_formed_addresses_go_to_dask(address, monkeypatch):
    import fairpath._parallel as parallel

    class Connecting(Exception):
        pass

    def connect(distributed, scheduler, *rest):
        raise Connecting(scheduler)

    monkeypatch.setattr(parallel, "_client", connect)
    with pytest.raises(Connecting, match=re.escape(address)):
        list(run_tasks(abs, [1], scheduler=address))
