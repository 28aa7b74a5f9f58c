"""Agents written in agent frameworks, played on every agentgym environment.

The env's tools become the framework's own tools (LangChain ``StructuredTool``s, OpenAI
Agents SDK function tools, Strands tools, Agno functions); calling one steps the env in text mode and returns
its result text, and the tool call that ends the episode stops the framework's loop.
:func:`run_agent` plays an episode with an agent factory; ``agentgym eval ENV --policy
langchain|openai-agents|strands|agno|module:factory`` evaluates one. Each framework is an optional
extra (``agentgym-envs[langchain]``, ``[openai-agents]``, ``[strands]``, ``[agno]``), imported when used.
"""

from .runner import FRAMEWORKS, AgentFactory, FrameworkPolicy, resolve_factory, run_agent
from .session import ENDED, Endpoint, EnvSession, EpisodeEnded, FrameworkEpisode

__all__ = ["ENDED", "FRAMEWORKS", "AgentFactory", "Endpoint", "EnvSession", "EpisodeEnded", "FrameworkEpisode",
           "FrameworkPolicy", "resolve_factory", "run_agent"]
