"""Reads run directories, computes statistics across seeds, and writes tables, figures and the claims ledger.

pandas + scipy + seaborn only: this package never imports torch; of agentrl it imports only the pure modules
(agentrl.numerics, agentrl.files), which import neither torch nor pandas (design.md, section 1).
"""
