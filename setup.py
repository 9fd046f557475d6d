"""Packaging beyond what pyproject.toml can say: the top-level ``migrations/`` and the shipped
``data/`` files travel inside the package (``opgov._migrations``, ``opgov._data``), so a wheel
install can run ``opgov db upgrade`` and load the shipped files by name (opgov/resources.py)."""

from setuptools import find_namespace_packages, setup

setup(
    packages=[*find_namespace_packages(include=["opgov", "opgov.*"], exclude=["*.__pycache__"]),
              "opgov._migrations", "opgov._migrations.versions", "opgov._data.decisions", "opgov._data.decomps",
              "opgov._data.torch", "opgov._data.runtimes", "opgov._data.runtimes.executorch", "opgov._data.models"],
    package_dir={"opgov._migrations": "migrations", "opgov._data.decisions": "data/decisions",
                 "opgov._data.decomps": "data/decomps", "opgov._data.torch": "data/torch",
                 "opgov._data.runtimes": "data/runtimes",
                 "opgov._data.runtimes.executorch": "data/runtimes/executorch",
                 "opgov._data.models": "data/models"},
    # their non-Python files are named in MANIFEST.in (include_package_data), so that a
    # [tool.setuptools.package-data] table in pyproject.toml, which would replace a package_data
    # given here, cannot drop them
    include_package_data=True,
)
