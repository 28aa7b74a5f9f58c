"""agentgym environments inside external trainers: verl's and SkyRL's rollout loops, TRL's
environment mode, and OpenEnv's protocol (:mod:`.openenv`, ``agentgym serve``) for trainers that
reach the envs over the network (TRL's ``environment_class`` with ``base_url`` among them).

- :mod:`.episode`: one text-mode episode as every integration plays it (the env's parser reads
  the model's reply as-is; the env's replies, reward and metrics come back).
- :mod:`.skyrl_env`: a SkyRL-Gym ``BaseTextEnv`` (``skyrl_gym.make("agentgym", extras=...)``).
- :mod:`.verl_loop`: a verl agent loop (``agent_name: agentgym``) that keeps one env per episode.
- :mod:`.trl_env`: TRL ``GRPOTrainer`` environments (``environment_factory``), its task dataset and reward.
- :mod:`.data`: the dataset rows verl's ``RLHFDataset`` and SkyRL's ``PromptDataset`` read
  (``python -m agentgym_envs.external_trainers.data``).
- :mod:`.skyrl_main`: SkyRL's entry point with the agentgym env registered.

Nothing here imports ``trainers``; SkyRL and verl are imported only by their own modules.
"""
