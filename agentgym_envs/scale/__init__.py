"""Scaling out on Ray: a vector env whose sub-environments live in Ray actors, and evaluation
episodes fanned out over Ray workers. Needs the ``ray`` extra (``pip install 'agentgym-envs[ray]'``)."""

from .fan_out import RayRunner, SeededEpisodes, fan_out
from .ray_vector import RayVectorEnv
from .runtime import init_ray

__all__ = ["RayRunner", "RayVectorEnv", "SeededEpisodes", "fan_out", "init_ray"]
