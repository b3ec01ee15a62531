"""agentrl: TinyAgent, the BugFix tasks and environment, the lockstep sampler, the losses and the PPO trainer."""
__version__ = '0.1.0'

from .base_agent import make_base_agent
from .advantages import explained_variance, gae_advantages, outcome_rewards, returns_to_go
from .env import BugFixEnv, Step
from .losses import (AGGREGATION_MODES, aggregate_loss, entropy_from_logits, masked_mean, policy_gradient_step,
                     token_log_probs)
from .model import Critic, KVCache, TinyAgent, TinyAgentConfig, critic_values, make_critic
from .ppo import ppo_policy_loss, value_loss
from .sampler import Trajectory, collate, rollout_batch, rollout_stats, sequence_log_probs
from .tasks import SPLITS, Task, make_tasks
from .tokenizer import Tokenizer, build_tokenizer
from .config import TrainConfig
from .trainer import RunResult, train
