"""The claims ledger: the chapter's values, the claims and their verdicts, the looks (group-sequential), their
simulation and replay."""
