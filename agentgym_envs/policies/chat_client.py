"""Moved to :mod:`agentgym_envs.inference.chat_client`; this name re-exports it for one release."""

import sys
import warnings

from agentgym_envs.inference import chat_client as _moved

warnings.warn("agentgym_envs.policies.chat_client moved to agentgym_envs.inference.chat_client", DeprecationWarning, stacklevel=2)
sys.modules[__name__] = _moved  # the same module object: attributes set on either name are one
