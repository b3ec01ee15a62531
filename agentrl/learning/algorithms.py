"""The trainer's algorithms, the TrainConfig fields PPO's critic warm-up reads and the levels of advantage
whitening: plain names and values, importing neither torch nor pandas, so that the trainer (config.py,
critic_store.py), the design (workflow/design.py) and the rules (workflow/rules/common.smk) share one definition."""

ALGORITHMS = ('ppo', 'reinforce')
# what a critic's warm-up reads besides the seed: its substrate (tasks, episodes) and the critic's constants
CRITIC_FIELDS = ('substrate', 'critic_lr', 'critic_warmup_steps', 'critic_warmup_episodes_per_task')
# whiten_advantages: per batch (the chapter), not at all, or per minibatch before its loss (Andrychowicz et al. 2021)
WHITENING = (True, False, 'minibatch')
