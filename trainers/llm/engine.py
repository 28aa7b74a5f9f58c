"""Moved to :mod:`agentgym_envs.inference.engine`; this name re-exports it for one release."""

import sys
import warnings

from agentgym_envs.inference import engine as _moved

warnings.warn("trainers.llm.engine moved to agentgym_envs.inference.engine", DeprecationWarning, stacklevel=2)
sys.modules[__name__] = _moved  # the same module object: attributes set on either name are one
