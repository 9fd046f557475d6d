"""Pure decisions: the schema model, compatibility rules, policy, lifecycle, decompositions,
opsets and model checks. Standard library only."""
