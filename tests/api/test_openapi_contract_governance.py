"""schemathesis on the governance operations outside the workbench (exceptions, members and tokens,
settings, events, the clock, the report), then on the routes that remove the maintainer and their
token, last and alone. The workbench's are test_openapi_contract_workbench.py's. How and why:
tests/api/openapi_contract.py."""

from __future__ import annotations

import pytest

from tests.api.openapi_contract import GOVERNANCE, SELF_DESTRUCTIVE, fuzz_clean, serve

pytestmark = [pytest.mark.realdata, pytest.mark.ci]  # a fuzzer: CI's run (tests/conftest.CI_ONLY)

# GOVERNANCE without the self-destructive routes (both are governance paths)
KEEPS_THE_TOKEN = "^(?!" + SELF_DESTRUCTIVE.strip("^$") + "$)" + GOVERNANCE.lstrip("^")


@pytest.fixture(scope="module")
def served(tmp_path_factory, pytorch_release, shared_dir, torch_mod):
    yield from serve(tmp_path_factory, pytorch_release, shared_dir)


def test_schemathesis_finds_nothing_in_governance(served, tmp_path):  # last: its final run revokes the token
    fuzz_clean(served, tmp_path, "governance", "--max-examples", "15", "--include-path-regex", KEEPS_THE_TOKEN)
    fuzz_clean(served, tmp_path, "last", "--max-examples", "10", "--include-path-regex", SELF_DESTRUCTIVE)
