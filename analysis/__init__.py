"""Reads run directories, computes statistics across seeds, and writes tables, figures and the claims ledger.

pandas + scipy + seaborn only: this package never imports torch or agentrl (design.md, section 1).
"""
