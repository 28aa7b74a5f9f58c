"""Moved to :mod:`agentgym_envs.inference.kv_cache`; this name re-exports it for one release."""

import sys
import warnings

from agentgym_envs.inference import kv_cache as _moved

warnings.warn("trainers.llm.kv_cache moved to agentgym_envs.inference.kv_cache", DeprecationWarning, stacklevel=2)
sys.modules[__name__] = _moved  # the same module object: attributes set on either name are one
