"""agentgym environments inside external trainers: verl's and SkyRL's rollout loops, and
OpenEnv's protocol (:mod:`.openenv`, ``agentgym serve``) for trainers that reach the envs over the
network (TRL's ``environment_class`` among them; TRL in process: :mod:`trainers.llm.trl_env`, beside
the LLM trainers whose chat template it shares).

- :mod:`.episode`: one text-mode episode as every integration plays it (the env's parser reads
  the model's reply as-is; the env's replies, reward and metrics come back).
- :mod:`.skyrl_env`: a SkyRL-Gym ``BaseTextEnv`` (``skyrl_gym.make("agentgym", extras=...)``).
- :mod:`.verl_loop`: a verl agent loop (``agent_name: agentgym``) that keeps one env per episode.
- :mod:`.verl_data`: the parquet rows verl's ``RLHFDataset`` reads (``python -m agentgym_envs.external_trainers.verl_data``).

Nothing here imports ``trainers``; SkyRL and verl are imported only by their own modules.
"""
