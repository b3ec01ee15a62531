"""The trainer's algorithms and the TrainConfig fields PPO's critic warm-up reads: plain names, importing neither
torch nor pandas, so that the trainer (config.py, critic_store.py), the design (workflow/design.py) and the rules
(workflow/rules/common.smk) share one definition."""

ALGORITHMS = ('ppo', 'reinforce')
CRITIC_FIELDS = ('critic_lr', 'critic_warmup_steps', 'critic_warmup_episodes_per_task')  # read besides the seed
