"""Learning: the losses and the optimiser, advantages, the PPO losses, the algorithms, the trainer's config and loop,
and the base agent's pretraining on demonstrations."""
