"""Pure decisions: the vocabulary, the schema and operator-name model, compatibility rules and
policy, lifecycle, decompositions, opsets, model checks and the yaml sync plan. Standard library
only (tests/test_architecture.py checks it); files are read in :mod:`opgov.formats`."""
