"""Packaging beyond what pyproject.toml can say: the top-level ``migrations/`` and the shipped
``data/`` files travel inside the package (``opgov._migrations``, ``opgov._data``), so a wheel
install can run ``opgov db upgrade`` and load the shipped files by name (opgov/resources.py)."""

from setuptools import find_packages, setup

setup(
    packages=[*find_packages(include=["opgov", "opgov.*"]),
              "opgov._migrations", "opgov._migrations.versions", "opgov._data.decisions", "opgov._data.decomps"],
    package_dir={"opgov._migrations": "migrations", "opgov._data.decisions": "data/decisions",
                 "opgov._data.decomps": "data/decomps"},
    package_data={"opgov._migrations": ["script.py.mako", "README"],
                  "opgov._data.decisions": ["*.yaml"], "opgov._data.decomps": ["*.yaml"]},
)
