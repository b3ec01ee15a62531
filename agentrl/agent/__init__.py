"""TinyAgent and how it acts: the model and its critic, padding-free scoring, the lockstep sampler,
the matrix products the model runs on."""
