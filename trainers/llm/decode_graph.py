"""Moved to :mod:`agentgym_envs.inference.decode_graph`; this name re-exports it for one release."""

import sys
import warnings

from agentgym_envs.inference import decode_graph as _moved

warnings.warn("trainers.llm.decode_graph moved to agentgym_envs.inference.decode_graph", DeprecationWarning, stacklevel=2)
sys.modules[__name__] = _moved  # the same module object: attributes set on either name are one
