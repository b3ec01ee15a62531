"""What readers see: the results pages, the figures, the ledger figure, the across-substrates page."""
