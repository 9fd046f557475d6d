"""schemathesis on the route that traces torch (`POST /api/v1/decomps/import-torch`, each call up
to 2 minutes of tracing): a file of its own, so it runs beside the other contract files. How and
why: tests/api/openapi_contract.py."""

from __future__ import annotations

import pytest

from tests.api.openapi_contract import TRACES_TORCH, fuzz_clean, serve

pytestmark = [pytest.mark.realdata, pytest.mark.ci]  # a fuzzer: CI's run (tests/conftest.CI_ONLY)


@pytest.fixture(scope="module")
def served(tmp_path_factory, pytorch_release, shared_dir, torch_mod):
    yield from serve(tmp_path_factory, pytorch_release, shared_dir)


def test_schemathesis_finds_nothing_in_import_torch(served, tmp_path):
    fuzz_clean(served, tmp_path, "torch", "--max-examples", "2", "--phases", "fuzzing", "--include-path", TRACES_TORCH)
