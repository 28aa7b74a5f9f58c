"""How the project calls a model: an OpenAI-compatible chat client (:mod:`.chat_client`) and a
local engine that decodes many conversations together (:mod:`.engine`, with its KV cache
:mod:`.kv_cache`, lean decoder :mod:`.decoder` and CUDA graph :mod:`.decode_graph`).

Only the chat client is imported here; the local engine needs torch (and ``transformers``, the
``llm`` extra) and is imported from its module.
"""

from .chat_client import ChatClient, ChatReply, EndpointError

__all__ = ["ChatClient", "ChatReply", "EndpointError"]
