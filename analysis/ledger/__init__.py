"""The claims ledger: the chapter's values, the claims and their verdicts, the stage plan of a staged design and
the simulation of the ledger."""
