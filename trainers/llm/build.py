"""Moved to :mod:`trainers.llm.recipe.build`; this name re-exports it for one release."""

import sys
import warnings

if __name__ == "__main__":  # python -m trainers.llm.build runs the moved module
    import runpy

    runpy.run_module("trainers.llm.recipe.build", run_name="__main__", alter_sys=True)
else:
    from trainers.llm.recipe import build as _moved

    warnings.warn("trainers.llm.build moved to trainers.llm.recipe.build", DeprecationWarning, stacklevel=2)
    sys.modules[__name__] = _moved  # the same module object: attributes set on either name are one
