"""schemathesis on the committee's workbench: proposals, votes, decisions, triage and the review
queue (the operations that compute the queue on real data, the contract's slowest). How and why:
tests/api/openapi_contract.py."""

from __future__ import annotations

import pytest

from tests.api.openapi_contract import WORKBENCH, fuzz_clean, serve

pytestmark = [pytest.mark.realdata, pytest.mark.ci]  # a fuzzer: CI's run (tests/conftest.CI_ONLY)


@pytest.fixture(scope="module")
def served(tmp_path_factory, pytorch_release, shared_dir, torch_mod):
    yield from serve(tmp_path_factory, pytorch_release, shared_dir)


def test_schemathesis_finds_nothing_in_the_workbench(served, tmp_path):
    fuzz_clean(served, tmp_path, "workbench", "--max-examples", "15", "--include-path-regex", WORKBENCH)
