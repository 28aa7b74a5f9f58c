"""Moved to :mod:`agentgym_envs.inference.decoder`; this name re-exports it for one release."""

import sys
import warnings

from agentgym_envs.inference import decoder as _moved

warnings.warn("trainers.llm.decoder moved to agentgym_envs.inference.decoder", DeprecationWarning, stacklevel=2)
sys.modules[__name__] = _moved  # the same module object: attributes set on either name are one
